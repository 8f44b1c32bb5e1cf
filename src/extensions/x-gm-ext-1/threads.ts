/**
 * The thread rule behind X-GM-THRID. A new message joins the thread of
 * 1. a message it names in References or In-Reply-To, or a message that
 *    named it there (a reply seen before its original), else
 * 2. the thread whose normalized subject it has: RFC 2047 words decoded,
 *    leading `Re:`/`Fwd:`/`Fw:`/`AW:`/`WG:`/`SV:` (with `[n]` counters) and
 *    `[list]` tags removed repeatedly, blanks collapsed, lower case; an
 *    empty subject never links, else
 * 3. it starts a thread whose id is its own X-GM-MSGID (as Gmail, whose
 *    thread id is the id of the thread's first message).
 * Messages are taken in the order the server first sees them, so a thread
 * never changes id once given.
 */
import { decodeHeaderValue, getMime } from '../../mime/index.js';
import type { Message } from '../../store/message.js';

const PREFIX = /^\s*(?:(?:re|fwd?|aw|wg|sv|vs)\s*(?:\[\d+\])?\s*:|\[[^\]]*\])\s*/i;

/** The subject Gmail-like threading compares (see the module comment); empty when there is none. */
export function normalizedSubject(subject: string): string {
  let s = subject;
  for (let before = ''; before !== s; ) {
    before = s;
    s = s.replace(PREFIX, '');
  }
  return s.replace(/\s+/g, ' ').trim().toLowerCase();
}

/** `<id>` tokens of a header value, without the brackets. */
function messageIds(value: string): string[] {
  return [...value.matchAll(/<([^<>\s]+)>/g)].map((m) => m[1]!);
}

export interface ThreadKeys {
  /** The message's own Message-ID, or null. */
  own: string | null;
  /** Message-IDs it refers to (References, then In-Reply-To). */
  refs: string[];
  subject: string;
}

/** What threading reads of a message: its Message-ID, the ids it refers to and its normalized subject. */
export function threadKeys(message: Message): ThreadKeys {
  let own: string | null = null;
  const refs: string[] = [];
  let subject = '';
  for (const field of getMime(message.raw).fields) {
    switch (field.key) {
      case 'message-id':
        own ??= messageIds(field.value.toString('latin1'))[0] ?? null;
        break;
      case 'references':
      case 'in-reply-to':
        refs.push(...messageIds(field.value.toString('latin1')));
        break;
      case 'subject':
        if (subject === '') subject = normalizedSubject(decodeHeaderValue(field.value));
        break;
    }
  }
  return { own, refs, subject };
}

/** The thread index of one server: Message-IDs and subjects → thread id. */
export class Threads {
  private readonly byRef = new Map<string, string>();
  private readonly bySubject = new Map<string, string>();

  clear(): void {
    this.byRef.clear();
    this.bySubject.clear();
  }

  /** The thread of a message new to the server whose own X-GM-MSGID is `msgid`. */
  threadOf(keys: ThreadKeys, msgid: string): string {
    for (const ref of keys.refs) {
      const found = this.byRef.get(ref);
      if (found !== undefined) return found;
    }
    if (keys.own !== null) {
      const found = this.byRef.get(keys.own);
      if (found !== undefined) return found;
    }
    if (keys.subject !== '') {
      const found = this.bySubject.get(keys.subject);
      if (found !== undefined) return found;
    }
    return msgid;
  }

  /** Records a message's ids and subject under its thread (the first thread to claim one keeps it). */
  note(keys: ThreadKeys, thrid: string): void {
    for (const id of keys.own === null ? keys.refs : [keys.own, ...keys.refs]) if (!this.byRef.has(id)) this.byRef.set(id, thrid);
    if (keys.subject !== '' && !this.bySubject.has(keys.subject)) this.bySubject.set(keys.subject, thrid);
  }
}
