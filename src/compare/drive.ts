/**
 * Plays the client half of a recorded session against one server, one
 * command at a time: each command is sent when the previous one is done
 * (its tagged response came), its literal data when the server asked for
 * it (`+`), and the line that ends IDLE or answers a SASL challenge when the
 * server's `+` came. Both servers so get the same commands in the same
 * order, whatever the recorded client pipelined.
 *
 * Credentials: a recording keeps passwords as `***`; LOGIN and
 * AUTHENTICATE PLAIN are sent with the credentials given for that server.
 */
import type { WireUnit } from '../transcript/framer.js';
import { UnitFramer } from '../transcript/framer.js';
import type { Transcript } from '../transcript/transcript.js';
import { ServerConnection, type Endpoint } from './connection.js';

export interface Credentials {
  user: string;
  password: string;
}

/** A command as the recording has it: its units (the line, then literal data or continuation lines). */
export interface RecordedCommand {
  tag: string;
  /** `UID FETCH`, `SELECT`, ...: the name the allow-list matches. */
  name: string;
  units: WireUnit[];
}

/** What one server answered to one command. */
export interface Exchange {
  command: RecordedCommand;
  /** Response units (without the recorded tag rewritten: the same tags go to both servers). */
  responses: Buffer[];
  /** Set when the server did not finish answering (closed, or silent past the timeout). */
  unfinished: string | null;
}

export interface SessionRun {
  greeting: Buffer | null;
  exchanges: Exchange[];
}

/** The client units of a recording grouped into commands. */
export function recordedCommands(t: Transcript): RecordedCommand[] {
  const framer = new UnitFramer('client');
  const units: WireUnit[] = [];
  for (const chunk of t.chunks) if (chunk.from === 'client') units.push(...framer.push(chunk.data));
  const rest = framer.rest();
  if (rest) units.push(rest);
  const out: RecordedCommand[] = [];
  // A line that continues the open command (IDLE's DONE, a SASL answer) is told from a new command by
  // its shape: those lines are never `tag COMMAND` (RFC 3501 §7.5, §6.2.2).
  for (const unit of units) {
    const text = unit.bytes.toString('latin1');
    const last = out[out.length - 1];
    if (!unit.starts || (last && continues(last, text))) {
      if (last) last.units.push(unit);
      continue;
    }
    const m = /^(\S+) (UID \S+|\S+)/i.exec(text);
    out.push({ tag: m ? m[1]! : text.trim(), name: m ? m[2]!.replace(/\r?\n$/, '').toUpperCase() : '', units: [unit] });
  }
  return out;
}

/** Whether a line goes to the open command: IDLE's DONE, or a SASL exchange's answer. */
function continues(command: RecordedCommand, text: string): boolean {
  if (command.name === 'IDLE') return command.units.every((u) => !/^DONE\r?\n?$/i.test(u.bytes.toString('latin1'))) && /^DONE\r?\n?$/i.test(text);
  if (command.name === 'AUTHENTICATE') return !/^\S+ \S+/.test(text) || /^[A-Za-z0-9+/=]*\r?\n$/.test(text) || text.trim() === '*';
  return false;
}

const quote = (s: string): string => `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"`;

/** The unit to send for a recorded one: credentials put in where the recording has a login. */
function outgoing(command: RecordedCommand, index: number, login: Credentials | null): Buffer | null {
  const unit = command.units[index]!;
  if (!login) return unit.bytes;
  if (command.name === 'LOGIN') {
    // The whole command is one line of ours (a recorded literal user name or password is replaced too).
    return index === 0 ? Buffer.from(`${command.tag} LOGIN ${quote(login.user)} ${quote(login.password)}\r\n`, 'utf8') : null;
  }
  if (command.name === 'AUTHENTICATE') {
    const plain = Buffer.from(`\0${login.user}\0${login.password}`, 'utf8').toString('base64');
    const text = unit.bytes.toString('latin1');
    if (index === 0) {
      const m = /^(\S+ AUTHENTICATE PLAIN)( \S+)?\r\n$/i.exec(text);
      if (m) return Buffer.from(m[2] ? `${m[1]} ${plain}\r\n` : text, 'latin1');
      return unit.bytes;
    }
    if (/^AUTHENTICATE PLAIN\r\n$/i.test(command.units[0]!.bytes.toString('latin1').replace(/^\S+ /, '')) && index === 1) return Buffer.from(`${plain}\r\n`, 'latin1');
  }
  return unit.bytes;
}

function isTagged(unit: WireUnit, tag: string): boolean {
  return unit.starts && unit.bytes.length > tag.length && unit.bytes.toString('latin1', 0, tag.length + 1) === `${tag} `;
}

const isContinuation = (unit: WireUnit): boolean => unit.starts && unit.bytes[0] === 0x2b;

/** Runs the recorded commands of one session against one server and returns what it answered. */
export async function driveSession(
  endpoint: Endpoint,
  name: string,
  commands: readonly RecordedCommand[],
  login: Credentials | null,
  timeoutMs: number,
): Promise<SessionRun> {
  const conn = await ServerConnection.open(endpoint, name);
  try {
    const greeting = await conn.next(timeoutMs);
    const exchanges: Exchange[] = [];
    for (const command of commands) {
      const exchange: Exchange = { command, responses: [], unfinished: null };
      exchanges.push(exchange);
      // What follows these is TLS or deflate on the wire, which a replay of recorded plain text cannot speak.
      if (command.name === 'STARTTLS' || command.name === 'COMPRESS') {
        exchange.unfinished = `${command.name} cannot be replayed (compare speaks plain IMAP; record with rookery record, which keeps both out)`;
        break;
      }
      let index = 0;
      let finished = false;
      const sendNext = (): void => {
        while (index < command.units.length) {
          const data = outgoing(command, index, login);
          index++;
          if (data) {
            conn.send(data);
            // A line that ends in a synchronizing literal waits for the server's go-ahead.
            if (/\{\d+\}\r\n$/.test(data.toString('latin1', Math.max(0, data.length - 24)))) return;
            if (command.name === 'IDLE' || command.name === 'AUTHENTICATE') return;
          }
        }
      };
      sendNext();
      while (!finished) {
        const unit = await conn.next(timeoutMs);
        if (!unit) {
          exchange.unfinished = conn.closed ? 'the server closed the connection' : `no tagged response within ${timeoutMs} ms`;
          break;
        }
        exchange.responses.push(unit.bytes);
        if (isTagged(unit, command.tag)) finished = true;
        else if (isContinuation(unit)) {
          if (index < command.units.length) sendNext();
        }
      }
      if (exchange.unfinished) break;
    }
    return { greeting: greeting?.bytes ?? null, exchanges };
  } finally {
    conn.close();
  }
}
