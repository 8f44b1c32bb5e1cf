/**
 * Differential test against Dovecot (issue 22): generated tricky messages
 * are appended byte for byte to Rookery and to a throwaway Dovecot, and
 * every FETCH item a MIME client relies on is compared — RFC822.SIZE,
 * ENVELOPE, BODY, BODYSTRUCTURE, BODY[], HEADER, TEXT, HEADER.FIELDS,
 * HEADER.FIELDS.NOT, and for every part n: n, n.MIME, n.HEADER, n.TEXT,
 * n.HEADER.FIELDS —
 * by value, by wire grammar (a strict RFC 3501/9051 parser of body and
 * envelope over the exact bytes), and byte for byte (equal values must also
 * be written the same way: quoted or literal, escapes).
 *
 * Deliberate differences are in ALLOW below, each with its reason; they
 * are documented in docs/mime.md. Set ROOKERY_DIFF_COUNT / ROOKERY_DIFF_SEED
 * to explore other message sets, ROOKERY_DIFF_VERBOSE=1 to print every
 * difference, ROOKERY_DOVECOT to use another dovecot binary.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startServer } from '../helpers/server.js';
import { startDovecot, findDovecot } from './dovecot.js';
import { generateMessages, type Generated } from './generator.js';
import { grammarError, show, type Item, type Val } from './imap-values.js';
import { DiffSession } from './session.js';

const SEED = Number(process.env.ROOKERY_DIFF_SEED ?? 22);
const COUNT = Number(process.env.ROOKERY_DIFF_COUNT ?? 250);
const VERBOSE = process.env.ROOKERY_DIFF_VERBOSE === '1';

/** A deliberate difference: items (by label) of messages with a generator feature. */
interface Allowed {
  feature: string;
  items: RegExp;
  reason: string;
}

