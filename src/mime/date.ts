/**
 * The RFC 5322 date-time of a `Date:` header (§3.3, obsolete forms of §4.3
 * included), read into its fields. One grammar for its two readers: SORT's
 * DATE key (RFC 5256 §2.2, an instant) and fixture import (an internal date
 * that keeps the zone); each checks the fields as its use needs.
 */

/** Month names (any case, first three letters) to 0-11. */
export const MONTHS: ReadonlyMap<string, number> = new Map(['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'].map((m, i) => [m, i]));

/** RFC 5322 §4.3 obsolete zones in minutes east; military letters are unreliable, so they count as +0000 (-0000 in the RFC's words). */
export const ZONES: ReadonlyMap<string, number> = new Map([
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

/** A date-time's fields as written; `zone` in minutes east of UTC (0 when missing). Ranges are not checked. */
export interface DateFields {
  year: number;
  /** 0-11. */
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  zone: number;
}

/** The fields of an RFC 5322 date-time (comments ignored), or null when it is not one. */
export function dateFields(value: string): DateFields | null {
  const m = DATE.exec(value.includes('(') ? value.replace(/\([^()]*\)/g, ' ') : value);
  if (!m) return null;
  const month = MONTHS.get(m[2]!.toLowerCase());
  if (month === undefined) return null;
  let year = Number(m[3]);
  // RFC 5322 §4.3: two-digit years 00-49 are 20xx, 50-99 are 19xx; three digits add 1900.
  if (m[3]!.length === 2) year += year < 50 ? 2000 : 1900;
  else if (m[3]!.length === 3) year += 1900;
  let zone = 0;
  const z = m[7];
  if (z !== undefined) {
    if (z[0] === '+' || z[0] === '-') {
      const minutes = Number(z.slice(1, 3)) * 60 + Number(z.slice(3, 5));
      zone = z[0] === '-' ? -minutes : minutes;
    } else zone = ZONES.get(z.toLowerCase()) ?? 0;
  }
  return { year, month, day: Number(m[1]), hour: Number(m[4]), minute: Number(m[5]), second: m[6] === undefined ? 0 : Number(m[6]), zone };
}
