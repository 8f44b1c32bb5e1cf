/**
 * What may differ between two correct IMAP servers, taken out before the
 * responses are compared. Each normalization has a name (docs/compare.md
 * lists them; `--keep NAME` turns one off) and touches only what it says.
 *
 * A response is read into values (atoms, strings, numbers, NIL, lists) and
 * written back in one canonical form, so `"abc"` and `{3}\r\nabc` compare
 * equal (`string-form`): which form a server picks is its own business.
 */

export type Normalization =
  | 'string-form'
  | 'response-text'
  | 'capability-order'
  | 'uidvalidity'
  | 'internaldate'
  | 'modseq'
  | 'object-ids'
  | 'server-id'
  | 'flag-order'
  | 'fetch-item-order'
  | 'status-item-order'
  | 'untagged-order';

export const NORMALIZATIONS: readonly { name: Normalization; what: string }[] = [
  { name: 'string-form', what: 'quoted strings and literals with the same bytes are equal, and so are a mailbox name sent as an atom and as a string (LIST, LSUB, STATUS); NIL in any case' },
  { name: 'response-text', what: 'the human-readable text of OK, NO, BAD, BYE, PREAUTH and + is dropped (response codes are kept)' },
  { name: 'capability-order', what: 'capabilities (CAPABILITY responses and [CAPABILITY] codes) are sorted' },
  { name: 'uidvalidity', what: 'UIDVALIDITY values ([UIDVALIDITY n], STATUS, APPENDUID, COPYUID) become *' },
  { name: 'internaldate', what: 'INTERNALDATE and SAVEDATE values (dates of arrival) become *' },
  { name: 'modseq', what: 'MODSEQ, HIGHESTMODSEQ and [MODIFIED] values become * (each server counts its own)' },
  { name: 'object-ids', what: 'MAILBOXID, EMAILID and THREADID values (RFC 8474) become *' },
  { name: 'server-id', what: 'the ID response (RFC 2971) becomes * ID *: it names the server' },
  { name: 'flag-order', what: 'flag lists (FLAGS in FETCH, the FLAGS response, [PERMANENTFLAGS]) are sorted: a flag list is a set' },
  { name: 'fetch-item-order', what: 'the items of a FETCH response are sorted by name' },
  { name: 'status-item-order', what: 'the items of a STATUS response are sorted by name' },
  { name: 'untagged-order', what: 'the untagged responses to one command compare as a set: order aside, each must be there on both sides' },
];

export const NORMALIZATION_NAMES: readonly Normalization[] = NORMALIZATIONS.map((n) => n.name);

type Value = { atom: string } | { str: Buffer } | { num: string } | { list: Value[] } | null;

class Reader {
  i = 0;
  constructor(readonly b: Buffer) {}

  done(): boolean {
    return this.i >= this.b.length;
  }

  private peek(): number {
    return this.b[this.i]!;
  }

  skipSpaces(): void {
    while (!this.done() && this.peek() === 0x20) this.i++;
  }

  /** Reads values up to a `)` (when nested) or the end of the line. */
  values(nested: boolean): Value[] {
    const out: Value[] = [];
    for (;;) {
      this.skipSpaces();
      if (this.done()) return out;
      const c = this.peek();
      // The line's own CRLF (a literal's is read with the literal).
      if (c === 0x0d || c === 0x0a) {
        this.i++;
        continue;
      }
      if (c === 0x29) {
        if (nested) {
          this.i++;
          return out;
        }
        out.push({ atom: ')' });
        this.i++;
        continue;
      }
      out.push(this.value());
    }
  }

  value(): Value {
    const c = this.peek();
    if (c === 0x28) {
      this.i++;
      return { list: this.values(true) };
    }
    if (c === 0x22) return this.quoted();
    if (c === 0x7b || (c === 0x7e && this.b[this.i + 1] === 0x7b)) {
      const lit = this.literal();
      if (lit) return lit;
    }
    return this.atom();
  }

  private quoted(): Value {
    const bytes: number[] = [];
    this.i++;
    while (!this.done()) {
      const c = this.b[this.i++]!;
      if (c === 0x5c && !this.done()) bytes.push(this.b[this.i++]!);
      else if (c === 0x22) break;
      else bytes.push(c);
    }
    return { str: Buffer.from(bytes) };
  }

