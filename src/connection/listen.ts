import * as net from 'node:net';

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
