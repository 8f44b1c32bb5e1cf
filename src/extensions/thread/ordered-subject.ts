/**
 * THREAD=ORDEREDSUBJECT (RFC 5256 §3): the matches sorted by base subject
 * (i;unicode-casemap), then sent date, then sequence number; each run of
 * one base subject is a thread whose first message is the parent of all
 * the others (siblings in date order, no grandchildren), and the threads
 * are sorted by the sent date of their first message.
 */
import type { Message } from '../../store/message.js';
import { compareKeys } from '../../util/casemap.js';
import type { MessageKeys } from '../sort/keys.js';
import { adopt, bySentDate, node, type ThreadNode } from './tree.js';

export function threadBySubject(found: readonly { seq: number; message: Message }[], keys: MessageKeys): ThreadNode[] {
  const rows = found.map((f) => ({ ...f, subject: keys.subject(f.message), date: keys.sentDate(f.message) }));
  rows.sort((a, b) => compareKeys(a.subject, b.subject) || (a.date !== b.date ? (a.date < b.date ? -1 : 1) : a.seq - b.seq));
  const roots: ThreadNode[] = [];
  let current: ThreadNode | null = null;
  let subject = '';
  for (const row of rows) {
    const n = node(row.message, row.seq, row.date);
    if (current !== null && row.subject === subject) {
      adopt(current, n);
    } else {
      current = n;
      subject = row.subject;
      roots.push(n);
    }
  }
  roots.sort(bySentDate);
  return roots;
}
