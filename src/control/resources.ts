/**
 * The resource shapes of the spec (MailboxInfo, MessageInfo, User), built
 * from store objects. REST returns these as they are.
 */
import { setOwn } from '../options/problems.js';
import { getField, type FieldHolder } from '../store/fields.js';
import { DEFAULT_PERMANENT_FLAGS } from '../store/flags.js';
import { formatInternalDate } from '../store/internal-date.js';
import type { Mailbox } from '../store/mailbox.js';
import type { Message } from '../store/message.js';
import type { Store } from '../store/store.js';

export interface MailboxInfo {
  path: string;
  delimiter: string;
  flags: string[];
  selectable: boolean;
  subscribed: boolean;
  messages: number;
  unseen: number;
  uidnext: number;
  uidvalidity: number;
  permanentFlags: string[];
  specialUse: string[];
  /** Extension fields shown for mailboxes (`mailboxId` of OBJECTID), when the mailbox has any. */
  fields?: Record<string, unknown>;
}

export interface MessageInfo {
  uid: number;
  flags: string[];
  internaldate: string;
  size: number;
  modseq: number;
  /** Source in base64, when asked for. */
  raw?: string;
  encoding?: 'base64';
  /** Extension fields shown for messages (`emailId` of OBJECTID, `saveDate` of SAVEDATE), when the message has any. */
  fields?: Record<string, unknown>;
}

/** The values of `keys` the holder has, deep-copied; undefined when it has none. */
function shownFields(holder: FieldHolder, keys: readonly string[]): Record<string, unknown> | undefined {
  let out: Record<string, unknown> | undefined;
  for (const key of keys) {
    const value = getField(holder, key);
    if (value === undefined) continue;
    out ??= {};
    setOwn(out, key, structuredClone(value));
  }
  return out;
}

export interface UserInfo {
  name: string;
  xoauth2: boolean;
}

export function mailboxInfo(store: Store, m: Mailbox, shown: readonly string[] = []): MailboxInfo {
  const info: MailboxInfo = {
    path: m.path,
    delimiter: m.delimiter,
    flags: [...m.attributes, store.hasChildren(m) ? '\\HasChildren' : '\\HasNoChildren'],
    selectable: m.selectable,
    subscribed: store.isSubscribed(m.path),
    messages: m.messages.length,
    unseen: m.unseen,
    uidnext: m.uidnext,
    uidvalidity: m.uidvalidity,
    permanentFlags: m.permanentFlags ? [...m.permanentFlags] : [...DEFAULT_PERMANENT_FLAGS],
    specialUse: [...m.specialUse],
  };
  const fields = shownFields(m, shown);
  if (fields) info.fields = fields;
  return info;
}

export function messageInfo(m: Message, withRaw: boolean, shown: readonly string[] = []): MessageInfo {
  const info: MessageInfo = {
    uid: m.uid,
    flags: [...m.flags],
    internaldate: formatInternalDate(m.internaldate),
    size: m.size,
    modseq: m.modseq,
  };
  if (withRaw) {
    info.raw = m.raw.toString('base64');
    info.encoding = 'base64';
  }
  const fields = shownFields(m, shown);
  if (fields) info.fields = fields;
  return info;
}
