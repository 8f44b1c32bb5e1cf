/**
 * I18NLEVEL=1 (RFC 5255 §4.3): the server collates with i;unicode-casemap
 * (RFC 5051) where RFC 5255 §4.2 says, and supports UTF-8 as a SEARCH
 * charset. Rookery does both with or without this plugin: the SEARCH keys
 * BCC, BODY, CC, FROM, SUBJECT, TEXT, TO and HEADER match substrings under
 * i;unicode-casemap after MIME and charset decoding (src/imap/search.ts,
 * src/util/casemap.ts), and SORT (CC, FROM, SUBJECT, TO) and THREAD compare
 * with it. The plugin only says so, so a client may rely on it. Level 2
 * (the COMPARATOR command) is not offered.
 */
import { defineExtension } from '../extension.js';
import { always } from '../shared.js';

export const extension = defineExtension<undefined>({
  name: 'I18NLEVEL=1',
  capabilities: always('I18NLEVEL=1'),
});
