/**
 * Replay: serves a recorded transcript back to a client. What the server
 * sent is sent again; what the client sent is what the live client must
 * send, compared unit by unit (a command line, or literal data) with the
 * tag left out: the recorded responses are retagged with the live client's
 * tags. A unit that differs is answered `BAD [CLIENTBUG]` naming what the
 * recording expected, with a `replay` event; the replay waits for the
 * expected unit after that.
 *
 * On the POP3 listener the same recording is served as POP3 (the listener
 * decides the protocol, as it does for a live session): a unit is one
 * line, there are no tags, and a line that differs is answered
 * `-ERR [CLIENTBUG] expected: <recorded line>`.
 */
import type { Duplex } from 'node:stream';
import type { ReplayEvent, SessionInfo, SessionProtocol } from '../events.js';
import type { Server } from '../server.js';
import type { SessionHandle } from '../session/registry.js';
import { UnitFramer, type WireUnit } from './framer.js';
import { LineFramer } from './line-framer.js';
import { REDACTED } from './redact.js';
import type { Transcript } from './transcript.js';
import type { SessionRecorder } from './transcripts.js';

/** Bytes a live unit may exceed the largest recorded one by (a longer tag, password or SASL response). */
const MAX_UNIT_SLACK = 64 * 1024;

type Step = { send: WireUnit } | { expect: WireUnit };

/** The protocols a recording can be served as: the listener's. */
export type ReplayProtocol = Extract<SessionProtocol, 'imap' | 'pop3'>;

type Framer = UnitFramer | LineFramer;

const framerFor = (protocol: ReplayProtocol, side: 'client' | 'server', maxUnit = Infinity): Framer =>
  protocol === 'pop3' ? new LineFramer(maxUnit) : new UnitFramer(side, maxUnit);

/** The recording as alternating server output and expected client units. */
export function replaySteps(t: Transcript, protocol: ReplayProtocol = 'imap'): Step[] {
  const steps: Step[] = [];
  const client = framerFor(protocol, 'client');
  const server = framerFor(protocol, 'server');
  for (const chunk of t.chunks) {
    if (chunk.from === 'client') for (const unit of client.push(chunk.data)) steps.push({ expect: unit });
    else for (const unit of server.push(chunk.data)) steps.push({ send: unit });
  }
  const lastOut = server.rest();
  if (lastOut) steps.push({ send: lastOut });
  const lastIn = client.rest();
  if (lastIn) steps.push({ expect: lastIn });
  return steps;
}

