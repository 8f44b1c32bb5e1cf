/** The `Received:` trace header a delivery adds on top (RFC 5321 §4.4). */

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

const two = (n: number): string => String(n).padStart(2, '0');

/** An RFC 5322 date-time in UTC (`Tue, 24 Nov 2026 22:40:00 +0000`). */
export function rfc5322Date(ms: number): string {
  const d = new Date(ms);
  return `${DAYS[d.getUTCDay()]}, ${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()} ${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())} +0000`;
}

export interface TraceInfo {
  /** What the client said in HELO/EHLO, or null when it said nothing. */
  helo: string | null;
  remoteAddress: string;
  /** This server's name (`smtp.name`). */
  name: string;
  /** `SMTP`, `ESMTP`, `ESMTPS`, `ESMTPSA` ... (RFC 3848). */
  protocol: string;
  id: string;
  recipients: readonly string[];
  now: number;
}

/** Text that may go into a header: no line breaks, no control characters. */
const clean = (text: string): string => text.replace(/[\x00-\x1f\x7f]+/g, ' ');

/**
 * The header, folded, ending in CRLF. The `for` clause names the recipient
 * only when there is one: with several it would show every Bcc recipient.
 */
export function receivedHeader(info: TraceInfo): string {
  const plain = info.remoteAddress.replace(/^::ffff:(?=\d+\.)/i, '');
  const address = plain.includes(':') ? `IPv6:${plain}` : plain;
  // RFC 5321 §4.4 Extended-Domain: the HELO name (or the address literal) with the address as TCP-info.
  const helo = info.helo !== null && /^[A-Za-z0-9.:_[\]-]+$/.test(info.helo) ? info.helo : `[${address}]`;
  const from = `from ${helo} ([${address}])`;
  const only = info.recipients.length === 1 ? `\r\n\tfor <${clean(info.recipients[0]!)}>` : '';
  return `Received: ${from}\r\n\tby ${info.name} (Rookery) with ${info.protocol} id ${clean(info.id)}${only};\r\n\t${rfc5322Date(info.now)}\r\n`;
}
