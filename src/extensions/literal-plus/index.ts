/** LITERAL+ (RFC 7888): the reader always accepts `{n+}`; this advertises it. */
import type { Extension } from '../extension.js';
import { always } from '../shared.js';

export const extension: Extension = { name: 'LITERAL+', aliases: ['LITERALPLUS'], capabilities: always('LITERAL+') };
