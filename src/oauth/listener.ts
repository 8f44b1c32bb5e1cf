/**
 * The OAuth endpoints on a port of their own (`oauth.port`), for tests
 * that want the token service apart from the REST API (a REST token that
 * OAuth clients never see, or another host). It serves nothing but the
 * OAuth paths; a request for another is 404 with an OAuth error object.
 */
import * as http from 'node:http';
import type * as net from 'node:net';
import { isOAuthPath, oauthDescription, type OAuthHttp } from './http.js';

/** Connections at once; one more is closed by Node (http.Server#maxConnections). */
const MAX_CONNECTIONS = 1000;

export class OAuthListener {
  private readonly http: http.Server;

  constructor(
    endpoints: OAuthHttp,
    private readonly host: string,
    private readonly port: number,
  ) {
    this.http = http.createServer({ headersTimeout: 20_000, requestTimeout: 30_000 }, (req, res) => {
      const url = req.url ?? '/';
      const at = url.search(/[?#]/);
      const pathname = at < 0 ? url : url.slice(0, at);
      const search = at >= 0 && url[at] === '?' ? url.slice(at + 1).split('#')[0]! : '';
      if (isOAuthPath(pathname)) return void endpoints.serve(req, res, pathname, search);
      const body = JSON.stringify({ error: 'invalid_request', error_description: oauthDescription(`No such OAuth endpoint: ${pathname.slice(0, 200)}; the endpoints are in /.well-known/oauth-authorization-server`) });
      res.writeHead(404, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-store' });
      res.end(body);
    });
    this.http.maxConnections = MAX_CONNECTIONS;
  }

  listen(): Promise<{ host: string; port: number }> {
    return new Promise((resolve, reject) => {
      this.http.once('error', reject);
      this.http.listen(this.port, this.host, () => {
        this.http.off('error', reject);
        const a = this.http.address() as net.AddressInfo;
        resolve({ host: a.address, port: a.port });
      });
    });
  }

  address(): { host: string; port: number } | null {
    const a = this.http.address();
    return a && typeof a === 'object' ? { host: a.address, port: a.port } : null;
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      if (!this.http.listening) return resolve();
      this.http.close(() => resolve());
      this.http.closeAllConnections();
    });
  }
}
