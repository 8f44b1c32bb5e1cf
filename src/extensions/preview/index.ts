/**
 * PREVIEW (RFC 8970): the FETCH item `PREVIEW`, a short plain-text extract
 * of the message (see ./text.ts for how it is made), and `PREVIEW (LAZY)`.
 *
 * LAZY lets a server answer NIL when it has no preview at hand yet; this
 * server makes one on demand from the message every time, so it always
 * has it and LAZY gets the same answer as PREVIEW. NIL is never sent: a
 * message without text gets "". There is no SEARCH key (the RFC defines
 * none), and PREVIEW never sets \Seen.
 */
import { ParseError, type ArgParser } from '../../imap/parser.js';
import { defineExtension, type FetchItemRequest } from '../extension.js';
import { always } from '../shared.js';
import { previewOf } from './text.js';

/** Modifiers of RFC 8970's grammar: `"PREVIEW" [SP "(" preview-mod *(SP preview-mod) ")"]`, `preview-mod = "LAZY"`. */
const MODIFIERS = new Set(['LAZY']);

function parse(args: ArgParser): FetchItemRequest {
  // `FETCH 1 PREVIEW (CHANGEDSINCE 5)`: a list that starts with no preview modifier is the FETCH's modifiers.
  if (!args.lookingAt(' (LAZY')) return { data: { lazy: false } };
  args.sp();
  args.list(
    () => {
      const name = args.atom().toUpperCase();
      if (!MODIFIERS.has(name)) throw new ParseError(`Unknown PREVIEW modifier ${name.slice(0, 40)}`);
    },
    { allowEmpty: false },
  );
  return { data: { lazy: true } };
}

export const extension = defineExtension({
  name: 'PREVIEW',
  capabilities: always('PREVIEW'),
  fetchItems: [{ name: 'PREVIEW', parse, value: (message) => previewOf(message.raw) }],
});
