/**
 * Strict parsing of the Host header and of an absolute-form request target's
 * authority (RFC 7230 §5.4, RFC 3986 §3.2.2): `uri-host [":" port]`, where
 * uri-host is a bracketed IPv6 literal, an IPv4 address or a reg-name, and
 * port is digits only. Anything else is invalid, and a server must answer
 * an invalid Host with 400.
 */
import * as net from 'node:net';

/** reg-name: unreserved / pct-encoded / sub-delims (RFC 3986), which also covers IPv4 addresses. */
const REG_NAME = /^(?:[A-Za-z0-9\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})*$/;
const PORT = /^[0-9]*$/;

/** The host part of a valid `uri-host [":" port]` (brackets kept for IPv6), or null when it is not valid. */
export function parseHost(value: string): string | null {
  let host: string;
  let rest: string;
  if (value.startsWith('[')) {
    const end = value.indexOf(']');
    if (end < 0) return null;
    // IPv6 only; zone identifiers and IPvFuture are not for a loopback control API.
    if (!net.isIPv6(value.slice(1, end)) || value.includes('%')) return null;
    host = value.slice(0, end + 1);
    rest = value.slice(end + 1);
  } else {
    const colon = value.indexOf(':');
    host = colon < 0 ? value : value.slice(0, colon);
    rest = colon < 0 ? '' : value.slice(colon);
    if (!REG_NAME.test(host)) return null;
  }
  if (rest !== '' && !(rest.startsWith(':') && PORT.test(rest.slice(1)))) return null;
  return host;
}

/** True for `localhost` (and `*.localhost`), 127.0.0.0/8 and ::1, with or without brackets. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (net.isIPv4(h)) return h.startsWith('127.');
  if (net.isIPv6(h)) return h === '::1' || h === '0:0:0:0:0:0:0:1' || /^::ffff:127\./.test(h);
  return false;
}

/** What a Host value means for the loopback rule. */
export type HostVerdict = 'loopback' | 'other' | 'invalid';

export function hostVerdict(value: string): HostVerdict {
  const host = parseHost(value);
  if (host === null) return 'invalid';
  return isLoopbackHost(host) ? 'loopback' : 'other';
}
