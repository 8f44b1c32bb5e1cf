/**
 * The client checker of one POP3 session: the POP3 session calls it at a
 * few named points (greeting sent, bytes received, a command line read, a
 * SASL line read, an answer written in full, a CAPA answer, login, TLS, the
 * close); it only looks, never writes. In `strict` mode it hands back the
 * `-ERR [CLIENTBUG]` answer for a command that broke an error rule, which
 * then must not run. The rules are listed in ../pop3-rules.ts; what the
 * client was told and sent is kept in ./client-state.ts.
 */
import type { ClientFindingLog } from '../findings.js';
import { clientRule } from '../rules.js';
import { Pop3ClientState, type Pop3State } from './client-state.js';

export type { Pop3State } from './client-state.js';

/** The session as the checker sees it (read when a finding is made). */
export interface Pop3CheckedSession {
  readonly id: number;
  /** The logged-in user, or the one USER named; null before. */
  readonly user: string | null;
}

/** One command line as the session read it. */
export interface Pop3CommandLine {
  /** The line without its line end. */
  line: Buffer;
  /** How the line ended: CRLF as RFC 1939 §3 asks, or a bare LF or CR the reader took as well. */
  ending: 'crlf' | 'lf' | 'cr';
  /** Input received after this line and not read yet. */
  buffered: number;
  state: Pop3State;
  /** Under TLS (implicit or after STLS). */
  secure: boolean;
  /** The server lists STLS in CAPA now (whether or not this client asked). */
  stlsOffered: boolean;
}

/** The strict answer for a command that broke an error rule: send `-ERR <text>` instead of running it. */
export interface Pop3Verdict {
  text: string;
}

/** RFC 2449 §4: command lines are at most 255 octets, CRLF included. */
const LINE_LIMIT = 255;
/** Longest verb a finding carries (a peer chooses it; findings are kept in numbers). */
const MAX_VERB = 16;

