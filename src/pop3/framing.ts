/**
 * RFC 1939 §3 multi-line framing: every line that starts with the
 * termination octet `.` gets one more in front (byte-stuffing), the body
 * ends with CRLF, and a line holding only `.` ends the response. The
 * faults of src/pop3/faults.ts change exactly these steps.
 */

const DOT_LINE = Buffer.from('.\r\n');
const CRLF = Buffer.from('\r\n');

/** How a multi-line body is framed; the defaults are RFC 1939's. */
export interface Framing {
  /** False: lines starting with `.` go out as they are (a server that forgets to stuff). */
  stuff: boolean;
  /** Terminating `.` lines: 1 (RFC 1939), 0 (missing), 2 (doubled). */
  dots: 0 | 1 | 2;
}

export const RFC_FRAMING: Framing = { stuff: true, dots: 1 };

/**
 * The body as it goes out: stuffed, CRLF-ended, with its terminating line.
 * Returns the parts to write (the message's own bytes are not copied when
 * no line needs stuffing).
 */
export function frameBody(body: Buffer, framing: Framing = RFC_FRAMING): Buffer[] {
  const parts: Buffer[] = [];
  if (framing.stuff) stuffInto(body, parts);
  else if (body.length > 0) parts.push(body);
  if (body.length > 0 && body[body.length - 1] !== 10) parts.push(CRLF);
  else if (body.length > 0 && (body.length < 2 || body[body.length - 2] !== 13)) {
    // A bare LF at the very end: the line still has to end with CRLF before the dot line.
    parts[parts.length - 1] = parts[parts.length - 1]!.subarray(0, parts[parts.length - 1]!.length - 1);
    parts.push(CRLF);
  }
  for (let i = 0; i < framing.dots; i++) parts.push(DOT_LINE);
  return parts;
}

/** Pushes `body` with a `.` before every line that starts with one; O(length), one scan. */
function stuffInto(body: Buffer, parts: Buffer[]): void {
  let from = 0;
  if (body[0] === 0x2e) {
    parts.push(Buffer.from('.'));
  }
  for (let i = body.indexOf(10); i >= 0 && i + 1 < body.length; i = body.indexOf(10, i + 1)) {
    if (body[i + 1] !== 0x2e) continue;
    parts.push(body.subarray(from, i + 1), Buffer.from('.'));
    from = i + 1;
  }
  if (from < body.length) parts.push(body.subarray(from));
}
