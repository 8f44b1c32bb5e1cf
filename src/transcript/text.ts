/**
 * The transcript text format: what `server.transcript(n).text()`, the REST
 * route's `text/plain`, the `transcript.dir` files and `rookery record` write,
 * and what `rookery replay` reads. Made to be pasted into a bug report:
 *
 *     # Rookery transcript 1
 *     # session: 3
 *     # opened: 2026-11-25T01:00:00.000Z
 *     0 S: * OK [CAPABILITY IMAP4rev1 ...] Rookery ready
 *     4 C: a1 LOGIN alice ***
 *     5 S: a1 OK LOGIN completed
 *
 * A line is `<ms since opened> <C|S>: <bytes>`: C from the client, S from
 * the server. Each line stands for its bytes followed by CRLF, unless it
 * ends in a lone `\` (a chunk that ended mid-line). In the bytes, `\r` `\n`
 * `\t` are a bare CR, LF and tab, `\xNN` any other byte that is not
 * printable (a control byte, a byte of invalid UTF-8, a space at the end of
 * a line, which pasting would lose), and `\\` a backslash where a lone one
 * would read as one of these (elsewhere, as in `\Seen`, it stands for itself). Lines starting with `#` are
 * headers and comments; a file may hold several sessions, each starting
 * with its `# Rookery transcript` line. A paste that indented the lines or
 * kept its Markdown fences reads the same.
 */
import { isUtf8 } from 'node:buffer';
import type { TranscriptChunk, TranscriptSide } from './ring.js';
import { Transcript } from './transcript.js';

export const TRANSCRIPT_MAGIC = '# Rookery transcript 1';

const CRLF = Buffer.from('\r\n');
/** Letters that make an escape after a backslash. */
const ESCAPE_LETTERS = new Set(['\\', 'r', 'n', 't', 'x']);

/** One line's bytes as text (without its CRLF). */
function escapeLine(bytes: Buffer): string {
  const utf8 = isUtf8(bytes);
  const text = utf8 ? bytes.toString('utf8') : bytes.toString('latin1');
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    const code = ch.charCodeAt(0);
    if (code === 0x0d) pieces.push('\\r');
    else if (code === 0x0a) pieces.push('\\n');
    else if (code === 0x09) pieces.push('\\t');
    else if (code < 0x20 || code === 0x7f || (!utf8 && code >= 0x80)) pieces.push(`\\x${code.toString(16).padStart(2, '0')}`);
    else if (code === 0x20 && i === text.length - 1) pieces.push('\\x20');
    else pieces.push(ch);
  }
  // IMAP is full of backslashes (\Seen): one is doubled only where it would read as an escape,
  // before an escape letter, before another backslash or escape, or at the end of the line.
  for (let i = pieces.length - 1; i >= 0; i--) {
    if (pieces[i] !== '\\') continue;
    const next = pieces[i + 1];
    if (next === undefined || next.startsWith('\\') || ESCAPE_LETTERS.has(next[0]!)) pieces[i] = '\\\\';
  }
  return pieces.join('');
}

/** The text form of a transcript (see the module comment). */
export function renderTranscript(t: Transcript): string {
  const lines = [TRANSCRIPT_MAGIC, `# session: ${t.session}`];
  if (t.user !== null) lines.push(`# user: ${t.user}`);
  if (t.remoteAddress !== null) lines.push(`# remote: ${t.remoteAddress}`);
  lines.push(`# opened: ${iso(t.openedAt)}`);
  if (t.closedAt !== null) lines.push(`# closed: ${iso(t.closedAt)}`);
  if (t.redacted) lines.push('# credentials: redacted (***)');
  if (t.droppedBytes > 0) lines.push(`# dropped: ${t.droppedBytes} (the oldest bytes, over transcript.maxBytes)`);
  for (const chunk of t.chunks) {
    const prefix = `${Math.max(0, chunk.at - t.openedAt)} ${chunk.from === 'client' ? 'C' : 'S'}: `;
    const data = chunk.data;
    let at = 0;
    while (at < data.length) {
      const crlf = data.indexOf(CRLF, at);
      if (crlf < 0) {
        lines.push(`${prefix}${escapeLine(data.subarray(at))}\\`);
        break;
      }
      lines.push(`${prefix}${escapeLine(data.subarray(at, crlf))}`);
      at = crlf + 2;
    }
  }
  return `${lines.join('\n')}\n`;
}

