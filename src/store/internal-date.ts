/**
 * An IMAP internal date: an instant plus the zone offset it was given in, so
 * `14-Sep-2013 21:22:28 -0300` survives a snapshot round trip unchanged.
 */
export interface InternalDate {
  /** Milliseconds since the epoch (UTC), whole seconds. */
  readonly ms: number;
  /** Zone offset in minutes east of UTC, e.g. -180 for -0300. */
  readonly tz: number;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const MONTH_INDEX = new Map(MONTHS.map((m, i) => [m.toLowerCase(), i]));

const DATE_TIME = /^ ?(\d{1,2})-([A-Za-z]{3})-(\d{4}) (\d{2}):(\d{2}):(\d{2}) ([+-])(\d{2})(\d{2})$/;

/** Parses an RFC 3501 date-time (`dd-Mon-yyyy hh:mm:ss +zzzz`, day may be space padded). */
export function parseInternalDate(text: string): InternalDate | null {
  const m = DATE_TIME.exec(text);
  if (!m) return null;
  const day = Number(m[1]);
  const month = MONTH_INDEX.get(m[2]!.toLowerCase());
  const year = Number(m[3]);
  const hour = Number(m[4]);
  const minute = Number(m[5]);
  const second = Number(m[6]);
  const zh = Number(m[8]);
  const zm = Number(m[9]);
  if (month === undefined || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60 || zm > 59) {
    return null;
  }
  const tz = (m[7] === '-' ? -1 : 1) * (zh * 60 + zm);
  const local = Date.UTC(year, month, day, hour, minute, second);
  // Reject dates such as 31-Feb that Date.UTC silently rolls over.
  if (new Date(local).getUTCDate() !== day) return null;
  return { ms: local - tz * 60_000, tz };
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/** Formats as `dd-Mon-yyyy hh:mm:ss +zzzz` (two-digit day, as the spec's shape shows). */
export function formatInternalDate(date: InternalDate): string {
  const local = new Date(date.ms + date.tz * 60_000);
  const sign = date.tz < 0 ? '-' : '+';
  const abs = Math.abs(date.tz);
  return (
    `${pad(local.getUTCDate())}-${MONTHS[local.getUTCMonth()]}-${local.getUTCFullYear()} ` +
    `${pad(local.getUTCHours())}:${pad(local.getUTCMinutes())}:${pad(local.getUTCSeconds())} ` +
    `${sign}${pad(Math.floor(abs / 60))}${pad(abs % 60)}`
  );
}

/**
 * The last date `internalDateFromMs` made. Dates are never changed once
 * made, so messages added in the same second share one (deliveries in a
 * loop keep one object per second alive, not one per message).
 */
let lastUtc: InternalDate = Object.freeze({ ms: Number.NaN, tz: 0 });

/** An internal date for an instant, in UTC (+0000), truncated to whole seconds. */
export function internalDateFromMs(ms: number): InternalDate {
  const whole = Math.floor(ms / 1000) * 1000;
  if (whole !== lastUtc.ms) lastUtc = Object.freeze({ ms: whole, tz: 0 });
  return lastUtc;
}
