/**
 * The rule language of issue 14 part 1 over real sockets: the continuation
 * event, the untagged and description matchers, mutate (JSON ops and a
 * function), literals, defer, seedScope, and their validation. Expected
 * bytes come from RFC 3501's grammar (§9) and the rule's own words.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type ScriptEvent } from '../../src/index.js';
import { collect, mail, rawSession, startServer } from '../helpers/server.js';
import { RawClient } from '../helpers/raw-client.js';
import { request, startRest } from '../rest/helpers.js';

const MSG = 'From: Alice <alice@example.com>\r\nSubject: Say "hi" there\r\nMessage-ID: <m1@example.com>\r\n\r\nHello\r\n';

/** Reads every byte up to and including the tagged line of `tag`. */
async function through(c: RawClient, tag: string): Promise<string> {
  const lines = await c.until(tag);
  return lines.join('\r\n') + '\r\n';
}

test('continuation: the + before a literal, in AUTHENTICATE and in IDLE are asked; send replaces, mutate edits the text, drop withholds', async () => {
  const { server, port } = await startServer({ plugins: ['IDLE', 'AUTH=PLAIN'] });
  try {
    const fired = collect(server, 'script');
    server.script.add([
      { on: 'continuation', match: '^\\+ OK', send: '+ Ready for literal data\r\n', description: 'literal go-ahead' },
      { on: 'continuation', match: 'idling', mutate: [{ set: 'text', value: 'waiting for DONE' }] },
      { on: 'continuation', command: 'AUTHENTICATE', times: 1, drop: true },
    ]);
    const c = await rawSession(port, false);
    c.write('L1 LOGIN {8}\r\n');
    assert.equal(await c.line(), '+ Ready for literal data');
    c.write('testuser {8}\r\n');
    assert.equal(await c.line(), '+ Ready for literal data');
    c.write('testpass\r\n');
    assert.match(await c.line(), /^L1 OK/);
    c.write('I1 IDLE\r\n');
    assert.equal(await c.line(), '+ waiting for DONE');
    c.write('DONE\r\n');
    assert.match(await c.line(), /^I1 OK/);
    c.close();
    // AUTHENTICATE's empty challenge is withheld: the client waits, and times out on its side.
    const a = await rawSession(port, false);
    a.write('A1 AUTHENTICATE PLAIN\r\n');
    await assert.rejects(a.line(300), /timed out/);
    a.close();
    const events = fired.filter((e) => e.event === 'continuation');
    assert.deepEqual(
      events.map((e) => [e.command, e.rule.description ?? null]),
      [
        ['LOGIN', 'literal go-ahead'],
        ['LOGIN', 'literal go-ahead'],
        ['IDLE', null],
        ['AUTHENTICATE', null],
      ],
    );
  } finally {
    await server.stop();
  }
});

test('untagged matches a response by type; description shows in the listing and in script events', async () => {
  const { server, port } = await startServer({ storage: { INBOX: { messages: [mail('One'), mail('Two')] } } });
  try {
    const fired: ScriptEvent[] = collect(server, 'script');
    const h = server.script.add({ on: 'response', untagged: 'EXISTS', description: 'lie about the count', send: '* 99 EXISTS\r\n' });
    const c = await rawSession(port);
    const out = await c.command('SELECT INBOX');
    assert.ok(out.includes('* 99 EXISTS'), out.join('\n'));
    assert.ok(!out.includes('* 2 EXISTS'));
    // Every other response of SELECT is untouched.
    assert.ok(out.includes('* 0 RECENT') || out.some((l) => /^\* \d+ RECENT$/.test(l)));
    assert.match(out[out.length - 1]!, /^T\d+ OK \[READ-WRITE\]/);
    c.close();
    assert.equal(h.hits, 1);
    assert.equal(server.script.rules[0]!.rule.description, 'lie about the count');
    assert.equal(fired.length, 1);
    assert.equal(fired[0]!.rule.description, 'lie about the count');
    assert.equal(fired[0]!.command, 'SELECT');
  } finally {
    await server.stop();
  }
});

