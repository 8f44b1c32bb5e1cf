/**
 * compareServers: the client half of recorded sessions played against a
 * reference server (a real one) and a target (Rookery), the answers
 * normalized (normalize.ts) and compared command by command; what differs
 * and no allow-list rule explains is a difference.
 */
import type { Transcript } from '../transcript/transcript.js';
import { allowedBy, masked, masksFor, type AllowRule } from './allow.js';
import type { Endpoint } from './connection.js';
import { driveSession, recordedCommands, type Credentials, type SessionRun } from './drive.js';
import { fillBoth, type FillMessage } from './fill.js';
import { NORMALIZATION_NAMES, normalizeResponse, type Normalization } from './normalize.js';

export interface CompareSide extends Endpoint {
  /** How the report names it (default `reference` / `target`). */
  name?: string;
  /** Credentials for LOGIN / AUTHENTICATE PLAIN (the recording's are kept when not given). */
  login?: Credentials;
}

export interface CompareOptions {
  transcripts: readonly Transcript[];
  reference: CompareSide;
  target: CompareSide;
  allow?: readonly AllowRule[];
  /** Normalizations turned off. */
  keep?: readonly Normalization[];
  /** Mail APPENDed to both servers first (needs `login` on both sides). */
  fill?: { messages: Iterable<FillMessage>; mailbox?: string };
  /** How long a server may be silent while a command is open. Default 10 s. */
  timeoutMs?: number;
}

export interface Difference {
  /** Recorded session number (its `# session:` header), 0 for the fill. */
  session: number;
  /** The command's position in its session (1-based), 0 for the greeting or the fill. */
  index: number;
  command: string;
  /** The command line as sent (credentials shown as recorded). */
  line: string;
  /** Normalized responses only the reference gave, and only the target gave. */
  reference: string[];
  target: string[];
}

export interface CompareReport {
  referenceName: string;
  targetName: string;
  sessions: number;
  commands: number;
  /** Differences no allow-list rule explains. */
  differences: Difference[];
  /** Response lines that differ but an allow-list rule explains, by rule line. */
  allowed: Map<number, number>;
  /** Messages of the fill the reference refused (left out on both sides). */
  skipped: { index: number; label: string | null; reason: string }[];
  /** Sessions whose replay stopped early on both servers alike (no difference, but less was compared). */
  incomplete: { session: number; index: number; reason: string }[];
}

/** Count of each line (a multiset), for comparing untagged responses order aside. */
function counts(lines: readonly string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const l of lines) m.set(l, (m.get(l) ?? 0) + 1);
  return m;
}

function minus(a: readonly string[], b: readonly string[], ordered: boolean): string[] {
  if (ordered) {
    // Position by position: a line that moved is a difference too.
    const out: string[] = [];
    for (let i = 0; i < Math.max(a.length, b.length); i++) if (i < a.length && a[i] !== b[i]) out.push(a[i]!);
    return out;
  }
  const left = counts(b);
  const out: string[] = [];
  for (const l of a) {
    const n = left.get(l) ?? 0;
    if (n > 0) left.set(l, n - 1);
    else out.push(l);
  }
  return out;
}

function shown(unit: Buffer): string {
  const text = unit.toString('latin1').replace(/\r\n$/, '');
  return text.length > 200 ? `${text.slice(0, 200)}... (${unit.length} bytes)` : text;
}

