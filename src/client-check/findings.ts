/**
 * The findings of one server's client checker: kept newest-first bounded
 * (MAX_FINDINGS, the oldest go), emitted as `client` events, listed by the
 * control API and REST, cleared by DELETE and by reset, and rendered as a
 * report (JUnit, JSON, text) when the run ends.
 */
import { ServiceError } from '../errors.js';
import type { TlsVerdict } from '../tls/verdicts.js';
import { CLIENT_RULES, clientRule, type CheckedProtocol, type ClientCheckMode, type FindingSeverity, type RuleProtocol } from './rules.js';

/** One place where a client broke the protocol. */
export interface ClientFinding {
  /** Grows by one per finding (a `since` for later listings). */
  id: number;
  /** The session's protocol (the rule's). */
  protocol: CheckedProtocol;
  session: number;
  user: string | null;
  /** Tag of the offending command (POP3: the command's number in the session); null where there is none (a close, a bad tag). */
  tag: string | null;
  /** Its name (`UID FETCH`); null where there is none. */
  command: string | null;
  rule: string;
  severity: FindingSeverity;
  rfc: string;
  text: string;
  /** Server-clock time, ISO 8601. */
  at: string;
}

/** What a session reports; the log adds id, severity, rfc and time. */
export interface FindingInput {
  session: number;
  user: string | null;
  tag: string | null;
  command: string | null;
  rule: string;
  text: string;
  /** For rules of `any` protocol (the TLS verdicts): the session's; default IMAP. */
  protocol?: CheckedProtocol;
}

/** Findings kept per server; older ones are dropped first. */
export const MAX_FINDINGS = 10_000;
/** Sessions remembered for the report's passing test cases. */
const MAX_SESSIONS = 1_000;

export interface ClientFindingsQuery {
  session?: number;
  /** Only findings with an id above this. */
  since?: number;
}

/** The report `server.clientReport()` returns and `--client-report json:` writes. */
export interface ClientReport {
  mode: ClientCheckMode;
  rules: { id: string; protocol: RuleProtocol; severity: FindingSeverity; rfc: string; summary: string }[];
  /** Sessions the checker saw (newest MAX_SESSIONS). */
  sessions: number[];
  /** The same sessions by protocol (each gets the test cases of its protocol's rules). */
  protocols: Record<CheckedProtocol, number[]>;
  findings: ClientFinding[];
  /** Findings dropped because more than MAX_FINDINGS were kept. */
  dropped: number;
  /** The TLS bench's verdict of each session it watched (docs/tls.md), oldest first. */
  verdicts: TlsVerdict[];
}

export class ClientFindingLog {
  private items: ClientFinding[] = [];
  private head = 0;
  private nextId = 1;
  private droppedCount = 0;
  private readonly seen = new Map<number, CheckedProtocol>();

  constructor(
    readonly mode: ClientCheckMode,
    readonly rules: ReadonlySet<string>,
    private readonly now: () => number,
    private readonly emit: (finding: ClientFinding) => void,
  ) {}

  /** A session the checker looks at: it gets passing test cases in the report. */
  sawSession(session: number, protocol: CheckedProtocol = 'imap'): void {
    this.seen.set(session, protocol);
    if (this.seen.size > MAX_SESSIONS) this.seen.delete(this.seen.keys().next().value!);
  }

  enabled(rule: string): boolean {
    return this.rules.has(rule);
  }

  add(input: FindingInput): ClientFinding {
    const rule = clientRule(input.rule)!;
    const finding: ClientFinding = {
      id: this.nextId++,
      protocol: input.protocol ?? (rule.protocol === 'any' ? 'imap' : rule.protocol),
      session: input.session,
      user: input.user,
      tag: input.tag,
      command: input.command,
      rule: rule.id,
      severity: rule.severity,
      rfc: rule.rfc,
      text: input.text,
      at: new Date(this.now()).toISOString(),
    };
    this.items.push(finding);
    if (this.items.length - this.head > MAX_FINDINGS) {
      this.head++;
      this.droppedCount++;
      // Compacted now and then, so dropping stays O(1) on average.
      if (this.head >= MAX_FINDINGS) {
        this.items = this.items.slice(this.head);
        this.head = 0;
      }
    }
    this.emit(finding);
    return finding;
  }

  list(query: ClientFindingsQuery = {}): ClientFinding[] {
    if (query === null || typeof query !== 'object') throw new ServiceError('INVALID', 'clientFindings: expected an object ({session, since})');
    const { session, since } = query;
    if (session !== undefined && !(Number.isSafeInteger(session) && session >= 1)) throw new ServiceError('INVALID', `session: expected a session number (an integer >= 1), got ${String(session)}`);
    if (since !== undefined && !(Number.isSafeInteger(since) && since >= 0)) throw new ServiceError('INVALID', `since: expected a finding id (an integer >= 0), got ${String(since)}`);
    const out: ClientFinding[] = [];
    for (let i = this.head; i < this.items.length; i++) {
      const f = this.items[i]!;
      if (session !== undefined && f.session !== session) continue;
      if (since !== undefined && f.id <= since) continue;
      out.push({ ...f });
    }
    return out;
  }

  /** Drops every finding (and the sessions seen); ids go on growing. Returns how many were dropped. */
  clear(): number {
    const n = this.items.length - this.head;
    this.items = [];
    this.head = 0;
    this.droppedCount = 0;
    this.seen.clear();
    return n;
  }

  report(verdicts: TlsVerdict[] = []): ClientReport {
    const sessions = [...this.seen.keys()].sort((a, b) => a - b);
    return {
      mode: this.mode,
      rules: CLIENT_RULES.filter((r) => this.rules.has(r.id)).map((r) => ({ id: r.id, protocol: r.protocol, severity: r.severity, rfc: r.rfc, summary: r.summary })),
      sessions,
      protocols: {
        imap: sessions.filter((s) => this.seen.get(s) === 'imap'),
        pop3: sessions.filter((s) => this.seen.get(s) === 'pop3'),
        smtp: sessions.filter((s) => this.seen.get(s) === 'smtp'),
      },
      findings: this.list(),
      dropped: this.droppedCount,
      verdicts,
    };
  }
}