test('a notice in IDLE goes through the response rules line by line: EXISTS mutated, RECENT untouched, for every idling session', async () => {
  const { server, port } = await startServer({ plugins: ['IDLE'], storage: { INBOX: { messages: [mail('One'), mail('Two')] } } });
  try {
    const clients: RawClient[] = [];
    for (let i = 0; i < 2; i++) {
      const c = await rawSession(port);
      await c.command('SELECT INBOX');
      c.write('I1 IDLE\r\n');
      assert.match(await c.line(), /^\+ /);
      clients.push(c);
    }
    server.script.add({ on: 'response', untagged: 'EXISTS', mutate: [{ add: 'EXISTS', value: 100 }] });
    server.control.addMessage('INBOX', { raw: MSG });
    // The first session to hear of the message sees it as \Recent, the other not (RFC 3501 §2.3.1.1).
    const seen = await Promise.all(clients.map(async (c) => [await c.line(), await c.line()]));
    assert.deepEqual(seen.map((lines) => lines[0]), ['* 103 EXISTS', '* 103 EXISTS']);
    assert.deepEqual(seen.map((lines) => lines[1]).sort(), ['* 0 RECENT', '* 1 RECENT']);
    for (const c of clients) c.close();
  } finally {
    await server.stop();
  }
});

