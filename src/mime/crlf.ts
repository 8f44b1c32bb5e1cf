/**
 * The bytes IMAP serves for a message. A stored message keeps its bytes
 * exactly (snapshots and exports give back what was loaded), but FETCH
 * serves every line break as CRLF, as Dovecot does: an LF without a CR
 * before it gets one. RFC822.SIZE, BODYSTRUCTURE sizes and line counts and
 * every literal are counted on these served bytes. A lone CR is left as it
 * is.
 *
 * Messages that already use CRLF throughout (nearly all) are served from
 * the stored Buffer itself, so they share its cached MIME tree; the others
 * are converted once and cached per stored Buffer.
 */

let served: WeakMap<Buffer, Buffer> | null = null;
let sizes: WeakMap<Buffer, number> | null = null;

/** Number of LF bytes in `raw` with no CR before them (uncached, for hot paths that should not grow the size cache: `raw.length + bareLfCount(raw)` is RFC822.SIZE). */
export function bareLfCount(raw: Buffer): number {
  let n = 0;
  for (let i = raw.indexOf(10); i >= 0; i = raw.indexOf(10, i + 1)) if (i === 0 || raw[i - 1] !== 13) n++;
  return n;
}

/**
 * The size of the message as served (RFC822.SIZE).
 * @returns the byte count with every bare LF counted as CRLF
 */
export function servedSize(raw: Buffer): number {
  sizes ??= new WeakMap();
  let size = sizes.get(raw);
  if (size === undefined) {
    size = raw.length + bareLfCount(raw);
    sizes.set(raw, size);
  }
  return size;
}

/**
 * The message as served: `raw` itself when every LF already has its CR,
 * else a CRLF copy (made once per Buffer).
 * @returns bytes to parse and serve; do not modify them
 */
export function servedSource(raw: Buffer): Buffer {
  served ??= new WeakMap();
  let out = served.get(raw);
  if (out !== undefined) return out;
  const extra = servedSize(raw) - raw.length;
  if (extra === 0) {
    out = raw;
  } else {
    out = Buffer.allocUnsafe(raw.length + extra);
    let o = 0;
    let from = 0;
    for (let i = raw.indexOf(10); i >= 0; i = raw.indexOf(10, i + 1)) {
      if (i > 0 && raw[i - 1] === 13) continue;
      o += raw.copy(out, o, from, i);
      out[o++] = 13;
      from = i; // the LF itself goes out with the next run
    }
    raw.copy(out, o, from);
  }
  served.set(raw, out);
  return out;
}