/** One unit as one line of text for messages and events. */
export function unitText(unit: WireUnit): string {
  const text = unit.bytes.toString('latin1').replace(/\r\n$/, '');
  const shown = text.length > 300 ? `${text.slice(0, 300)}... (${unit.bytes.length} bytes)` : text;
  return shown.replace(/[\x00-\x1f\x7f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

const splitTag = (text: string): [string, string] | null => {
  const sp = text.indexOf(' ');
  return sp < 0 ? null : [text.slice(0, sp), text.slice(sp + 1)];
};

/**
 * Whether a live unit is the recorded one. Command lines compare without
 * their tags; a credential the recording shows as `***` matches any value
 * (a redacted LOGIN password, AUTHENTICATE data, a SASL response line).
 */
export function unitsMatch(recorded: WireUnit, live: WireUnit): { ok: boolean; tags?: [string, string] } {
  const r = recorded.bytes.toString('latin1').replace(/\r\n$/, '');
  const l = live.bytes.toString('latin1').replace(/\r\n$/, '');
  if (r === REDACTED) return { ok: true };
  if (!recorded.starts || !live.starts) return { ok: r === l };
  const rs = splitTag(r);
  const ls = splitTag(l);
  if (!rs || !ls) return { ok: r === l };
  const [rTag, rRest] = rs;
  const [lTag, lRest] = ls;
  const ok = rRest === lRest || (rRest.endsWith(` ${REDACTED}`) && lRest.startsWith(rRest.slice(0, -REDACTED.length)) && lRest.length > rRest.length - REDACTED.length);
  return ok ? { ok, tags: [rTag, lTag] } : { ok };
}

/**
 * Whether a live POP3 line is the recorded one: the same bytes, or the
 * recording shows a credential as `***` (PASS, APOP's digest, AUTH's
 * initial response or a continuation line) and the live line has some value
 * there.
 */
export function pop3LinesMatch(recorded: WireUnit, live: WireUnit): boolean {
  const r = recorded.bytes.toString('latin1').replace(/\r?\n$/, '');
  const l = live.bytes.toString('latin1').replace(/\r?\n$/, '');
  if (r === l || r === REDACTED) return true;
  if (!r.endsWith(` ${REDACTED}`)) return false;
  const head = r.slice(0, -REDACTED.length);
  return l.length > head.length && l.startsWith(head);
}

/** Hands each new connection the next recorded session, from the first again after the last. */
export class Replayer {
  private next = 0;
  /** Each recorded session cut into steps once per protocol, for all the connections that replay it. */
  private readonly steps = new Map<ReplayProtocol, Step[][]>();

  constructor(private readonly sessions: readonly Transcript[]) {}

  /**
   * `protocol` is the listener's; `loginLeft` tells that listener the
   * connection no longer waits to log in (a replay never logs in for real).
   */
  accept(server: Server, socket: Duplex, tcp: Duplex, secure: boolean, remoteAddress: string | null, protocol: ReplayProtocol = 'imap', loginLeft: () => void = () => server.unauthenticatedLeft()): ReplaySession {
    const at = this.next % this.sessions.length;
    this.next++;
    let cut = this.steps.get(protocol);
    if (cut === undefined) {
      cut = this.sessions.map((t) => replaySteps(t, protocol));
      this.steps.set(protocol, cut);
    }
    return new ReplaySession(server, this.sessions[at]!, cut[at]!, socket, tcp, secure, remoteAddress, protocol, loginLeft);
  }
}

export class ReplaySession implements SessionHandle {
  readonly id: number;
  readonly user: string | null;
  private cursor = 0;
  /** The live client's units; one larger than any recorded unit could ever match, so none may be larger. */
  private readonly framer: Framer;
  /** Recorded tag → the live client's tag for the same command. */
  private readonly tags = new Map<string, string>();
  private lastLiveTag: string | null = null;
  private closed = false;
  private ended = false;
  /** The client sent a unit too large to follow: told so once, and the connection ends. */
  private cutOff = false;
  private readonly transcript: SessionRecorder | null;

  constructor(
    private readonly server: Server,
    private readonly recorded: Transcript,
    private readonly steps: readonly Step[],
    private readonly socket: Duplex,
    private readonly tcp: Duplex,
    private readonly secure: boolean,
    private readonly remoteAddress: string | null,
    private readonly protocol: ReplayProtocol = 'imap',
    loginLeft: () => void = () => server.unauthenticatedLeft(),
  ) {
    this.id = server.sessions.nextId();
    this.user = recorded.user;
    let largest = 0;
    for (const step of this.steps) if ('expect' in step) largest = Math.max(largest, step.expect.bytes.length);
    // Room for a live tag or credential longer than the recorded one.
    this.framer = framerFor(protocol, 'client', largest + MAX_UNIT_SLACK);
    // A replay never logs in for real: it does not count as waiting for a login.
    loginLeft();
    // The listener's credential filter: a replayed POP3 PASS is redacted as a live one is.
    this.transcript = server.transcripts.open(this.id, remoteAddress, this, protocol);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => this.onClose());
    server.sessions.add(this);
    server.emit('session', { type: 'open', session: this.info() });
    this.pump();
  }

  info(): SessionInfo {
    return {
      session: this.id,
      user: this.user,
      state: this.protocol === 'pop3' ? (this.closed ? 'Update' : 'Authorization') : this.closed ? 'Logout' : 'Not Authenticated',
      mailbox: null,
      readOnly: false,
      enabled: [],
      secure: this.secure,
      compressed: false,
      remoteAddress: this.closed ? null : this.remoteAddress,
      protocol: this.protocol,
    };
  }

  disconnect(options: { text?: string; reset?: boolean }): void {
    if (options.reset) {
      (this.tcp as { resetAndDestroy?: () => void }).resetAndDestroy?.();
      this.socket.destroy();
    } else {
      const text = options.text ?? 'Disconnected by the server';
      this.write(Buffer.from(this.protocol === 'pop3' ? `-ERR ${text}\r\n` : `* BYE ${text}\r\n`));
      this.socket.end();
    }
    this.server.sessions.remove(this.id);
  }

  inject(data: Buffer): void {
    this.write(data);
  }

  /** The socket boundary, both ways, as for a live session. */
  private write(data: Buffer): void {
    if (this.closed || this.socket.destroyed) return;
    this.transcript?.fromServer(data);
    this.socket.write(data);
  }

  private onData(chunk: Buffer): void {
    if (this.closed) return;
    this.transcript?.fromClient(chunk);
    for (const unit of this.framer.push(chunk)) this.take(unit);
    if (this.framer.overflow && !this.cutOff) {
      this.cutOff = true;
      const why = `${this.protocol === 'pop3' ? 'a line' : 'a line or literal'} longer than anything in the recording (over ${this.framer.maxUnit} bytes)`;
      const end = this.protocol === 'pop3' ? '-ERR' : '* BYE';
      this.write(Buffer.from(`${end} [CLIENTBUG] Replay of recorded session ${this.recorded.session}: ${why}\r\n`, 'latin1'));
      this.event('deviation', null, `${why}`);
      this.socket.end();
    }
  }

  /** Sends recorded output up to the next expected client unit. */
  private pump(): void {
    const out: Buffer[] = [];
    while (this.cursor < this.steps.length) {
      const step = this.steps[this.cursor]!;
      if (!('send' in step)) break;
      out.push(this.retag(step.send));
      this.cursor++;
    }
    if (out.length > 0) this.write(Buffer.concat(out));
    if (this.cursor === this.steps.length && !this.ended) {
      this.ended = true;
      this.event('done', null, null);
      // The recorded server said BYE last: it closed the connection then, and so does the replay.
      const tail = out.map((b) => b.toString('latin1')).join('');
      if (this.protocol === 'imap' && /(^|\r\n)\* BYE /.test(tail)) this.socket.end();
      // A recorded POP3 session that ended with QUIT: the server closed after its +OK (RFC 1939 section 6).
      if (this.protocol === 'pop3' && this.lastExpected() !== null && /^QUIT\b/i.test(this.lastExpected()!)) this.socket.end();
    }
  }

  /** The last client line of the recording, or null when the client sent nothing. */
  private lastExpected(): string | null {
    for (let i = this.steps.length - 1; i >= 0; i--) {
      const step = this.steps[i]!;
      if ('expect' in step) return step.expect.bytes.toString('latin1');
    }
    return null;
  }

  private retag(unit: WireUnit): Buffer {
    if (!unit.starts || this.tags.size === 0) return unit.bytes;
    const sp = unit.bytes.indexOf(0x20);
    if (sp <= 0) return unit.bytes;
    const live = this.tags.get(unit.bytes.subarray(0, sp).toString('latin1'));
    return live === undefined ? unit.bytes : Buffer.concat([Buffer.from(live, 'latin1'), unit.bytes.subarray(sp)]);
  }

  private take(unit: WireUnit): void {
    if (this.protocol === 'pop3') return this.takeLine(unit);
    if (unit.starts) {
      const text = unit.bytes.toString('latin1');
      const sp = text.indexOf(' ');
      if (sp > 0) this.lastLiveTag = text.slice(0, sp);
    }
    const step = this.steps[this.cursor];
    if (step && 'expect' in step) {
      const match = unitsMatch(step.expect, unit);
      if (match.ok) {
        if (match.tags) this.tags.set(match.tags[0], match.tags[1]);
        this.cursor++;
        this.pump();
        return;
      }
    }
    const expected = step && 'expect' in step ? unitText(step.expect) : null;
    const received = unitText(unit);
    // A refused command's synchronizing literal never comes: the next bytes are a new command.
    if (/\{\d+\}\r\n$/.test(unit.bytes.toString('latin1'))) this.framer.cancelLiteral();
    const why = expected === null ? 'the recording has no more client input' : `expected ${JSON.stringify(expected)}`;
    // The BAD goes to the command the unit starts or continues; a line without a tag gets an untagged one.
    const own = unit.starts ? splitTag(unit.bytes.toString('latin1'))?.[0] : this.lastLiveTag;
    const tag = own ?? '*';
    this.write(Buffer.from(`${tag} BAD [CLIENTBUG] Replay of recorded session ${this.recorded.session}: ${why}, got ${JSON.stringify(received)}\r\n`, 'latin1'));
    this.event('deviation', expected, received);
  }

  /** A POP3 client line: the recorded one moves the replay on; any other gets -ERR and the replay keeps waiting. */
  private takeLine(unit: WireUnit): void {
    const step = this.steps[this.cursor];
    if (step && 'expect' in step && pop3LinesMatch(step.expect, unit)) {
      this.cursor++;
      this.pump();
      return;
    }
    const expected = step && 'expect' in step ? unitText(step.expect) : null;
    const received = unitText(unit);
    const said = expected === null ? 'nothing (the recording has no more client input)' : expected;
    this.write(Buffer.from(`-ERR [CLIENTBUG] expected: ${said}\r\n`, 'latin1'));
    this.event('deviation', expected, received);
  }

  private event(type: ReplayEvent['type'], expected: string | null, received: string | null): void {
    this.server.emit('replay', { type, session: this.id, recorded: this.recorded.session, expected, received });
  }

  private onClose(): void {
    if (this.closed) return;
    this.closed = true;
    this.server.sessions.remove(this.id);
    this.transcript?.close();
    this.server.emit('session', { type: 'close', session: this.info() });
  }
}