const ALLOW: Allowed[] = [
  {
    feature: 'message-global',
    items: /^BODY(STRUCTURE)?$|^BODY\[\d+(\.\d+)*(\.(MIME|HEADER|TEXT|HEADER\.FIELDS \(SUBJECT FROM\)))?\]$/,
    // every part section of such a message, not only those below the message/global part: an opaque part
    // does not open the boundaries inside it, so in Dovecot a delimiter line in there can end an enclosing part
    reason:
      'message/global is an encapsulated message (RFC 9051 §7.5.2, RFC 6532 §3.7): Rookery shows its envelope and structure and numbers its parts; Dovecot 2.3 treats it as an opaque part',
  },
  {
    feature: 'long-boundary',
    items: /^BODY(STRUCTURE)?$|^BODY\[\d+(\.\d+)*(\.(MIME|HEADER|TEXT|HEADER\.FIELDS \(SUBJECT FROM\)))?\]$/,
    reason:
      'a boundary longer than 80 characters: Dovecot compares only its first 80 characters (so its close-delimiter opens one more, empty part); Rookery compares the whole boundary, as RFC 2046 writes it',
  },
  {
    feature: 'empty-message',
    items: /^BODY\[[\d.]+\.HEADER\.FIELDS /,
    reason:
      'a message/rfc822 part whose message header has no blank line (it runs into the next delimiter): Dovecot reads on past the end of the message looking for one (its HEADER.FIELDS.NOT even returns the delimiter line); Rookery stops at the end of the message and adds no blank line (RFC 3501 §6.4.5)',
  },
];

const FIELDS = 'FROM TO CC SUBJECT CONTENT-TYPE X-MISSING';

/** Part numbers of a BODYSTRUCTURE value, as the server describes the parts. */
function partPaths(body: Val): number[][] {
  const out: number[][] = [];
  const isMultipart = (b: Val): boolean => b.t === 'list' && b.v[0]?.t === 'list';
  const isMessage = (b: Val): boolean =>
    b.t === 'list' && b.v[0]?.t === 'str' && b.v[0].v.toUpperCase() === 'MESSAGE' && b.v[7]?.t === 'list' && b.v[8]?.t === 'list';
  const children = (b: Val): Val[] => {
    if (b.t !== 'list') return [];
    const end = b.v.findIndex((x) => x.t !== 'list');
    return end < 0 ? b.v : b.v.slice(0, end);
  };
  const walkMessage = (b: Val, path: number[]): void => {
    if (path.length > 8 || b.t !== 'list') return;
    const inner = b.v[8]!;
    if (isMultipart(inner)) walkMulti(inner, path);
    else {
      out.push([...path, 1]);
      if (isMessage(inner)) walkMessage(inner, [...path, 1]);
    }
  };
  const walkMulti = (b: Val, path: number[]): void => {
    if (path.length > 8) return;
    children(b).forEach((c, i) => {
      const p = [...path, i + 1];
      out.push(p);
      if (isMultipart(c)) walkMulti(c, p);
      else if (isMessage(c)) walkMessage(c, p);
    });
  };
  if (isMultipart(body)) walkMulti(body, []);
  else {
    out.push([1]);
    if (isMessage(body)) walkMessage(body, [1]);
  }
  return out.slice(0, 60);
}

/** The FETCH items for one message, given the part paths of both servers. */
function itemsFor(paths: number[][]): string[] {
  const items = [
    'RFC822.SIZE',
    'ENVELOPE',
    'BODYSTRUCTURE',
    'BODY',
    'BODY.PEEK[]',
    'BODY.PEEK[HEADER]',
    'BODY.PEEK[TEXT]',
    `BODY.PEEK[HEADER.FIELDS (${FIELDS})]`,
    'BODY.PEEK[HEADER.FIELDS.NOT (FROM SUBJECT)]',
  ];
  for (const p of paths) {
    const n = p.join('.');
    items.push(`BODY.PEEK[${n}]`, `BODY.PEEK[${n}.MIME]`, `BODY.PEEK[${n}.HEADER]`, `BODY.PEEK[${n}.TEXT]`, `BODY.PEEK[${n}.HEADER.FIELDS (SUBJECT FROM)]`);
  }
  return items;
}

interface Difference {
  message: number;
  item: string;
  kind: 'value' | 'bytes' | 'grammar' | 'missing';
  rookery: string;
  dovecot: string;
  allowedBy: Allowed | null;
}

function clip(s: string, n = 400): string {
  return s.length > n ? `${s.slice(0, n)}...(${s.length})` : s;
}

/** The two texts around their first difference. */
function around(a: string, b: string): [string, string] {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  const from = Math.max(0, i - 120);
  const cut = (s: string): string => `${from > 0 ? '...' : ''}${s.slice(from, i + 200)}${s.length > i + 200 ? `...(${s.length})` : ''}`;
  return [cut(a), cut(b)];
}

function compare(index: number, msg: Generated, ours: Map<string, Item>, theirs: Map<string, Item>, out: Difference[]): number {
  let compared = 0;
  const allowed = (item: string): Allowed | null => ALLOW.find((a) => msg.features.has(a.feature) && a.items.test(item)) ?? null;
  const labels = new Set([...ours.keys(), ...theirs.keys()]);
  labels.delete('UID');
  for (const label of labels) {
    compared++;
    const a = ours.get(label);
    const b = theirs.get(label);
    if (a === undefined || b === undefined) {
      out.push({ message: index, item: label, kind: 'missing', rookery: a ? clip(a.raw) : '(absent)', dovecot: b ? clip(b.raw) : '(absent)', allowedBy: allowed(label) });
      continue;
    }
    const kind = label === 'ENVELOPE' ? 'envelope' : label === 'BODY' || label === 'BODYSTRUCTURE' ? 'body' : null;
    if (kind !== null) {
      const err = grammarError(kind, a.raw);
      if (err !== null) out.push({ message: index, item: label, kind: 'grammar', rookery: err, dovecot: String(grammarError(kind, b.raw)), allowedBy: null });
    }
    const va = show(a.val);
    const vb = show(b.val);
    if (va !== vb) {
      const [ra, rb] = around(va, vb);
      out.push({ message: index, item: label, kind: 'value', rookery: ra, dovecot: rb, allowedBy: allowed(label) });
    } else if (a.raw !== b.raw) {
      // same value, other bytes (quoted vs literal, escapes)
      const [ra, rb] = around(a.raw, b.raw);
      out.push({ message: index, item: label, kind: 'bytes', rookery: JSON.stringify(ra), dovecot: JSON.stringify(rb), allowedBy: allowed(label) });
    }
  }
  return compared;
}

test('Rookery answers FETCH like Dovecot 2.3 for generated tricky messages', { timeout: 120_000 }, async (t) => {
  if (findDovecot() === null) {
    t.skip('dovecot not installed (Debian: apt-get install dovecot-imapd)');
    return;
  }
  // cleanups run last-in first-out, each bounded, so a stuck server cannot hang the run
  const cleanups: (() => Promise<void>)[] = [];
  const bounded = (p: Promise<void>): Promise<void> => Promise.race([p, new Promise<void>((r) => setTimeout(r, 5000).unref())]).catch(() => undefined);
  try {
    const dovecot = (await startDovecot())!;
    cleanups.push(() => dovecot.stop());
    const { server, port } = await startServer();
    cleanups.push(() => server.stop());
    const rook = await DiffSession.open(port, 'testuser', 'testpass');
    cleanups.push(async () => rook.close());
    const dove = await DiffSession.open(dovecot.port, 'u', 'pass');
    cleanups.push(async () => dove.close());
    const messages = generateMessages(SEED, COUNT);
    for (const m of messages) {
      await rook.append('INBOX', m.raw);
      await dove.append('INBOX', m.raw);
    }
    await rook.ok('SELECT INBOX');
    await dove.ok('SELECT INBOX');
    const diffs: Difference[] = [];
    let compared = 0;
    for (let i = 0; i < messages.length; i++) {
      const uid = i + 1;
      const structs = await Promise.all([rook.fetch(uid, ['BODYSTRUCTURE']), dove.fetch(uid, ['BODYSTRUCTURE'])]);
      const seen = new Set<string>();
      const paths: number[][] = [];
      for (const s of structs) {
        const b = s.get('BODYSTRUCTURE');
        if (b === undefined) continue;
        for (const p of partPaths(b.val)) {
          const key = p.join('.');
          if (!seen.has(key)) {
            seen.add(key);
            paths.push(p);
          }
        }
      }
      const items = itemsFor(paths.slice(0, 60));
      const [ours, theirs] = await Promise.all([rook.fetch(uid, items), dove.fetch(uid, items)]);
      compared += compare(uid, messages[i]!, ours, theirs, diffs);
    }

    const unexplained = diffs.filter((d) => d.allowedBy === null);
    const byEntry = new Map<Allowed, number>();
    for (const d of diffs) if (d.allowedBy) byEntry.set(d.allowedBy, (byEntry.get(d.allowedBy) ?? 0) + 1);
    const differingMessages = new Set(unexplained.map((d) => d.message));
    t.diagnostic(`${dovecot.version}; seed ${SEED}: ${messages.length} messages, ${compared} items compared`);
    const allowedMessages = new Set(diffs.filter((d) => d.allowedBy !== null).map((d) => d.message));
    t.diagnostic(
      `${diffs.length - unexplained.length} allowed differences in ${allowedMessages.size} messages (${ALLOW.length} allow-list entries), ` +
        `${unexplained.length} other differences in ${differingMessages.size} messages`,
    );
    for (const [entry, n] of byEntry) t.diagnostic(`  allowed ${n} x ${entry.feature} ${entry.items}: ${entry.reason}`);
    const itemCounts = new Map<string, number>();
    for (const d of unexplained) {
      const k = `${d.kind} ${d.item.replace(/\[[\d.]+\.?/, '[n.')}`;
      itemCounts.set(k, (itemCounts.get(k) ?? 0) + 1);
    }
    for (const [k, n] of itemCounts) t.diagnostic(`  ${n} x ${k}`);
    const shown = VERBOSE ? unexplained : unexplained.slice(0, 12);
    for (const d of shown) {
      const features = [...messages[d.message - 1]!.features].join(',');
      t.diagnostic(`message ${d.message} [${features}] ${d.kind} ${d.item}\n  rookery: ${d.rookery}\n  dovecot: ${d.dovecot}`);
      if (VERBOSE) t.diagnostic(`  source: ${JSON.stringify(messages[d.message - 1]!.raw.toString('latin1').slice(0, 3000))}`);
    }
    assert.equal(unexplained.length, 0, `${unexplained.length} differences from Dovecot outside the allow-list`);
  } finally {
    for (const cleanup of cleanups.reverse()) await bounded(cleanup());
  }
});
