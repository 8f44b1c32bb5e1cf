/**
 * node:tls, loaded with the first TLS context or socket. Imported as an ES
 * module, node:tls gets a facade that reads every export, and its
 * `rootCertificates` getter parses Node's ~140 root certificates: ~3 ms of
 * every start of a server that may never speak TLS. A built-in module is
 * one instance for require and import alike.
 */
import type * as Tls from 'node:tls';
import { loadOnUse } from '../util/load-on-use.js';

export const nodeTls = loadOnUse<typeof Tls>(import.meta.url, 'node:tls');
