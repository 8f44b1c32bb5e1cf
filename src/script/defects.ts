/**
 * A library of real server defects as ready script rules (issue 14): each
 * is plain data (rules as JSON carries them), with the public report or
 * catalogue entry it reproduces. Add one to a server with
 * `server.script.add(defects['uidvalidity-zero'].rules)` or
 * `rookery --defect uidvalidity-zero`; docs/script-rules.md shows the
 * bytes of each.
 */
import type { ScriptRuleJson } from './rule.js';

/** One defect: what it does, where it was seen, and the rules that reproduce it. */
export interface Defect {
  /** What the server does wrong, in a line. */
  title: string;
  /** The public bug report or catalogue entry it comes from (repository#number: title). */
  source: string;
  rules: readonly ScriptRuleJson[];
}

/** Every rule of a defect carries its name in `description`, so script events and listings show it. */
const tag = (name: string, rules: ScriptRuleJson[]): ScriptRuleJson[] => rules.map((r) => ({ ...r, description: `defect: ${name}` }));

/** Literal-carrying FETCH items (`BODY[...]`, `BINARY[...]`, `RFC822...`). */
const LITERAL_ITEMS = ['BODY[*', 'BINARY[*', 'RFC822', 'RFC822.HEADER', 'RFC822.TEXT'];

