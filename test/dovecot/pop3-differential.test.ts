/**
 * Differential test of POP3 against Dovecot's (issue 33): the same
 * maildrop (hand-made messages for the framing rules, then generated MIME
 * messages, test/dovecot/generator.ts) in Rookery's INBOX and in a
 * throwaway Dovecot, the same command script against both, and every
 * answer compared as far as RFC 1939 and RFC 2449 fix it:
 *
 * - the status indicator (`+OK` / `-ERR`, or `+ ` in AUTH) of every answer, always; the
 *   text after it only where the RFC gives it a form;
 * - STAT and LIST n: "+OK", count or number, size (RFC 1939 section 5
 *   "makes no requirement on what follows"), so only those tokens;
 * - LIST: each scan listing's number and size;
 * - RETR and TOP: the multi-line body byte for byte (line endings,
 *   byte-stuffing, terminator), and TOP's line count;
 * - UIDL: numbers equal, each id 1 to 70 octets of 0x21-0x7E and unique
 *   (section 7); the ids themselves differ by design (Rookery's form is
 *   documented in docs/pop3.md), so they are compared across sessions of
 *   the same server instead: stable, and shifted after DELE + QUIT;
 * - CAPA: every capability Dovecot lists that Rookery implements must be
 *   in Rookery's list in the same state.
 *
 * ROOKERY_POP3_DIFF_COUNT / ROOKERY_POP3_DIFF_SEED choose the generated
 * messages, ROOKERY_DOVECOT another dovecot binary.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Pop3Client, startPop3Server, type MultiLine } from '../helpers/pop3-client.js';
import { generateMessages } from './generator.js';
import { hasPop3, loadRookery, startDovecotPop3 } from './pop3.js';

const SEED = Number(process.env.ROOKERY_POP3_DIFF_SEED ?? 33);
const COUNT = Number(process.env.ROOKERY_POP3_DIFF_COUNT ?? 60);

/** Messages that exercise the framing rules of RFC 1939 section 3. */
const FRAMING: string[] = [
  // a line that starts with the termination octet is stuffed; one that is only "." too
  'Subject: dots\r\n\r\n.leading dot\r\n..two dots\r\n.\r\nafter a lone dot\r\n. \r\n',
  // the body is one line of "."
  'Subject: only a dot\r\n\r\n.\r\n',
  // the last line has no CRLF: the server must end it before the terminator
  'Subject: no final newline\r\n\r\nlast line',
  // no body at all, and not even the blank line after the header
  'Subject: header only\r\n',
  // an empty body after the blank line
  'Subject: empty body\r\n\r\n',
  // a line of 2,000 octets (RFC 1939 limits responses' status lines, not message lines)
  `Subject: long line\r\n\r\n${'x'.repeat(2000)}\r\n`,
  // 8-bit octets pass as they are
  'Subject: =?utf-8?q?8bit?=\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\nGrüße, naïve café\r\n',
  // many body lines for TOP, one of them stuffed
  `Subject: top\r\n\r\n${Array.from({ length: 12 }, (_, i) => (i === 2 ? `.line ${i + 1}` : `line ${i + 1}`)).join('\r\n')}\r\n`,
  // folded header lines and a dot at the start of a header continuation
  'Subject: folded\r\n header\r\nX-Dot:\r\n.continued\r\n\r\nbody\r\n',
];

const UIDL_ID = /^[\x21-\x7e]{1,70}$/;

interface Exchange {
  /** What was sent (or `(greeting)`, `(closed)`). */
  command: string;
  /** How the RFC lets the answers be compared. */
  kind: 'status' | 'stat' | 'list1' | 'list' | 'body' | 'uidl1' | 'uidl' | 'capa' | 'closed';
  line: string;
  multi?: MultiLine;
}