  private literal(): Value | null {
    const start = this.i;
    const m = /^~?\{(\d+)\+?\}\r\n/.exec(this.b.toString('latin1', this.i, Math.min(this.b.length, this.i + 24)));
    if (!m) return null;
    const at = start + m[0].length;
    const n = Number(m[1]);
    this.i = Math.min(this.b.length, at + n);
    return { str: this.b.subarray(at, this.i) };
  }

  /** An atom, with `[...]` sections kept whole (`BODY[HEADER.FIELDS (A B)]<0>`). */
  private atom(): Value {
    const start = this.i;
    let depth = 0;
    while (!this.done()) {
      const c = this.peek();
      if (c === 0x5b) depth++;
      else if (c === 0x5d) depth = Math.max(0, depth - 1);
      else if (depth === 0 && (c === 0x20 || c === 0x28 || c === 0x29 || c === 0x0d || c === 0x0a)) break;
      this.i++;
    }
    if (this.i === start) this.i++;
    const text = this.b.toString('latin1', start, this.i);
    if (/^\d+$/.test(text)) return { num: text };
    if (text.toUpperCase() === 'NIL') return null;
    return { atom: text };
  }
}

function show(v: Value): string {
  if (v === null) return 'NIL';
  if ('atom' in v) return v.atom;
  if ('num' in v) return v.num;
  if ('str' in v) return JSON.stringify(v.str.toString('latin1'));
  return `(${v.list.map(show).join(' ')})`;
}

const STAR: Value = { atom: '*' };
const isAtom = (v: Value | undefined, name: string): boolean => !!v && v !== null && 'atom' in v && v.atom.toUpperCase() === name;
const atomName = (v: Value | undefined): string => (v && v !== null && 'atom' in v ? v.atom.toUpperCase() : '');

