/**
 * Modified UTF-7 (RFC 3501 §5.1.3), the encoding of IMAP mailbox names.
 * Storage names are kept in this form; REST and the control API take and
 * return them as they are.
 */

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+,';
const B64_INDEX = new Map([...B64].map((c, i) => [c, i]));

/** Encodes a Unicode mailbox name into modified UTF-7. */
export function encodeMutf7(name: string): string {
  let out = '';
  let pending: number[] = [];
  const flush = (): void => {
    if (pending.length === 0) return;
    const bytes: number[] = [];
    for (const unit of pending) bytes.push(unit >> 8, unit & 0xff);
    let bits = 0;
    let value = 0;
    out += '&';
    for (const byte of bytes) {
      value = (value << 8) | byte;
      bits += 8;
      while (bits >= 6) {
        bits -= 6;
        out += B64[(value >> bits) & 0x3f];
      }
    }
    if (bits > 0) out += B64[(value << (6 - bits)) & 0x3f];
    out += '-';
    pending = [];
  };
  for (let i = 0; i < name.length; i++) {
    const code = name.charCodeAt(i);
    if (code >= 0x20 && code <= 0x7e) {
      flush();
      out += code === 0x26 ? '&-' : name[i];
    } else {
      pending.push(code);
    }
  }
  flush();
  return out;
}

/** Decodes a modified UTF-7 name; returns null when it is not valid modified UTF-7. */
export function decodeMutf7(name: string): string | null {
  let out = '';
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) return null;
    if (c !== 0x26) {
      out += name[i];
      continue;
    }
    const end = name.indexOf('-', i + 1);
    if (end < 0) return null;
    if (end === i + 1) {
      out += '&';
      i = end;
      continue;
    }
    let bits = 0;
    let value = 0;
    const units: number[] = [];
    let bytes: number[] = [];
    for (let j = i + 1; j < end; j++) {
      const v = B64_INDEX.get(name[j]!);
      if (v === undefined) return null;
      value = ((value << 6) | v) & 0xffffff;
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        bytes.push((value >> bits) & 0xff);
        if (bytes.length === 2) {
          units.push((bytes[0]! << 8) | bytes[1]!);
          bytes = [];
        }
      }
    }
    // Leftover must be zero padding only, and no half UTF-16 unit.
    if (bytes.length !== 0 || bits >= 6 || (value & ((1 << bits) - 1)) !== 0) return null;
    const text = String.fromCharCode(...units);
    // A shifted run must not encode printable ASCII (it has its own form) and
    // surrogates must pair up.
    for (let k = 0; k < units.length; k++) {
      const u = units[k]!;
      if (u >= 0x20 && u <= 0x7e) return null;
      if (u >= 0xd800 && u <= 0xdbff) {
        const next = units[k + 1];
        if (next === undefined || next < 0xdc00 || next > 0xdfff) return null;
        k++;
      } else if (u >= 0xdc00 && u <= 0xdfff) {
        return null;
      }
    }
    out += text;
    i = end;
  }
  return out;
}

/** True when `name` is valid modified UTF-7 in its canonical form. */
export function isValidMutf7(name: string): boolean {
  const decoded = decodeMutf7(name);
  return decoded !== null && encodeMutf7(decoded) === name;
}
