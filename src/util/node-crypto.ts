/**
 * node:crypto, loaded with its first use: hashes, HMACs and keys serve
 * logins, tokens and certificates, not the start, and loading it was ~3 ms
 * of every start of the `rookery` command (issue 37). A built-in module is
 * one instance for require and import alike.
 */
import type * as Crypto from 'node:crypto';
import { loadOnUse } from './load-on-use.js';

export const nodeCrypto = loadOnUse<typeof Crypto>(import.meta.url, 'node:crypto');
