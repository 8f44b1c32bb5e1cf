/** What a POP3 command is and returns (one module per family of commands in this folder). */
import type { Framing } from '../framing.js';
import type { Pop3Fault } from '../../script/rule.js';
import type { Pop3Session } from '../session.js';

/** RFC 1939 §3: the states a command may run in. */
export type Pop3State = 'authorization' | 'transaction' | 'update';

/** A command's answer: the status line, and for multi-line answers the body before framing. */
export interface Pop3Reply {
  ok: boolean;
  /** RFC 2449 / RFC 3206 response code without brackets (`IN-USE`, `AUTH`, `SYS/TEMP`). */
  code?: string;
  text: string;
  /** A multi-line body (CRLF lines, not yet byte-stuffed); null or absent for a one-line answer. */
  body?: Buffer | null;
  /** How the body is framed (faults change it); RFC 1939's without. */
  framing?: Framing;
  /**
   * How the command event reports it: `OK` for +OK, `NO` for a refused
   * command, `BAD` for one that is unknown, in the wrong state or
   * malformed. Both of the latter go out as `-ERR`.
   */
  status?: 'OK' | 'NO' | 'BAD';
}

export interface Pop3CommandContext {
  readonly session: Pop3Session;
  /** Upper case. */
  readonly verb: string;
  /** The line after the keyword and its space (a PASS password may hold spaces). */
  readonly rest: string;
  /** `rest` split at spaces (RFC 1939: arguments are separated by a single space; runs of spaces are taken too). */
  readonly args: readonly string[];
  /** The POP3 fault a script rule turned on for this command, or null. */
  readonly fault: Pop3Fault | null;
}

export interface Pop3CommandSpec {
  readonly name: string;
  readonly states: readonly Pop3State[];
  run(ctx: Pop3CommandContext): Pop3Reply | Promise<Pop3Reply>;
}

export const ok = (text: string, body?: Buffer | null, framing?: Framing): Pop3Reply => ({ ok: true, text, ...(body !== undefined ? { body } : {}), ...(framing ? { framing } : {}) });
export const err = (text: string, code?: string): Pop3Reply => ({ ok: false, text, status: 'NO', ...(code ? { code } : {}) });
export const bad = (text: string): Pop3Reply => ({ ok: false, text, status: 'BAD' });

/** Lines joined into a multi-line body. */
export function linesBody(lines: readonly string[]): Buffer {
  return Buffer.from(lines.length === 0 ? '' : `${lines.join('\r\n')}\r\n`, 'utf8');
}

/** A message-number argument (RFC 1939: digits, no sign); NaN when it is not one. */
export function messageNumber(arg: string | undefined): number {
  return arg !== undefined && /^[0-9]{1,10}$/.test(arg) ? Number(arg) : Number.NaN;
}