/** The script, the same for both servers; `n` is the maildrop's message count. */
async function runScript(port: number, n: number, user: string): Promise<{ exchanges: Exchange[]; uidls: string[][] }> {
  const exchanges: Exchange[] = [];
  const uidls: string[][] = [];
  let c!: Pop3Client;
  const single = async (command: string, kind: Exchange['kind'] = 'status'): Promise<string> => {
    const line = await c.command(command, 20_000);
    exchanges.push({ command, kind, line });
    return line;
  };
  const multi = async (command: string, kind: Exchange['kind']): Promise<MultiLine> => {
    const m = await c.multi(command, 20_000);
    exchanges.push({ command, kind, line: m.status, multi: m });
    return m;
  };
  const open = async (): Promise<void> => {
    c = await Pop3Client.connect(port, { timeoutMs: 20_000 });
    exchanges.push({ command: '(greeting)', kind: 'status', line: c.greeting });
  };
  const login = async (): Promise<void> => {
    await single(`USER ${user}`);
    await single('PASS pass');
  };
  const closed = async (): Promise<void> => {
    let line = 'open';
    try {
      await c.closedByServer(5000);
      line = 'closed';
    } catch {
      c.close();
    }
    exchanges.push({ command: '(closed)', kind: 'closed', line });
  };
  const uidl = async (): Promise<void> => {
    const m = await multi('UIDL', 'uidl');
    uidls.push(m.lines.map((l) => l.split(' ')[1] ?? ''));
  };

  // AUTHORIZATION (RFC 1939 section 4 and 7)
  await open();
  await multi('CAPA', 'capa');
  await single('STAT');
  await single('PASS pass');
  await single('RETR 1');
  await login();

  // TRANSACTION (section 5)
  await multi('CAPA', 'capa');
  await single('STAT', 'stat');
  await single('stat', 'stat');
  await multi('LIST', 'list');
  for (let i = 1; i <= n; i++) await single(`LIST ${i}`, 'list1');
  await single('LIST 0');
  await single(`LIST ${n + 1}`);
  await uidl();
  for (let i = 1; i <= n; i++) await single(`UIDL ${i}`, 'uidl1');
  await single(`UIDL ${n + 1}`);
  for (let i = 1; i <= n; i++) await multi(`RETR ${i}`, 'body');
  for (let i = 1; i <= n; i++) {
    await multi(`TOP ${i} 0`, 'body');
    await multi(`TOP ${i} 3`, 'body');
  }
  await multi('TOP 8 100', 'body');
  await single('RETR 0');
  await single(`RETR ${n + 1}`);
  await single('RETR');
  await single('TOP 1');
  await single('DELE');
  await single(`DELE ${n + 1}`);
  await single('NOOP');
  await single('noop');
  await single('XYZZY');
  await single(`USER ${user}`);
  await single('PASS pass');
  await single('DELE 1');
  await single('DELE 1');
  await single('RETR 1');
  await single('LIST 1');
  await single('TOP 1 0');
  await single('UIDL 1');
  await single('STAT', 'stat');
  await multi('LIST', 'list');
  await multi('UIDL', 'uidl');
  await single('RSET');
  await single('STAT', 'stat');
  await single('LIST 1', 'list1');
  await single('DELE 1');
  await single('DELE 2');
  await single('STAT', 'stat');
  // pipelined (RFC 2449 section 6.6): answers in order, as if sent one by one
  c.write('STAT\r\nLIST 1\r\nRETR 1\r\nNOOP\r\nLIST 2\r\n');
  for (const [command, kind] of [
    ['STAT', 'stat'],
    ['LIST 1', 'status'],
    ['RETR 1', 'status'],
    ['NOOP', 'status'],
    ['LIST 2', 'status'],
  ] as const) exchanges.push({ command: `${command} (pipelined)`, kind, line: await c.line(20_000) });
  await single('QUIT');
  await closed();

  // UPDATE happened: two fewer messages, renumbered (section 6)
  await open();
  await login();
  await single('STAT', 'stat');
  await multi('LIST', 'list');
  await uidl();
  await multi('RETR 1', 'body');
  await single('DELE 1');
  // dropped without QUIT: nothing is deleted (section 6)
  c.close();

  await open();
  await login();
  await single('STAT', 'stat');
  await uidl();
  await single('QUIT');
  await closed();

  // QUIT in AUTHORIZATION: +OK and the end, no UPDATE
  await open();
  await single(`USER ${user}`);
  await single('QUIT');
  await closed();

  // AUTH (RFC 5034): an initial response, a continuation, the LOGIN exchange, an unknown mechanism
  const b64 = (s: string): string => Buffer.from(s, 'latin1').toString('base64');
  await open();
  await single('AUTH X-UNKNOWN');
  await single(`AUTH PLAIN ${b64(`\0${user}\0pass`)}`);
  await single('STAT', 'stat');
  await single('QUIT');
  await closed();
  await open();
  await single('AUTH PLAIN');
  await single(b64(`\0${user}\0pass`));
  await single('QUIT');
  await closed();
  await open();
  await single('AUTH LOGIN');
  await single(b64(user));
  await single(b64('pass'));
  await single('STAT', 'stat');
  await single('QUIT');
  await closed();

  // a refused PASS goes back to AUTHORIZATION (section 7); last, as Dovecot delays the next answer
  await open();
  await single(`USER ${user}`);
  await single('PASS wrong');
  await single('STAT');
  await single('PASS pass');
  c.close();
  // a cancelled AUTH exchange (RFC 5034 section 4: "*" gets -ERR), after the refusal for the same reason
  await open();
  await single('AUTH PLAIN');
  await single('*');
  c.close();
  return { exchanges, uidls };
}

