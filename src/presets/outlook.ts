/**
 * Outlook / Microsoft 365 (outlook.office365.com, Exchange Online). Every
 * value is an ordinary option; the sources are in docs/presets.md (the
 * letters in brackets point there).
 */
import type { PresetOptions } from './preset.js';

/**
 * [O7] `SEARCH CHARSET x` for any x but US-ASCII (quoted too, in any case), as a rule sees the command
 * text (tag first).
 */
const NOT_US_ASCII = String.raw`^\S+ (?:[Uu][Ii][Dd] )?[Ss][Ee][Aa][Rr][Cc][Hh] [Cc][Hh][Aa][Rr][Ss][Ee][Tt] (?!"?[Uu][Ss]-[Aa][Ss][Cc][Ii][Ii]"? )`;
const BADCHARSET = '$TAG NO [BADCHARSET (US-ASCII)] The specified charset is not supported.\r\n';

export function outlook(): PresetOptions {
  return {
    // [O1] CAPABILITY in MailKit issue #1494 and mscdex/node-imap issue #523: IMAP4 IMAP4rev1 AUTH=PLAIN
    // AUTH=XOAUTH2 SASL-IR UIDPLUS ID UNSELECT CHILDREN IDLE NAMESPACE LITERAL+, and MOVE after login.
    // No SPECIAL-USE: folders are found by name. (The IMAP4 token and the Microsoft-only tokens are left out.)
    plugins: ['AUTH=PLAIN', 'AUTH=XOAUTH2', 'SASL-IR', 'UIDPLUS', 'ID', 'UNSELECT', 'CHILDREN', 'IDLE', 'NAMESPACE', 'LITERAL+', 'MOVE'],
    // [O1] `* OK The Microsoft Exchange IMAP4 service is ready. [<base64 of the server name in UTF-16LE>]`,
    // without a CAPABILITY response code. The brackets here hold "LOCALHOST".
    greeting: 'The Microsoft Exchange IMAP4 service is ready. [TABPAEMAQQBMAEgATwBTAFQA]',
    greetingCapabilities: false,
    // [O2] Microsoft Graph's mailFolder page (Drafts, the Sent Items and Deleted Items folders, archive);
    // "Deleted Items" also in jakartaee/mail-api issue #152. "/" delimiter as in [O1]'s NAMESPACE.
    storage: {
      INBOX: {},
      '': {
        separator: '/',
        folders: {
          Archive: { 'special-use': '\\Archive' },
          'Deleted Items': { 'special-use': '\\Trash' },
          Drafts: { 'special-use': '\\Drafts' },
          'Sent Items': { 'special-use': '\\Sent' },
        },
      },
    },
    // [O3] Exchange IMAP4 settings: at most 16 connections from one user; idle authenticated connections
    // closed after 1800 s, unauthenticated ones after 60 s.
    maxConnections: 16,
    // Per user, with Outlook's way: the login succeeds, later commands get BAD (src/session/limits.ts cites it).
    maxConnectionsPerUser: { limit: 16, style: 'outlook' },
    idleTimeout: 1_800_000,
    loginTimeout: 60_000,
    // OAuth logins refused and ended as Exchange Online does them: src/oauth/styles.ts cites [M1], [M2].
    oauth: { style: 'outlook' },
    script: [
      // [O4] jakartaee/mail-api issue #152: a LIST pattern with an escaped quote is refused.
      { on: 'command', command: 'LIST', match: '\\\\"', send: '$TAG BAD Command Argument Error. 12\r\n' },
      // [O5] DirectoryTree/ImapEngine issue #109: `UID FETCH 2 ()` (an empty item list).
      { on: 'command', command: 'UID FETCH', match: ' \\(\\)\\s*$', send: '$TAG BAD Command Argument Error. 11\r\n' },
      // [O7] Exchange searches in US-ASCII only: CHARSET UTF-8 (what MailKit, imap_tools and others send for
      // any SEARCH) is NO [BADCHARSET (US-ASCII)] (MailKit issue #16, paperless-ngx issues #643 and #9451,
      // eclipse-ee4j/angus-mail issue #145). Rookery itself knows UTF-8; the rules refuse it as Exchange does.
      { on: 'command', command: 'SEARCH', match: NOT_US_ASCII, send: BADCHARSET },
      { on: 'command', command: 'UID SEARCH', match: NOT_US_ASCII, send: BADCHARSET },
      // [O6] mscdex/node-imap issue #561: IDLE's continuation reads "+ IDLE accepted, awaiting DONE command."
      { on: 'response', command: 'IDLE', match: '^\\+ ', send: '+ IDLE accepted, awaiting DONE command.\r\n' },
      // [OP2] the POP3 greeting, the bracket a base64 server name in UTF-16LE as in the IMAP one (here LOCALHOST).
      { on: 'pop3', stage: 'greeting', send: '+OK The Microsoft Exchange POP3 service is ready. [TABPAEMAQQBMAEgATwBTAFQA]' },
    ],
    // POP3 (docs/pop3-presets.md). [OP1] Microsoft Support "POP, IMAP, and SMTP settings for Outlook.com":
    // outlook.office365.com, 995, SSL/TLS. [OP2] kisli/vmime issue #267: `+OK The Microsoft Exchange POP3 service
    // is ready. [<base64>]`, no APOP timestamp; CAPA TOP UIDL SASL PLAIN XOAUTH2 USER.
    pop3: { apop: false },
  };
}
