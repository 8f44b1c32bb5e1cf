/**
 * Fuzz of the grammars issue 36 added: the generator's options (the
 * storage option's `generate` key, `rookery generate --options`), the
 * compare allow-list file, and the response normalizer that reads any
 * server's bytes. Seeded: a failure names the seed and index.
 *
 * - generator options: a construction either succeeds (and the mailbox
 *   holds exactly `count` messages) or fails with ServiceError INVALID whose
 *   every line names a path under `storage.INBOX.generate`; nothing else;
 * - allow-list: any text parses or fails with AllowListError naming a line;
 * - normalizer: any bytes give a string (never a throw), the same one twice.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createServer, MALFORMED_CASE_NAMES, ServiceError } from '../../src/index.js';
import { AllowListError, parseAllowList } from '../../src/compare/allow.js';
import { NORMALIZATION_NAMES, normalizeResponse } from '../../src/compare/normalize.js';
import { Rand } from './generate.js';

const SEED = Number(process.env.FUZZ_SEED ?? 36);

const KEYS = ['seed', 'count', 'profile', 'cases', 'bodies', 'size', 'attachmentSize', 'appendLimit', 'threads', 'addresses', 'dates', 'flags', 'caseHeader', 'conut', 'Seed', 'sizes', '__proto__', 'constructor', ''];
const NESTED = ['replies', 'maxDepth', 'maxBreadth', 'window', 'brokenReferences', 'subjectOnly', 'scripts', 'charsets', 'rawUtf8', 'groups', 'hostless', 'people', 'start', 'spacing', 'zones', 'missing', 'invalid', 'farPast', 'farFuture', 'seen', 'keywords', 'keywordShare', 'min', 'max', 'plain', 'html', 'signed', 'replys'];

function value(r: Rand, depth: number): unknown {
  switch (r.int(0, 14)) {
    case 0:
      return r.pick([0, 1, 2, 3, 7, 50]);
    case 1:
      return r.pick([-1, 0.5, 1.5, 1e9, 2 ** 32, Number.MAX_SAFE_INTEGER, -0, NaN, Infinity]);
    case 2:
      return r.pick(['realistic', 'malformed', 'malformd', '', '7', 'latin', 'utf-8', 'klingon']);
    case 3:
      return r.pick([true, false, null]);
    case 4:
      return [r.pick(MALFORMED_CASE_NAMES), r.pick(['bare-lf', 'nope', 'deep-nesting'])];
    case 5:
      return [];
    case 6:
      return r.pick([['$Junk', 'Work'], ['bad keyword'], ['\\Seen'], [1, 2]]);
    case 7:
      return { min: r.pick([0, 10, 1000]), max: r.pick([5, 100, 20_000]) };
    case 8:
    case 9:
    case 10: {
      if (depth > 2) return 1;
      const o: Record<string, unknown> = {};
      const n = r.int(0, 4);
      for (let i = 0; i < n; i++) o[r.pick(depth === 0 ? KEYS : NESTED)] = value(r, depth + 1);
      return o;
    }
    default:
      return r.pick([0.1, 0.5, 0.9, 1]);
  }
}

/** An options object small enough to build quickly: count is kept under 60 when it is a number. */
function options(r: Rand): unknown {
  const o = value(r, 0);
  if (o && typeof o === 'object' && !Array.isArray(o)) {
    const rec = o as Record<string, unknown>;
    if (typeof rec.count === 'number' && rec.count > 60) rec.count = 60;
    if (rec.count === undefined && r.chance(0.8)) rec.count = r.int(0, 20);
    if (r.chance(0.3)) rec.profile = 'malformed';
  }
  return o;
}

test('generator options: construction succeeds with count messages or fails INVALID naming storage.INBOX.generate paths', { timeout: 120_000 }, () => {
  const r = new Rand(SEED);
  let ok = 0;
  let refused = 0;
  for (let i = 0; i < 400; i++) {
    const generate = options(r);
    let server;
    try {
      server = createServer({ storage: { INBOX: { generate: generate as never } } });
    } catch (err) {
      assert.ok(err instanceof ServiceError, `seed ${SEED} #${i}: ${String(err)} for ${JSON.stringify(generate)}`);
      assert.equal(err.code, 'INVALID');
      for (const line of err.message.split('\n')) assert.match(line, /^(storage\.INBOX\.generate|\.\.\. and \d+ more)/, `seed ${SEED} #${i}: ${line}`);
      refused++;
      continue;
    }
    const count = generate && typeof generate === 'object' && typeof (generate as { count?: unknown }).count === 'number' ? (generate as { count: number }).count : 100;
    assert.equal(server.control.getMailbox('INBOX').messages, count, `seed ${SEED} #${i}: ${JSON.stringify(generate)}`);
    ok++;
  }
  // Both outcomes must be exercised, or the fuzz tests nothing.
  assert.ok(ok > 20 && refused > 20, `ok ${ok}, refused ${refused}`);
});

test('allow-list files: any text parses or fails with AllowListError naming its line', () => {
  const r = new Rand(SEED + 1);
  const pieces = ['FETCH', '*', 'UID_FETCH', '~ ', '~', '^\\* ', '(', ')', '[', ']', '\\', '#', ' ', '\t', 'x', '\\d+', '(?=', '(?<x>', '{2,1}', '\r', '\n', '\n\n', '\u00e9'];
  for (let i = 0; i < 2000; i++) {
    let text = '';
    const n = r.int(0, 30);
    for (let j = 0; j < n; j++) text += r.pick(pieces);
    try {
      for (const rule of parseAllowList(text, 'f')) assert.ok(rule.line >= 1 && rule.command.length > 0);
    } catch (err) {
      assert.ok(err instanceof AllowListError, `seed ${SEED + 1} #${i}: ${String(err)}`);
      assert.match(err.message, /^f line \d+: /);
    }
  }
});

test('normalizer: any response bytes give one string, every normalization on or off', () => {
  const r = new Rand(SEED + 2);
  const starts = ['* ', '+ ', 'A1 ', '* 1 FETCH (', '* STATUS ', '* LIST (', '* CAPABILITY ', '* OK [', '* ID (', '* SEARCH ', '* ESEARCH (TAG "a") ', '* FLAGS ('];
  const pieces = ['(', ')', '[', ']', '"', '\\', '{3}\r\nabc', '{99}\r\n', '~{2}\r\nxy', 'NIL', 'nil', 'UID', '12', 'MODSEQ', '(5)', 'INTERNALDATE', '"1-Jan-2020 00:00:00 +0000"', 'FLAGS', '\\Seen', 'UIDVALIDITY', 'OK', 'NO', 'CAPABILITY', ' ', '  ', '\x00', '\xff', '\r\n'];
  const all = new Set(NORMALIZATION_NAMES);
  for (let i = 0; i < 5000; i++) {
    let text = r.pick(starts);
    const n = r.int(0, 20);
    for (let j = 0; j < n; j++) text += r.pick(pieces);
    const unit = Buffer.from(`${text}\r\n`, 'latin1');
    const on = r.chance(0.5) ? all : new Set(NORMALIZATION_NAMES.filter(() => r.chance(0.5)));
    const a = normalizeResponse(unit, on);
    assert.equal(typeof a, 'string');
    assert.equal(normalizeResponse(unit, on), a, `seed ${SEED + 2} #${i}: not stable`);
  }
});
