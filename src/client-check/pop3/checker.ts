/**
 * The client checker of one POP3 session, behind the session's hook
 * (src/pop3/checker-hook.ts): the session reports each command line it
 * reads with its state, each CAPA answer, the greeting, each answer written
 * in full, the login and the close; the checker only looks, never writes.
 * In `strict` mode it hands back the `-ERR [CLIENTBUG]` answer for a
 * command that broke an error rule, which then is not run. The rules are
 * listed in ../pop3-rules.ts; what the client was told and sent is kept in
 * ./client-state.ts.
 */
import type { Pop3CapaSent, Pop3Checker, Pop3CommandSeen, Pop3StateName } from '../../pop3/checker-hook.js';
import type { ClientFindingLog } from '../findings.js';
import { clientRule } from '../rules.js';
import { Pop3ClientState } from './client-state.js';

/** RFC 2449 §4: command lines are at most 255 octets, CRLF included. */
const LINE_LIMIT = 255;
/** Longest verb a finding carries (a peer chooses it; findings are kept in numbers). */
const MAX_VERB = 16;

/** Commands RFC 1939 (§4-§7), RFC 2449, RFC 2595, RFC 5034 and RFC 6856 allow, by state. */
const STATES: ReadonlyMap<string, readonly Pop3StateName[]> = new Map<string, readonly Pop3StateName[]>([
  ['USER', ['authorization']],
  ['PASS', ['authorization']],
  ['APOP', ['authorization']],
  ['AUTH', ['authorization']],
  ['STLS', ['authorization']],
  ['UTF8', ['authorization']],
  ['CAPA', ['authorization', 'transaction']],
  ['LANG', ['authorization', 'transaction']],
  ['QUIT', ['authorization', 'transaction']],
  ['STAT', ['transaction']],
  ['LIST', ['transaction']],
  ['RETR', ['transaction']],
  ['DELE', ['transaction']],
  ['NOOP', ['transaction']],
  ['RSET', ['transaction']],
  ['TOP', ['transaction']],
  ['UIDL', ['transaction']],
]);

/** Optional commands (RFC 1939 §7 and extensions) and the CAPA tag that announces each (RFC 2449 §6, RFC 2595 §4, RFC 5034 §3, RFC 6856). */
const ANNOUNCED_BY: ReadonlyMap<string, string> = new Map([
  ['TOP', 'TOP'],
  ['UIDL', 'UIDL'],
  ['USER', 'USER'],
  ['AUTH', 'SASL'],
  ['STLS', 'STLS'],
  ['UTF8', 'UTF8'],
  ['LANG', 'LANG'],
]);

/**
 * USER/PASS is RFC 1939's optional login, but it is the one every client
 * starts with and every server has: using it without CAPA is no finding
 * (a CAPA that leaves USER out still makes USER one).
 */
const NEEDS_CAPA = new Set(['TOP', 'UIDL', 'AUTH', 'STLS', 'UTF8', 'LANG']);

/** Commands whose first argument is a message number (RFC 1939 §5, §7). */
const MESSAGE_ARG = new Set(['RETR', 'DELE', 'TOP', 'LIST', 'UIDL']);

/** SASL mechanisms that carry a password or bearer token readable on the wire. */
const CLEAR_MECHANISMS = new Set(['PLAIN', 'LOGIN', 'XOAUTH2', 'OAUTHBEARER']);

/** What a finding may quote of a peer's bytes: printable ASCII only, clipped. */
function printable(text: string, max: number): string {
  const clean = text.replace(/[^\x20-\x7e]/g, '?');
  return clean.length > max ? `${clean.slice(0, max)}...` : clean;
}

export class Pop3SessionChecker implements Pop3Checker {
  private readonly state = new Pop3ClientState();
  private readonly strict: boolean;
  /** The strict answer owed to the command being read. */
  private verdict: string | null = null;
  /** The command being answered: its verb and message-number argument. */
  private current: { verb: string; number: number | null } | null = null;
  /** The user the session last named (for findings made at the close). */
  private user: string | null = null;

  constructor(
    private readonly log: ClientFindingLog,
    private readonly session: number,
  ) {
    this.strict = log.mode === 'strict';
    log.sawSession(session, 'pop3');
  }

  /** The greeting the session sent (its APOP timestamp, if any). */
  greeting(text: string): void {
    this.state.greeting(text);
  }

