/**
 * THREAD=REFERENCES (RFC 5256 §3), step by step:
 *
 * 1. Each searched message gets a container under its Message-ID (a
 *    missing one, or a duplicate of an earlier message's, gets a container
 *    of its own that no reference can reach). Its references (References,
 *    else the first ID of In-Reply-To) are linked in order, parent before
 *    child, creating dummy containers for unknown IDs; a link is made only
 *    when the child has no parent yet and it would not close a loop (1A).
 *    Then the message goes under its last reference, replacing any parent
 *    it had (a truncated References elsewhere), again unless that closes a
 *    loop; without references it has no parent (1B).
 * 2. Containers without a parent are the roots.
 * 3. Dummies are pruned: without children they go; with children they are
 *    replaced by them, except at the top where a dummy stays when it has
 *    more than one child.
 * 4. Roots are sorted by sent date (a dummy by its first child).
 * 5. Roots with the same base subject (skipping empty ones) are merged:
 *    the subject table keeps per subject a dummy if there is one, else a
 *    message that is no reply/forward if there is one, else the first;
 *    then each other root joins it: dummy children are appended, a message
 *    goes under a dummy, a reply goes under a non-reply, and otherwise the
 *    two become children of a new dummy.
 * 6. Every set of siblings is sorted by sent date, deepest first.
 *
 * Message-IDs are compared as case-sensitive strings (§3 step 1A note).
 * Everything is linear in the number of messages apart from the sorts and
 * the loop check, which walks up from the would-be parent only when the
 * would-be child already has children (a new message has none).
 */
import type { Message } from '../../store/message.js';
import type { MessageKeys } from '../sort/keys.js';
import { adopt, bySentDate, node, preorder, sortNodes, sortSiblings, type ThreadNode } from './tree.js';

/** True when `ancestor` is `n` or above it. */
function isAncestorOrSelf(ancestor: ThreadNode, n: ThreadNode): boolean {
  // A leaf is above nothing: a new message needs no walk up a long chain (which made a deep thread quadratic).
  if (ancestor.children.length === 0) return ancestor === n;
  for (let p: ThreadNode | null = n; p !== null; p = p.parent) if (p === ancestor) return true;
  return false;
}

function unlink(child: ThreadNode): void {
  const parent = child.parent;
  if (parent === null) return;
  const i = parent.children.indexOf(child);
  if (i >= 0) parent.children.splice(i, 1);
  child.parent = null;
}