/** Pairs of a FETCH or STATUS list, sorted by name when asked, with the values of the named items hidden. */
function pairs(list: Value[], hide: ReadonlySet<string>, sort: boolean): Value[] {
  const items: [Value, Value][] = [];
  for (let i = 0; i + 1 < list.length; i += 2) {
    const name = atomName(list[i]);
    const hidden = hide.has(name.replace(/\[.*$/, ''));
    items.push([list[i]!, hidden ? STAR : list[i + 1]!]);
  }
  if (list.length % 2 === 1) items.push([list[list.length - 1]!, { atom: '' }]);
  if (sort) items.sort((a, b) => (atomName(a[0]) < atomName(b[0]) ? -1 : atomName(a[0]) > atomName(b[0]) ? 1 : 0));
  return items.flat();
}

const byName = (a: string, b: string): number => {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  return x < y ? -1 : x > y ? 1 : a < b ? -1 : a > b ? 1 : 0;
};

/** A parenthesized flag list `(\\Seen $Junk)` with its flags sorted. */
function sortFlagList(text: string): string {
  return `(${text.slice(1, -1).split(' ').filter((f) => f !== '').sort(byName).join(' ')})`;
}

function sortedFlags(v: Value): Value {
  if (v === null || !('list' in v)) return v;
  return { list: [...v.list].sort((a, b) => byName(show(a), show(b))) };
}

const STATUS_WORDS = new Set(['OK', 'NO', 'BAD', 'BYE', 'PREAUTH']);

/** A response code `[...]` normalized: capability order, UIDVALIDITY and MODSEQ values. */
function normalizeCode(code: string, on: ReadonlySet<Normalization>): string {
  const inner = code.slice(1, -1);
  const sp = inner.indexOf(' ');
  const name = (sp < 0 ? inner : inner.slice(0, sp)).toUpperCase();
  const args = sp < 0 ? '' : inner.slice(sp + 1);
  if (name === 'CAPABILITY' && on.has('capability-order')) return `[CAPABILITY ${sortWords(args)}]`;
  if (name === 'UIDVALIDITY' && on.has('uidvalidity')) return '[UIDVALIDITY *]';
  if ((name === 'APPENDUID' || name === 'COPYUID') && on.has('uidvalidity')) return `[${name} * ${args.split(' ').slice(1).join(' ')}]`;
  if ((name === 'HIGHESTMODSEQ' || name === 'MODIFIED' || name === 'NOMODSEQ') && on.has('modseq')) return name === 'NOMODSEQ' ? code : `[${name} *]`;
  if (name === 'MAILBOXID' && on.has('object-ids')) return '[MAILBOXID *]';
  if (name === 'PERMANENTFLAGS' && on.has('flag-order') && /^\(.*\)$/.test(args)) return `[PERMANENTFLAGS ${sortFlagList(args)}]`;
  return code;
}

const sortWords = (s: string): string => s.split(' ').filter((w) => w !== '').map((w) => w.toUpperCase()).sort().join(' ');

/** One server response unit (a line with its literals) in canonical form. */
export function normalizeResponse(unit: Buffer, on: ReadonlySet<Normalization>): string {
  const line = unit.toString('latin1').replace(/\r\n$/, '');
  // Continuation requests: only that one was asked for matters, not what it says.
  if (line.startsWith('+')) return on.has('response-text') ? '+' : line;
  const sp = line.indexOf(' ');
  const tag = sp < 0 ? line : line.slice(0, sp);
  const rest = sp < 0 ? '' : line.slice(sp + 1);
  const word = rest.split(' ', 1)[0]!.toUpperCase();
  if (STATUS_WORDS.has(word)) {
    const after = rest.slice(word.length + 1);
    const codeMatch = /^\[[^\]]*(?:\[[^\]]*\][^\]]*)*\]/.exec(after);
    const code = codeMatch ? normalizeCode(codeMatch[0], on) : '';
    const text = codeMatch ? after.slice(codeMatch[0].length).trim() : after.trim();
    return [tag, word, code, on.has('response-text') ? '' : text].filter((s) => s !== '').join(' ');
  }
  const r = new Reader(unit.subarray(sp < 0 ? unit.length : sp + 1));
  let values = r.values(false);
  const first = atomName(values[0]);
  const second = atomName(values[1]);
  if (first === 'CAPABILITY' && on.has('capability-order')) {
    values = [values[0]!, ...values.slice(1).map((v) => ({ atom: show(v).toUpperCase() })).sort((a, b) => (a.atom < b.atom ? -1 : a.atom > b.atom ? 1 : 0))];
  } else if (first === 'ID' && on.has('server-id')) {
    values = [values[0]!, STAR];
  } else if (second === 'FETCH' && values[2] && values[2] !== null && 'list' in values[2]) {
    const hide = new Set<string>();
    if (on.has('internaldate')) hide.add('INTERNALDATE').add('SAVEDATE');
    if (on.has('modseq')) hide.add('MODSEQ');
    if (on.has('object-ids')) hide.add('EMAILID').add('THREADID');
    let items = pairs(values[2].list, hide, on.has('fetch-item-order'));
    if (on.has('flag-order')) items = items.map((v, i) => (i % 2 === 1 && atomName(items[i - 1]) === 'FLAGS' ? sortedFlags(v) : v));
    values = [values[0]!, values[1]!, { list: items }, ...values.slice(3)];
  } else if ((first === 'LIST' || first === 'LSUB') && on.has('string-form') && values[3] && values[3] !== null && 'atom' in values[3]) {
    // A mailbox name is an astring: the atom INBOX and the string "INBOX" are one name.
    values = [...values.slice(0, 3), { str: Buffer.from(values[3].atom, 'latin1') }, ...values.slice(4)];
  } else if (first === 'FLAGS' && on.has('flag-order')) {
    values = [values[0]!, ...values.slice(1).map(sortedFlags)];
  } else if (first === 'STATUS' && values[2] && values[2] !== null && 'list' in values[2]) {
    if (on.has('string-form') && values[1] && values[1] !== null && 'atom' in values[1]) values[1] = { str: Buffer.from(values[1].atom, 'latin1') };
    const hide = new Set<string>();
    if (on.has('uidvalidity')) hide.add('UIDVALIDITY');
    if (on.has('modseq')) hide.add('HIGHESTMODSEQ');
    if (on.has('object-ids')) hide.add('MAILBOXID');
    values = [values[0]!, values[1]!, { list: pairs(values[2].list, hide, on.has('status-item-order')) }, ...values.slice(3)];
  } else if ((first === 'SEARCH' || first === 'ESEARCH' || first === 'SORT') && on.has('modseq')) {
    values = values.map((v) => (v !== null && 'list' in v && isAtom(v.list[0], 'MODSEQ') ? { list: [v.list[0]!, STAR] } : v));
    const at = values.findIndex((v) => isAtom(v, 'MODSEQ'));
    if (at > 0 && first === 'ESEARCH') values[at + 1] = STAR;
  }
  if (!on.has('string-form')) return line;
  return `${tag} ${values.map(show).join(' ')}`;
}
