/**
 * The client checker's POP3 rules: ids start with `pop3-` so they share
 * one namespace (findings, JUnit names, `clientCheckRules`) with IMAP's
 * without clashing. The checks are in ./pop3/checker.ts.
 */
import type { ClientRule } from './rules.js';

export const POP3_RULES: readonly ClientRule[] = [
  { id: 'pop3-plaintext-credentials', protocol: 'pop3', severity: 'warning', rfc: 'RFC 2595 §4; RFC 8314 §5', byDefault: true, summary: 'PASS, APOP or AUTH PLAIN/LOGIN in clear text while the server offered STLS' },
  { id: 'pop3-pipelining-not-advertised', protocol: 'pop3', severity: 'error', rfc: 'RFC 2449 §6.6; RFC 1939 §3', byDefault: true, summary: 'a command sent before the previous answer arrived, without PIPELINING in the capabilities the client asked for' },
  { id: 'pop3-command-during-multiline', protocol: 'pop3', severity: 'error', rfc: 'RFC 2449 §6.6; RFC 1939 §3', byDefault: true, summary: 'a command sent while a multi-line answer (RETR, TOP, LIST, UIDL, CAPA) was still coming, without PIPELINING' },
  { id: 'pop3-command-after-quit', protocol: 'pop3', severity: 'error', rfc: 'RFC 1939 §4, §6', byDefault: true, summary: 'bytes sent after QUIT, which ends the session' },
  { id: 'pop3-capa-not-checked', protocol: 'pop3', severity: 'warning', rfc: 'RFC 2449 §5; RFC 1939 §7', byDefault: true, summary: 'an optional command (TOP, UIDL, USER, APOP, AUTH, STLS) used without asking CAPA first in this state and TLS layer' },
  { id: 'pop3-capability-not-advertised', protocol: 'pop3', severity: 'error', rfc: 'RFC 2449 §5, §6; RFC 5034 §3', byDefault: true, summary: 'an optional command or SASL mechanism that the CAPA answer the client was given does not list' },
  { id: 'pop3-wrong-state', protocol: 'pop3', severity: 'error', rfc: 'RFC 1939 §3, §4, §5, §7; RFC 2595 §4', byDefault: true, summary: 'a command not valid in the session state (STAT before login, USER after it, PASS not right after USER, STLS under TLS)' },
  { id: 'pop3-apop-without-timestamp', protocol: 'pop3', severity: 'error', rfc: 'RFC 1939 §7 (APOP)', byDefault: true, summary: 'APOP although the greeting carried no <timestamp> to digest' },
  { id: 'pop3-line-too-long', protocol: 'pop3', severity: 'warning', rfc: 'RFC 2449 §4; RFC 5034 §4', byDefault: true, summary: 'a command line longer than 255 octets, CRLF included' },
  { id: 'pop3-bare-newline', protocol: 'pop3', severity: 'error', rfc: 'RFC 1939 §3', byDefault: true, summary: 'a command line not ended by CRLF (a bare LF or CR)' },
  { id: 'pop3-no-such-message', protocol: 'pop3', severity: 'warning', rfc: 'RFC 1939 §5, §6', byDefault: true, summary: 'a message number that names no message: 0, above the maildrop, or marked deleted' },
  { id: 'pop3-dele-without-quit', protocol: 'pop3', severity: 'warning', rfc: 'RFC 1939 §6', byDefault: true, summary: 'the client closed the connection with messages marked by DELE but without QUIT, so nothing was deleted' },
  { id: 'pop3-no-quit', protocol: 'pop3', severity: 'warning', rfc: 'RFC 1939 §6', byDefault: false, summary: 'the client closed the connection without QUIT' },
];