  private find(rule: string, user: string | null, tag: string | null, command: string | null, text: string): void {
    if (!this.log.enabled(rule)) return;
    this.log.add({ session: this.session, user, tag, command, rule, text });
    if (this.strict && this.verdict === null && clientRule(rule)!.severity === 'error') this.verdict = `[CLIENTBUG] ${rule}: ${text}`;
  }

  /**
   * A command line was read. Returns the text of the strict `-ERR` answer
   * when it broke an error rule and the mode is strict (the command must
   * then not run), else null.
   */
  command(seen: Pop3CommandSeen): string | null {
    const state = this.state;
    const tag = String(seen.seq);
    const verb = printable(seen.verb, MAX_VERB);
    this.user = seen.user;
    const find = (rule: string, text: string): void => this.find(rule, seen.user, tag, verb, text);
    this.verdict = null;
    if (seen.afterQuit) {
      if (!state.afterQuitReported) {
        state.afterQuitReported = true;
        find('pop3-command-after-quit', `${verb === '' ? 'a line' : verb} was sent after QUIT, which ends the session`);
      }
      return null;
    }
    // The connection turned TLS since the last command: STLS took effect (RFC 2595 §4).
    if (seen.secure && !state.secure) state.tlsStarted();
    state.secure = seen.secure;
    const space = seen.line.indexOf(' ');
    const args = space < 0 ? [] : seen.line.slice(space + 1).split(' ');
    const upper = seen.verb;

    if (seen.bareLf === true) find('pop3-bare-newline', 'the command line ended with a bare LF; POP3 commands end with CRLF');
    const octets = Buffer.byteLength(seen.line, 'latin1') + 2;
    if (octets > LINE_LIMIT) {
      const hint = upper === 'AUTH' ? '; send a long initial response on its own line after the "+" instead (RFC 5034 section 4)' : '';
      find('pop3-line-too-long', `a command line of ${octets} octets, above the 255 RFC 2449 section 4 allows${hint}`);
    }

    const previous = state.previous;
    if (seen.pipelined && !state.capa?.tags.has('PIPELINING')) {
      const why = state.capa === null ? 'the client has not asked CAPA' : 'the CAPA answer it was given has no PIPELINING';
      const before = previous?.verb ? printable(previous.verb, MAX_VERB) : 'the previous command';
      if (previous?.multiLine) find('pop3-command-during-multiline', `${verb} was sent while the multi-line answer to ${before} was still coming, and ${why}`);
      else find('pop3-pipelining-not-advertised', `${verb} was sent before the answer to ${before} arrived, and ${why}`);
    }

    this.checkState(upper, verb, seen.state, seen.secure, find);
    this.checkAnnounced(upper, verb, args, seen.state, find);

    if (upper === 'APOP' && !state.timestamp) find('pop3-apop-without-timestamp', 'APOP, but the greeting carried no <timestamp> to make the digest from');

    if (!seen.secure && (seen.stlsOffered || state.capa?.tags.has('STLS') === true)) {
      const mech = upper === 'AUTH' ? (args[0] ?? '').toUpperCase() : '';
      const what =
        upper === 'PASS' ? 'PASS sends the password' :
        upper === 'APOP' ? "APOP sends the user name and a digest that can be attacked offline with the greeting's timestamp" :
        CLEAR_MECHANISMS.has(mech) ? `AUTH ${mech} sends the ${mech === 'PLAIN' || mech === 'LOGIN' ? 'password' : 'token'}` : null;
      if (what !== null) find('pop3-plaintext-credentials', `${what} in clear text although the server offers STLS`);
    }

    let number: number | null = null;
    if (MESSAGE_ARG.has(upper) && seen.state === 'transaction' && args.length > 0 && /^\d{1,9}$/.test(args[0]!)) {
      number = Number(args[0]);
      this.checkMessage(number, find);
    }
    this.current = { verb: upper, number };
    // Without the session's word on the answer (older hooks), the next command must not take this one as answered +OK.
    state.previous = { verb: upper, multiLine: false };
    if (upper === 'QUIT') state.quit = true;
    const verdict = this.verdict;
    this.verdict = null;
    return verdict;
  }

