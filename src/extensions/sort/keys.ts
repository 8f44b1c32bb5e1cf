/**
 * The per-message values SORT and THREAD compare, computed once per
 * message source and cached.
 *
 * Everything here is a function of the raw message bytes, which never
 * change (`Message.raw` is readonly and shared by COPY and reset), so the
 * cache is a WeakMap keyed by that Buffer: nothing needs invalidating, a
 * copy shares its original's entry, and an entry goes away with the last
 * message holding its source. Each value is computed on first use only.
 * The INTERNALDATE fallback of the sent date is not cached here since it
 * belongs to the Message, not to its bytes.
 */
import { decodeHeaderValue, getMime, parseAddressList, servedSize, type Address } from '../../mime/index.js';
import type { Message } from '../../store/message.js';
import { baseSubject } from './base-subject.js';
import { collationKey } from './collate.js';

/** Address headers SORT reads. */
export type AddressHeader = 'from' | 'to' | 'cc';

interface Entry {
  subject?: string;
  replyOrForward?: boolean;
  /** Date: header as ms since the epoch, or null when missing or unparsable. */
  date?: number | null;
  size?: number;
  mailbox?: Map<AddressHeader, string>;
  display?: Map<AddressHeader, string>;
  messageId?: string | null;
  references?: readonly string[];
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

function text(value: Buffer | string | null): string {
  if (!Buffer.isBuffer(value)) return '';
  try {
    return strictUtf8.decode(value);
  } catch {
    return value.toString('latin1');
  }
}

/** First mailbox of an address header (group markers skipped), or null. */
function firstAddress(m: Message, header: AddressHeader): Address | null {
  for (const field of getMime(m.raw).fields) {
    if (field.key !== header) continue;
    for (const a of parseAddressList(field.value) ?? []) if (a.domain !== null) return a;
    // Only the first such header counts, as for ENVELOPE.
    return null;
  }
  return null;
}

function firstField(m: Message, name: string): Buffer | null {
  for (const field of getMime(m.raw).fields) if (field.key === name) return field.value;
  return null;
}

const MONTHS = new Map(['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'].map((m, i) => [m, i]));
// RFC 5322 §4.3 obsolete zones; military letters are unreliable, so they count as +0000 (-0000 in the RFC's words).
const ZONES = new Map([
  ['ut', 0],
  ['gmt', 0],
  ['z', 0],
  ['est', -300],
  ['edt', -240],
  ['cst', -360],
  ['cdt', -300],
  ['mst', -420],
  ['mdt', -360],
  ['pst', -480],
  ['pdt', -420],
]);
const DATE = /^\s*(?:[a-z]+\s*,\s*)?(\d{1,2})\s+([a-z]{3})[a-z]*\s+(\d{2,4})\s+(\d{1,2})\s*:\s*(\d{1,2})(?:\s*:\s*(\d{1,2}))?\s*([+-]\d{4}|[a-z]+)?/i;

/**
 * An RFC 5322 date-time (obsolete forms included: two- and three-digit
 * years, named zones) as ms since the epoch, or null when it cannot be
 * parsed (RFC 5256 §2.2: then INTERNALDATE is used). A missing zone is
 * taken as +0000.
 */
export function parseDateHeader(value: string): number | null {
  const m = DATE.exec(value.replace(/\([^()]*\)/g, ' '));
  if (!m) return null;
  const month = MONTHS.get(m[2]!.toLowerCase());
  if (month === undefined) return null;
  let year = Number(m[3]);
  if (m[3]!.length === 2) year += year < 50 ? 2000 : 1900;
  else if (m[3]!.length === 3) year += 1900;
  const day = Number(m[1]);
  const hour = Number(m[4]);
  const minute = Number(m[5]);
  const second = m[6] === undefined ? 0 : Number(m[6]);
  if (day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return null;
  let zone = 0;
  const z = m[7];
  if (z !== undefined) {
    if (z[0] === '+' || z[0] === '-') {
      const minutes = Number(z.slice(1, 3)) * 60 + Number(z.slice(3, 5));
      zone = z[0] === '-' ? -minutes : minutes;
    } else zone = ZONES.get(z.toLowerCase()) ?? 0;
  }
  return Date.UTC(year, month, day, hour, minute, second) - zone * 60_000;
}

const MSG_ID = /<([^<>]*)>/g;

/** The message IDs of a header value: `<...>` contents, whitespace and folding removed; empty ones skipped. */
export function messageIds(value: Buffer): string[] {
  const out: string[] = [];
  const unfolded = value.toString('latin1').replace(/\([^()]*\)/g, '');
  for (const m of unfolded.matchAll(MSG_ID)) {
    const id = m[1]!.replace(/\s+/g, '');
    if (id.length > 0) out.push(id);
  }
  return out;
}

/** The cache of one server (kept in the extension's state, never module-global). */
export class SortKeys {
  private readonly entries = new WeakMap<Buffer, Entry>();

  private entry(m: Message): Entry {
    let e = this.entries.get(m.raw);
    if (e === undefined) {
      e = {};
      this.entries.set(m.raw, e);
    }
    return e;
  }

  private subjectOf(m: Message, e: Entry): void {
    const raw = firstField(m, 'subject');
    const base = baseSubject(raw === null ? null : decodeHeaderValue(raw));
    e.subject = collationKey(base.text);
    e.replyOrForward = base.replyOrForward;
  }

  /** The base subject's collation key (RFC 5256 §2.1, i;unicode-casemap); "" without a Subject. */
  subject(m: Message): string {
    const e = this.entry(m);
    if (e.subject === undefined) this.subjectOf(m, e);
    return e.subject!;
  }

  /** True when the subject marks a reply or forward (RFC 5256 §3 REFERENCES step 5). */
  replyOrForward(m: Message): boolean {
    const e = this.entry(m);
    if (e.replyOrForward === undefined) this.subjectOf(m, e);
    return e.replyOrForward!;
  }

  /** The sent date (RFC 5256 §2.2): the Date: header in UTC, else INTERNALDATE. */
  sentDate(m: Message): number {
    const e = this.entry(m);
    if (e.date === undefined) {
      const raw = firstField(m, 'date');
      e.date = raw === null ? null : parseDateHeader(raw.toString('latin1'));
    }
    return e.date ?? m.internaldate.ms;
  }

  /** RFC822.SIZE. */
  size(m: Message): number {
    const e = this.entry(m);
    e.size ??= servedSize(m.raw);
    return e.size;
  }

  /** Collation key of the addr-mailbox (local part) of the header's first address; "" without one. */
  mailbox(m: Message, header: AddressHeader): string {
    const e = this.entry(m);
    e.mailbox ??= new Map();
    let key = e.mailbox.get(header);
    if (key === undefined) {
      const a = firstAddress(m, header);
      key = collationKey(a === null ? '' : text(a.mailbox));
      e.mailbox.set(header, key);
    }
    return key;
  }

  /**
   * Collation key of the first address's display name (RFC 5957 §3:
   * RFC 2047 decoded), or of its address `mailbox@host` when it has no
   * (or an empty) display name; "" without an address.
   */
  display(m: Message, header: AddressHeader): string {
    const e = this.entry(m);
    e.display ??= new Map();
    let key = e.display.get(header);
    if (key === undefined) {
      const a = firstAddress(m, header);
      let shown = '';
      if (a !== null) {
        shown = a.name === null ? '' : decodeHeaderValue(a.name);
        if (shown === '') {
          const local = text(a.mailbox);
          const host = text(a.domain);
          shown = host === '' ? local : `${local}@${host}`;
        }
      }
      key = collationKey(shown);
      e.display.set(header, key);
    }
    return key;
  }

  /** The Message-ID (RFC 5256 §3 REFERENCES step 1), or null without a valid one. */
  messageId(m: Message): string | null {
    const e = this.entry(m);
    if (e.messageId === undefined) {
      const raw = firstField(m, 'message-id');
      e.messageId = raw === null ? null : (messageIds(raw)[0] ?? null);
    }
    return e.messageId;
  }

  /**
   * The message's references (RFC 5256 §3 step 1): the IDs of References in
   * order, or, when it has none, the first ID of In-Reply-To; else none.
   */
  references(m: Message): readonly string[] {
    const e = this.entry(m);
    if (e.references === undefined) {
      const refs = firstField(m, 'references');
      let ids = refs === null ? [] : messageIds(refs);
      if (ids.length === 0) {
        const reply = firstField(m, 'in-reply-to');
        const first = reply === null ? undefined : messageIds(reply)[0];
        ids = first === undefined ? [] : [first];
      }
      e.references = ids;
    }
    return e.references;
  }
}
