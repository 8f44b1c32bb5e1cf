/**
 * SAVEDATE (RFC 8514): the save date of a message, the moment it was saved
 * into the mailbox it is in. Every message added to a mailbox (APPEND,
 * COPY, MOVE target, the control API's addMessage, the new mailbox of a
 * RENAME of INBOX) gets the server clock (`now` option) then, in the
 * message field `saveDate` (a date-time like `internaldate`), so snapshots
 * keep it and the storage option may give it. Messages of the storage
 * option without one were saved when they arrived: their save date is
 * their INTERNALDATE. So every mailbox supports save dates:
 * SAVEDATESUPPORTED matches every message and SAVEDATE is never NIL.
 *
 * SAVEDBEFORE/SAVEDON/SAVEDSINCE compare the calendar day of the save date
 * in the zone it is written in (the server clock's dates are +0000), as
 * the core compares INTERNALDATE for BEFORE/ON/SINCE.
 */
import type { ArgParser } from '../../imap/parser.js';
import type { SearchDate } from '../../imap/syntax.js';
import type { Server } from '../../server.js';
import { getField, setField } from '../../store/fields.js';
import { formatInternalDate, internalDateFromMs, parseInternalDate, type InternalDate } from '../../store/internal-date.js';
import type { Message } from '../../store/message.js';
import { defineExtension } from '../extension.js';
import { always } from '../shared.js';

export const SAVE_DATE_KEY = 'saveDate';

/** Per-server state and control API of SAVEDATE. */
export class SaveDates {
  constructor(private readonly server: Server) {}

  /** The save date of a message: its `saveDate` field, else its INTERNALDATE. */
  saveDate(message: Message): InternalDate {
    const stored = getField(message, SAVE_DATE_KEY);
    const parsed = typeof stored === 'string' ? parseInternalDate(stored) : null;
    return parsed ?? message.internaldate;
  }

  /** The last stamp and the second it is for: a burst of appends formats the date once per second. */
  private stamp = { second: NaN, text: '' };

  /** Stamps messages just saved into a mailbox with the server clock. */
  saved(messages: readonly Message[]): void {
    const ms = this.server.now();
    const second = Math.floor(ms / 1000);
    if (second !== this.stamp.second) this.stamp = { second, text: formatInternalDate(internalDateFromMs(ms)) };
    const now = this.stamp.text;
    for (const m of messages) setField(m, SAVE_DATE_KEY, now);
  }
}

declare module '../extension.js' {
  interface ExtensionApis {
    SAVEDATE: SaveDates;
  }
}

type DayTest = 'before' | 'on' | 'since';

const dayOfSearchDate = (d: SearchDate): number => Date.UTC(d.year, d.month - 1, d.day) / 86_400_000;
/** The calendar day of a date in the zone it was given in (time and zone disregarded, RFC 8514 §4.3). */
const dayOf = (date: InternalDate): number => Math.floor((date.ms + date.tz * 60_000) / 86_400_000);

function dateKey(name: string, test: DayTest) {
  return {
    name,
    parse: (args: ArgParser): number => {
      args.sp();
      return dayOfSearchDate(args.date());
    },
    matches: (message: Message, data: unknown, _ctx: unknown, state: SaveDates): boolean => {
      const day = dayOf(state.saveDate(message));
      const target = data as number;
      return test === 'before' ? day < target : test === 'on' ? day === target : day >= target;
    },
  };
}

function validateSaveDate(value: unknown, report: (message: string) => void): unknown {
  if (typeof value !== 'string' || parseInternalDate(value) === null) report('expected an RFC 3501 date-time ("dd-Mon-yyyy hh:mm:ss +zzzz")');
  return value;
}

export const extension = defineExtension<SaveDates>({
  name: 'SAVEDATE',
  setup: ({ server }) => new SaveDates(server),
  capabilities: always('SAVEDATE'),
  fetchItems: [{ name: 'SAVEDATE', value: (message, _ctx, state) => formatInternalDate(state.saveDate(message)) }],
  searchKeys: [
    dateKey('SAVEDBEFORE', 'before'),
    dateKey('SAVEDON', 'on'),
    dateKey('SAVEDSINCE', 'since'),
    // Every mailbox here supports save dates.
    { name: 'SAVEDATESUPPORTED', matches: () => true },
  ],
  onChange: (change, state) => {
    // COPY/MOVE copy the source's fields: the copy's old save date is replaced (§3).
    if (change.kind === 'append') state.saved(change.messages);
  },
  storage: {
    message: [{ key: SAVE_DATE_KEY, schema: { type: 'string', description: 'Save date (RFC 8514), "dd-Mon-yyyy hh:mm:ss +zzzz"; INTERNALDATE when absent' }, validate: validateSaveDate, shown: true }],
  },
});