function iso(ms: number): string {
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? String(ms) : d.toISOString();
}

/** A transcript text that cannot be read, with the line at fault. */
export class TranscriptSyntaxError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(`transcript line ${line}: ${message}`);
  }
}

const RECORD = /^[ \t]*(\d+(?:\.\d+)?) ([CS]):(?: (.*))?$/;

/** Bytes of a record line's text, and whether a CRLF follows them. */
function unescapeLine(text: string, lineNo: number): { bytes: Buffer; crlf: boolean } {
  const parts: Buffer[] = [];
  let plain = '';
  let crlf = true;
  const flush = (): void => {
    if (plain) parts.push(Buffer.from(plain, 'utf8'));
    plain = '';
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch !== '\\') {
      plain += ch;
      continue;
    }
    const next = text[i + 1];
    if (next === undefined) {
      crlf = false;
      break;
    }
    i++;
    if (next === '\\') plain += '\\';
    else if (next === 'r') plain += '\r';
    else if (next === 'n') plain += '\n';
    else if (next === 't') plain += '\t';
    else if (next === 'x' && /^[0-9a-fA-F]{2}$/.test(text.slice(i + 1, i + 3))) {
      flush();
      parts.push(Buffer.from([parseInt(text.slice(i + 1, i + 3), 16)]));
      i += 2;
    } else {
      // Not an escape: the backslash stands for itself (\Seen), as the renderer writes it.
      plain += `\\${next}`;
    }
  }
  flush();
  if (crlf) parts.push(CRLF);
  return { bytes: Buffer.concat(parts), crlf };
}

/**
 * Reads transcripts in the text form: every session in the text, in order.
 * Lines a person adds around a paste (blank lines, `#` comments) are
 * skipped; a record line that cannot be read is an error naming its line.
 * Text without any `# Rookery transcript` line is read as one session.
 */
export function parseTranscripts(text: string): Transcript[] {
  const out: Transcript[] = [];
  let current: { header: Map<string, string>; chunks: TranscriptChunk[] } | null = null;
  const finish = (): void => {
    if (!current) return;
    const h = current.header;
    const opened = Date.parse(h.get('opened') ?? '');
    const openedAt = Number.isNaN(opened) ? 0 : opened;
    const closed = Date.parse(h.get('closed') ?? '');
    out.push(
      new Transcript({
        session: Number(h.get('session') ?? out.length + 1) || out.length + 1,
        user: h.get('user') ?? null,
        remoteAddress: h.get('remote') ?? null,
        openedAt,
        closedAt: Number.isNaN(closed) ? null : closed,
        droppedBytes: Number(h.get('dropped')?.split(' ')[0] ?? 0) || 0,
        redacted: h.has('credentials'),
        chunks: current.chunks.map((c) => ({ ...c, at: c.at + openedAt })),
      }),
    );
    current = null;
  };
  const lines = text.split(/\r?\n/);
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n]!;
    // Blank lines and the fences of a Markdown paste are not part of it.
    if (line.trim() === '' || /^\s*(```|~~~)/.test(line)) continue;
    if (line.trimStart().startsWith('# Rookery transcript')) {
      finish();
      current = { header: new Map(), chunks: [] };
      continue;
    }
    if (line.trimStart().startsWith('#')) {
      const m = /^\s*#\s*([a-z]+):\s*(.*)$/.exec(line);
      if (m && current && current.chunks.length === 0) current.header.set(m[1]!, m[2]!.trim());
      continue;
    }
    const m = RECORD.exec(line);
    if (!m) throw new TranscriptSyntaxError(n + 1, `expected "<ms> C: <bytes>" or "<ms> S: <bytes>", got ${JSON.stringify(line.slice(0, 80))}`);
    current ??= { header: new Map(), chunks: [] };
    const from: TranscriptSide = m[2] === 'C' ? 'client' : 'server';
    const { bytes } = unescapeLine(m[3] ?? '', n + 1);
    const at = Number(m[1]);
    // Lines of one chunk (or of consecutive chunks from one side) become one chunk again.
    const last = current.chunks[current.chunks.length - 1];
    if (last && last.from === from && last.at === at) current.chunks[current.chunks.length - 1] = { at, from, data: Buffer.concat([last.data, bytes]) };
    else current.chunks.push({ at, from, data: bytes });
  }
  finish();
  return out;
}
