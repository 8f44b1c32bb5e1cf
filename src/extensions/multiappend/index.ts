/**
 * MULTIAPPEND (RFC 3502): APPEND takes several messages, each with its own
 * flags and date (`APPEND box (\Seen) {10} {20}`), and stores all of them
 * or none. The core APPEND does the work behind the `appendMultiple`
 * point: every message is built and checked (QUOTA counts the earlier ones
 * of the same APPEND, APPENDLIMIT each) before any is stored, the store adds
 * them in one change (one EXISTS for the other sessions), and UIDPLUS's
 * APPENDUID gives the UID set of all. A zero-length message literal is a NO
 * and appends nothing: that is how a client cancels (RFC 3502 §6.3.11).
 */
import type { Extension } from '../extension.js';
import { always } from '../shared.js';

export const extension: Extension = {
  name: 'MULTIAPPEND',
  capabilities: always('MULTIAPPEND'),
  appendMultiple: true,
};
