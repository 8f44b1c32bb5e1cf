/**
 * X-GM-RAW: a subset of Gmail's search language.
 *
 * - terms next to each other must all match; `OR` (upper case) between two
 *   terms matches either; `-term` negates; `( ... )` groups; `AND` is allowed
 *   and changes nothing;
 * - `"a phrase"` and plain words match the header and body text, decoded,
 *   case-insensitively (a substring match; Gmail matches whole words);
 * - `from:` `to:` `cc:` `bcc:` `subject:` match that header (decoded) or,
 *   for addresses, any `mailbox@host` of it, as a substring; the value may
 *   be quoted (`subject:"two words"`);
 * - `label:x` and `in:x` (`inbox`, `sent`, `drafts`, `important`, `starred`,
 *   `trash`, `spam`, a user label; `in:anywhere` is every message); a label's
 *   `/`, `-` and spaces are interchangeable, case is ignored;
 * - `is:unread` `is:read` `is:starred` `is:important`, `has:attachment`
 *   (a part with `Content-Disposition: attachment` or a file name);
 * - `before:` `after:` (also `older:` `newer:`) with `YYYY/MM/DD` or
 *   `YYYY-MM-DD`: the internal date, days in UTC; `after:` includes the day;
 * - `larger:` `smaller:` with a size in bytes, or with `K` or `M` (1024s);
 * - `rfc822msgid:` the Message-ID, with or without its brackets;
 * - `filename:` part of an attachment's file name, `list:` part of List-Id;
 * - `{a b c}` matches any of the terms (Gmail's OR braces).
 * Another `word:value` is a plain word, as in Gmail. Unbalanced parentheses
 * or quotes, or a bad date or size, make the SEARCH a BAD.
 */
import { bodyText, decodeHeaderValue, getMime, headerBlock, parseAddressList, type MimeNode } from '../../mime/index.js';
import type { Message } from '../../store/message.js';
import { looseLabel } from './labels.js';

export type RawQuery =
  | { type: 'and'; items: RawQuery[] }
  | { type: 'or'; items: RawQuery[] }
  | { type: 'not'; item: RawQuery }
  | { type: 'text'; value: string }
  | { type: 'header'; field: 'from' | 'to' | 'cc' | 'bcc' | 'subject'; value: string }
  | { type: 'label'; value: string }
  | { type: 'anywhere' }
  | { type: 'unread'; value: boolean }
  | { type: 'flag'; flag: string }
  | { type: 'attachment' }
  | { type: 'date'; op: 'before' | 'after'; day: number }
  | { type: 'size'; op: 'larger' | 'smaller'; bytes: number }
  | { type: 'msgid'; value: string }
  | { type: 'filename'; value: string }
  | { type: 'list'; value: string };

/** A query the grammar above does not accept; the text is the BAD's. */
export class RawQueryError extends Error {}

interface Token {
  kind: 'word' | 'open' | 'close' | 'not' | 'brace' | 'unbrace';
  /** The word with quotes removed (`subject:"a b"` → `subject:a b`). */
  text: string;
  /** True when any part was quoted (a quoted `OR` is a word). */
  quoted: boolean;
}

function tokenize(query: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  const n = query.length;
  while (i < n) {
    const c = query[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === '(') {
      out.push({ kind: 'open', text: c, quoted: false });
      i++;
      continue;
    }
    if (c === ')') {
      out.push({ kind: 'close', text: c, quoted: false });
      i++;
      continue;
    }
    if (c === '{' || c === '}') {
      out.push({ kind: c === '{' ? 'brace' : 'unbrace', text: c, quoted: false });
      i++;
      continue;
    }
    if (c === '-' && i + 1 < n && !/[\s)}]/.test(query[i + 1]!)) {
      out.push({ kind: 'not', text: c, quoted: false });
      i++;
      continue;
    }
    let text = '';
    let quoted = false;
    while (i < n && !/[\s(){}]/.test(query[i]!)) {
      if (query[i] === '"') {
        const close = query.indexOf('"', i + 1);
        if (close < 0) throw new RawQueryError('X-GM-RAW: unbalanced quote');
        text += query.slice(i + 1, close);
        quoted = true;
        i = close + 1;
      } else text += query[i++];
    }
    out.push({ kind: 'word', text, quoted });
  }
  return out;
}

const DATE = /^(\d{4})[/-](\d{1,2})[/-](\d{1,2})$/;

function day(value: string, op: string): number {
  const m = DATE.exec(value);
  const ms = m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : NaN;
  if (!m || Number.isNaN(ms) || Number(m[2]) < 1 || Number(m[2]) > 12 || Number(m[3]) < 1 || Number(m[3]) > 31) {
    throw new RawQueryError(`X-GM-RAW: ${op}: expects a date YYYY/MM/DD`);
  }
  return ms / 86_400_000;
}

