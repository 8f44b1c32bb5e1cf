/**
 * The structured form of one server response, as script rules see it
 * before it is serialized (`mutate`, `literals`, the `untagged` matcher).
 *
 * Sessions build most responses from typed values (`* 3 FETCH (...)`,
 * status responses with their code); a few go out as ready-made text (the
 * FETCH fast path, EXPUNGE runs, the greeting). A rule that needs structure
 * gets it from `fromValues`/`fromStatus`, or from `parseResponseLine` for
 * text without literals, so no rule has to edit bytes with a regex.
 */
import { continuation, encodeResponseOf, tagged, untaggedStatus, type ResponseStatus, type UntaggedStatus } from '../imap/wire/serializer.js';
import { Atom, type ImapValue } from '../imap/wire/values.js';

/** A response code with its arguments (`UIDVALIDITY 5` is `{ name: 'UIDVALIDITY', args: [5] }`). */
export interface ScriptResponseCode {
  name: string;
  args: ImapValue[];
}

/**
 * One response:
 * - `data`: `* <values>` (`[3, atom('FETCH'), [...]]`, `[atom('LIST'), [...], '/', 'INBOX']`);
 * - `status`: a tagged `OK`/`NO`/`BAD`, or an untagged `OK`/`NO`/`BAD`/`BYE`/`PREAUTH`
 *   (`tag` null), with its response code and text;
 * - `continuation`: a `+` line.
 */
export type ScriptResponse =
  | { kind: 'data'; values: ImapValue[] }
  | { kind: 'status'; tag: string | null; status: string; code: ScriptResponseCode | null; text: string }
  | { kind: 'continuation'; text: string };

const STATUS_WORDS = new Set(['OK', 'NO', 'BAD', 'BYE', 'PREAUTH']);

/** The type of an untagged response (`FETCH`, `EXISTS`, `OK`), upper case; null when it has none. */
export function responseType(response: ScriptResponse): string | null {
  if (response.kind === 'status') return response.tag === null ? response.status.toUpperCase() : null;
  if (response.kind === 'continuation') return null;
  const [first, second] = response.values;
  const word = typeof first === 'number' ? second : first;
  return word instanceof Atom ? word.value.toUpperCase() : null;
}

/** The type of an untagged response given as text (`* 3 EXISTS` is `EXISTS`); null for other lines. */
export function textResponseType(text: string): string | null {
  const m = /^\* (?:\d+ )?([A-Za-z0-9.=-]+)/.exec(text);
  return m ? m[1]!.toUpperCase() : null;
}

/**
 * Structure for `* <values>`. An untagged status written as atoms
 * (`* OK [UIDVALIDITY 5] UIDs valid`) becomes a `status` response with its
 * code parsed.
 */
export function fromValues(values: readonly ImapValue[]): ScriptResponse {
  const first = values[0];
  if (first instanceof Atom && STATUS_WORDS.has(first.value.toUpperCase()) && values.slice(1).every((v) => v instanceof Atom)) {
    const rest = values
      .slice(1)
      .map((v) => (v as Atom).value)
      .join(' ');
    return { kind: 'status', tag: null, status: first.value.toUpperCase(), ...splitRespText(rest) };
  }
  return { kind: 'data', values: [...values] };
}

/** Structure for a status response as sessions build it (code as the serializer takes it). */
export function fromStatus(tag: string | null, status: string, code: string | { name: string; args?: readonly ImapValue[] } | null | undefined, text: string): ScriptResponse {
  let parsed: ScriptResponseCode | null = null;
  if (typeof code === 'string') parsed = splitRespText(`[${code}]`).code;
  else if (code) parsed = { name: code.name, args: [...(code.args ?? [])] };
  return { kind: 'status', tag, status, code: parsed, text };
}

/** `[CODE args] text` into its code and text. */
function splitRespText(rest: string): { code: ScriptResponseCode | null; text: string } {
  const m = /^\[([^\]\s]+)(?: ([^\]]*))?\](?: (.*))?$/s.exec(rest);
  if (!m) return { code: null, text: rest };
  const args = m[2] === undefined ? [] : parseValues(m[2]);
  return { code: { name: m[1]!, args: args ?? [new Atom(m[2]!)] }, text: m[3] ?? '' };
}

/**
 * Structure for one line of response text (CRLF included or not), or null
 * when the line is not one this parser reads (literals, odd syntax): such a
 * line stays text, and only text-level ops apply to it.
 */
export function parseResponseLine(line: string): ScriptResponse | null {
  const text = line.endsWith('\r\n') ? line.slice(0, -2) : line;
  if (text.includes('\r') || text.includes('\n')) return null;
  if (text.startsWith('+')) return { kind: 'continuation', text: text.replace(/^\+ ?/, '') };
  const m = /^(\S+) (OK|NO|BAD|BYE|PREAUTH)(?: (.*))?$/i.exec(text);
  if (m) {
    const tag = m[1] === '*' ? null : m[1]!;
    if (tag === null || !/^(BYE|PREAUTH)$/i.test(m[2]!)) return { kind: 'status', tag, status: m[2]!.toUpperCase(), ...splitRespText(m[3] ?? '') };
  }
  if (!text.startsWith('* ')) return null;
  const values = parseValues(text.slice(2));
  return values ? { kind: 'data', values } : null;
}

/**
 * Numbers, NIL, quoted strings, parenthesized lists and atoms (anything
 * else up to a space or parenthesis, `BODY[HEADER.FIELDS (A B)]` kept
 * whole); null when the text holds a literal or does not close.
 */
function parseValues(text: string): ImapValue[] | null {
  const stack: ImapValue[][] = [[]];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === ' ') {
      i++;
    } else if (c === '(') {
      stack.push([]);
      i++;
    } else if (c === ')') {
      if (stack.length < 2) return null;
      const list = stack.pop()!;
      stack[stack.length - 1]!.push(list);
      i++;
    } else if (c === '"') {
      let out = '';
      i++;
      while (i < text.length && text[i] !== '"') {
        if (text[i] === '\\') i++;
        out += text[i] ?? '';
        i++;
      }
      if (i >= text.length) return null;
      i++;
      stack[stack.length - 1]!.push(out);
    } else if (c === '{' || c === '~') {
      return null;
    } else {
      let end = i;
      let depth = 0;
      while (end < text.length) {
        const d = text[end]!;
        if (d === '[') depth++;
        else if (d === ']') depth--;
        else if (depth <= 0 && (d === ' ' || d === '(' || d === ')')) break;
        end++;
      }
      const word = text.slice(i, end);
      i = end;
      const top = stack[stack.length - 1]!;
      if (/^\d+$/.test(word) && Number.isSafeInteger(Number(word))) top.push(Number(word));
      else if (word.toUpperCase() === 'NIL') top.push(null);
      else top.push(new Atom(word));
    }
  }
  return stack.length === 1 ? stack[0]! : null;
}

/** The bytes of a structured response. */
export function encodeScriptResponse(response: ScriptResponse, literals = false): Buffer {
  switch (response.kind) {
    case 'data':
      return encodeResponseOf('*', response.values, { literals });
    case 'continuation':
      return continuation(response.text);
    default: {
      const code = response.code === null ? null : { name: response.code.name, args: response.code.args };
      if (response.tag === null) return untaggedStatus(response.status as UntaggedStatus, code, response.text);
      return tagged(response.tag, response.status as ResponseStatus, code, response.text);
    }
  }
}