export async function compareServers(options: CompareOptions): Promise<CompareReport> {
  const on = new Set<Normalization>(NORMALIZATION_NAMES.filter((n) => !(options.keep ?? []).includes(n)));
  const allow = options.allow ?? [];
  const timeoutMs = options.timeoutMs ?? 10_000;
  const refName = options.reference.name ?? 'reference';
  const tgtName = options.target.name ?? 'target';
  const report: CompareReport = { referenceName: refName, targetName: tgtName, sessions: 0, commands: 0, differences: [], allowed: new Map(), skipped: [], incomplete: [] };

  const judge = (session: number, index: number, command: string, line: string, ref: string[], tgt: string[], ordered: boolean): void => {
    let onlyRef = minus(ref, tgt, ordered);
    let onlyTgt = minus(tgt, ref, ordered);
    const masks = masksFor(allow, command);
    if (masks.length > 0 && (onlyRef.length > 0 || onlyTgt.length > 0)) {
      // Lines equal once the masks cut their allowed part out pair up, order aside.
      const pair = (lines: string[], other: string[]): { kept: string[]; paired: string[] } => {
        const left = counts(other.map((l) => masked(masks, l)));
        const kept: string[] = [];
        const paired: string[] = [];
        for (const l of lines) {
          const key = masked(masks, l);
          const n = left.get(key) ?? 0;
          if (n > 0) {
            left.set(key, n - 1);
            paired.push(l);
          } else kept.push(l);
        }
        return { kept, paired };
      };
      const r = pair(onlyRef, onlyTgt);
      const g = pair(onlyTgt, onlyRef);
      for (const m of masks) {
        const used = [...r.paired, ...g.paired].filter((l) => l.replace(m.pattern, '') !== l).length;
        if (used > 0) report.allowed.set(m.line, (report.allowed.get(m.line) ?? 0) + used);
      }
      onlyRef = r.kept;
      onlyTgt = g.kept;
    }
    onlyRef = onlyRef.filter((l) => !isAllowed(command, l, 'reference'));
    onlyTgt = onlyTgt.filter((l) => !isAllowed(command, l, 'target'));
    if (onlyRef.length > 0 || onlyTgt.length > 0) report.differences.push({ session, index, command, line, reference: onlyRef, target: onlyTgt });
  };
  const isAllowed = (command: string, line: string, side: 'reference' | 'target'): boolean => {
    const rule = allowedBy(allow, command, line, side);
    if (rule) report.allowed.set(rule.line, (report.allowed.get(rule.line) ?? 0) + 1);
    return rule !== undefined;
  };

  if (options.fill) {
    const { login: refLogin } = options.reference;
    const { login: tgtLogin } = options.target;
    if (!refLogin || !tgtLogin) throw new Error('filling the mailbox needs the credentials of both servers');
    const outcomes = await fillBoth(
      { endpoint: options.reference, name: refName, login: refLogin },
      { endpoint: options.target, name: tgtName, login: tgtLogin },
      options.fill.messages,
      options.fill.mailbox,
      Math.max(timeoutMs, 30_000),
    );
    for (const o of outcomes) {
      if (o.target === null) report.skipped.push({ index: o.index, label: o.label, reason: o.reference });
      else {
        const r = normalizeResponse(Buffer.from(`F ${o.reference}`), on);
        const t = normalizeResponse(Buffer.from(`F ${o.target}`), on);
        judge(0, 0, 'FILL', `APPEND message ${o.index + 1}${o.label ? ` (${o.label})` : ''}`, [r], [t], true);
      }
    }
  }

  if (options.transcripts.some((t) => t.redacted)) {
    // `***` sent as a password would fail both logins alike and hide everything after them.
    for (const side of [options.reference, options.target]) {
      if (!side.login) throw new Error(`the recording's credentials are redacted (***): give the credentials of ${side === options.reference ? refName : tgtName} (--${side === options.reference ? 'reference' : 'target'}-login user:password)`);
    }
  }
  for (const t of options.transcripts) {
    const commands = recordedCommands(t);
    const ref: SessionRun = await driveSession(options.reference, refName, commands, options.reference.login ?? null, timeoutMs);
    const tgt: SessionRun = await driveSession(options.target, tgtName, commands, options.target.login ?? null, timeoutMs);
    report.sessions++;
    const norm = (b: Buffer | null): string[] => (b ? [normalizeResponse(b, on)] : []);
    judge(t.session, 0, 'GREETING', '(greeting)', norm(ref.greeting), norm(tgt.greeting), true);
    const n = Math.max(ref.exchanges.length, tgt.exchanges.length);
    for (let i = 0; i < n; i++) {
      const r = ref.exchanges[i];
      const g = tgt.exchanges[i];
      const command = (r ?? g)!.command;
      report.commands++;
      const rLines = r ? r.responses.map((b) => normalizeResponse(b, on)) : [];
      const gLines = g ? g.responses.map((b) => normalizeResponse(b, on)) : [];
      if (r?.unfinished && g?.unfinished) report.incomplete.push({ session: t.session, index: i + 1, reason: r.unfinished });
      if (r?.unfinished) rLines.push(`(unfinished: ${r.unfinished})`);
      if (g?.unfinished) gLines.push(`(unfinished: ${g.unfinished})`);
      if (!r) rLines.push('(not sent: the session ended before)');
      if (!g) gLines.push('(not sent: the session ended before)');
      judge(t.session, i + 1, command.name, shown(command.units[0]!.bytes), rLines, gLines, !on.has('untagged-order'));
    }
  }
  return report;
}

/** The report as text: each difference with the lines of each side, then a summary line. */
export function formatReport(report: CompareReport, allow: readonly AllowRule[] = []): string {
  const out: string[] = [];
  const width = Math.max(report.referenceName.length, report.targetName.length);
  for (const d of report.differences) {
    out.push(d.session === 0 ? `fill: ${d.line}` : `session ${d.session}, command ${d.index} (${d.command}): ${d.line}`);
    for (const l of d.reference) out.push(`  - ${report.referenceName.padEnd(width)}  ${l}`);
    for (const l of d.target) out.push(`  + ${report.targetName.padEnd(width)}  ${l}`);
  }
  for (const s of report.incomplete) out.push(`session ${s.session}: the replay stopped at command ${s.index} on both servers (${s.reason}); the commands after it were not compared`);
  for (const s of report.skipped) out.push(`fill: message ${s.index + 1}${s.label ? ` (${s.label})` : ''} left out: ${report.referenceName} refused it: ${s.reason}`);
  const allowedTotal = [...report.allowed.values()].reduce((a, b) => a + b, 0);
  if (allowedTotal > 0) {
    for (const [line, n] of [...report.allowed].sort((a, b) => a[0] - b[0])) {
      const rule = allow.find((r) => r.line === line);
      out.push(`allowed ${n}x by rule at line ${line}${rule?.reason ? `: ${rule.reason}` : ''}`);
    }
  }
  out.push(
    `rookery compare: ${report.sessions} session${report.sessions === 1 ? '' : 's'}, ${report.commands} commands; ` +
      `${report.differences.length} difference${report.differences.length === 1 ? '' : 's'}` +
      (allowedTotal > 0 ? ` (${allowedTotal} differing lines allowed)` : ''),
  );
  return `${out.join('\n')}\n`;
}