function size(value: string, op: string): number {
  const m = /^(\d{1,15})([kKmM]?)$/.exec(value);
  if (!m) throw new RawQueryError(`X-GM-RAW: ${op}: expects a size like 5000, 10K or 2M`);
  const unit = m[2]!.toLowerCase();
  return Number(m[1]) * (unit === 'k' ? 1024 : unit === 'm' ? 1024 * 1024 : 1);
}

const IN_LABELS = new Map([
  ['inbox', '\\Inbox'],
  ['sent', '\\Sent'],
  ['drafts', '\\Draft'],
  ['draft', '\\Draft'],
  ['important', '\\Important'],
  ['starred', '\\Starred'],
  ['trash', '\\Trash'],
  ['spam', '\\Spam'],
]);

/** One word as a term: an operator Gmail knows, else text. */
function term(token: Token): RawQuery {
  const colon = token.text.indexOf(':');
  if (colon <= 0) return { type: 'text', value: token.text.toLowerCase() };
  const op = token.text.slice(0, colon).toLowerCase();
  const value = token.text.slice(colon + 1);
  switch (op) {
    case 'from':
    case 'to':
    case 'cc':
    case 'bcc':
    case 'subject':
      return { type: 'header', field: op, value: value.toLowerCase() };
    case 'label':
      return { type: 'label', value: looseLabel(value) };
    case 'in': {
      const v = value.toLowerCase();
      if (v === 'anywhere') return { type: 'anywhere' };
      return { type: 'label', value: looseLabel(IN_LABELS.get(v) ?? value) };
    }
    case 'is':
      switch (value.toLowerCase()) {
        case 'unread':
          return { type: 'unread', value: true };
        case 'read':
          return { type: 'unread', value: false };
        case 'starred':
          return { type: 'flag', flag: '\\Flagged' };
        case 'important':
          return { type: 'label', value: looseLabel('\\Important') };
      }
      break;
    case 'has':
      if (value.toLowerCase() === 'attachment') return { type: 'attachment' };
      break;
    case 'before':
    case 'older':
      return { type: 'date', op: 'before', day: day(value, op) };
    case 'after':
    case 'newer':
      return { type: 'date', op: 'after', day: day(value, op) };
    case 'larger':
      return { type: 'size', op: 'larger', bytes: size(value, op) };
    case 'smaller':
      return { type: 'size', op: 'smaller', bytes: size(value, op) };
    case 'rfc822msgid':
      return { type: 'msgid', value: value.replace(/^<|>$/g, '') };
    case 'filename':
      return { type: 'filename', value: value.toLowerCase() };
    case 'list':
      return { type: 'list', value: value.toLowerCase() };
  }
  return { type: 'text', value: token.text.toLowerCase() };
}

/** Parses an X-GM-RAW query; throws RawQueryError. */
export function parseRawQuery(query: string): RawQuery {
  const tokens = tokenize(query);
  let pos = 0;
  const isOr = (t: Token | undefined): boolean => t !== undefined && t.kind === 'word' && !t.quoted && t.text === 'OR';
  const isAnd = (t: Token | undefined): boolean => t !== undefined && t.kind === 'word' && !t.quoted && t.text === 'AND';

  const unary = (depth: number): RawQuery => {
    if (depth > 50) throw new RawQueryError('X-GM-RAW: nested too deeply');
    const t = tokens[pos];
    if (!t) throw new RawQueryError('X-GM-RAW: a term is missing');
    pos++;
    if (t.kind === 'not') return { type: 'not', item: unary(depth + 1) };
    if (t.kind === 'open') {
      const inner = sequence(depth + 1);
      if (tokens[pos]?.kind !== 'close') throw new RawQueryError('X-GM-RAW: unbalanced parenthesis');
      pos++;
      return inner;
    }
    if (t.kind === 'brace') {
      // Gmail's `{a b c}`: any of the terms.
      const items: RawQuery[] = [];
      while (pos < tokens.length && tokens[pos]!.kind !== 'unbrace') items.push(disjunction(depth + 1));
      if (tokens[pos]?.kind !== 'unbrace') throw new RawQueryError('X-GM-RAW: unbalanced brace');
      pos++;
      if (items.length === 0) throw new RawQueryError('X-GM-RAW: empty braces');
      return items.length === 1 ? items[0]! : { type: 'or', items };
    }
    if (t.kind === 'close' || t.kind === 'unbrace') throw new RawQueryError('X-GM-RAW: unbalanced parenthesis or brace');
    if (isOr(t) || isAnd(t)) throw new RawQueryError(`X-GM-RAW: ${t.text} needs a term on each side`);
    return term(t);
  };

  const disjunction = (depth: number): RawQuery => {
    const items = [unary(depth)];
    while (isOr(tokens[pos])) {
      pos++;
      items.push(unary(depth));
    }
    return items.length === 1 ? items[0]! : { type: 'or', items };
  };

  const sequence = (depth: number): RawQuery => {
    const items: RawQuery[] = [];
    while (pos < tokens.length && tokens[pos]!.kind !== 'close' && tokens[pos]!.kind !== 'unbrace') {
      if (isAnd(tokens[pos]) && items.length > 0) {
        pos++;
        continue;
      }
      items.push(disjunction(depth));
    }
    if (items.length === 0) throw new RawQueryError('X-GM-RAW: empty query');
    return items.length === 1 ? items[0]! : { type: 'and', items };
  };

  const result = sequence(0);
  if (pos < tokens.length) throw new RawQueryError('X-GM-RAW: unbalanced parenthesis or brace');
  return result;
}

