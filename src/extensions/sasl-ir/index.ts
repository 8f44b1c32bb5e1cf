/** SASL-IR (RFC 4959): AUTHENTICATE with an initial response. Loads AUTH=PLAIN. */
import type { Extension } from '../extension.js';
import { always } from '../shared.js';

export const extension: Extension = {
  name: 'SASL-IR',
  requires: ['AUTH=PLAIN'],
  capabilities: always('SASL-IR'),
  saslInitialResponse: true,
};
