/**
 * The TRANSACTION state (RFC 1939 §5, §7): STAT, LIST, RETR, DELE, NOOP,
 * RSET, TOP, UIDL over the session's maildrop. A message number that does
 * not exist, or names a message marked deleted, is answered -ERR.
 */
import { servedSource } from '../../mime/crlf.js';
import type { Pop3Fault } from '../../script/rule.js';
import { RFC_FRAMING, type Framing } from '../framing.js';
import type { DropEntry, Maildrop } from '../maildrop.js';
import type { Pop3Session } from '../session.js';
import { bad, err, linesBody, messageNumber, ok, type Pop3CommandSpec, type Pop3Reply } from './types.js';

const TRANSACTION = ['transaction'] as const;

/** The maildrop's message `arg`, or the -ERR that answers instead. */
function entryOf(drop: Maildrop, arg: string | undefined): DropEntry | Pop3Reply {
  const n = messageNumber(arg);
  if (Number.isNaN(n)) return bad(`Invalid message number ${JSON.stringify(arg ?? '')}`);
  const entry = drop.get(n);
  if (!entry) return err(`There is no message ${n}`);
  if (entry.deleted) return err(`Message ${n} is already deleted`);
  return entry;
}

function isReply(v: DropEntry | Pop3Reply): v is Pop3Reply {
  return 'ok' in v;
}

/** The size a listing reports: the octets RETR sends, or with `lf-size` those of the LF form (CR not counted). */
function listedSize(entry: DropEntry, fault: Pop3Fault | null): number {
  if (fault !== 'lf-size') return entry.size;
  const src = servedSource(entry.message.raw);
  let crs = 0;
  for (let i = src.indexOf(13); i >= 0; i = src.indexOf(13, i + 1)) if (src[i + 1] === 10) crs++;
  return entry.size - crs;
}

/** The unique-id a listing reports, faults applied. */
function listedUidl(session: Pop3Session, drop: Maildrop, entry: DropEntry, fault: Pop3Fault | null): string {
  if (fault === 'uidl-repeat') return drop.entries[0]!.uidl;
  // Differs in every session: what a server that makes ids up per connection sends.
  if (fault === 'uidl-change') return `${entry.uidl}S${session.id}`;
  return entry.uidl;
}

function framingFor(fault: Pop3Fault | null): Framing {
  switch (fault) {
    case 'no-dot':
      return { stuff: true, dots: 0 };
    case 'double-dot':
      return { stuff: true, dots: 2 };
    case 'no-stuffing':
      return { stuff: false, dots: 1 };
    default:
      return RFC_FRAMING;
  }
}

function numberOf(drop: Maildrop, entry: DropEntry): number {
  return drop.entries.indexOf(entry) + 1;
}

export const stat: Pop3CommandSpec = {
  name: 'STAT',
  states: TRANSACTION,
  run({ session, args, fault }) {
    if (args.length > 0) return bad('STAT takes no argument');
    const drop = session.drop();
    let octets = drop.octets;
    if (fault === 'lf-size') {
      octets = 0;
      for (const e of drop.entries) if (!e.deleted) octets += listedSize(e, fault);
    }
    // RFC 1939 §5: exactly "+OK nn mm"; anything after is not for clients to parse.
    return ok(`${drop.count} ${octets}`);
  },
};

export const list: Pop3CommandSpec = {
  name: 'LIST',
  states: TRANSACTION,
  run({ session, args, fault }) {
    const drop = session.drop();
    if (args.length > 1) return bad('LIST takes at most one message number');
    if (args.length === 1) {
      const entry = entryOf(drop, args[0]);
      if (isReply(entry)) return entry;
      return ok(`${args[0]!.replace(/^0+(?=\d)/, '')} ${listedSize(entry, fault)}`);
    }
    const lines: string[] = [];
    drop.entries.forEach((e, i) => {
      if (!e.deleted) lines.push(`${i + 1} ${listedSize(e, fault)}`);
    });
    return ok(`${drop.count} messages (${drop.octets} octets)`, linesBody(lines), framingFor(fault));
  },
};

