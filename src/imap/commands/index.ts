import type { CommandSpec } from '../command.js';
import { append } from './append.js';
import { capability, check, logout, noop } from './basic.js';
import { copy, uidCopy } from './copy.js';
import { close, expunge } from './expunge.js';
import { fetch, uidFetch } from './fetch.js';
import { list, lsub } from './list.js';
import { authenticate, login } from './login.js';
import { create, del, rename, subscribe, unsubscribe } from './mailboxes.js';
import { search, uidSearch } from './search.js';
import { examine, select } from './select.js';
import { status } from './status.js';
import { store, uidStore } from './store.js';

/** The IMAP4rev1 commands every server has (RFC 3501 §6). */
export function coreCommands(): CommandSpec[] {
  return [
    capability, noop, logout, login, authenticate,
    select, examine, create, del, rename, subscribe, unsubscribe, list, lsub, status, append,
    check, close, expunge, search, uidSearch, fetch, uidFetch, store, uidStore, copy, uidCopy,
  ];
}
