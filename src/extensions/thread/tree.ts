/**
 * Thread trees and their wire form (RFC 5256 §4):
 *
 *   thread-list    = "(" (thread-members / thread-nested) ")"
 *   thread-members = nz-number *(SP nz-number) [SP thread-nested]
 *   thread-nested  = 2*thread-list
 *
 * so a message with one child continues the member list (`3 6`), one with
 * several children opens a list per child (`6 (4 23)(44 7 96)`), and a
 * dummy (a parent that is no searched message) shows only its children.
 * Everything here walks with explicit stacks: a References chain can be as
 * long as the mailbox, deeper than the call stack.
 */
import { putNumber, roomFor } from '../../imap/wire/ascii-writer.js';
import type { Message } from '../../store/message.js';

export interface ThreadNode {
  /** Null for a dummy. */
  message: Message | null;
  /** Sequence number in the session's view (0 for a dummy). */
  seq: number;
  /** Sent date (RFC 5256 §2.2), read once so sorting does no lookups (0 for a dummy). */
  date: number;
  children: ThreadNode[];
  parent: ThreadNode | null;
}

/** The children of every leaf: most nodes are leaves, so they share one array, replaced on the first `adopt`. */
const LEAF: ThreadNode[] = [];

export const node = (message: Message | null, seq: number, date: number): ThreadNode => ({ message, seq, date, children: LEAF, parent: null });

/** Makes `child` the last child of `parent`. */
export function adopt(parent: ThreadNode, child: ThreadNode): void {
  child.parent = parent;
  if (parent.children === LEAF) parent.children = [child];
  else parent.children.push(child);
}

/** Every node below `roots` (roots included), parents before children. */
export function preorder(roots: readonly ThreadNode[]): ThreadNode[] {
  const out: ThreadNode[] = [];
  const stack = [...roots].reverse();
  while (stack.length > 0) {
    const n = stack.pop()!;
    out.push(n);
    for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]!);
  }
  return out;
}

/** The message a node sorts by: itself, or for a dummy its first (already sorted) child. */
function representative(n: ThreadNode): ThreadNode {
  let r = n;
  while (r.message === null && r.children.length > 0) r = r.children[0]!;
  return r;
}

/**
 * Sorts siblings by sent date, ties by sequence number (RFC 5256 §2.2); a
 * dummy sorts as its first child (§3 REFERENCES steps 4 and 6).
 */
export function bySentDate(a: ThreadNode, b: ThreadNode): number {
  const x = a.message === null ? representative(a) : a;
  const y = b.message === null ? representative(b) : b;
  if (x.date !== y.date) return x.date < y.date ? -1 : 1;
  return x.seq - y.seq;
}

/**
 * Sorts `list` in place. Short lists (most sets of siblings) by insertion,
 * which allocates nothing: Array#sort copies every list it sorts, and
 * threading a large mailbox sorts tens of thousands of short ones.
 */
export function sortNodes(list: ThreadNode[], compare: (a: ThreadNode, b: ThreadNode) => number): void {
  if (list.length > 16) {
    list.sort(compare);
    return;
  }
  for (let i = 1; i < list.length; i++) {
    const x = list[i]!;
    let j = i - 1;
    while (j >= 0 && compare(list[j]!, x) > 0) {
      list[j + 1] = list[j]!;
      j--;
    }
    list[j + 1] = x;
  }
}

/** Sorts every set of siblings under `roots`, the deepest first, then `roots` itself. */
export function sortSiblings(roots: ThreadNode[], compare: (a: ThreadNode, b: ThreadNode) => number): void {
  const all = preorder(roots);
  for (let i = all.length - 1; i >= 0; i--) {
    const n = all[i]!;
    if (n.children.length > 1) sortNodes(n.children, compare);
  }
  sortNodes(roots, compare);
}

/** Bytes of the thread-lists being written, grown by doubling (the core's octet writer, ../../imap/wire/ascii-writer.ts). */
class ThreadWriter {
  private buf: Buffer = Buffer.allocUnsafe(64 * 1024);
  private pos = 0;

  byte(b: number): void {
    this.buf = roomFor(this.buf, this.pos, 1);
    this.buf[this.pos++] = b;
  }

  /** A number's decimal digits, written without a string. */
  number(n: number): void {
    this.buf = roomFor(this.buf, this.pos, 16);
    this.pos = putNumber(this.buf, this.pos, n);
  }

  text(): string {
    return this.buf.toString('latin1', 0, this.pos);
  }
}

/**
 * The `* THREAD` data after the word THREAD: one thread-list per root.
 * Written as bytes: a string grown piece by piece was ~300,000 small
 * strings (and a string per number) for a large mailbox.
 */
export function formatThreads(roots: readonly ThreadNode[], uid: boolean): string {
  const out = new ThreadWriter();
  const stack: (number | ThreadNode)[] = [];
  const OPEN = 40;
  const CLOSE = 41;
  for (let i = roots.length - 1; i >= 0; i--) stack.push(CLOSE, roots[i]!, OPEN);
  while (stack.length > 0) {
    const item = stack.pop()!;
    if (typeof item === 'number') {
      out.byte(item);
      continue;
    }
    // The number (and its space) are written at once; only the children wait on the stack, so no
    // array per node.
    const kids = item.children;
    if (item.message !== null) {
      out.number(uid ? item.message.uid : item.seq);
      if (kids.length > 0) out.byte(32);
    }
    if (kids.length === 1) stack.push(kids[0]!);
    else for (let i = kids.length - 1; i >= 0; i--) stack.push(CLOSE, kids[i]!, OPEN);
  }
  return out.text();
}
