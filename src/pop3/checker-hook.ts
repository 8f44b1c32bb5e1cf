/**
 * The seam between the POP3 session and the client checker (issue 33 item
 * 6, docs/client-check.md): the session reports every command line it
 * reads and every capability list it sends, with what the checker needs to
 * judge them. The default does nothing; the checker's POP3 rules plug in
 * through `pop3CheckerFactory`.
 */
import type { ClientFindingLog } from '../client-check/findings.js';

/** POP3 states as the checker sees them (RFC 1939 §3). */
export type Pop3StateName = 'authorization' | 'transaction' | 'update';

/** One command line as the session read it. */
export interface Pop3CommandSeen {
  /** Session number. */
  readonly session: number;
  /** The command's number in the session (`tag` of its command event), from 1. */
  readonly seq: number;
  /** The line without CRLF, latin1 (credentials included: the checker must not log them). */
  readonly line: string;
  /** The keyword, upper case (`USER`, `RETR`); empty for an empty line. */
  readonly verb: string;
  readonly state: Pop3StateName;
  readonly user: string | null;
  /** The connection is TLS (implicit or after STLS). */
  readonly secure: boolean;
  /** The server offers STLS on this connection (plain, `pop3.stls` on). */
  readonly stlsOffered: boolean;
  /** The client sent CAPA earlier in this session. */
  readonly capaSeen: boolean;
  /** The capabilities the last CAPA answer listed (upper-case keywords), empty before any. */
  readonly capabilities: readonly string[];
  /** The line was sent before the answer to the previous command had been written out in full. */
  readonly pipelined: boolean;
  /** The line came after QUIT (it is not run). */
  readonly afterQuit: boolean;
}

/** One capability answer the session sent (CAPA). */
export interface Pop3CapaSent {
  readonly session: number;
  readonly state: Pop3StateName;
  /** The capability lines as sent (`SASL PLAIN LOGIN`, `TOP`). */
  readonly lines: readonly string[];
}

/**
 * What the checker does per session. `command` returns the text of an
 * `-ERR` answer in strict mode (the command is not run then), else null.
 */
export interface Pop3Checker {
  command(seen: Pop3CommandSeen): string | null;
  capa(sent: Pop3CapaSent): void;
  /** The connection closed; `quit` is true after a QUIT. */
  closed(quit: boolean): void;
}

export const NO_POP3_CHECK: Pop3Checker = Object.freeze({
  command: () => null,
  capa: () => undefined,
  closed: () => undefined,
});

/** Makes the checker of one session from the server's findings log (null when `clientCheck` is off). */
export type Pop3CheckerFactory = (findings: ClientFindingLog, session: number) => Pop3Checker;

/** The checker's POP3 rules, once they are written: replace this (src/client-check/ owns the rules). */
export const pop3CheckerFactory: Pop3CheckerFactory = () => NO_POP3_CHECK;
