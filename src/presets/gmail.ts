/**
 * Gmail (imap.gmail.com). Every value is an ordinary option; the sources
 * are in docs/presets.md (the letters in brackets point there).
 */
import type { PresetOptions } from './preset.js';

export function gmail(): PresetOptions {
  return {
    // [G1] post-login CAPABILITY in imapsync issue #338: IMAP4rev1 UNSELECT IDLE NAMESPACE QUOTA ID XLIST
    // CHILDREN X-GM-EXT-1 UIDPLUS COMPRESS=DEFLATE ENABLE MOVE CONDSTORE ESEARCH UTF8=ACCEPT LIST-EXTENDED
    // LIST-STATUS LITERAL- SPECIAL-USE APPENDLIMIT=35651584. [G2] before login (MailKit issue #1276):
    // SASL-IR AUTH=XOAUTH2 AUTH=PLAIN AUTH=OAUTHBEARER among others. XLIST is not built in; UTF8=ACCEPT is, but
    // X-GM-LABELS names labels in modified UTF-7 only, so a UTF-8 session would see two spellings of one label.
    plugins: [
      'UNSELECT', 'IDLE', 'NAMESPACE', 'QUOTA', 'ID', 'CHILDREN', 'X-GM-EXT-1', 'UIDPLUS', 'COMPRESS', 'ENABLE', 'MOVE',
      'CONDSTORE', 'ESEARCH', 'LIST-STATUS', 'LITERAL-', 'SPECIAL-USE', 'APPENDLIMIT',
      'SASL-IR', 'AUTH=PLAIN', 'AUTH=XOAUTH2', 'AUTH=OAUTHBEARER',
    ],
    pluginOptions: { APPENDLIMIT: { limit: 35651584 } },
    // [G3] Google's IMAP extensions page and [G2]: `* OK Gimap ready for requests from <address> <id>`,
    // without a CAPABILITY response code.
    greeting: 'Gimap ready for requests from 127.0.0.1 k2if6111336rvb.0',
    greetingCapabilities: false,
    // [G4] LIST in jakartaee/mail-api issue #8: "/" delimiter, the [Gmail] folders; [G3] lists the special
    // folders (Important among them) and says every LIST line carries their attributes.
    storage: {
      INBOX: {},
      '': {
        separator: '/',
        folders: {
          '[Gmail]': {
            flags: ['\\Noselect'],
            folders: {
              'All Mail': { 'special-use': '\\All' },
              Drafts: { 'special-use': '\\Drafts' },
              Important: { 'special-use': '\\Important' },
              'Sent Mail': { 'special-use': '\\Sent' },
              Spam: { 'special-use': '\\Junk' },
              Starred: { 'special-use': '\\Flagged' },
              Trash: { 'special-use': '\\Trash' },
            },
          },
        },
      },
    },
    // [G5] Google help "Too many simultaneous connections" (10 in 2008); later guides say 15.
    maxConnections: 15,
    // Per user, with Gmail's refusal of the login (src/session/limits.ts cites it).
    maxConnectionsPerUser: { limit: 15, style: 'gmail' },
    // OAuth logins refused and ended as Gmail does them: src/oauth/styles.ts cites [G1]-[G3].
    oauth: { style: 'gmail' },
    // IMAP: none, a failed login already reads `NO [AUTHENTICATIONFAILED] Invalid credentials (Failure)` ([G2]).
    // POP3: [GP4] the greeting of pop.gmail.com (no APOP timestamp).
    script: [{ on: 'pop3', stage: 'greeting', send: '+OK Gpop ready for requests from 127.0.0.1 q5pf21484907pbh.7' }],
    // POP3 (docs/pop3-presets.md). [GP1] support.google.com/mail/answer/7104828: pop.gmail.com, SSL, port 995
    // (a listener's port and `secure` are the caller's). [GP4] fetchmail log of pop.gmail.com ("mutt on 10.4 will
    // not work", 2012): greeting `+OK Gpop ready for requests from <address> <id>` without an APOP timestamp, CAPA
    // USER RESP-CODES EXPIRE 0 LOGIN-DELAY 300 TOP UIDL X-GOOGLE-VERHOEVEN X-GOOGLE-RICO (LOGIN-DELAY left out:
    // Rookery would enforce it). EXPIRE 0: what a session retrieved is acted on at QUIT, DELE or not ([GP2]).
    pop3: {
      apop: false,
      expire: 0,
      behaviour: {
        // [GP2] support.google.com/a/answer/6089246 "How does POP work in Gmail?": `recent:` shows All Mail's last
        // 30 days, popped or not; normal mode leaves out what a session that ended with QUIT downloaded.
        userPrefixes: ['recent:'],
        recentDays: 30,
        hideRetrieved: true,
        // [GP3] developers.google.com/gmail/api/reference/rest/v1/PopSettings `disposition`: leaveInInbox (the
        // setting's default, "keep Gmail's copy in the Inbox"), markRead, archive, trash.
        deleteAction: 'keep',
        archiveMailbox: '[Gmail]/All Mail',
      },
    },
  };
}
