/**
 * Connection caps that fit the process's descriptor limit. Each listener
 * has its own cap (IMAP `maxConnections`, `rest.maxConnections`, SMTP's
 * `maxConnections`), and a connection over its cap is answered (`* BYE`,
 * 503, 421) and closed. That answer needs a descriptor: when the caps
 * together exceed what the process may open, a flood of one protocol takes
 * the last descriptors and the other protocols' clients are accepted and
 * dropped by libuv unanswered (or not accepted at all). So at start the caps
 * are lowered together, in proportion to what each asks for, until their
 * sum leaves a reserve: the descriptors already open, plus a margin for
 * refusals in progress, files, DNS and the like.
 *
 * The soft limit is read from /proc/self/limits (Linux). Elsewhere it is
 * not known and the caps stay as given.
 */
import { readdirSync, readFileSync } from 'node:fs';

export interface ConnectionCaps {
  /** The process's soft descriptor limit, or null when it cannot be read. */
  descriptorLimit: number | null;
  /** Descriptors kept out of every cap (open at start, plus the margin); 0 when the limit is unknown. */
  reserve: number;
  /** True when the caps were lowered to fit the limit. */
  lowered: boolean;
  imap: number;
  rest: number | null;
  smtp: number | null;
  pop3: number | null;
}

export interface WantedCaps {
  imap: number;
  rest: number | null;
  smtp: number | null;
  /** Absent: no POP3 listener. */
  pop3?: number | null;
}

/** What the process has: its limit and (when needed) the descriptors it holds now. */
export interface DescriptorState {
  limit: number | null;
  open: () => number;
}

let softLimit: number | null | undefined;

/** The soft RLIMIT_NOFILE, read once per process. */
function readSoftLimit(): number | null {
  if (softLimit !== undefined) return softLimit;
  softLimit = null;
  try {
    const m = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'latin1'));
    if (m && m[1] !== 'unlimited') softLimit = Number(m[1]);
  } catch {
    // Not Linux: the limit stays unknown.
  }
  return softLimit;
}

function openDescriptors(): number {
  try {
    return readdirSync('/proc/self/fd').length;
  } catch {
    return 0;
  }
}

export function processDescriptors(): DescriptorState {
  return { limit: readSoftLimit(), open: openDescriptors };
}

/** Descriptors beyond those open kept for refusals, files and the runtime: an eighth of the limit, 16 to 256. */
export function descriptorMargin(limit: number): number {
  return Math.min(256, Math.max(16, Math.floor(limit / 8)));
}

/** Descriptors a Node process holds before it opens any of its own (stdio, epoll, the thread pool's pipes). */
const TYPICAL_OPEN = 64;

export function connectionCaps(wanted: WantedCaps, state: DescriptorState = processDescriptors()): ConnectionCaps {
  const { limit } = state;
  const unchanged = { descriptorLimit: limit, reserve: 0, lowered: false, ...wanted, pop3: wanted.pop3 ?? null };
  if (limit === null) return unchanged;
  const sum = wanted.imap + (wanted.rest ?? 0) + (wanted.smtp ?? 0) + (wanted.pop3 ?? 0);
  const margin = descriptorMargin(limit);
  // Far below the limit (the usual case) the descriptors open now need not be counted.
  if (sum + margin + TYPICAL_OPEN <= limit) return { ...unchanged, reserve: margin + TYPICAL_OPEN };
  const reserve = state.open() + margin;
  const available = Math.max(3, limit - reserve);
  if (sum <= available) return { ...unchanged, reserve };
  const share = (n: number): number => Math.max(1, Math.floor((available * n) / sum));
  return {
    descriptorLimit: limit,
    reserve,
    lowered: true,
    imap: share(wanted.imap),
    rest: wanted.rest === null ? null : share(wanted.rest),
    smtp: wanted.smtp === null ? null : share(wanted.smtp),
    pop3: wanted.pop3 === undefined || wanted.pop3 === null ? null : share(wanted.pop3),
  };
}
