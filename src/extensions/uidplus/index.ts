/** UIDPLUS (RFC 4315): UID EXPUNGE, APPENDUID and COPYUID. */
import { uidExpunge } from '../../imap/commands/expunge.js';
import { compressNumbers } from '../../imap/syntax.js';
import type { Extension } from '../extension.js';
import { always } from '../shared.js';

export const extension: Extension = {
  name: 'UIDPLUS',
  capabilities: always('UIDPLUS'),
  commands: [uidExpunge],
  codes: {
    append: (mailbox, uids) => `APPENDUID ${mailbox.uidvalidity} ${compressNumbers([...uids])}`,
    copy: (target, pairs) =>
      `COPYUID ${target.uidvalidity} ${compressNumbers(pairs.map((p) => p.uid))} ${compressNumbers(pairs.map((p) => p.targetUid))}`,
  },
};