export function threadByReferences(found: readonly { seq: number; message: Message }[], keys: MessageKeys): ThreadNode[] {
  const byId = new Map<string, ThreadNode>();
  const all: ThreadNode[] = [];
  // Dummies made in step 1 and not filled by a message since: with none (every reference found, the
  // usual mailbox) step 3 has nothing to prune and step 6 needs no depth order.
  let dummies = 0;
  const container = (id: string): ThreadNode => {
    let c = byId.get(id);
    if (c === undefined) {
      c = node(null, 0, 0);
      byId.set(id, c);
      all.push(c);
      dummies++;
    }
    return c;
  };

  // Step 1.
  const infos = found.map((f) => keys.threadInfo(f.message));
  const dateOf = (i: number): number => infos[i]!.date ?? found[i]!.message.internaldate.ms;
  for (let f = 0; f < found.length; f++) {
    const { seq, message } = found[f]!;
    const info = infos[f]!;
    const id = info.messageId;
    let own: ThreadNode;
    const existing = id === null ? undefined : byId.get(id);
    if (existing !== undefined && existing.message === null) {
      dummies--;
      own = existing;
      own.message = message;
      own.seq = seq;
      own.date = dateOf(f);
    } else {
      own = node(message, seq, dateOf(f));
      all.push(own);
      if (id !== null && existing === undefined) byId.set(id, own);
    }
    const refs = info.references;
    // 1A: the chain of references, without overriding links or closing loops. Each reference's
    // container is looked up once: a child is the next pair's parent, the last one the message's.
    let last = refs.length > 0 ? container(refs[0]!) : null;
    for (let i = 0; i + 1 < refs.length; i++) {
      const parent = last!;
      const child = container(refs[i + 1]!);
      if (child.parent === null && !isAncestorOrSelf(child, parent)) adopt(parent, child);
      last = child;
    }
    // 1B: the message under its last reference.
    unlink(own);
    if (last !== null && !isAncestorOrSelf(own, last)) adopt(last, own);
  }

  // Step 2.
  let roots = all.filter((n) => n.parent === null);

  // Step 3, bottom-up so a dummy's children are final when it is replaced by them.
  const order = dummies > 0 ? preorder(roots) : [];
  for (let i = order.length - 1; i >= 0; i--) {
    const n = order[i]!;
    if (!n.children.some((c) => c.message === null)) continue;
    const kept: ThreadNode[] = [];
    for (const c of n.children) {
      if (c.message !== null) kept.push(c);
      else for (const g of c.children) kept.push(g);
    }
    for (const c of kept) c.parent = n;
    n.children = kept;
  }
  if (dummies > 0) {
    const top: ThreadNode[] = [];
    for (const r of roots) {
      if (r.message !== null || r.children.length > 1) top.push(r);
      else if (r.children.length === 1) top.push(r.children[0]!);
    }
    for (const r of top) r.parent = null;
    roots = top;
  }

  // Step 4.
  const compare = bySentDate;
  for (let i = 0; i < roots.length; i++) if (roots[i]!.message === null) sortNodes(roots[i]!.children, compare);
  sortNodes(roots, compare);

  // Step 5.
  const subjectOf = (n: ThreadNode): string => {
    const m = n.message ?? n.children[0]?.message ?? null;
    return m === null ? '' : keys.subject(m);
  };
  const isReply = (n: ThreadNode): boolean => n.message !== null && keys.replyOrForward(n.message);
  // Per subject the slot of its root: the root there may become a new dummy, which keeps the slot, so
  // no map from nodes to slots is needed.
  const subjects = roots.map(subjectOf);
  const table = new Map<string, number>();
  for (let i = 0; i < roots.length; i++) {
    const subject = subjects[i]!;
    if (subject === '') continue;
    const at = table.get(subject);
    if (at === undefined) {
      table.set(subject, i);
      continue;
    }
    const held = roots[at]!;
    const r = roots[i]!;
    if (held.message !== null && (r.message === null || (isReply(held) && !isReply(r)))) table.set(subject, i);
  }
  const slots: (ThreadNode | null)[] = roots;
  for (let i = 0; i < slots.length; i++) {
    const current = slots[i];
    if (!current) continue;
    const subject = subjects[i]!;
    if (subject === '') continue;
    const at = table.get(subject)!;
    if (at === i) continue;
    const held = slots[at]!;
    slots[i] = null;
    if (held.message === null && current.message === null) {
      for (const c of current.children) adopt(held, c);
    } else if (held.message === null || (isReply(current) && !isReply(held))) {
      adopt(held, current);
    } else {
      const dummy = node(null, 0, 0);
      adopt(dummy, current);
      adopt(dummy, held);
      slots[at] = dummy;
    }
  }
  roots = slots.filter((r): r is ThreadNode => r !== null);

  // Step 6.
  if (dummies > 0) sortSiblings(roots, compare);
  else {
    // Below the top every node is a message (a date of its own): siblings sort in any order, no walk.
    // Step 5's new dummies are roots and sort by their first child, so their children go first.
    // Indexed loops: this function runs once per THREAD, mostly before it is optimized, where for-of
    // makes an iterator result per element.
    for (let i = 0; i < all.length; i++) if (all[i]!.children.length > 1) sortNodes(all[i]!.children, compare);
    for (let i = 0; i < roots.length; i++) if (roots[i]!.message === null && roots[i]!.children.length > 1) sortNodes(roots[i]!.children, compare);
    sortNodes(roots, compare);
  }
  return roots;
}
