/**
 * BINARY (RFC 3516; part of IMAP4rev2, RFC 9051 §6.4.5): FETCH of a part
 * with its Content-Transfer-Encoding removed, and APPEND of message data
 * as a literal8 (`~{n}`), which may carry NUL.
 *
 * - `BINARY[part]<partial>` sets \Seen as `BODY[...]` does, `BINARY.PEEK`
 *   does not, `BINARY.SIZE[part]` is the length of what `BINARY[part]`
 *   sends. The answer is named `BINARY[part]` (`<offset>` after it for a
 *   partial FETCH, the offset counted in the decoded bytes).
 * - The value is a literal8 exactly when the decoded bytes hold a NUL
 *   (MUST); other data goes out as a plain literal (RFC 3516 §4.3: SHOULD
 *   use a string for 8-bit data without NUL).
 * - A part in an encoding the server does not know (not 7bit, 8bit,
 *   binary, base64 or quoted-printable) fails the FETCH with `NO
 *   [UNKNOWN-CTE]`.
 * - Literal8 is allowed where the grammar puts it (`Extension.literal8`):
 *   APPEND's message, and any command reading `ArgParser.literal()`. A
 *   message appended so is stored as sent, except that parts holding NUL
 *   get base64 (./encode.ts, `appendData`): BODY[] and BODYSTRUCTURE then
 *   show an encoding a plain literal can carry, and BINARY gives the bytes
 *   back exactly.
 */
import { CommandFailure, no } from '../../imap/command.js';
import { ParseError, type ArgParser } from '../../imap/parser.js';
import type { Partial } from '../../imap/syntax.js';
import { literal, type ImapValue } from '../../imap/wire/values.js';
import { servedSource } from '../../mime/index.js';
import type { Message } from '../../store/message.js';
import { defineExtension, type FetchItem, type FetchItemRequest } from '../extension.js';
import { always } from '../shared.js';
import { UnknownEncoding, binaryContent } from './content.js';
import { encodeNulParts } from './encode.js';

interface BinaryRequest {
  part: number[];
  partial: Partial | null;
}

/** `[part]` and, unless `withPartial` is false, `<offset.length>` after BINARY / BINARY.PEEK / BINARY.SIZE. */
function readSection(args: ArgParser, withPartial: boolean): BinaryRequest {
  if (args.peekChar() !== '[') throw new ParseError('Invalid fetch attribute');
  const part = args.bracketedPart();
  const partial = withPartial ? args.partial() : null;
  if (!withPartial && args.peekChar() === '<') throw new ParseError('Invalid fetch attribute');
  return { part, partial };
}

function content(message: Message, part: readonly number[]): Buffer {
  try {
    return binaryContent(servedSource(message.raw), part);
  } catch (err) {
    if (err instanceof UnknownEncoding) throw new CommandFailure(no(err.message, 'UNKNOWN-CTE'));
    throw err;
  }
}

function binaryItem(name: 'BINARY' | 'BINARY.PEEK'): FetchItem {
  return {
    name,
    parse(args): FetchItemRequest {
      const request = readSection(args, true);
      let label = `BINARY[${request.part.join('.')}]`;
      if (request.partial !== null) label += `<${request.partial.offset}>`;
      return { data: request, label, setsSeen: name === 'BINARY' };
    },
    value(message, ctx): ImapValue {
      const { part, partial } = ctx.data as BinaryRequest;
      let data = content(message, part);
      if (partial !== null) data = data.subarray(Math.min(partial.offset, data.length), Math.min(data.length, partial.offset + partial.length));
      return literal(data, data.includes(0));
    },
  };
}

const sizeItem: FetchItem = {
  name: 'BINARY.SIZE',
  parse(args) {
    const request = readSection(args, false);
    return { data: request, label: `BINARY.SIZE[${request.part.join('.')}]` };
  },
  value: (message, ctx) => content(message, (ctx.data as BinaryRequest).part).length,
};

export const extension = defineExtension({
  name: 'BINARY',
  capabilities: always('BINARY'),
  fetchItems: [binaryItem('BINARY'), binaryItem('BINARY.PEEK'), sizeItem],
  literal8: true,
  appendData: (data) => encodeNulParts(data),
});
