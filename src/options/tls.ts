/**
 * The `tls` option (used by `secure` and `starttls`). Certificates are PEM text, a Buffer of it,
 * or a path to a PEM file (read when the server is built, so a wrong path is
 * an option error and not a failed handshake later).
 */
import { readFileSync } from 'node:fs';
import { TEST_CERTIFICATE, TEST_PRIVATE_KEY } from '../tls/test-certificate.js';
import { checkTypos, isPlainObject, type Problems } from './problems.js';
import type { ResolvedOptions } from './types.js';

export const TLS_KEYS = ['key', 'cert'] as const;
const TLS_SET = new Set<string>(TLS_KEYS);

export function resolveTls(problems: Problems, value: unknown): ResolvedOptions['tls'] {
  const builtin = { key: TEST_PRIVATE_KEY, cert: TEST_CERTIFICATE, builtin: true };
  if (value === undefined) return builtin;
  if (!isPlainObject(value)) {
    problems.expected('tls', 'an object ({key, cert})', value);
    return builtin;
  }
  checkTypos(value, TLS_SET, TLS_KEYS, 'tls', problems);
  if ((value.key === undefined) !== (value.cert === undefined)) {
    problems.add('tls', 'give both key and cert, or neither (the built-in test certificate)');
    return builtin;
  }
  if (value.key === undefined) return builtin;
  const key = pem(problems, value.key, 'tls.key');
  const cert = pem(problems, value.cert, 'tls.cert');
  return key === undefined || cert === undefined ? builtin : { key, cert, builtin: false };
}

function pem(problems: Problems, value: unknown, path: string): string | Buffer | undefined {
  if (Buffer.isBuffer(value)) return Buffer.from(value);
  if (typeof value !== 'string' || value === '') {
    problems.expected(path, 'PEM text, a Buffer or a path to a PEM file', value);
    return undefined;
  }
  if (value.includes('-----BEGIN ')) return value;
  try {
    return readFileSync(value);
  } catch (err) {
    problems.add(path, `cannot read ${JSON.stringify(value)}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    return undefined;
  }
}
