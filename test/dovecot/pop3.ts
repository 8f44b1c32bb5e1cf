/**
 * A throwaway Dovecot that speaks POP3 (Debian's dovecot-pop3d), for the
 * POP3 differential test and the POP3 bench: like dovecot.ts, everything
 * under one temporary directory, loopback only, static passdb and userdb
 * (any user name, password `pass`), stopped with SIGTERM.
 *
 * It also listens for IMAP: the maildrop is filled with IMAP APPEND, which
 * stores the octets as given and numbers the messages in append order, so
 * POP3 message n is the n-th message given (a Maildir written by hand gets
 * whatever order the directory listing has). Rookery gets the same octets
 * through the control API, in the same order.
 */
import type { Server } from '../../src/index.js';
import { findDovecot, hasPop3, startDovecot } from './dovecot.js';
import { DiffSession } from './session.js';

export { findDovecot, hasPop3 };

export interface DovecotPop3 {
  pop3: number;
  imap: number;
  version: string;
  dir: string;
  /** Appends each message to `user`'s INBOX over IMAP, in order, byte for byte. */
  load(user: string, messages: readonly Buffer[]): Promise<void>;
  stop(): Promise<void>;
}

export interface DovecotPop3Options {
  /** Extra lines for dovecot.conf (pop3_* settings). */
  extra?: string[];
  /** Every user's password (default `pass`). */
  password?: string;
}

/**
 * Starts a throwaway Dovecot with POP3 and IMAP.
 * @returns the running server, or null when Dovecot or its POP3 is not installed
 */
export async function startDovecotPop3(options: DovecotPop3Options = {}): Promise<DovecotPop3 | null> {
  const dovecot = await startDovecot({
    pop3: true,
    ...(options.password !== undefined ? { password: options.password } : {}),
    // many bench sessions from one address at once
    extra: ['mail_max_userip_connections = 1000', ...(options.extra ?? [])],
  });
  if (dovecot === null) return null;
  const imap = dovecot.port;
  const load = async (user: string, messages: readonly Buffer[]): Promise<void> => {
    const s = await DiffSession.open(imap, user, options.password ?? 'pass');
    try {
      for (const m of messages) await s.append('INBOX', m);
    } finally {
      s.close();
    }
  };
  return { pop3: dovecot.pop3!, imap, version: dovecot.version, dir: dovecot.dir, load, stop: dovecot.stop };
}

/** Puts the same octets, in the same order, into a Rookery user's INBOX. */
export function loadRookery(server: Server, messages: readonly Buffer[]): void {
  for (const raw of messages) server.control.addMessage('INBOX', { raw });
}
