/**
 * The `smtp` option: SMTP intake through the optional peer package
 * smtp-server. Like `rest`, it is on only when a port is given, so a config
 * file can carry the other keys without starting a listener.
 */
import { checkTypos, childPath, isPlainObject, type Problems } from './problems.js';
import type { ResolvedOptions } from './types.js';

export const SMTP_KEYS = ['port', 'host', 'secure', 'starttls', 'auth', 'catchAll', 'addresses', 'name'] as const;
const SMTP_SET = new Set<string>(SMTP_KEYS);

/** Server name in the greeting and in `Received:` when `smtp.name` is not given. */
export const DEFAULT_SMTP_NAME = 'localhost';

export function resolveSmtp(problems: Problems, value: unknown, defaultHost: string): ResolvedOptions['smtp'] {
  if (value === undefined || value === null) return null;
  if (!isPlainObject(value)) {
    problems.expected('smtp', 'an object ({port, host, secure, starttls, auth, catchAll, addresses, name})', value);
    return null;
  }
  checkTypos(value, SMTP_SET, SMTP_KEYS, 'smtp', problems);
  const bool = (key: 'secure' | 'starttls' | 'auth' | 'catchAll'): boolean => {
    const v = value[key];
    if (v === undefined) return false;
    if (typeof v === 'boolean') return v;
    problems.expected(`smtp.${key}`, 'a boolean', v);
    return false;
  };
  let port: number | undefined;
  if (value.port !== undefined) {
    const p = value.port;
    if (typeof p === 'number' && Number.isInteger(p) && p >= 0 && p <= 65535) port = p;
    else problems.expected('smtp.port', 'an integer from 0 to 65535', p);
  }
  const host = nonEmpty(problems, value.host, 'smtp.host') ?? defaultHost;
  const name = nonEmpty(problems, value.name, 'smtp.name') ?? DEFAULT_SMTP_NAME;
  if (/[\s\0]/.test(name)) problems.add('smtp.name', 'a host name without spaces or control characters');
  const secure = bool('secure');
  const starttls = bool('starttls');
  if (secure && starttls) {
    problems.add('smtp.starttls', 'cannot go with smtp.secure: the port speaks TLS from the first byte, so there is nothing to upgrade (choose one)');
  }
  const addresses = resolveAddresses(problems, value.addresses);
  if (port === undefined) return null;
  return { port, host, secure, starttls, auth: bool('auth'), catchAll: bool('catchAll'), addresses, name };
}

function nonEmpty(problems: Problems, value: unknown, path: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string' && value !== '') return value;
  problems.expected(path, 'a non-empty string', value);
  return undefined;
}

/**
 * `smtp.addresses`: recipient address → user name. Addresses are compared
 * without regard to case (what mail systems do in practice), so they are
 * kept lower-cased in a Map: an address is user input, never an object key.
 */
function resolveAddresses(problems: Problems, value: unknown): Map<string, string> {
  const out = new Map<string, string>();
  if (value === undefined) return out;
  if (!isPlainObject(value)) {
    problems.expected('smtp.addresses', 'an object of user names by address ({"bob@example.com": "testuser"})', value);
    return out;
  }
  for (const [address, user] of Object.entries(value)) {
    const path = childPath('smtp.addresses', address);
    if (address === '') problems.add(path, 'an address must not be empty');
    else if (typeof user !== 'string' || user === '') problems.expected(path, 'a user name', user);
    else out.set(address.toLowerCase(), user);
  }
  return out;
}