const tokens = (line: string, k: number): string => line.split(' ').slice(0, k).join(' ');

/** The differences RFC 1939/2449 do not allow between two answers to the same command. */
function compare(r: Exchange, d: Exchange): string[] {
  const where = `${d.command}:`;
  if (r.command !== d.command) return [`${where} scripts out of step (${r.command})`];
  if (r.kind === 'closed') return r.line === d.line ? [] : [`${where} rookery ${r.line}, dovecot ${d.line}`];
  // a SASL continuation ("+ " and a challenge, RFC 5034 section 4) is a third status; its challenge may differ
  const status = (l: string): string =>
    l.startsWith('+OK') ? '+OK' : l.startsWith('-ERR') ? '-ERR' : l === '+' || l.startsWith('+ ') ? '+' : `malformed ${JSON.stringify(l)}`;
  if (status(r.line) !== status(d.line)) return [`${where} rookery ${JSON.stringify(r.line)}, dovecot ${JSON.stringify(d.line)}`];
  if (!d.line.startsWith('+OK')) return [];
  switch (r.kind) {
    case 'stat':
    case 'list1':
      return tokens(r.line, 3) === tokens(d.line, 3) ? [] : [`${where} rookery ${JSON.stringify(r.line)}, dovecot ${JSON.stringify(d.line)}`];
    case 'list': {
      const a = r.multi!.lines.map((l) => tokens(l, 2));
      const b = d.multi!.lines.map((l) => tokens(l, 2));
      return JSON.stringify(a) === JSON.stringify(b) ? [] : [`${where} rookery ${JSON.stringify(a)}, dovecot ${JSON.stringify(b)}`];
    }
    case 'body':
      if (r.multi!.raw.equals(d.multi!.raw)) return [];
      return [`${where} bytes differ: rookery ${JSON.stringify(around(r.multi!.raw, d.multi!.raw)[0])}, dovecot ${JSON.stringify(around(r.multi!.raw, d.multi!.raw)[1])}`];
    case 'uidl1': {
      const [, rn, rid] = r.line.split(' ');
      const [, dn] = d.line.split(' ');
      if (rn !== dn) return [`${where} number ${rn}, dovecot ${dn}`];
      return UIDL_ID.test(rid ?? '') ? [] : [`${where} bad unique-id ${JSON.stringify(rid)}`];
    }
    case 'uidl': {
      const numbers = (m: MultiLine): string => m.lines.map((l) => l.split(' ')[0]).join(',');
      const out: string[] = [];
      if (numbers(r.multi!) !== numbers(d.multi!)) out.push(`${where} numbers ${numbers(r.multi!)}, dovecot ${numbers(d.multi!)}`);
      const ids = r.multi!.lines.map((l) => l.split(' ')[1] ?? '');
      const bad = ids.filter((id) => !UIDL_ID.test(id));
      if (bad.length) out.push(`${where} bad unique-ids ${JSON.stringify(bad.slice(0, 3))}`);
      if (new Set(ids).size !== ids.length) out.push(`${where} unique-ids repeat`);
      return out;
    }
    case 'capa': {
      // Rookery implements every capability of RFC 2449's registry that Dovecot can list; what Dovecot lists it must list too.
      const KNOWN = new Set(['TOP', 'USER', 'SASL', 'RESP-CODES', 'LOGIN-DELAY', 'PIPELINING', 'EXPIRE', 'UIDL', 'IMPLEMENTATION', 'STLS', 'AUTH-RESP-CODE', 'UTF8', 'LANG']);
      const names = (m: MultiLine): Set<string> => new Set(m.lines.map((l) => l.split(' ')[0]!.toUpperCase()));
      const mine = names(r.multi!);
      const missing = [...names(d.multi!)].filter((c) => KNOWN.has(c) && !mine.has(c));
      return missing.length ? [`${where} rookery lacks ${missing.join(' ')} (has ${[...mine].join(' ')})`] : [];
    }
    default:
      return [];
  }
}

