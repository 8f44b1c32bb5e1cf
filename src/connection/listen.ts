import * as net from 'node:net';
import { failTlsHandshake } from '../script/transport.js';
import type { ListenerTls } from '../tls/listener-tls.js';

/** Where a listener listens. */
export interface ListenAddress {
  host: string;
  port: number;
}

/** A TCP listener on `port` and `host`, each connection to `accept`; rejects with the listen error (EADDRINUSE, ...). */
export async function listenOn(port: number, host: string, accept: (socket: net.Socket) => void): Promise<net.Server> {
  const listener = net.createServer(accept);
  await new Promise<void>((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(port, host, () => {
      listener.off('error', reject);
      resolve();
    });
  });
  return listener;
}

/** The address a listener listens on, or null before it does. */
export function addressOf(listener: net.Server | null): ListenAddress | null {
  const a = listener?.address();
  return a && typeof a === 'object' ? { host: a.address, port: a.port } : null;
}

/**
 * The first steps of every listener's accept (IMAP, POP3, SMTP): the
 * socket's errors are the session's to see as a close; on an implicit-TLS
 * listener a `faults.tlsFailure` refuses the handshake with an alert (null
 * then: nothing more to do), else the socket is wrapped by hand, not by
 * tls.Server, so that the session keeps the TCP socket for resets.
 */
export function acceptChannel(socket: net.Socket, secure: boolean, tlsFailure: boolean, tls: () => ListenerTls): net.Socket | null {
  socket.on('error', () => undefined);
  if (secure && tlsFailure) {
    failTlsHandshake(socket);
    return null;
  }
  return secure ? tls().wrap(socket) : socket;
}
