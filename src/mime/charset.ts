/**
 * Charset → Unicode decoding with Node's built-in TextDecoder (full ICU),
 * plus the fallbacks mail needs: mislabeled or unlabeled 8-bit text is
 * taken as UTF-8 when it is valid UTF-8 and as ISO-8859-1 otherwise.
 */
import { isUtf8 } from 'node:buffer';
import { TextDecoder } from 'node:util';

const decoders = new Map<string, TextDecoder | null>();

/** Labels that mean "UTF-8 or plain ASCII": decoded as UTF-8 with a latin1 fallback. */
const UTF8_LIKE = new Set(['', 'utf-8', 'utf8', 'us-ascii', 'ascii', 'ansi_x3.4-1968', 'us', 'iso646-us', 'x-unknown', 'unknown-8bit', 'unknown', 'default']);

/** Normalises a charset label: unquoted, trimmed, lowercased, RFC 2231 `*language` removed. */
function normalise(charset: string): string {
  let label = charset.trim().toLowerCase();
  if (label.length >= 2 && label.startsWith('"') && label.endsWith('"')) label = label.slice(1, -1).trim();
  const star = label.indexOf('*');
  if (star >= 0) label = label.slice(0, star);
  return label;
}

function decoderFor(label: string): TextDecoder | null {
  let d = decoders.get(label);
  if (d === undefined) {
    try {
      d = new TextDecoder(label);
    } catch {
      d = null;
    }
    decoders.set(label, d);
  }
  return d;
}

/**
 * Decodes bytes that should be UTF-8 (or ASCII): UTF-8 when valid, else ISO-8859-1.
 * @returns the text
 */
export function utf8OrLatin1(bytes: Buffer): string {
  return isUtf8(bytes) ? bytes.toString('utf8') : bytes.toString('latin1');
}

/** RFC 2152 UTF-7 (TextDecoder has no UTF-7). */
function decodeUtf7(bytes: Buffer): string {
  const s = bytes.toString('latin1');
  let out = '';
  let i = 0;
  while (i < s.length) {
    const ch = s[i]!;
    if (ch !== '+') {
      out += ch;
      i++;
      continue;
    }
    let j = i + 1;
    while (j < s.length && /[A-Za-z0-9+/]/.test(s[j]!)) j++;
    const b64 = s.slice(i + 1, j);
    if (b64.length === 0) {
      // "+-" is a literal plus; a lone "+" is kept
      out += '+';
    } else {
      const raw = Buffer.from(b64, 'base64');
      for (let k = 0; k + 1 < raw.length; k += 2) out += String.fromCharCode((raw[k]! << 8) | raw[k + 1]!);
    }
    i = j < s.length && s[j] === '-' ? j + 1 : j;
  }
  return out;
}

/**
 * Decodes `bytes` written in `charset` to a string. us-ascii, utf-8, an
 * empty or an unknown label decode as UTF-8 when the bytes are valid UTF-8
 * and as ISO-8859-1 otherwise; known labels use TextDecoder (WHATWG
 * semantics, invalid sequences become U+FFFD); UTF-7 is decoded here.
 * @returns the decoded text
 */
export function decodeCharset(bytes: Buffer, charset: string): string {
  const label = normalise(charset);
  if (UTF8_LIKE.has(label)) return utf8OrLatin1(bytes);
  if (label === 'utf-7' || label === 'unicode-1-1-utf-7' || label === 'csunicode11utf7') return decodeUtf7(bytes);
  // Note: WHATWG maps iso-8859-1 / latin1 to windows-1252, which is what mailers mean too.
  const d = decoderFor(label);
  if (d === null) return utf8OrLatin1(bytes);
  return d.decode(bytes);
}
