/**
 * RFC 9394's partial-range and the window it takes of a result list.
 *
 *   partial-range       = partial-range-first / partial-range-last
 *   partial-range-first = nz-number ":" nz-number     ; from the first result on
 *   partial-range-last  = "-" nz-number ":" "-" nz-number ; from the last result back
 *
 * The two ends may come in either order (`5:1` is `1:5`, `-500:-400` is
 * `-400:-500`); `-1` is the last result. A window past the end of the
 * results holds what there is.
 */
import type { SearchMatch } from '../extension.js';

export interface PartialRange {
  /**
   * The range as the response names it: normalized, low end first
   * (`4:2` is answered as `2:4`, `-3:-1` as `-1:-3`), since the formal
   * syntax of RFC 9394 makes the two orders one range ("A range 500:400
   * is the same as 400:500"); Dovecot answers so too.
   */
  readonly text: string;
  /** Counted from the last result back. */
  readonly fromEnd: boolean;
  /** 1-based ends, low <= high. */
  readonly low: number;
  readonly high: number;
}

const RANGE = /^(-?)([1-9][0-9]{0,9}):(-?)([1-9][0-9]{0,9})$/;
const MAX_NUMBER = 4294967295;

/** The range of an atom like `1:10` or `-1:-100`; null when it is not one. */
export function parsePartialRange(text: string): PartialRange | null {
  const m = RANGE.exec(text);
  if (!m || m[1] !== m[3]) return null;
  const a = Number(m[2]);
  const b = Number(m[4]);
  if (a > MAX_NUMBER || b > MAX_NUMBER) return null;
  const low = Math.min(a, b);
  const high = Math.max(a, b);
  const sign = m[1]!;
  return { text: `${sign}${low}:${sign}${high}`, fromEnd: sign === '-', low, high };
}

/** The results the range selects, in the results' own order (mailbox order for SEARCH, sort order for SORT). */
export function partialWindow<T extends SearchMatch>(found: readonly T[], range: PartialRange): T[] {
  const n = found.length;
  if (!range.fromEnd) return found.slice(range.low - 1, Math.min(range.high, n));
  // -low is the low-th result from the end; -high lies further back.
  const end = n - range.low + 1;
  const start = Math.max(n - range.high, 0);
  return end <= 0 ? [] : found.slice(start, end);
}
