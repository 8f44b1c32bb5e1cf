/**
 * The end-of-run report (`--client-report junit:<file>|json:<file>|text`):
 * JUnit has one test case per rule and session, failed when the session
 * broke that rule, so CI shows client bugs as test failures.
 */
import type { ClientReport } from './findings.js';
import type { CheckedProtocol } from './rules.js';

export type ClientReportFormat = 'junit' | 'json' | 'text';

/** `junit:<file>`, `json:<file>` or `text` (to stderr), as the CLI flag takes it. */
export interface ClientReportTarget {
  format: ClientReportFormat;
  /** File to write; null: standard error. */
  file: string | null;
}

/** Parses the flag's value; throws an Error naming the forms on a bad one. */
export function parseClientReportTarget(value: string): ClientReportTarget {
  const m = /^(junit|json|text)(?::(.+))?$/.exec(value);
  if (!m || ((m[1] === 'junit' || m[1] === 'json') && m[2] === undefined)) {
    throw new Error(`--client-report: expected junit:<file>, json:<file>, text or text:<file>, got ${JSON.stringify(value)}`);
  }
  return { format: m[1] as ClientReportFormat, file: m[2] ?? null };
}

const xml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!).replace(/[\x00-\x08\x0b\x0c\x0e-\x1f]/g, '');

export function renderClientReport(report: ClientReport, format: ClientReportFormat): string {
  if (format === 'json') return `${JSON.stringify(report, null, 2)}\n`;
  if (format === 'text') return renderText(report);
  return renderJunit(report);
}

function sessionsOf(report: ClientReport): number[] {
  return [...new Set([...report.sessions, ...report.findings.map((f) => f.session)])].sort((a, b) => a - b);
}

/** A session's protocol: from the sessions seen, else from its findings (a session dropped from the seen list). */
function protocolOf(report: ClientReport, session: number): CheckedProtocol {
  if (report.protocols?.pop3.includes(session)) return 'pop3';
  if (report.protocols?.imap.includes(session)) return 'imap';
  return report.findings.find((f) => f.session === session)?.protocol ?? 'imap';
}

function renderJunit(report: ClientReport): string {
  const sessions = sessionsOf(report);
  const cases: string[] = [];
  let failures = 0;
  for (const session of sessions) {
    const protocol = protocolOf(report, session);
    // IMAP keeps the class names it always had; other protocols are named in theirs.
    const classname = protocol === 'imap' ? `rookery.client.session-${session}` : `rookery.client.${protocol}.session-${session}`;
    for (const rule of report.rules) {
      // `any` rules are the TLS verdicts: each verdict is a test case of its own (below).
      if ((rule.protocol ?? 'imap') !== protocol) continue;
      const found = report.findings.filter((f) => f.session === session && f.rule === rule.id);
      const head = `    <testcase classname="${classname}" name="${xml(rule.id)}">`;
      if (found.length === 0) {
        cases.push(`${head}</testcase>`);
        continue;
      }
      failures++;
      const body = found.map((f) => `${f.at} ${f.tag ?? '-'} ${f.command ?? '-'}: ${f.text}`).join('\n');
      cases.push(`${head}\n      <failure type="${xml(rule.severity)}" message="${xml(`${rule.id} (${rule.rfc}): ${found[0]!.text}`)}">${xml(body)}</failure>\n    </testcase>`);
    }
  }
  // One test case per TLS verdict: failed unless the client was safe.
  for (const v of report.verdicts ?? []) {
    const head = `    <testcase classname="rookery.tls.session-${v.session}" name="${xml(v.cases.join('+') || 'tls')}">`;
    if (v.verdict === 'safe') {
      cases.push(`${head}</testcase>`);
      continue;
    }
    failures++;
    cases.push(`${head}\n      <failure type="${xml(v.verdict)}" message="${xml(`${v.verdict}: ${v.text}`)}">${xml(`evidence: ${v.evidence}`)}</failure>\n    </testcase>`);
  }
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="rookery client check" tests="${cases.length}" failures="${failures}">`,
    `  <testsuite name="rookery.client" tests="${cases.length}" failures="${failures}">`,
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}

function renderText(report: ClientReport): string {
  const lines = [`rookery client check (${report.mode}): ${report.findings.length} finding(s) in ${sessionsOf(report).length} session(s)`];
  for (const f of report.findings) {
    const where = f.protocol === 'pop3' ? `S${f.session} pop3` : `S${f.session}`;
    lines.push(`  ${where} ${f.tag ?? '-'} ${f.command ?? '-'}: ${f.severity} ${f.rule} (${f.rfc}): ${f.text}`);
  }
  if (report.dropped > 0) lines.push(`  ... and ${report.dropped} older finding(s) dropped`);
  for (const v of report.verdicts ?? []) lines.push(`  S${v.session} tls ${v.cases.join('+') || '-'}: ${v.verdict}${v.verdict === 'safe' ? '' : ` (${v.text}); evidence: ${JSON.stringify(v.evidence)}`}`);
  return `${lines.join('\n')}\n`;
}