/** Commands RFC 1939 (§4-§7), RFC 2449, RFC 2595, RFC 5034 and RFC 6856 allow, by state. */
const STATES: ReadonlyMap<string, readonly Pop3State[]> = new Map<string, readonly Pop3State[]>([
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

export class Pop3SessionChecker {
  private readonly state = new Pop3ClientState();
  private readonly strict: boolean;
  /** The strict answer owed to the command being read. */
  private verdict: Pop3Verdict | null = null;
  /** The command being answered: its verb and message-number argument. */
  private current: { verb: string; number: number | null } | null = null;

  constructor(
    private readonly log: ClientFindingLog,
    private readonly session: Pop3CheckedSession,
  ) {
    this.strict = log.mode === 'strict';
    log.sawSession(session.id, 'pop3');
  }

  /** The greeting the session sent (its APOP timestamp, if any). */
  greeting(text: string): void {
    this.state.greeting(text);
  }

  /** Input arrived (after TLS). */
  receivedBytes(n: number): void {
    this.state.receivedBytes(n);
    this.checkAfterQuit();
  }

  private find(rule: string, tag: string | null, command: string | null, text: string): void {
    if (!this.log.enabled(rule)) return;
    this.log.add({ session: this.session.id, user: this.session.user, tag, command, rule, text });
    if (this.strict && this.verdict === null && clientRule(rule)!.severity === 'error') {
      this.verdict = { text: `[CLIENTBUG] ${rule}: ${text}` };
    }
  }

  /**
   * A command line was read. Returns the strict answer when it broke an
   * error rule and the mode is strict; the command must then not run.
   */
  command(cmd: Pop3CommandLine): Pop3Verdict | null {
    const state = this.state;
    const start = state.lineRead(cmd.buffered);
    const n = ++state.commands;
    const tag = String(n);
    const text = cmd.line.toString('latin1');
    const space = text.indexOf(' ');
    const verbRaw = (space < 0 ? text : text.slice(0, space)).toUpperCase();
    const verb = printable(verbRaw, MAX_VERB);
    const args = space < 0 ? [] : text.slice(space + 1).split(' ');
    this.verdict = null;

    if (cmd.ending !== 'crlf') this.find('pop3-bare-newline', tag, verb, `the command line ended with a bare ${cmd.ending === 'lf' ? 'LF' : 'CR'}; POP3 commands end with CRLF`);
    const octets = cmd.line.length + 2;
    if (octets > LINE_LIMIT) {
      const hint = verbRaw === 'AUTH' ? '; send a long initial response on its own line after the "+" instead (RFC 5034 section 4)' : '';
      this.find('pop3-line-too-long', tag, verb, `a command line of ${octets} octets, above the 255 RFC 2449 section 4 allows${hint}`);
    }

    const busy = state.inProgressAt(start);
    if (busy !== null && !state.capa?.tags.has('PIPELINING')) {
      const why = state.capa === null ? 'the client has not asked CAPA' : 'the CAPA answer it was given has no PIPELINING';
      if (busy.multiLine) this.find('pop3-command-during-multiline', tag, verb, `${verb} was sent while the multi-line answer to ${busy.verb} was still coming, and ${why}`);
      else this.find('pop3-pipelining-not-advertised', tag, verb, `${verb} was sent before the answer to ${busy.verb} arrived, and ${why}`);
    }

    this.checkState(verbRaw, verb, tag, cmd.state, cmd.secure);
    this.checkAnnounced(verbRaw, verb, tag, args, cmd.state);

    if (verbRaw === 'APOP' && !state.timestamp) this.find('pop3-apop-without-timestamp', tag, verb, 'APOP, but the greeting carried no <timestamp> to make the digest from');

    if (!cmd.secure && (cmd.stlsOffered || state.capa?.tags.has('STLS') === true)) {
      const mech = verbRaw === 'AUTH' ? (args[0] ?? '').toUpperCase() : '';
      const what =
        verbRaw === 'PASS' ? 'PASS sends the password' :
        verbRaw === 'APOP' ? "APOP sends the user name and a digest that can be attacked offline with the greeting's timestamp" :
        CLEAR_MECHANISMS.has(mech) ? `AUTH ${mech} sends the ${mech === 'PLAIN' || mech === 'LOGIN' ? 'password' : 'token'}` : null;
      if (what !== null) this.find('pop3-plaintext-credentials', tag, verb, `${what} in clear text although the server offers STLS`);
    }

    let number: number | null = null;
    if (MESSAGE_ARG.has(verbRaw) && cmd.state === 'transaction' && args.length > 0 && /^\d{1,9}$/.test(args[0]!)) {
      number = Number(args[0]);
      this.checkMessage(number, verb, tag);
    }
    this.current = { verb: verbRaw, number };

    if (verbRaw === 'QUIT') {
      state.quitEnd = state.readTo;
      this.checkAfterQuit();
    }
    const verdict = this.verdict;
    this.verdict = null;
    return verdict;
  }

  private checkState(verbRaw: string, verb: string, tag: string, state: Pop3State, secure: boolean): void {
    const allowed = STATES.get(verbRaw);
    if (allowed === undefined || state === 'update') return;
    if (!allowed.includes(state)) {
      const where = state === 'authorization' ? 'before login (AUTHORIZATION state)' : 'after login (TRANSACTION state)';
      this.find('pop3-wrong-state', tag, verb, `${verb} is not valid ${where}`);
      return;
    }
    if (verbRaw === 'PASS' && !this.state.userAccepted) this.find('pop3-wrong-state', tag, verb, 'PASS may only follow a USER that was answered +OK');
    if (verbRaw === 'STLS' && secure) this.find('pop3-wrong-state', tag, verb, 'STLS under a TLS layer that is already active');
  }

  private checkAnnounced(verbRaw: string, verb: string, tag: string, args: readonly string[], state: Pop3State): void {
    const needed = ANNOUNCED_BY.get(verbRaw);
    if (needed === undefined) return;
    const capa = this.state.capa;
    if (capa === null) {
      if (NEEDS_CAPA.has(verbRaw)) this.find('pop3-capa-not-checked', tag, verb, `${verb} is optional, and the client has not asked CAPA${state === 'authorization' ? '' : ' in this session'} (or not since STLS)`);
      return;
    }
    if (!capa.tags.has(needed)) {
      // RFC 2449 §5: a server may announce more after login; only an answer from this state says the command is missing.
      if (capa.state !== state) {
        if (NEEDS_CAPA.has(verbRaw)) this.find('pop3-capa-not-checked', tag, verb, `the CAPA the client asked before login did not list ${needed}; ask again after login before using ${verb}`);
        return;
      }
      this.find('pop3-capability-not-advertised', tag, verb, `${verb} needs ${needed}, which the CAPA answer the client was given does not list`);
      return;
    }
    if (verbRaw === 'AUTH' && args.length > 0 && args[0] !== '') {
      const mech = args[0]!.toUpperCase();
      if (!capa.mechanisms.has(mech)) this.find('pop3-capability-not-advertised', tag, verb, `AUTH ${printable(mech, 32)}: the SASL line of the CAPA answer does not list that mechanism`);
    }
  }

  private checkMessage(number: number, verb: string, tag: string): void {
    const { maildrop, marked } = this.state;
    if (number === 0) this.find('pop3-no-such-message', tag, verb, 'message number 0; POP3 numbers messages from 1');
    else if (maildrop !== null && number > maildrop) this.find('pop3-no-such-message', tag, verb, `message ${number}, but the maildrop had ${maildrop} message${maildrop === 1 ? '' : 's'} at login`);
    else if (marked.has(number)) this.find('pop3-no-such-message', tag, verb, `message ${number} is marked deleted (DELE); only RSET brings it back`);
  }

  private checkAfterQuit(): void {
    const state = this.state;
    if (state.quitEnd === null || state.afterQuitReported || state.received <= state.quitEnd) return;
    state.afterQuitReported = true;
    this.find('pop3-command-after-quit', null, null, `${state.received - state.quitEnd} octet(s) arrived after QUIT, which ends the session`);
  }

  /** A line read inside a command (a SASL response after "+"); `buffered` is the input after it. */
  continuation(buffered: number): void {
    this.state.lineRead(buffered);
  }

  /**
   * The answer to the current command is written in full (for a multi-line
   * one, its terminating dot); `ok`: it was +OK.
   */
  answered(ok: boolean, multiLine: boolean): void {
    const current = this.current;
    const state = this.state;
    const verb = current?.verb ?? '';
    state.answer(verb, multiLine);
    state.userAccepted = ok && verb === 'USER';
    if (ok && verb === 'DELE' && current!.number !== null && (state.maildrop === null || current!.number <= state.maildrop)) state.marked.add(current!.number);
    if (ok && verb === 'RSET') state.marked.clear();
    this.current = null;
  }

  /** The session answered CAPA with these capability lines (the lines between `+OK` and the dot). */
  capa(lines: readonly string[], state: Pop3State): void {
    this.state.told(lines, state);
  }

  /** Login succeeded; `maildrop`: the number of messages in it (fixed for the session), when known. */
  authenticated(maildrop: number | null): void {
    this.state.maildrop = maildrop;
    this.state.marked.clear();
  }

  /** TLS started (STLS): what CAPA said before no longer counts (RFC 2595 §4). */
  tlsStarted(): void {
    this.state.tlsStarted();
  }

  /** The strict answer owed to the command being read, once (a finding made while it ran). */
  takeVerdict(): Pop3Verdict | null {
    const verdict = this.verdict;
    this.verdict = null;
    return verdict;
  }

  /** The connection closed; `byServer`: the server ended it (QUIT's answer, autologout, a disconnect, a stop). */
  closed(byServer: boolean): void {
    const state = this.state;
    this.checkAfterQuit();
    if (byServer || state.quitEnd !== null) return;
    if (state.marked.size > 0) {
      this.find('pop3-dele-without-quit', null, null, `the client closed the connection with ${state.marked.size} message(s) marked by DELE but sent no QUIT, so none was deleted`);
    }
    this.find('pop3-no-quit', null, null, 'the client closed the connection without QUIT');
  }
}
