/**
 * The wire log of the `debug` option: every command and line a client sends
 * and every byte the server answers, one log line per protocol line, with
 * credentials redacted (LOGIN passwords, AUTHENTICATE data) and long
 * literals shortened.
 */
import { LiteralSegment, type Segment } from './reader.js';

/** Literals longer than this are shown as their size only. */
const LITERAL_SHOWN = 200;
/** A logged write longer than this is cut, with its size. */
const WRITE_SHOWN = 4000;

/** Printable text: control bytes and 8-bit bytes as `\xNN`, so a log line stays one line. */
function printable(text: string): string {
  return text.replace(/[\x00-\x1f\x7f-\xff]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** A command as the client sent it, its literals inline; the password of LOGIN and SASL data hidden. */
export function describeCommand(segments: readonly Segment[]): string {
  let text = '';
  for (const segment of segments) {
    if (segment instanceof LiteralSegment) {
      const marker = `${segment.binary ? '~' : ''}{${segment.data.length}}`;
      text += segment.data.length <= LITERAL_SHOWN ? `${marker} ${printable(segment.data.toString('latin1'))}` : `${marker} <${segment.data.length} bytes>`;
    } else {
      text += printable(segment.toString('latin1'));
    }
  }
  const name = /^\S+ (\S+)/.exec(text)?.[1]?.toUpperCase();
  if (name === 'LOGIN') {
    // `tag LOGIN user password`: keep tag, command and user.
    const m = /^(\S+ \S+ (?:"(?:[^"\\]|\\.)*"|\{\d+\+?\} \S*|\S+)) /.exec(text);
    return m ? `${m[1]} ***` : text.replace(/^(\S+ \S+).*$/, '$1 ***');
  }
  if (name === 'AUTHENTICATE') {
    // `tag AUTHENTICATE mechanism [initial-response]`
    return text.replace(/^(\S+ \S+ \S+) .*$/, '$1 ***');
  }
  return text;
}

/** The lines of one write to the client. */
export function describeOutput(data: Buffer): string[] {
  let text = data.toString('latin1');
  let cut = '';
  if (text.length > WRITE_SHOWN) {
    cut = ` ... <${data.length} bytes in all>`;
    text = text.slice(0, WRITE_SHOWN);
  }
  const lines = text.split('\r\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const out = lines.map(printable);
  if (cut) out[out.length - 1] += cut;
  return out;
}
