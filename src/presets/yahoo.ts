/**
 * Yahoo Mail (imap.mail.yahoo.com). Every value is an ordinary option; the
 * sources are in docs/presets.md (the letters in brackets point there).
 */
import type { PresetOptions } from './preset.js';

// No `pop3`: Yahoo documents pop.mail.yahoo.com on 995 with SSL (docs/pop3-presets.md [YP1]), but no public
// source we found shows its POP3 greeting, CAPA or what it does with deleted messages.
export function yahoo(): PresetOptions {
  return {
    // [Y1] greeting CAPABILITY in MailKit issues #242 and #358: IMAP4rev1 ID MOVE NAMESPACE X-ID-ACLID UIDPLUS
    // LITERAL+ CHILDREN XAPPLEPUSHSERVICE XYMHIGHESTMODSEQ AUTH=PLAIN AUTH=LOGIN AUTH=XOAUTH2 ...; no IDLE
    // (MailCore/mailcore2 issue #1274 shows the same list). The X-/XY- tokens are Yahoo's own.
    plugins: ['ID', 'MOVE', 'NAMESPACE', 'UIDPLUS', 'LITERAL+', 'CHILDREN', 'AUTH=PLAIN', 'AUTH=XOAUTH2'],
    // [Y1] `* OK [CAPABILITY ...] IMAP4rev1 imapgate-1.8.1_01.20166 imap1015.mail.ir2.yahoo.com`
    greeting: 'IMAP4rev1 imapgate-1.8.1_01.20166 imap1015.mail.ir2.yahoo.com',
    // [Y1] LIST "" "%" in MailKit issue #242: "Bulk Mail", "Draft", "Sent" (and "Inbox", below); "/" delimiter.
    storage: {
      INBOX: {},
      '': {
        separator: '/',
        folders: {
          'Bulk Mail': { 'special-use': '\\Junk' },
          Draft: { 'special-use': '\\Drafts' },
          Sent: { 'special-use': '\\Sent' },
        },
      },
    },
    script: [
      // [Y2] MailKit issue #242: LIST "" "INBOX" answers with the name "Inbox". Only this exact line is
      // rewritten (a script rule sends fixed text): INBOX without children, as CHILDREN shows it.
      {
        on: 'response',
        command: 'LIST',
        match: '^\\* LIST \\(\\\\HasNoChildren\\) "/" "?INBOX"?\\r\\n$',
        send: '* LIST (\\HasNoChildren) "/" "Inbox"\r\n',
      },
    ],
  };
}