/** What matching needs besides the message: its labels (all of them, loose form). */
export interface RawContext {
  labels(message: Message): readonly string[];
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
const text = (b: Buffer): string => {
  try {
    return strictUtf8.decode(b);
  } catch {
    return b.toString('latin1');
  }
};

function headerTexts(root: MimeNode, name: string): string[] {
  const out: string[] = [];
  for (const field of root.fields) {
    if (field.key !== name) continue;
    out.push(decodeHeaderValue(field.value).toLowerCase());
    if (name === 'subject') continue;
    for (const a of parseAddressList(field.value) ?? []) {
      if (Buffer.isBuffer(a.mailbox) && Buffer.isBuffer(a.domain)) out.push(`${text(a.mailbox)}@${text(a.domain)}`.toLowerCase());
    }
  }
  return out;
}

/** File names of a message's parts (Content-Disposition filename, Content-Type name), lower case. */
function fileNames(node: MimeNode, out: string[] = []): string[] {
  for (const p of [...(node.disposition?.params ?? []), ...node.contentType.params]) {
    if (p.key === 'filename' || p.key === 'name') out.push(p.decoded.toLowerCase());
  }
  for (const child of node.children ?? []) fileNames(child, out);
  return out;
}

function hasAttachment(node: MimeNode): boolean {
  if (node.disposition?.type === 'attachment') return true;
  // An attached message counts, as in Gmail.
  if (node.kind === 'message' && node.depth > 0) return true;
  if (node.disposition?.params.some((p) => p.key === 'filename')) return true;
  if (node.contentType.params.some((p) => p.key === 'name') && node.kind === 'leaf') return true;
  if (node.kind === 'multipart') return (node.children ?? []).some(hasAttachment);
  return false;
}

/** Evaluates a parsed query against one message. `cache` keeps the decoded text per SEARCH. */
export function matchRaw(query: RawQuery, message: Message, ctx: RawContext, cache: Map<Message, string>): boolean {
  switch (query.type) {
    case 'and':
      return query.items.every((q) => matchRaw(q, message, ctx, cache));
    case 'or':
      return query.items.some((q) => matchRaw(q, message, ctx, cache));
    case 'not':
      return !matchRaw(query.item, message, ctx, cache);
    case 'anywhere':
      return true;
    case 'text': {
      let all = cache.get(message);
      if (all === undefined) {
        const root = getMime(message.raw);
        all = `${decodeHeaderValue(headerBlock(message.raw, root))}\n${bodyText(root, message.raw)}`.toLowerCase();
        cache.set(message, all);
      }
      return all.includes(query.value);
    }
    case 'header':
      return headerTexts(getMime(message.raw), query.field).some((v) => v.includes(query.value));
    case 'label':
      return ctx.labels(message).includes(query.value);
    case 'unread':
      return message.flags.has('\\Seen') !== query.value;
    case 'flag':
      return message.flags.has(query.flag);
    case 'attachment':
      return hasAttachment(getMime(message.raw));
    case 'date': {
      const d = Math.floor(message.internaldate.ms / 86_400_000);
      return query.op === 'before' ? d < query.day : d >= query.day;
    }
    case 'size':
      return query.op === 'larger' ? message.size > query.bytes : message.size < query.bytes;
    case 'filename':
      return fileNames(getMime(message.raw)).some((name) => name.includes(query.value));
    case 'list':
      return headerTexts(getMime(message.raw), 'list-id').some((v) => v.includes(query.value));
    case 'msgid':
      return getMime(message.raw).fields.some(
        (f) => f.key === 'message-id' && f.value.toString('latin1').trim().replace(/^<|>$/g, '') === query.value,
      );
  }
}
