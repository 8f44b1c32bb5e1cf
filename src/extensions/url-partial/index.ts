/**
 * URL-PARTIAL (RFC 5550 §5.7): advertises that IMAP URLs may carry
 * `;PARTIAL=offset[.length]`. CATENATE honours `;PARTIAL=` whether or not
 * this is loaded; it is a plugin of its own so that a server can say it or
 * not, as real ones differ (Dovecot does, iCloud does not).
 */
import type { Extension } from '../extension.js';
import { always } from '../shared.js';

export const extension: Extension = {
  name: 'URL-PARTIAL',
  requires: ['CATENATE'],
  capabilities: always('URL-PARTIAL'),
};
