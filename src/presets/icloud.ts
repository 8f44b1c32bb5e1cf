/**
 * iCloud Mail (imap.mail.me.com). Every value is an ordinary option; the
 * sources are in docs/presets.md (the letters in brackets point there).
 */
import type { PresetOptions } from './preset.js';

export function icloud(): PresetOptions {
  return {
    // [I1] nextcloud/mail issue #3401: before login XAPPLEPUSHSERVICE IMAP4 IMAP4rev1 SASL-IR AUTH=ATOKEN
    // AUTH=PLAIN; after login also CONDSTORE ENABLE QRESYNC QUOTA NAMESPACE UIDPLUS CHILDREN BINARY UNSELECT
    // SORT CATENATE URLAUTH LANGUAGE ESEARCH ESORT THREAD=ORDEREDSUBJECT THREAD=REFERENCES CONTEXT=SEARCH
    // CONTEXT=SORT WITHIN SEARCHRES METADATA ID ... IDLE LIST-STATUS. No SPECIAL-USE.
    // Not built in (left out): URLAUTH, LANGUAGE and Apple's own tokens.
    plugins: [
      'SASL-IR', 'AUTH=PLAIN', 'CONDSTORE', 'ENABLE', 'QRESYNC', 'QUOTA', 'NAMESPACE', 'UIDPLUS', 'CHILDREN', 'BINARY',
      'UNSELECT', 'SORT', 'CATENATE', 'ESEARCH', 'THREAD', 'CONTEXT', 'WITHIN', 'SEARCHRES', 'METADATA', 'ID', 'IDLE', 'LIST-STATUS',
    ],
    // [I1] `* OK [CAPABILITY ...] (2109B29-d3afe4d5aba6) pv33p00im-iscream021.me.com`
    greeting: '(2109B29-d3afe4d5aba6) pv33p00im-iscream021.me.com',
    // [I1] LIST: `(\Noinferiors) "/" "INBOX"`, "Archive", "Deleted Messages"; [I2] "Sent Messages".
    storage: {
      INBOX: { flags: ['\\Noinferiors'] },
      '': {
        separator: '/',
        folders: {
          Archive: { 'special-use': '\\Archive' },
          'Deleted Messages': { 'special-use': '\\Trash' },
          'Sent Messages': { 'special-use': '\\Sent' },
        },
      },
    },
    script: [
      // [I3] FETCH of RFC822 answers OK without the RFC822 item (modern-email/defects issue #36, zammad
      // issue #4589, rcarmo/imapbackup pull #50, HaikuArchives/Beam pull #27). A rule sends fixed text, so
      // the FETCH response that would carry RFC822 is left out whole; BODY[] is served as usual.
      { on: 'response', match: '^\\* \\d+ FETCH \\([^\\r\\n]*\\bRFC822 \\{', drop: true },
    ],
    // No `pop3`: iCloud Mail has no POP3 (Apple Support "iCloud Mail server settings for other email client
    // apps" lists IMAP and SMTP only; Lifewire's iCloud settings page: "iCloud does not support POP mail").
  };
}
