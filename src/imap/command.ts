import type { ArgParser } from './parser.js';
import type { ImapSession } from './session.js';

/** Session states in which a command may run. */
export type ImapState = 'notAuthenticated' | 'authenticated' | 'selected';

/** The tagged answer of a command. */
export interface CommandResult {
  status: 'OK' | 'NO' | 'BAD';
  /** Response code without brackets, e.g. `READ-WRITE` or `APPENDUID 3 7`. */
  code?: string;
  text: string;
}

export interface CommandContext {
  readonly session: ImapSession;
  readonly tag: string;
  /** Command name as the events show it, e.g. `UID FETCH`. */
  readonly name: string;
  /** True for the UID form of FETCH, STORE, SEARCH, COPY, MOVE, EXPUNGE. */
  readonly uid: boolean;
  /** Arguments, positioned after the command name. */
  readonly args: ArgParser;
}

/**
 * One IMAP command. `run` parses its own arguments from `ctx.args` (the
 * shared grammar) and returns the tagged result; it writes untagged data
 * through the session.
 */
export interface CommandSpec {
  /** Upper-case name; UID forms are registered as `UID FETCH` etc. */
  name: string;
  states: readonly ImapState[];
  /**
   * FETCH, STORE and SEARCH must not be followed by EXPUNGE responses
   * (RFC 3501 §7.4.1): pending expunges wait for the next command.
   */
  holdsExpunges?: boolean;
  run(ctx: CommandContext): CommandResult | Promise<CommandResult>;
}

export const ok = (text = 'Completed', code?: string): CommandResult => (code ? { status: 'OK', code, text } : { status: 'OK', text });
export const no = (text: string, code?: string): CommandResult => (code ? { status: 'NO', code, text } : { status: 'NO', text });
export const bad = (text: string, code?: string): CommandResult => (code ? { status: 'BAD', code, text } : { status: 'BAD', text });

export const ANY_STATE: readonly ImapState[] = ['notAuthenticated', 'authenticated', 'selected'];
export const AUTHENTICATED: readonly ImapState[] = ['authenticated', 'selected'];
export const SELECTED: readonly ImapState[] = ['selected'];
export const NOT_AUTHENTICATED: readonly ImapState[] = ['notAuthenticated'];

/** Thrown from deep inside a command to end it with this tagged result. */
export class CommandFailure extends Error {
  constructor(readonly result: CommandResult) {
    super(result.text);
  }
}

export const failBad = (text: string, code?: string): never => {
  throw new CommandFailure(bad(text, code));
};

/** A parameter a command accepts (see CommandParameter in src/extensions/extension.ts). */
export interface ParameterSpec {
  name: string;
  parse?(args: ArgParser): unknown;
}

/**
 * Reads a parenthesized parameter list (RFC 4466 `select-params`,
 * `create-params`): names from `known` only (others are BAD), each with its
 * value when the parameter takes one. Returns values by upper-case name.
 */
export function readParameters(args: ArgParser, known: ReadonlyMap<string, ParameterSpec>, command: string): Map<string, unknown> {
  const out = new Map<string, unknown>();
  args.list(
    () => {
      const name = args.atom().toUpperCase();
      const spec = known.get(name);
      if (!spec) failBad(`Unknown ${command} parameter ${name.slice(0, 40)}`);
      if (out.has(name)) failBad(`${command} parameter ${name} given twice`);
      let value: unknown = null;
      if (spec!.parse) {
        args.sp();
        value = spec!.parse(args);
      }
      out.set(name, value);
    },
    { allowEmpty: false },
  );
  return out;
}
