/**
 * The declarative `mutate` of script rules: small edits of a structured
 * response (src/script/response.ts) before it is serialized. Items are
 * named as the response names them (FETCH and STATUS items, response
 * codes, `text`, a counted type like `EXISTS`, LIST's parts); an op on an
 * item the response lacks does nothing, so one rule can serve many
 * responses. Ops that must break the grammar (`quoted` of 8-bit bytes,
 * `unquote`, `suffix`, negative numbers) produce `Raw` bytes.
 */
import { encodeValue } from '../imap/wire/serializer.js';
import { Atom, Literal, Raw, Utf8Text, type ImapValue } from '../imap/wire/values.js';
import type { MutateOp, MutateValue } from './rule.js';
import type { ScriptResponse } from './response.js';

/** A JSON value of an op as an IMAP value. Numbers IMAP cannot carry (-1, 1.5) go out as written. */
export function valueFromJson(value: MutateValue): ImapValue {
  if (value === null) return null;
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? value : new Raw(Buffer.from(String(value), 'latin1'));
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(valueFromJson);
  if ('atom' in value) return new Raw(Buffer.from(value.atom, 'latin1'));
  if ('literal' in value) return new Literal(Buffer.from(value.literal, 'latin1'));
  return quotedRaw(Buffer.from(value.quoted, 'latin1'));
}

/** The item an op names (every op but `order` and `replace`). */
function targetOf(op: Exclude<MutateOp, { order: string[] } | { replace: string }>): string {
  if ('set' in op) return op.set;
  if ('add' in op) return op.add;
  if ('drop' in op) return op.drop;
  if ('literal' in op) return op.literal;
  if ('quoted' in op) return op.quoted;
  if ('unescaped' in op) return op.unescaped;
  if ('unquote' in op) return op.unquote;
  return op.suffix;
}

/** `"..."` with only `"` and `\` escaped (or, `escape` false, nothing), whatever the bytes (CR, LF, 8-bit stay). */
function quotedRaw(data: Buffer, escape = true): Raw {
  const parts: number[] = [0x22];
  for (const b of data) {
    if (escape && (b === 0x22 || b === 0x5c)) parts.push(0x5c);
    parts.push(b);
  }
  parts.push(0x22);
  return new Raw(Buffer.from(parts));
}

function bytesOf(value: ImapValue): Buffer | null {
  if (typeof value === 'string') return Buffer.from(value, 'utf8');
  if (value instanceof Utf8Text) return Buffer.from(value.value, 'utf8');
  if (value instanceof Literal) return value.data;
  if (Buffer.isBuffer(value)) return value;
  return null;
}

/** Applies `fn` to every string-like value inside `value` (lists walked). */
function deep(value: ImapValue, fn: (bytes: Buffer) => ImapValue): ImapValue {
  if (Array.isArray(value)) return value.map((v) => deep(v, fn));
  const bytes = bytesOf(value);
  return bytes === null ? value : fn(bytes);
}

/** A named part of a response: read and replaced through these. */
interface Item {
  get(): ImapValue;
  set(value: ImapValue): void;
  remove(): void;
}

const same = (a: string, b: string): boolean => a.toUpperCase() === b.toUpperCase();

/** An op's item name against a label: `*` is every item, `BODY[*` every label starting `BODY[`. */
function named(pattern: string, label: string): boolean {
  if (pattern === '*') return true;
  if (pattern.endsWith('*')) return label.toUpperCase().startsWith(pattern.slice(0, -1).toUpperCase());
  return same(pattern, label);
}

/** The `NAME value` pairs of FETCH and STATUS data, or null. */
function pairList(r: ScriptResponse): ImapValue[] | null {
  if (r.kind !== 'data') return null;
  const v = r.values;
  const fetch = typeof v[0] === 'number' && v[1] instanceof Atom && same(v[1].value, 'FETCH') && Array.isArray(v[2]);
  const status = v[0] instanceof Atom && same(v[0].value, 'STATUS') && Array.isArray(v[2]);
  return fetch || status ? (v[2] as ImapValue[]) : null;
}

const LIST_PARTS = ['attributes', 'delimiter', 'mailbox'];

