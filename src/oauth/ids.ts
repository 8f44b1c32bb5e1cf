/**
 * Token strings from the server's `scriptSeed`: SHA-256 over the seed and
 * a counter, so a run that makes the same requests gets the same tokens
 * (a test can assert on them, a transcript can be replayed), and no
 * `Math.random`. They are test tokens: guessable by whoever knows the seed,
 * which is the point.
 */
import { nodeCrypto } from '../util/node-crypto.js';

/** RFC 8628 §6.1: user codes from 20 consonants, no vowels (no words), no look-alike digits. */
const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';

export class TokenIds {
  private counter = 0;

  constructor(private readonly seed: number) {}

  /** Back to the first token (server reset). */
  reset(): void {
    this.counter = 0;
  }

  private block(kind: string): Buffer {
    this.counter++;
    return nodeCrypto().createHash('sha256').update(`rookery-oauth:${this.seed}:${kind}:${this.counter}`).digest();
  }

  /** `<prefix><43 base64url characters>` (256 bits): an access token, refresh token, code or device code. */
  token(prefix: string): string {
    return prefix + this.block(prefix).toString('base64url');
  }

  /** An 8-letter user code, shown as `XXXX-XXXX` (RFC 8628 §6.1). */
  userCode(): string {
    const bytes = this.block('user_code');
    let code = '';
    for (let i = 0; i < 8; i++) code += USER_CODE_ALPHABET[bytes[i]! % USER_CODE_ALPHABET.length];
    return `${code.slice(0, 4)}-${code.slice(4)}`;
  }
}

/** A user code as typed (any case, with or without the dash or spaces) in its canonical form. */
export function normalizeUserCode(text: string): string {
  const letters = text.toUpperCase().replace(/[^A-Z]/g, '');
  return letters.length === 8 ? `${letters.slice(0, 4)}-${letters.slice(4)}` : text.toUpperCase();
}
