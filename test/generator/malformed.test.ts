/**
 * The malformed profile: every named case of the catalogue is produced,
 * says which it is, has the breakage its name promises, and loads into
 * Rookery and is served over IMAP without a protocol error.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { generateMailbox, MALFORMED_CASES, MALFORMED_CASE_NAMES } from '../../src/index.js';
import { rawSession, startServer } from '../helpers/server.js';

const MIME_DOC = fileURLToPath(new URL('../../../docs/mime.md', import.meta.url));
const GENERATOR_DOC = fileURLToPath(new URL('../../../docs/generator.md', import.meta.url));

const byCase = (count = MALFORMED_CASE_NAMES.length, seed = 13): Map<string, Buffer> => {
  const out = new Map<string, Buffer>();
  for (const m of generateMailbox({ seed, count, profile: 'malformed' }).messages) if (!out.has(m.case!)) out.set(m.case!, m.raw);
  return out;
};

test('every case is produced once per round, in catalogue order, and names itself', () => {
  const { messages } = generateMailbox({ seed: 13, count: MALFORMED_CASE_NAMES.length * 2, profile: 'malformed' });
  messages.forEach((m, i) => {
    const c = MALFORMED_CASES[i % MALFORMED_CASES.length]!;
    assert.equal(m.case, c.name);
    const named = new RegExp(`^X-Rookery-Case: ${c.name}\r?\n`).test(m.raw.toString('latin1'));
    assert.equal(named, c.caseHeader, `${c.name}: X-Rookery-Case line ${named ? 'present' : 'missing'}`);
  });
  assert.equal(new Set(MALFORMED_CASE_NAMES).size, MALFORMED_CASE_NAMES.length, 'names are unique');
  for (const c of MALFORMED_CASES) assert.match(c.name, /^[a-z0-9]+(-[a-z0-9]+)*$/);
  // Without the header (caseHeader: false) the manifest still says which case each message is.
  const quiet = generateMailbox({ seed: 13, count: 5, profile: 'malformed', caseHeader: false }).messages;
  assert.ok(quiet.every((m) => !m.raw.includes('X-Rookery-Case') && m.case !== null));
  // `cases` restricts the draw to those, in turn.
  const only = generateMailbox({ seed: 1, count: 4, profile: 'malformed', cases: ['bare-lf', 'bad-base64'] }).messages.map((m) => m.case);
  assert.deepEqual(only, ['bare-lf', 'bad-base64', 'bare-lf', 'bad-base64']);
});

test('every numbered item of docs/mime.md about broken MIME has a case that names it', () => {
  const items = [...readFileSync(MIME_DOC, 'utf8').matchAll(/^### (\d+)\. /gm)].map((m) => Number(m[1]));
  assert.ok(items.length >= 9);
  // Item 1 is about how lists are written, not a breakage.
  for (const n of items.filter((n) => n >= 2)) {
    assert.ok(MALFORMED_CASES.some((c) => c.ref.includes(`docs/mime.md item ${n}`)), `no case for docs/mime.md item ${n}`);
  }
});

test('docs/generator.md names every case, and only cases that exist', () => {
  const doc = readFileSync(GENERATOR_DOC, 'utf8');
  const section = doc.slice(doc.indexOf('## The malformed profile'), doc.indexOf('## Speed'));
  for (const name of MALFORMED_CASE_NAMES) assert.ok(section.includes(`\`${name}\``), `docs/generator.md does not name ${name}`);
  const named = new Set([...section.matchAll(/`([a-z0-9]+(?:-[a-z0-9]+)+|bare-lf)`/g)].map((m) => m[1]!));
  for (const n of named) assert.ok(MALFORMED_CASE_NAMES.includes(n) || ['case-header'].includes(n), `docs/generator.md names ${n}, which is no case`);
});

test('each case has the breakage its name promises', () => {
  const m = byCase();
  const text = (name: string): string => m.get(name)!.toString('latin1');
  const head = (name: string): string => text(name).split(/\r?\n\r?\n/)[0]!;
  assert.equal(m.get('empty-message')!.length, 0);
  assert.ok(!text('bare-lf').includes('\r'));
  assert.match(text('bare-cr'), /[^\r\n]\r[^\n]/);
  assert.match(text('mixed-line-endings'), /[^\r]\n/);
  assert.ok(!/\r?\n\r?\n/.test(text('no-body-separator')));
  assert.equal(head('repeated-address-fields').match(/^From:/gm)!.length, 2);
  assert.ok(/[\x80-\xff]/.test(head('8bit-headers')));
  assert.ok(!Buffer.from(head('latin1-headers'), 'latin1').toString('utf8').includes('Café'));
  assert.ok(m.get('nul-in-body')!.includes(0));
  assert.ok(m.get('nul-in-header')!.subarray(0, 300).includes(0));
  assert.ok(text('overlong-line').split('\r\n').some((l) => l.length > 998));
  assert.ok(head('overlong-header-line').split('\r\n').some((l) => l.length > 998));
  assert.ok(head('many-header-fields').split('\r\n').length > 2000);
  assert.match(text('long-boundary'), /boundary="[^"]{81,}"/);
  assert.equal(text('deep-nesting').match(/multipart\/mixed/g)!.length, 120);
  assert.match(text('multipart-without-boundary'), /Content-Type: multipart\/mixed\r\n/);
  assert.ok(!text('missing-boundary').includes('--never-used'));
  assert.ok(!text('missing-close-delimiter').includes(`--m`) || !/--m\S+--/.test(text('missing-close-delimiter')));
  assert.match(text('bad-base64'), /Content-Transfer-Encoding: base64[\s\S]*!!/);
  assert.match(text('unknown-transfer-encoding'), /x-uuencode/);
  assert.match(text('message-global'), /message\/global/);
  assert.ok(text('continuation-first').startsWith(' '));
  assert.ok(!/^Date:/m.test(head('missing-date')));
  assert.ok(!/^From:/m.test(head('missing-from')));
});

test('every case loads into Rookery and is served: FETCH of all of them answers OK, BINARY refuses the unknown encoding', { timeout: 30_000 }, async () => {
  const count = MALFORMED_CASE_NAMES.length;
  const { server, port } = await startServer({ plugins: 'all', storage: { INBOX: { generate: { seed: 13, count, profile: 'malformed' } } } });
  try {
    assert.equal(server.control.getMailbox('INBOX').messages, count);
    const generated = generateMailbox({ seed: 13, count, profile: 'malformed' }).messages;
    const stored = server.control.listMessages('INBOX', { raw: true });
    stored.forEach((s, i) => assert.ok(Buffer.from(s.raw!, 'base64').equals(generated[i]!.raw), `${generated[i]!.case}: bytes kept exactly`));
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    const lines = await c.command('FETCH 1:* (UID FLAGS RFC822.SIZE ENVELOPE BODYSTRUCTURE BODY.PEEK[HEADER.FIELDS (X-Rookery-Case)] BODY.PEEK[TEXT]<0.100>)', 20_000);
    assert.match(lines[lines.length - 1]!, /^\S+ OK/);
    assert.equal(lines.filter((l) => /^\* \d+ FETCH/.test(l)).length, count);
    for (let i = 0; i < count; i++) {
      const c0 = MALFORMED_CASES[i]!;
      if (!c0.caseHeader) continue;
      const line = lines.find((l) => l.startsWith(`* ${i + 1} FETCH`))!;
      assert.ok(line.includes(`X-Rookery-Case: ${c0.name}`), `${c0.name} not named in its FETCH`);
    }
    const uu = MALFORMED_CASE_NAMES.indexOf('unknown-transfer-encoding') + 1;
    const binary = await c.command(`FETCH ${uu} (BINARY.PEEK[1])`);
    assert.match(binary[binary.length - 1]!, /^\S+ NO \[UNKNOWN-CTE\]/);
    c.close();
  } finally {
    await server.stop();
  }
});
