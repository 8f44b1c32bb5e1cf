/**
 * The base subject of RFC 5256 §2.1, used by SORT (SUBJECT) and both THREAD
 * algorithms, and whether the subject marks a reply or forward (RFC 5256
 * §3 REFERENCES step 5: extraction removed a subj-refwd, a "(fwd)"
 * subj-trailer, or a subj-fwd-hdr and subj-fwd-trl).
 *
 * The grammar (case-insensitive):
 *   subj-refwd   = ("re" / ("fw" ["d"])) *WSP [subj-blob] ":"
 *   subj-blob    = "[" *BLOBCHAR "]" *WSP         ; BLOBCHAR: not "[" or "]"
 *   subj-leader  = (*subj-blob subj-refwd) / WSP
 *   subj-trailer = "(fwd)" / WSP
 *   subj-fwd     = "[fwd:" subject "]"
 *
 * Input is the decoded header text (RFC 2047 words already turned into
 * Unicode, step 1); the grammar's octets are matched as characters, which
 * changes nothing since every literal of it is ASCII.
 */

export interface BaseSubject {
  /** The base subject text (not yet case-mapped). */
  text: string;
  /** True when extraction removed a subj-refwd, a "(fwd)" trailer or a subj-fwd wrapper. */
  replyOrForward: boolean;
}

// A run of blobs then re/fw/fwd, an optional blob, and the colon; spaces are single after step 1.
const LEADER = /^(?:\[[^[\]]*\] ?)*(?:re|fwd?) ?(?:\[[^[\]]*\] ?)?:/i;
const BLOB = /^\[[^[\]]*\] ?/;
const FWD_TRAILER = /\(fwd\)$/i;
const FWD_HEADER = /^\[fwd:/i;
const NEEDS_SPACING = /[\t\r\n]| {2}/;

/**
 * False when LEADER cannot match: it starts with a blob or re/fw. Checked
 * first because most subjects of a mailbox start with neither, and SORT and
 * THREAD take the base subject of (nearly) every message.
 */
function mayLead(s: string): boolean {
  const c = s.charCodeAt(0) | 0x20;
  return c === 0x7b /* '[' | 0x20 */ || c === 0x72 /* r */ || c === 0x66 /* f */;
}

/** RFC 5256 §2.1 steps (1)-(7) on a decoded Subject (null or "" for none). */
export function baseSubject(decoded: string | null): BaseSubject {
  // (1) tabs and folding to spaces, runs of spaces to one.
  let s = decoded ?? '';
  if (NEEDS_SPACING.test(s)) s = s.replace(/[\t\r\n]/g, ' ').replace(/ {2,}/g, ' ');
  let replyOrForward = false;
  for (;;) {
    // (2) trailers, until none is left.
    for (;;) {
      if (s.endsWith(' ')) s = s.slice(0, -1);
      else if (s.endsWith(')') && FWD_TRAILER.test(s)) {
        s = s.slice(0, -5);
        replyOrForward = true;
      } else break;
    }
    // (3) and (4), repeated until neither matches (5).
    for (let changed = true; changed; ) {
      changed = false;
      for (;;) {
        if (s.startsWith(' ')) {
          s = s.slice(1);
          changed = true;
          continue;
        }
        const leader = mayLead(s) ? LEADER.exec(s) : null;
        if (!leader) break;
        s = s.slice(leader[0].length);
        replyOrForward = true;
        changed = true;
      }
      const blob = s.startsWith('[') ? BLOB.exec(s) : null;
      // A blob goes only when what is left is a non-empty subj-base.
      if (blob && blob[0].length < s.length) {
        s = s.slice(blob[0].length);
        changed = true;
      }
    }
    // (6) a "[fwd: ...]" wrapper: unwrap and start again at (2).
    if (s.startsWith('[') && FWD_HEADER.test(s) && s.endsWith(']')) {
      s = s.slice(5, -1);
      replyOrForward = true;
      continue;
    }
    return { text: s, replyOrForward };
  }
}