export const uidl: Pop3CommandSpec = {
  name: 'UIDL',
  states: TRANSACTION,
  run({ session, args, fault }) {
    const drop = session.drop();
    if (args.length > 1) return bad('UIDL takes at most one message number');
    if (args.length === 1) {
      const entry = entryOf(drop, args[0]);
      if (isReply(entry)) return entry;
      return ok(`${numberOf(drop, entry)} ${listedUidl(session, drop, entry, fault)}`);
    }
    const lines: string[] = [];
    drop.entries.forEach((e, i) => {
      if (!e.deleted) lines.push(`${i + 1} ${listedUidl(session, drop, e, fault)}`);
    });
    return ok('Unique-ID listing follows', linesBody(lines), framingFor(fault));
  },
};

/** The message's bytes, or -ERR when another session removed it after login. */
function sourceOf(entry: DropEntry, n: number): Buffer | Pop3Reply {
  if (entry.gone) return err(`Message ${n} was removed by another session since login`);
  return servedSource(entry.message.raw);
}

export const retr: Pop3CommandSpec = {
  name: 'RETR',
  states: TRANSACTION,
  run({ session, args, fault }) {
    if (args.length !== 1) return bad('RETR needs one message number');
    const drop = session.drop();
    const entry = entryOf(drop, args[0]);
    if (isReply(entry)) return entry;
    const source = sourceOf(entry, numberOf(drop, entry));
    if (!Buffer.isBuffer(source)) return source;
    entry.retrieved = true;
    return ok(`${listedSize(entry, fault)} octets`, source, framingFor(fault));
  },
};

/** RFC 1939 §7 TOP: the header, the blank line after it, and the first `lines` lines of the body. */
export function topOf(source: Buffer, lines: number): Buffer {
  let bodyStart: number;
  if (source[0] === 13 && source[1] === 10) bodyStart = 2;
  else {
    const blank = source.indexOf('\r\n\r\n');
    if (blank < 0) return source;
    bodyStart = blank + 4;
  }
  let end = bodyStart;
  for (let n = 0; n < lines && end < source.length; n++) {
    const lf = source.indexOf(10, end);
    end = lf < 0 ? source.length : lf + 1;
  }
  return source.subarray(0, end);
}

export const top: Pop3CommandSpec = {
  name: 'TOP',
  states: TRANSACTION,
  run({ session, args, fault }) {
    if (args.length !== 2) return bad('TOP needs a message number and a number of lines');
    const drop = session.drop();
    const entry = entryOf(drop, args[0]);
    if (isReply(entry)) return entry;
    const lines = messageNumber(args[1]);
    if (Number.isNaN(lines)) return bad(`Invalid number of lines ${JSON.stringify(args[1])}`);
    const source = sourceOf(entry, numberOf(drop, entry));
    if (!Buffer.isBuffer(source)) return source;
    return ok('Top of message follows', topOf(source, lines), framingFor(fault));
  },
};

export const dele: Pop3CommandSpec = {
  name: 'DELE',
  states: TRANSACTION,
  run({ session, args }) {
    if (args.length !== 1) return bad('DELE needs one message number');
    const drop = session.drop();
    const entry = entryOf(drop, args[0]);
    if (isReply(entry)) return entry;
    drop.mark(entry);
    return ok(`Message ${numberOf(drop, entry)} deleted`);
  },
};

export const noop: Pop3CommandSpec = {
  name: 'NOOP',
  states: TRANSACTION,
  run({ args }) {
    return args.length > 0 ? bad('NOOP takes no argument') : ok('');
  },
};

export const rset: Pop3CommandSpec = {
  name: 'RSET',
  states: TRANSACTION,
  run({ session, args }) {
    if (args.length > 0) return bad('RSET takes no argument');
    const drop = session.drop();
    drop.unmarkAll();
    return ok(`Maildrop has ${drop.count} messages (${drop.octets} octets)`);
  },
};
