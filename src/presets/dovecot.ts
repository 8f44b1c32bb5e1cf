/**
 * Dovecot with its default settings. Every value is an ordinary option; the
 * sources are in docs/presets.md (the letters in brackets point there).
 */
import type { PresetOptions } from './preset.js';

export function dovecot(): PresetOptions {
  return {
    // [D1] greeting CAPABILITY (mscdex/node-imap issue #354, nextcloud/mail issue #372): IMAP4rev1 LITERAL+
    // SASL-IR LOGIN-REFERRALS ID ENABLE IDLE AUTH=PLAIN; after login SORT SORT=DISPLAY THREAD=REFERENCES
    // THREAD=ORDEREDSUBJECT ... UNSELECT CHILDREN NAMESPACE UIDPLUS LIST-EXTENDED CONDSTORE QRESYNC ESEARCH
    // ESORT SEARCHRES WITHIN CONTEXT=SEARCH LIST-STATUS BINARY MOVE QUOTA, SPECIAL-USE (st3fan/dovecot-xaps-plugin
    // issue #12), with MULTIAPPEND URL-PARTIAL CATENATE. Not built in (left out): LOGIN-REFERRALS, I18NLEVEL=1,
    // THREAD=REFS.
    plugins: [
      'LITERAL+', 'SASL-IR', 'ID', 'ENABLE', 'IDLE', 'AUTH=PLAIN', 'SORT', 'THREAD', 'UNSELECT', 'CHILDREN', 'NAMESPACE',
      'UIDPLUS', 'CONDSTORE', 'QRESYNC', 'ESEARCH', 'SEARCHRES', 'WITHIN', 'CONTEXT', 'LIST-STATUS', 'BINARY', 'MOVE', 'QUOTA',
      'SPECIAL-USE', 'MULTIAPPEND', 'URL-PARTIAL', 'CATENATE',
    ],
    // [D1] CONTEXT=SEARCH without CONTEXT=SORT. [D1b] Dovecot 2.3.19 (test/dovecot/condstore.test.ts) sends
    // HIGHESTMODSEQ on SELECT only once the session has CONDSTORE on, and before the first enabling command's answer.
    pluginOptions: { CONTEXT: { sort: false }, CONDSTORE: { selectHighestModseq: 'enabled' } },
    // [D2] doc.dovecot.org "Testing installation": `* OK [CAPABILITY ...] Dovecot ready.`
    greeting: 'Dovecot ready.',
    // [D3] namespace separator: "." for Maildir (the default example config); [D4] @mailbox_defaults = english:
    // Drafts, Junk, Sent, Trash with their special use.
    storage: {
      INBOX: {},
      '': {
        separator: '.',
        folders: {
          Drafts: { 'special-use': '\\Drafts' },
          Junk: { 'special-use': '\\Junk' },
          Sent: { 'special-use': '\\Sent' },
          Trash: { 'special-use': '\\Trash' },
        },
      },
    },
    // [D6] Dovecot 2.3's argument parser (checked against 2.3.19 in test/dovecot/leniency.test.ts): 8-bit
    // octets in a quoted string without UTF8=ACCEPT, which it does not offer (imapfilter's `SEARCH CHARSET
    // UTF-8 SUBJECT "Grüße"` relies on it), any character escaped by a backslash, and runs of spaces
    // between arguments, inside list parentheses and at the end of the line, and a sequence set that ends in
    // a comma.
    leniency: { eightBitQuoted: true, anyEscape: true, extraSpaces: true, trailingComma: true },
    // [D5] imap_max_line_length = 64k, mail_max_userip_connections = 10.
    maxLineLength: 65536,
    maxConnections: 10,
    maxConnectionsPerUser: { limit: 10, style: 'dovecot' },
    script: [
      // [D5] imap_idle_notify_interval = 2 mins: "* OK Still here" while a client IDLEs.
      { on: 'quiet', command: 'IDLE', quietFor: 120_000, send: '* OK Still here\r\n' },
      // [DP1] the POP3 greeting of Dovecot 2.3.19 (upstream's text; Debian's build says "Dovecot (Debian) ready.").
      { on: 'pop3', stage: 'greeting', send: '+OK Dovecot ready.' },
    ],
    // POP3 (docs/pop3-presets.md). [DP1] Dovecot 2.3.19 itself: `+OK Dovecot ready.` without an APOP timestamp
    // (APOP needs a passdb with plain passwords); UIDL `%08Xu%08Xv` ([DP2] doc.dovecot.org pop3_uidl_format), which
    // it writes in lower-case hex (`000000016b0f5973` for UID 1, UIDVALIDITY 1796168051).
    pop3: { apop: false, behaviour: { uidlHex: 'lower' } },
  };
}
