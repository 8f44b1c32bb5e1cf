/**
 * Test-only: renders an ImapValue as IMAP text so assertions can compare
 * readable strings. Strings and Buffers of printable ASCII are quoted;
 * anything with 8-bit bytes or line breaks is shown as a literal
 * `{n}\r\n<bytes>` with the bytes decoded as UTF-8 (or latin1) for display.
 * Lists are separated as the serializer separates them (`adjoined()`).
 */
import { isAdjoined } from '../../src/imap/wire/serializer.js';
import { Atom, Literal, Raw, Utf8Text, type ImapValue } from '../../src/imap/wire/values.js';

function str(bytes: Buffer): string {
  let plain = true;
  for (const b of bytes) if (b < 0x20 || b > 0x7e) plain = false;
  if (plain) return `"${bytes.toString('latin1').replace(/[\\"]/g, (c) => `\\${c}`)}"`;
  const shown = Buffer.from(bytes.toString('utf8'), 'utf8').equals(bytes) ? bytes.toString('utf8') : bytes.toString('latin1');
  return `{${bytes.length}}\r\n${shown}`;
}

export function imapText(v: ImapValue): string {
  if (v === null) return 'NIL';
  if (typeof v === 'number') return String(v);
  if (typeof v === 'string') return str(Buffer.from(v, 'utf8'));
  if (Buffer.isBuffer(v)) return str(v);
  if (v instanceof Atom) return v.value;
  if (v instanceof Literal) return str(v.data);
  if (v instanceof Raw) return v.data.toString('latin1');
  if (v instanceof Utf8Text) return /[\0\r\n]/.test(v.value) ? str(Buffer.from(v.value, 'utf8')) : `"${v.value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
  // as on the wire: the leading lists of an adjoined list go back to back
  let run = isAdjoined(v);
  let out = '(';
  v.forEach((item, i) => {
    if (run && !Array.isArray(item)) run = false;
    if (i > 0 && !run) out += ' ';
    out += imapText(item);
  });
  return `${out})`;
}