  private checkState(upper: string, verb: string, state: Pop3StateName, secure: boolean, find: (rule: string, text: string) => void): void {
    const allowed = STATES.get(upper);
    if (allowed === undefined || state === 'update') return;
    if (!allowed.includes(state)) {
      find('pop3-wrong-state', `${verb} is not valid ${state === 'authorization' ? 'before login (AUTHORIZATION state)' : 'after login (TRANSACTION state)'}`);
      return;
    }
    if (upper === 'PASS' && !this.state.userAccepted) find('pop3-wrong-state', 'PASS may only follow a USER that was answered +OK');
    if (upper === 'STLS' && secure) find('pop3-wrong-state', 'STLS under a TLS layer that is already active');
  }

  private checkAnnounced(upper: string, verb: string, args: readonly string[], state: Pop3StateName, find: (rule: string, text: string) => void): void {
    const needed = ANNOUNCED_BY.get(upper);
    if (needed === undefined) return;
    const capa = this.state.capa;
    if (capa === null) {
      if (NEEDS_CAPA.has(upper)) find('pop3-capa-not-checked', `${verb} is optional (RFC 1939 section 7), and the client has not asked CAPA on this connection${this.state.secure ? ' since STLS' : ''}`);
      return;
    }
    if (!capa.tags.has(needed)) {
      // RFC 2449 §5: a server may announce more after login; only an answer from this state says the command is missing.
      if (capa.state !== state) {
        if (NEEDS_CAPA.has(upper)) find('pop3-capa-not-checked', `the CAPA the client asked before login did not list ${needed}; ask again after login before using ${verb}`);
        return;
      }
      find('pop3-capability-not-advertised', `${verb} needs ${needed}, which the CAPA answer the client was given does not list`);
      return;
    }
    if (upper === 'AUTH' && args.length > 0 && args[0] !== '') {
      const mech = args[0]!.toUpperCase();
      if (!capa.mechanisms.has(mech)) find('pop3-capability-not-advertised', `AUTH ${printable(mech, 32)}: the SASL line of the CAPA answer does not list that mechanism`);
    }
  }

  private checkMessage(number: number, find: (rule: string, text: string) => void): void {
    const { maildrop, marked } = this.state;
    if (number === 0) find('pop3-no-such-message', 'message number 0; POP3 numbers messages from 1');
    else if (maildrop !== null && number > maildrop) find('pop3-no-such-message', `message ${number}, but the maildrop had ${maildrop} message${maildrop === 1 ? '' : 's'} at login`);
    else if (marked.has(number)) find('pop3-no-such-message', `message ${number} is marked deleted (DELE); only RSET brings it back`);
  }

  /**
   * The answer to the current command is written in full (a multi-line
   * one with its terminating dot); `ok`: it was +OK.
   */
  answered(ok: boolean, multiLine: boolean): void {
    const current = this.current;
    const state = this.state;
    const verb = current?.verb ?? '';
    state.previous = { verb, multiLine };
    state.userAccepted = ok && verb === 'USER';
    const number = current?.number ?? null;
    if (ok && verb === 'DELE' && number !== null && (state.maildrop === null || number <= state.maildrop)) state.marked.add(number);
    if (ok && verb === 'RSET') state.marked.clear();
    this.current = null;
  }

  capa(sent: Pop3CapaSent): void {
    this.state.told(sent.lines, sent.state);
  }

  /** Login succeeded; `maildrop`: the number of messages in it (fixed for the session). */
  authenticated(maildrop: number): void {
    this.state.maildrop = maildrop;
    this.state.marked.clear();
  }

  /**
   * The connection closed; `quitting`: after QUIT or a goodbye of the
   * server (autologout, disconnect, shutdown), which are no client's doing.
   */
  closed(quitting: boolean): void {
    const state = this.state;
    if (quitting || state.quit) return;
    if (state.marked.size > 0) {
      this.find('pop3-dele-without-quit', this.user, null, null, `the client closed the connection with ${state.marked.size} message(s) marked by DELE but sent no QUIT, so none was deleted`);
    }
    this.find('pop3-no-quit', this.user, null, null, 'the client closed the connection without QUIT');
  }
}

/** The hook's factory (src/pop3/checker-hook.ts): one checker per POP3 session. */
export function pop3SessionChecker(findings: ClientFindingLog, session: number): Pop3Checker {
  return new Pop3SessionChecker(findings, session);
}