/** The items of `r` named `name` (`*`: every item of a pair list). */
function items(r: ScriptResponse, name: string): Item[] {
  if (r.kind === 'continuation') {
    return same(name, 'text') ? [{ get: () => r.text, set: (v) => (r.text = textOf(v)), remove: () => (r.text = '') }] : [];
  }
  if (r.kind === 'status') {
    if (same(name, 'text')) return [{ get: () => r.text, set: (v) => (r.text = textOf(v)), remove: () => (r.text = '') }];
    const code = r.code;
    if (code && named(name, code.name)) {
      return [{ get: () => (code.args.length === 1 ? code.args[0]! : code.args), set: (v) => (code.args = [v]), remove: () => (r.code = null) }];
    }
    return [];
  }
  const v = r.values;
  const pairs = pairList(r);
  if (pairs) {
    const out: Item[] = [];
    for (let i = 0; i + 1 < pairs.length; i += 2) {
      const label = pairs[i];
      if (!(label instanceof Atom) || !named(name, label.value)) continue;
      const at = i;
      out.push({
        get: () => pairs[at + 1]!,
        set: (value) => (pairs[at + 1] = value),
        // Marked, then swept: indexes of the other items stay valid meanwhile.
        remove: () => (pairs[at] = REMOVED),
      });
    }
    return out;
  }
  // `* 3 EXISTS`, `* 1 EXPUNGE`, `* 0 RECENT`
  if (v.length === 2 && typeof v[0] === 'number' && v[1] instanceof Atom && same(v[1].value, name)) {
    return [{ get: () => v[0]!, set: (value) => (v[0] = value), remove: () => undefined }];
  }
  const type = v[0];
  if (type instanceof Atom && /^(LIST|LSUB|XLIST)$/i.test(type.value)) {
    const at = LIST_PARTS.findIndex((p) => same(p, name)) + 1;
    if (at > 0 && at < v.length) return [{ get: () => v[at]!, set: (value) => (v[at] = value), remove: () => (v[at] = REMOVED) }];
  }
  return [];
}

const REMOVED = new Raw(Buffer.alloc(0));

function sweep(r: ScriptResponse): void {
  const pairs = pairList(r);
  if (pairs) {
    for (let i = pairs.length - 2; i >= 0; i -= 2) if (pairs[i] === REMOVED) pairs.splice(i, 2);
  }
  if (r.kind === 'data') r.values = r.values.filter((v) => v !== REMOVED);
}

function textOf(value: ImapValue): string {
  if (value === null) return '';
  if (typeof value === 'number') return String(value);
  const bytes = bytesOf(value);
  if (bytes) return bytes.toString('latin1');
  if (value instanceof Raw) return value.data.toString('latin1');
  if (value instanceof Atom) return value.value;
  return encodeValue(value).toString('latin1');
}

/** Follows `at` (list indexes) into an item's value; null when the path leads nowhere. */
function within(item: Item, at: readonly number[] | undefined): Item | null {
  if (!at || at.length === 0) return item;
  let holder: ImapValue = item.get();
  for (let i = 0; i < at.length - 1; i++) {
    if (!Array.isArray(holder)) return null;
    holder = holder[at[i]!] as ImapValue;
  }
  const list = holder;
  const last = at[at.length - 1]!;
  if (!Array.isArray(list) || last >= list.length) return null;
  return { get: () => list[last]!, set: (value) => (list[last] = value), remove: () => list.splice(last, 1) };
}

/** One op's `at`, where the op has one. */
const atOf = (op: MutateOp): readonly number[] | undefined => ('at' in op ? (op as { at?: number[] }).at : undefined);

/**
 * Applies the structured ops of a rule to `r` (in place) and returns the
 * text ops (`replace`), which apply to the serialized bytes.
 */
export function applyOps(r: ScriptResponse, ops: readonly MutateOp[]): { replace: string; with: string }[] {
  const textOps: { replace: string; with: string }[] = [];
  for (const op of ops) {
    if ('replace' in op) {
      textOps.push(op);
      continue;
    }
    if ('order' in op) {
      reorder(r, op.order);
      continue;
    }
    for (const found of items(r, targetOf(op))) {
      const item = within(found, atOf(op));
      if (!item) continue;
      if ('set' in op) item.set(valueFromJson(op.value));
      else if ('add' in op) {
        const now = item.get();
        if (typeof now === 'number') item.set(valueFromJson(now + op.value));
      } else if ('drop' in op) item.remove();
      else if ('literal' in op) item.set(deep(item.get(), (b) => new Literal(b)));
      else if ('quoted' in op) item.set(deep(item.get(), (b) => quotedRaw(b)));
      else if ('unescaped' in op) item.set(deep(item.get(), (b) => quotedRaw(b, false)));
      else if ('unquote' in op) item.set(deep(item.get(), (b) => new Raw(b)));
      else item.set(new Raw(Buffer.concat([encodeValue(item.get()), Buffer.from(op.text, 'latin1')])));
    }
  }
  sweep(r);
  return textOps;
}

/** The named items first, in the order given; the others after them, as they were. */
function reorder(r: ScriptResponse, names: readonly string[]): void {
  const pairs = pairList(r);
  if (!pairs) return;
  const taken: ImapValue[] = [];
  for (const name of names) {
    for (let i = 0; i + 1 < pairs.length; i += 2) {
      const label = pairs[i];
      if (label instanceof Atom && named(name, label.value)) {
        taken.push(label, pairs[i + 1]!);
        pairs.splice(i, 2);
        i -= 2;
      }
    }
  }
  pairs.unshift(...taken);
}

/** The text ops on serialized bytes (latin1, so every byte is one character). */
export function applyTextOps(data: Buffer, ops: readonly { replace: string; with: string }[]): Buffer {
  if (ops.length === 0) return data;
  let text = data.toString('latin1');
  for (const op of ops) text = text.replace(new RegExp(op.replace, 'g'), op.with);
  return Buffer.from(text, 'latin1');
}