test('mutate (JSON): replace, drop, reorder FETCH items; string -> literal; literal -> quoted; response codes, text, STATUS, LIST, EXISTS', async () => {
  const { server, port } = await startServer({ storage: { INBOX: { messages: [MSG] } } });
  try {
    server.script.add([
      { on: 'response', untagged: 'FETCH', tag: 'F1', mutate: [{ set: 'UID', value: 99 }, { drop: 'FLAGS' }, { literal: 'ENVELOPE', at: [1] }] },
      { on: 'response', untagged: 'FETCH', tag: 'F2', mutate: [{ order: ['BODY[]', 'UID'] }, { quoted: 'BODY[]' }] },
      { on: 'response', untagged: 'OK', match: 'UIDNEXT', mutate: [{ set: 'UIDNEXT', value: 1 }, { drop: 'text' }] },
      { on: 'response', untagged: 'STATUS', mutate: [{ set: 'MESSAGES', value: 7 }, { drop: 'UIDNEXT' }] },
      { on: 'response', untagged: 'LIST', mutate: [{ set: 'mailbox', value: { literal: 'INBOX' } }, { set: 'attributes', value: [{ atom: '\\Marked' }] }] },
      { on: 'response', match: '^N1 ', mutate: [{ set: 'text', value: 'Changed' }] },
    ]);
    const c = await rawSession(port);
    c.write('ST1 STATUS INBOX (MESSAGES UIDNEXT)\r\n');
    assert.equal(await through(c, 'ST1'), '* STATUS "INBOX" (MESSAGES 7)\r\nST1 OK Status completed\r\n');
    c.write('LS1 LIST "" INBOX\r\n');
    assert.equal(await through(c, 'LS1'), '* LIST (\\Marked) "/" {5}\r\nINBOX\r\nLS1 OK LIST completed\r\n');
    const select = await c.command('SELECT INBOX');
    assert.ok(select.includes('* OK [UIDNEXT 1]'), select.join('\n'));
    c.write('F1 FETCH 1 (UID FLAGS ENVELOPE)\r\n');
    const f1 = await through(c, 'F1');
    assert.ok(f1.startsWith('* 1 FETCH (UID 99 ENVELOPE (NIL {14}\r\nSay "hi" there (('), f1);
    assert.ok(!f1.includes('FLAGS'));
    c.write('F2 FETCH 1 (UID BODY.PEEK[])\r\n');
    const f2 = await through(c, 'F2');
    // RFC 3501 §4.3 quoted: `"` and `\` escaped; the CRLFs inside stay as they are (a broken quoted string, on purpose).
    const quoted = MSG.replace(/["\\]/g, '\\$&');
    assert.equal(f2, `* 1 FETCH (BODY[] "${quoted}" UID 1)\r\nF2 OK Fetch completed\r\n`);
    c.write('N1 NOOP\r\n');
    assert.equal(await c.line(), 'N1 OK Changed');
    c.close();
  } finally {
    await server.stop();
  }
});

test('mutate (function, in-process): the structured response, changed in place or replaced; null drops it', async () => {
  const { server, port } = await startServer({ storage: { INBOX: { messages: [MSG, mail('Two')] } } });
  try {
    const seen: string[] = [];
    server.script.add({
      on: 'response',
      untagged: 'FETCH',
      // `when` sees the structure too.
      when: (ctx) => ctx.response?.kind === 'data',
      mutate: (r, ctx) => {
        seen.push(`${ctx.command}:${r.kind}`);
        if (r.kind !== 'data') return;
        if (r.values[0] === 2) return null;
        // `* 1 FETCH (UID 1)`: the item list is values[2]; change the UID in place.
        (r.values[2] as unknown[])[1] = 42;
      },
    });
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    c.write('F1 FETCH 1:2 (UID)\r\n');
    assert.equal(await through(c, 'F1'), '* 1 FETCH (UID 42)\r\nF1 OK Fetch completed\r\n');
    c.close();
    assert.deepEqual(seen, ['FETCH:data', 'FETCH:data']);
  } finally {
    await server.stop();
  }
});

test('literals: true sends every string as a literal; numbers, atoms and NIL stay', async () => {
  const { server, port } = await startServer({ storage: { INBOX: { messages: [MSG] } } });
  try {
    server.script.add({ on: 'command', command: 'FETCH', times: 1, literals: true });
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    c.write('F1 FETCH 1 (UID ENVELOPE)\r\n');
    const out = await through(c, 'F1');
    assert.equal(
      out,
      '* 1 FETCH (UID 1 ENVELOPE (NIL {14}\r\nSay "hi" there (({5}\r\nAlice NIL {5}\r\nalice {11}\r\nexample.com)) (({5}\r\nAlice NIL {5}\r\nalice {11}\r\nexample.com)) (({5}\r\nAlice NIL {5}\r\nalice {11}\r\nexample.com)) NIL NIL NIL NIL {16}\r\n<m1@example.com>))\r\nF1 OK Fetch completed\r\n',
    );
    // times: 1, so the next FETCH is as usual.
    c.write('F2 FETCH 1 (ENVELOPE)\r\n');
    assert.match(await through(c, 'F2'), /\(\("Alice" NIL "alice" "example\.com"\)\)/);
    c.close();
  } finally {
    await server.stop();
  }
});

test('defer: "tagged" sends the FETCH data after the tagged OK; "next" with the next command\'s output', async () => {
  const { server, port } = await startServer({ storage: { INBOX: { messages: [mail('One'), mail('Two')] } } });
  try {
    server.script.add([
      { on: 'command', command: 'FETCH', uid: false, untagged: 'FETCH', defer: 'tagged' },
      { on: 'command', command: 'UID FETCH', defer: 'next' },
    ]);
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    c.write('F1 FETCH 1:2 (UID)\r\n');
    assert.equal(await c.line(), 'F1 OK Fetch completed');
    assert.equal(await c.line(), '* 1 FETCH (UID 1)');
    assert.equal(await c.line(), '* 2 FETCH (UID 2)');
    c.write('U1 UID FETCH 2 (FLAGS)\r\n');
    assert.equal(await c.line(), 'U1 OK Fetch completed');
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(c.pending(), '', 'held until the next command');
    c.write('N1 NOOP\r\n');
    assert.equal(await through(c, 'N1'), '* 2 FETCH (UID 2 FLAGS ())\r\nN1 OK NOOP completed\r\n');
    c.close();
  } finally {
    await server.stop();
  }
});

/** Runs NOOPs on two sessions in the given order and returns, per session, the indexes of the NOOPs that got the fault. */
async function faults(order: ('a' | 'b')[], seedScope: 'server' | 'session' | 'rule' | undefined): Promise<{ a: number[]; b: number[] }> {
  const { server, port } = await startServer({ scriptSeed: 42 });
  try {
    server.script.add({ on: 'command', command: 'NOOP', chance: 0.5, ...(seedScope ? { seedScope } : {}), send: '$TAG NO Throttled\r\n' });
    // The same connection order in every run, so session numbers are the same.
    const a = await rawSession(port);
    const b = await rawSession(port);
    const out = { a: [] as number[], b: [] as number[] };
    const count = { a: 0, b: 0 };
    for (const who of order) {
      const c = who === 'a' ? a : b;
      const i = count[who]++;
      const reply = await c.command('NOOP');
      if (/ NO Throttled$/.test(reply[reply.length - 1]!)) out[who].push(i);
    }
    a.close();
    b.close();
    return out;
  } finally {
    await server.stop();
  }
}

test('seedScope: "session" gives each session the same faults whatever the interleaving; the same seed the same faults across runs', async () => {
  const sequential: ('a' | 'b')[] = [...Array(16).fill('a'), ...Array(16).fill('b')];
  const interleaved: ('a' | 'b')[] = Array.from({ length: 32 }, (_, i) => (i % 2 ? 'b' : 'a'));
  const one = await faults(sequential, 'session');
  const two = await faults(interleaved, 'session');
  assert.deepEqual(one, two);
  assert.ok(one.a.length > 0 && one.a.length < 16, 'a share of the NOOPs fail');
  // The sessions have streams of their own.
  assert.notDeepEqual(one.a, one.b);
  // Same seed, same interleaving: the same faults (server scope is deterministic too, per interleaving).
  assert.deepEqual(await faults(interleaved, undefined), await faults(interleaved, undefined));
  // The default shared stream depends on the interleaving: what session scope fixes.
  assert.notDeepEqual(await faults(sequential, 'server'), await faults(interleaved, 'server'));
  // rule scope: one stream for the rule, independent of other rules' draws.
  const r1 = await faults(sequential, 'rule');
  assert.deepEqual(r1, await faults(sequential, 'rule'));
});

test('validation names the field: ops, events, combinations', () => {
  return (async () => {
    const { server } = await startServer();
    try {
      const bad = (rule: unknown, re: RegExp): void => assert.throws(() => server.script.add(rule as never), (e: Error) => re.test(e.message));
      bad({ on: 'response', mutate: [{ set: 'UID' }] }, /^mutate\[0\]\.value: required for set$/);
      bad({ on: 'response', mutate: [{ set: 'UID', value: { raw: 'x' } }] }, /^mutate\[0\]\.value: expected a number, null, a string, a list, or \{ atom \| literal \| quoted: string \}$/);
      bad({ on: 'response', mutate: [{ drop: 'UID', value: 1 }] }, /^mutate\[0\]\.value: not a field of a drop op/);
      bad({ on: 'response', mutate: [{ set: 'UID', drop: 'X', value: 1 }] }, /^mutate\[0\]: expected exactly one of .*got set and drop$/);
      bad({ on: 'response', mutate: [{ replace: '(' , with: '' }] }, /^mutate\[0\]\.replace: expected a valid regular expression$/);
      bad({ on: 'response', mutate: [{ drop: 'BODYSTRUCTURE', at: [-1] }] }, /^mutate\[0\]\.at: expected a list of list indexes/);
      bad({ on: 'response', mutate: 'UID' }, /^mutate: expected an array of ops/);
      bad({ on: 'greeting', defer: 'tagged' }, /^defer: not meaningful for on: greeting/);
      bad({ on: 'response', defer: 'later' }, /^defer: expected "tagged" or "next"/);
      bad({ on: 'response', defer: 'tagged', delay: 10 }, /^delay: cannot be combined with defer$/);
      bad({ on: 'quiet', quietFor: 10, untagged: 'EXISTS' }, /^untagged: not meaningful for on: quiet/);
      bad({ on: 'response', untagged: 'EXISTS FETCH' }, /^untagged: expected a response type/);
      bad({ on: 'command', chance: 0.5, seedScope: 'sesion' }, /^seedScope: expected one of server, session, rule, got "sesion"; did you mean "session"\?$/);
      bad({ on: 'command', seedScope: 'session' }, /^seedScope: needs chance/);
      bad({ on: 'response', literals: true, send: 'x' }, /^literals: cannot be combined with send/);
      bad({ on: 'response', mutate: [], drop: true }, /^mutate: cannot be combined with drop$/);
      bad({ on: 'continuation', literals: true }, /^literals: not meaningful for on: continuation/);
      bad({ on: 'response', descripton: 'x' }, /^descripton: unknown field; did you mean "description"\?$/);
      // Accepted: every op, a function.
      server.script.add({
        on: 'response',
        mutate: [
          { set: 'A', value: [1, null, 'x', { atom: 'y' }, { literal: 'z' }, { quoted: 'w' }] },
          { add: 'EXISTS', value: -1 },
          { drop: 'B', at: [0, 1] },
          { order: ['C'] },
          { literal: 'D' },
          { quoted: 'E' },
          { unescaped: 'F' },
          { unquote: 'G' },
          { suffix: 'H', text: '\r\n' },
          { replace: 'a(b)', with: '$1' },
        ],
      });
      server.script.add({ on: 'response', mutate: () => undefined });
    } finally {
      await server.stop();
    }
  })();
});

test('REST: rules with the new fields go in and show in GET /v1/script/rules; a bad one is 400 INVALID naming the field', async () => {
  const rest = await startRest({ storage: { INBOX: { messages: [MSG] } } });
  try {
    const rule = { on: 'response', untagged: 'OK', match: 'UIDVALIDITY', description: 'zero', mutate: [{ set: 'UIDVALIDITY', value: 0 }] };
    const added = await request(rest.restPort, 'POST', '/v1/script/rules', { json: rule });
    assert.equal(added.status, 201, added.text);
    const listed = await request(rest.restPort, 'GET', '/v1/script/rules');
    assert.deepEqual(listed.json[0].rule, rule);
    const c = await rawSession(rest.imapPort);
    assert.ok((await c.command('SELECT INBOX')).includes('* OK [UIDVALIDITY 0] UIDs valid'));
    c.close();
    const bad = await request(rest.restPort, 'POST', '/v1/script/rules', { json: { on: 'response', mutate: [{ set: 'UID' }] } });
    assert.equal(bad.status, 400);
    assert.equal(bad.json.error.code, 'INVALID');
    assert.match(bad.json.error.message, /mutate\[0\]\.value: required for set/);
    const scope = await request(rest.restPort, 'POST', '/v1/script/rules', { json: { on: 'command', chance: 0.5, seedScope: 'everywhere' } });
    assert.equal(scope.status, 400);
    assert.match(scope.json.error.message, /seedScope/);
  } finally {
    await rest.server.stop();
  }
});

test('the script option and a JSON file carry the new fields', async () => {
  const { writeFileSync, mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const dir = mkdtempSync(join(tmpdir(), 'rookery-rules-'));
  const file = join(dir, 'rules.json');
  writeFileSync(file, JSON.stringify([{ on: 'response', untagged: 'OK', match: 'UIDNEXT', description: 'from a file', mutate: [{ drop: 'text' }] }]));
  for (const script of [[{ on: 'response', untagged: 'EXISTS', mutate: [{ set: 'EXISTS', value: 5 }] }], file] as const) {
    const { server, port } = await startServer({ storage: { INBOX: { messages: [MSG] } }, script: script as never });
    try {
      const c = await rawSession(port);
      const select = await c.command('SELECT INBOX');
      if (typeof script === 'string') {
        assert.ok(select.includes('* OK [UIDNEXT 2]'), select.join('\n'));
        assert.equal(server.script.rules[0]!.rule.description, 'from a file');
      } else {
        assert.ok(select.includes('* 5 EXISTS'));
      }
      c.close();
    } finally {
      await server.stop();
    }
  }
  rmSync(dir, { recursive: true });
  assert.throws(() => createServer({ port: 0, script: [{ on: 'response', mutate: [{ set: 'UID' }] }] as never }), /script: \[0\]\.mutate\[0\]\.value: required for set/);
});

test('docs/script-rules.md: every one-line example rule is accepted by a server with every plugin', async () => {
  const { readFileSync } = await import('node:fs');
  const { defects } = await import('../../src/index.js');
  const page = readFileSync(new URL('../../../docs/script-rules.md', import.meta.url), 'utf8');
  const lines = page.split('\n').filter((l) => l.startsWith('server.script.add(') && l.trimEnd().match(/\);( *\/\/.*)?$/));
  assert.ok(lines.length >= 30, `${lines.length} examples`);
  const { server } = await startServer({ plugins: 'all' });
  try {
    for (const line of lines) {
      const run = new Function('server', 'defects', line) as (s: unknown, d: unknown) => void;
      assert.doesNotThrow(() => run(server, defects), line);
    }
    // The page names every event and every rule field.
    const { SCRIPT_EVENTS } = await import('../../src/script/rule.js');
    const { RULE_FIELDS } = await import('../../src/script/validate.js');
    for (const on of SCRIPT_EVENTS) assert.ok(page.includes(`| \`${on}\` |`), `event ${on}`);
    for (const field of RULE_FIELDS) assert.ok(page.includes(`\`${field}\``), `field ${field}`);
  } finally {
    await server.stop();
  }
});

test('description and seedScope are fields of smtp rules too; the IMAP-only fields are refused there', async () => {
  const { server } = await startServer();
  try {
    server.script.add({ on: 'smtp', command: 'RCPT', chance: 0.5, seedScope: 'session', description: 'flaky relay', send: '451 4.3.0 Try again later' });
    assert.throws(() => server.script.add({ on: 'smtp', command: 'DATA', defer: 'tagged' } as never), /defer: not meaningful for on: smtp/);
    assert.throws(() => server.script.add({ on: 'smtp', command: 'DATA', mutate: [] } as never), /mutate: not meaningful for on: smtp/);
  } finally {
    await server.stop();
  }
});

test('defer holds at most maxOutputBuffer bytes: past it, what is held goes out at once, in order', async () => {
  const body = 'x'.repeat(700);
  const { server, port } = await startServer({ maxOutputBuffer: 1000, storage: { INBOX: { messages: [mail('One', body), mail('Two', body), mail('Three', body)] } } });
  try {
    server.script.add({ on: 'command', command: 'FETCH', untagged: 'FETCH', defer: 'next' });
    assert.throws(() => server.script.add({ on: 'command', command: 'FETCH', untagged: 'FETCH' }), (e: Error) => /^untagged: on a command rule it picks/.test(e.message));
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    c.write('F1 FETCH 1:3 (BODY.PEEK[TEXT])\r\n');
    const first = await c.line();
    const second = await c.line();
    assert.match(first, /^\* 1 FETCH \(BODY\[TEXT\] \{702\}/);
    assert.match(second, /^\* 2 FETCH \(BODY\[TEXT\] \{702\}/);
    assert.equal(await c.line(), 'F1 OK Fetch completed');
    c.write('N1 NOOP\r\n');
    assert.match(await c.line(), /^\* 3 FETCH \(BODY\[TEXT\] \{702\}/);
    assert.equal(await c.line(), 'N1 OK NOOP completed');
    c.close();
  } finally {
    await server.stop();
  }
});

test('imapflow: APPEND waits for a delayed, reworded literal go-ahead and completes; IDLE takes a reworded +', { timeout: 20000 }, async () => {
  const { ImapFlow } = await import('imapflow');
  const { server, port } = await startServer({ plugins: ['IDLE'] });
  try {
    const fired = collect(server, 'script');
    server.script.add([
      { on: 'continuation', match: '^\\+ OK', delay: 300, send: '+ Ready for literal data\r\n' },
      { on: 'continuation', command: 'IDLE', mutate: [{ set: 'text', value: 'IDLE accepted, awaiting DONE command.' }] },
    ]);
    const client = new ImapFlow({ host: '127.0.0.1', port, secure: false, auth: { user: 'testuser', pass: 'testpass' }, logger: false, disableAutoIdle: true });
    client.on('error', () => undefined);
    await client.connect();
    const t0 = Date.now();
    const appended = await client.append('INBOX', mail('Appended'));
    assert.ok(Date.now() - t0 >= 250);
    assert.ok(appended);
    assert.equal(server.control.listMessages('INBOX').length, 1);
    await client.mailboxOpen('INBOX');
    const idle = client.idle();
    await server.waitFor('session', (e) => e.type === 'waiting');
    server.control.addMessage('INBOX', { raw: mail('During IDLE') });
    await new Promise<void>((resolve) => client.once('exists', () => resolve()));
    await client.logout();
    await idle.catch(() => undefined);
    assert.ok(fired.some((e) => e.event === 'continuation' && e.command === 'IDLE'));
    assert.ok(fired.some((e) => e.event === 'continuation' && e.command === 'APPEND'));
  } finally {
    await server.stop();
  }
});

test('recipe, reconnect on BYE: imapflow sees the close right after login, and a reconnect logs in', { timeout: 20000 }, async () => {
  const { ImapFlow } = await import('imapflow');
  const { server, port } = await startServer();
  try {
    server.script.add({ on: 'response', match: '^\\S+ OK .*Logged in', times: 1, after: '* BYE Server shutting down\r\n', close: true });
    const connect = (): InstanceType<typeof ImapFlow> => {
      const client = new ImapFlow({ host: '127.0.0.1', port, secure: false, auth: { user: 'testuser', pass: 'testpass' }, logger: false, disableAutoIdle: true });
      client.on('error', () => undefined);
      return client;
    };
    const first = connect();
    const closed = new Promise<void>((resolve) => first.once('close', () => resolve()));
    await first.connect().catch(() => undefined);
    await closed;
    assert.equal(first.usable, false);
    const second = connect();
    await second.connect();
    assert.ok(second.authenticated);
    const login = await server.waitFor('session', (e) => e.type === 'login' && e.session.session === 2, { since: 0, timeout: 2000 });
    assert.equal(login.data.session.user, 'testuser');
    await second.logout();
  } finally {
    await server.stop();
  }
});
