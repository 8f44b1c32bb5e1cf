/**
 * The plugins a server loads when `plugins` is left out (issue 30). A test
 * server should look like the servers clients meet: imapflow, for one, idles
 * only when IDLE is offered and otherwise polls in silence. The model is
 * Dovecot 2.3's stock post-login capability list (2.3.19 measured:
 * `IMAP4rev1 SASL-IR LOGIN-REFERRALS ID ENABLE IDLE SORT SORT=DISPLAY
 * THREAD=REFERENCES THREAD=REFS THREAD=ORDEREDSUBJECT MULTIAPPEND URL-PARTIAL
 * CATENATE UNSELECT CHILDREN NAMESPACE UIDPLUS LIST-EXTENDED I18NLEVEL=1
 * CONDSTORE QRESYNC ESEARCH ESORT SEARCHRES WITHIN CONTEXT=SEARCH LIST-STATUS
 * BINARY MOVE SNIPPET=FUZZY PREVIEW=FUZZY PREVIEW STATUS=SIZE SAVEDATE
 * LITERAL+ NOTIFY`, AUTH=PLAIN before login, SPECIAL-USE with its stock
 * mailbox settings), keeping what most servers clients meet share and
 * leaving out the rarely met ones whose hooks every session would pay for
 * (CONTEXT, NOTIFY, PREVIEW, SAVEDATE, STATUS=SIZE, I18NLEVEL=1).
 * `plugins: []` is the bare IMAP4rev1 core; `preset: "dovecot"` is Dovecot
 * with its greeting, folders and limits too.
 */
export const DEFAULT_PLUGINS: readonly string[] = Object.freeze([
  'IDLE', 'NAMESPACE', 'UIDPLUS', 'MOVE', 'UNSELECT', 'ENABLE', 'ID', 'LITERAL+', 'SASL-IR', 'AUTH=PLAIN', 'CHILDREN',
  'SPECIAL-USE', 'MULTIAPPEND', 'CATENATE', 'URL-PARTIAL', 'CONDSTORE', 'QRESYNC', 'LIST-STATUS', 'ESEARCH', 'SEARCHRES',
  'SORT', 'THREAD', 'WITHIN', 'BINARY', 'LIST-EXTENDED',
]);