function build(): Record<string, Defect> {
  return {
    'bodystructure-negative-lines': {
      title: 'BODYSTRUCTURE and BODY report -1 as the line count of a text part (body-fld-lines is a number, never negative)',
      source: 'modern-email/defects#27: Negative line length breaks parsing (also jstedfast/MailKit#823: Syntax error in BODYSTRUCTURE. Unexpected token: [atom: -1])',
      rules: tag('bodystructure-negative-lines', [
        {
          on: 'response',
          untagged: 'FETCH',
          // A single text part: index 7; the first part of a multipart: [0, 7].
          mutate: [
            { set: 'BODYSTRUCTURE', at: [7], value: -1 },
            { set: 'BODY', at: [7], value: -1 },
            { set: 'BODYSTRUCTURE', at: [0, 7], value: -1 },
            { set: 'BODY', at: [0, 7], value: -1 },
          ],
        },
      ]),
    },
    'envelope-unquoted-strings': {
      title: 'ENVELOPE strings (the subject) sent without quotes',
      source: 'rgrove/larch#7: Known issues with BlitzMail IMAP server (fails to quote or properly escape strings in ENVELOPE)',
      rules: tag('envelope-unquoted-strings', [{ on: 'response', untagged: 'FETCH', mutate: [{ unquote: 'ENVELOPE', at: [1] }] }]),
    },
    'envelope-unescaped-quotes': {
      title: 'ENVELOPE strings quoted without escaping the `"` and `\\` inside them',
      source: 'cyrusimap/cyrus-imapd#427: quote characters in envelope structure are not properly escaped?',
      rules: tag('envelope-unescaped-quotes', [{ on: 'response', untagged: 'FETCH', mutate: [{ unescaped: 'ENVELOPE' }] }]),
    },
    'fetch-after-tagged': {
      title: "A FETCH command's untagged FETCH responses arrive after its tagged OK",
      source: 'emailjs/emailjs-imap-client#117: Unexpected Untagged Response Error (untagged data outside the command it belongs to breaks command matching)',
      rules: tag('fetch-after-tagged', [
        { on: 'command', command: 'FETCH', untagged: 'FETCH', defer: 'tagged' },
        { on: 'command', command: 'UID FETCH', untagged: 'FETCH', defer: 'tagged' },
      ]),
    },
    'blank-line-after-literal': {
      title: 'A spurious empty line (CRLF) right after a literal in FETCH',
      source: 'python/cpython#88574: imaplib fails when server sends extra blank line after literal value',
      rules: tag('blank-line-after-literal', [{ on: 'response', untagged: 'FETCH', mutate: LITERAL_ITEMS.map((item) => ({ suffix: item, text: '\r\n' })) }]),
    },
    'leading-nul-bytes': {
      title: 'NUL bytes before the greeting and before each tagged response',
      source: 'curl/curl#21996: pingpong: reject nul byte in server response line (servers that put NUL bytes in response lines)',
      rules: tag('leading-nul-bytes', [
        { on: 'greeting', before: '\u0000\u0000' },
        { on: 'response', match: '^[^*+ ]+ (OK|NO|BAD)', before: '\u0000\u0000' },
      ]),
    },
    'uidvalidity-zero': {
      title: 'UIDVALIDITY 0 in SELECT/EXAMINE and STATUS (it is an nz-number)',
      source: 'jstedfast/MailKit#150: MailKit fails to get emails from SmarterMail server 13.0 (`* OK [UIDVALIDITY 0]`); modern-email/defects#52: Invalid `UIDVALIDITY 0`',
      rules: tag('uidvalidity-zero', [
        { on: 'response', untagged: 'OK', match: '\\[UIDVALIDITY ', mutate: [{ set: 'UIDVALIDITY', value: 0 }] },
        { on: 'response', untagged: 'STATUS', match: 'UIDVALIDITY', mutate: [{ set: 'UIDVALIDITY', value: 0 }] },
      ]),
    },
    'missing-resp-text': {
      title: 'Tagged responses without resp-text (`A6 OK`), status responses with a code and no text',
      source: 'mscdex/node-imap#539: changed regex for handling tagged OK response ("A6 OK" from ppops.net); modern-email/defects#28: Missing `text` in `HIGHESTMODSEQ` response',
      rules: tag('missing-resp-text', [
        { on: 'response', match: '^[^*+ ]+ (OK|NO|BAD)', mutate: [{ drop: 'text' }] },
        { on: 'response', untagged: 'OK', match: '^\\* OK \\[', mutate: [{ drop: 'text' }] },
      ]),
    },
    'uid-after-literal': {
      title: 'FETCH items after the body literal: `* 1 FETCH (BODY[] {n} ... UID 7 FLAGS ())`',
      source: 'mjs/imapclient#30: fetch fails to parse literal followed by non-literal (Gmail); karastojko/mailio#135: UID data after RFC822 data',
      rules: tag('uid-after-literal', [{ on: 'response', untagged: 'FETCH', mutate: [{ order: LITERAL_ITEMS }] }]),
    },
    'exists-backwards': {
      title: 'An EXISTS lower than the one before, with no EXPUNGE between (a stale counter): new mail seen by a NOOP poll is reported two short',
      source: 'apache/james-project#2507: JAMES-4088 Ensure IMAP SELECT EXIST response is up to date (outdated EXISTS counters abort resynchronisation)',
      // NOOP only: the rules stay valid on a server without IDLE, and SELECT's own EXISTS stays right.
      rules: tag('exists-backwards', [{ on: 'response', untagged: 'EXISTS', command: 'NOOP', mutate: [{ add: 'EXISTS', value: -2 }] }]),
    },
    // POP3 (docs/pop3.md, "Faults").
    'pop3-no-dot-stuffing': {
      title: 'POP3 RETR and TOP send lines that start with "." without byte-stuffing them: a line of only "." ends the message early',
      source: 'axllent/mailpit#299: POP3 server does not do dot stuffing (also hmailserver/hmailserver#126: POP3 TOP command does not escape single dot on a line)',
      rules: tag('pop3-no-dot-stuffing', [{ on: 'pop3', command: ['RETR', 'TOP'], pop3Fault: 'no-stuffing' }]),
    },
    'pop3-lf-size': {
      title: 'POP3 LIST and STAT report sizes of the stored LF form, fewer octets than RETR sends with CRLF line ends',
      source: 'andyedinborough/aenetmail#150: POP message footer not downloaded (servers report sizes counted before bare LFs are served as CRLF)',
      rules: tag('pop3-lf-size', [{ on: 'pop3', command: ['LIST', 'STAT'], pop3Fault: 'lf-size' }]),
    },
    'pop3-uidl-reused': {
      title: 'POP3 UIDL gives different messages the same unique-id, so a client that keeps "already downloaded" ids skips new mail',
      source: 'cyrusimap/cyrus-imapd#374: Reusing UIDs will break Outlook\'s POP3 client',
      rules: tag('pop3-uidl-reused', [{ on: 'pop3', command: 'UIDL', pop3Fault: 'uidl-repeat' }]),
    },
  };
}

let library: ReadonlyMap<string, Defect> | null = null;

function table(): ReadonlyMap<string, Defect> {
  library ??= new Map(Object.entries(build()));
  return library;
}

function copyOf(name: string): Defect | undefined {
  const found = table().get(name);
  return found === undefined ? undefined : (JSON.parse(JSON.stringify(found)) as Defect);
}

/**
 * The defects by name, as data: `defects['uidvalidity-zero'].rules`. Each
 * read is a new deep copy, so a test that edits one changes no other; the
 * table is built on first use, not at import.
 */
export const defects: Readonly<Record<string, Defect>> = new Proxy({} as Record<string, Defect>, {
  get: (_target, key) => (typeof key === 'string' ? copyOf(key) : undefined),
  has: (_target, key) => typeof key === 'string' && table().has(key),
  ownKeys: () => [...table().keys()],
  getOwnPropertyDescriptor: (_target, key) => (typeof key === 'string' && table().has(key) ? { enumerable: true, configurable: true, value: copyOf(key) } : undefined),
});

/** The names of the library's defects. */
export function defectNames(): string[] {
  return [...table().keys()];
}

/** A defect by a name a user gave (CLI, options); undefined when there is none. */
export function defectNamed(name: string): Defect | undefined {
  return copyOf(name);
}