/** The stretch of two buffers around their first difference. */
function around(a: Buffer, b: Buffer): [string, string] {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  const from = Math.max(0, i - 30);
  return [a.subarray(from, i + 40).toString('latin1'), b.subarray(from, i + 40).toString('latin1')];
}

const bounded = (p: Promise<void>): Promise<void> => Promise.race([p, new Promise<void>((r) => setTimeout(r, 5000).unref())]).catch(() => undefined);
const maildrop = (): Buffer[] => [...FRAMING.map((m) => Buffer.from(m, 'utf8')), ...generateMessages(SEED, COUNT).map((g) => g.raw)];

test('Rookery answers POP3 commands like Dovecot on the same maildrop', { timeout: 180_000 }, async (t) => {
  if (!hasPop3()) {
    t.skip('dovecot POP3 not installed (Debian: apt-get install dovecot-pop3d)');
    return;
  }
  const messages = maildrop();
  const cleanups: (() => Promise<void>)[] = [];
  try {
    const dovecot = (await startDovecotPop3())!;
    cleanups.push(() => dovecot.stop());
    await dovecot.load('u', messages);
    const rookery = await startPop3Server({ users: { u: { password: 'pass' } } });
    cleanups.push(() => rookery.server.stop());
    loadRookery(rookery.server, messages);

    const [d, r] = await Promise.all([runScript(dovecot.pop3, messages.length, 'u'), runScript(rookery.pop3, messages.length, 'u')]);
    assert.equal(r.exchanges.length, d.exchanges.length);
    const differences = r.exchanges.flatMap((x, i) => compare(x, d.exchanges[i]!));
    assert.deepEqual(differences.slice(0, 25), [], `${differences.length} differences from Dovecot (${dovecot.version})`);

    // UIDL is stable across sessions and keeps each message's id through the renumbering after QUIT (RFC 1939 section 7)
    const [first, afterQuit, afterDrop] = r.uidls;
    assert.deepEqual(afterQuit, first!.slice(2), 'after DELE 1, DELE 2 and QUIT the ids are those of messages 3..n');
    assert.deepEqual(afterDrop, afterQuit, 'a dropped session deleted nothing');
    // the store agrees: QUIT expunged two messages, the dropped session none
    assert.equal(rookery.server.control.listMessages('INBOX').length, messages.length - 2);
  } finally {
    for (const c of cleanups.reverse()) await bounded(c());
  }
});

// The oracle's own check: two Dovecots on the same maildrop differ nowhere, so every difference above is Rookery's.
test('the script and its normalizations find no difference between Dovecot and itself', { timeout: 180_000 }, async (t) => {
  if (!hasPop3()) {
    t.skip('dovecot POP3 not installed (Debian: apt-get install dovecot-pop3d)');
    return;
  }
  const messages = maildrop();
  const cleanups: (() => Promise<void>)[] = [];
  try {
    const servers = await Promise.all([startDovecotPop3(), startDovecotPop3()]);
    for (const s of servers) cleanups.push(() => s!.stop());
    await Promise.all(servers.map((s) => s!.load('u', messages)));
    const [a, b] = await Promise.all(servers.map((s) => runScript(s!.pop3, messages.length, 'u')));
    const differences = a!.exchanges.flatMap((x, i) => compare(x, b!.exchanges[i]!));
    assert.deepEqual(differences, []);
    assert.equal(a!.exchanges.filter((x) => x.kind === 'body' && x.multi!.ok).length, 3 * messages.length + 2);
    // Dovecot keeps UIDL ids through the renumbering too: the property asked of Rookery holds for the reference
    assert.deepEqual(a!.uidls[1], a!.uidls[0]!.slice(2));
  } finally {
    for (const c of cleanups.reverse()) await bounded(c());
  }
});
