/**
 * Puts the same mail on both servers before a compare: each message is
 * APPENDed to the reference first, then to the target, with its flags and
 * internal date, so UIDs, flags and dates line up. A message the reference
 * refuses is left out on both sides (and said so); one only the target
 * refuses is a difference of the `FILL` step.
 */
import { formatInternalDate, type InternalDate } from '../store/internal-date.js';
import { ServerConnection, type Endpoint } from './connection.js';
import type { Credentials } from './drive.js';

export interface FillMessage {
  raw: Buffer;
  flags?: readonly string[];
  internaldate?: InternalDate;
  /** A name for messages (a malformed case, a file). */
  label?: string;
}

export interface FillOutcome {
  index: number;
  label: string | null;
  reference: string;
  target: string | null;
}

const quote = (s: string): string => `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"`;

class Session {
  private n = 0;
  private constructor(private readonly conn: ServerConnection, private readonly timeoutMs: number) {}

  static async open(endpoint: Endpoint, name: string, login: Credentials, timeoutMs: number): Promise<Session> {
    const conn = await ServerConnection.open(endpoint, name);
    const s = new Session(conn, timeoutMs);
    await conn.next(timeoutMs);
    const answer = await s.command(Buffer.from(`LOGIN ${quote(login.user)} ${quote(login.password)}\r\n`, 'utf8'));
    if (!/^\S+ OK/i.test(answer)) {
      conn.close();
      throw new Error(`${name} refused the login of ${login.user}: ${answer}`);
    }
    return s;
  }

  /** Sends a command (the tag is ours), sending literal data after each `+`; returns the tagged response line. */
  async command(line: Buffer, literals: Buffer[] = []): Promise<string> {
    const tag = `F${++this.n}`;
    this.conn.send(Buffer.concat([Buffer.from(`${tag} `), line]));
    let next = 0;
    for (;;) {
      const unit = await this.conn.next(this.timeoutMs);
      if (!unit) throw new Error(`no answer to ${tag} within ${this.timeoutMs} ms`);
      const text = unit.bytes.toString('latin1').replace(/\r\n$/, '');
      if (text.startsWith(`${tag} `)) return text;
      if (text.startsWith('+') && next < literals.length) this.conn.send(literals[next++]!);
    }
  }

  async logout(): Promise<void> {
    try {
      await this.command(Buffer.from('LOGOUT\r\n'));
    } catch {
      /* closing anyway */
    }
    this.conn.close();
  }
}

async function append(s: Session, mailbox: string, m: FillMessage): Promise<string> {
  const flags = (m.flags ?? []).filter((f) => f.toLowerCase() !== '\\recent').join(' ');
  const date = m.internaldate ? ` "${formatInternalDate(m.internaldate)}"` : '';
  const line = Buffer.from(`APPEND ${quote(mailbox)} (${flags})${date} {${m.raw.length}}\r\n`, 'utf8');
  return s.command(line, [Buffer.concat([m.raw, Buffer.from('\r\n')])]);
}

/** APPENDs `messages` to `mailbox` on both servers, reference first. */
export async function fillBoth(
  reference: { endpoint: Endpoint; name: string; login: Credentials },
  target: { endpoint: Endpoint; name: string; login: Credentials },
  messages: Iterable<FillMessage>,
  mailbox = 'INBOX',
  timeoutMs = 30_000,
): Promise<FillOutcome[]> {
  const ref = await Session.open(reference.endpoint, reference.name, reference.login, timeoutMs);
  const tgt = await Session.open(target.endpoint, target.name, target.login, timeoutMs).catch(async (err: unknown) => {
    await ref.logout();
    throw err;
  });
  const out: FillOutcome[] = [];
  try {
    let index = 0;
    for (const m of messages) {
      const r = await append(ref, mailbox, m);
      const ok = /^\S+ OK/i.test(r);
      const t = ok ? await append(tgt, mailbox, m) : null;
      out.push({ index: index++, label: m.label ?? null, reference: r.replace(/^\S+ /, ''), target: t === null ? null : t.replace(/^\S+ /, '') });
    }
  } finally {
    await ref.logout();
    await tgt.logout();
  }
  return out;
}
