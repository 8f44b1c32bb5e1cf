/**
 * The defects library (issue 14): each defect's bytes over a real socket,
 * from the `defects` option (what `--defect` sets), and what real clients
 * make of some of them (imapflow, Python imaplib).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { ImapFlow } from 'imapflow';
import { createServer, defectNames, defects, type ServerOptions } from '../../src/index.js';
import { rawSession, startServer } from '../helpers/server.js';
import type { RawClient } from '../helpers/raw-client.js';

const ONE = 'From: Alice <alice@example.com>\r\nSubject: Hello world\r\nMessage-ID: <one@example.com>\r\n\r\nHello\r\n';
const QUOTES = 'From: Alice <alice@example.com>\r\nSubject: Say "hi"\r\n\r\nHi\r\n';
const STORAGE: ServerOptions['storage'] = { INBOX: { messages: [ONE, QUOTES] } };

/** Every byte up to and including the tagged line of `tag`. */
async function through(c: RawClient, tag: string): Promise<string> {
  return (await c.until(tag)).join('\r\n') + '\r\n';
}

async function withDefect(name: string, fn: (c: RawClient, port: number, server: Awaited<ReturnType<typeof startServer>>['server']) => Promise<void>): Promise<void> {
  const { server, port } = await startServer({ storage: STORAGE, defects: [name] });
  try {
    const c = await rawSession(port);
    try {
      await fn(c, port, server);
    } finally {
      c.close();
    }
  } finally {
    await server.stop();
  }
}

test('the library: every defect has a title, a public source and rules that validate; reads are copies', async () => {
  const names = defectNames();
  for (const expected of [
    'bodystructure-negative-lines',
    'envelope-unquoted-strings',
    'envelope-unescaped-quotes',
    'fetch-after-tagged',
    'blank-line-after-literal',
    'leading-nul-bytes',
    'uidvalidity-zero',
    'missing-resp-text',
    'uid-after-literal',
    'exists-backwards',
    'pop3-no-dot-stuffing',
    'pop3-lf-size',
    'pop3-uidl-reused',
  ]) {
    assert.ok(names.includes(expected), expected);
  }
  const { server } = await startServer();
  try {
    for (const name of names) {
      const d = defects[name]!;
      assert.ok(d.title.length > 10 && /#\d+/.test(d.source), name);
      const handles = server.script.add([...d.rules]);
      assert.ok(handles.every((h) => h.rule.description === `defect: ${name}`));
    }
  } finally {
    await server.stop();
  }
  const copy = defects['uidvalidity-zero']!;
  (copy.rules as unknown[]).length = 0;
  assert.ok(defects['uidvalidity-zero']!.rules.length > 0);
  assert.equal(defects['no-such-defect'], undefined);
  assert.deepEqual(Object.keys(defects), names);
});

test('the defects option: an unknown name is an option error with the likely one', () => {
  assert.throws(() => createServer({ port: 0, defects: ['uidvalidity-zer0'] }), /defects\[0\]: no defect "uidvalidity-zer0"; did you mean "uidvalidity-zero"\?/);
  assert.throws(() => createServer({ port: 0, defects: 'uidvalidity-zero' as never }), /defects/);
});

test('bodystructure-negative-lines: a text part says -1 lines', () =>
  withDefect('bodystructure-negative-lines', async (c) => {
    await c.command('SELECT INBOX');
    c.write('F1 FETCH 1 (BODYSTRUCTURE)\r\n');
    // body-type-text = media-text SP body-fields SP body-fld-lines: the number after the size.
    assert.match(await through(c, 'F1'), /^\* 1 FETCH \(BODYSTRUCTURE \("TEXT" "PLAIN" \([^)]*\) NIL NIL "7BIT" 7 -1[ )]/i);
  }));

test('envelope-unquoted-strings: the subject goes out bare', () =>
  withDefect('envelope-unquoted-strings', async (c) => {
    await c.command('SELECT INBOX');
    c.write('F1 FETCH 1 (ENVELOPE)\r\n');
    assert.match(await through(c, 'F1'), /^\* 1 FETCH \(ENVELOPE \(NIL Hello world \(\("Alice" NIL "alice" "example\.com"\)\)/);
  }));

test('envelope-unescaped-quotes: quotes inside a quoted string are not escaped', () =>
  withDefect('envelope-unescaped-quotes', async (c) => {
    await c.command('SELECT INBOX');
    c.write('F1 FETCH 2 (ENVELOPE)\r\n');
    assert.match(await through(c, 'F1'), /^\* 2 FETCH \(ENVELOPE \(NIL "Say "hi"" \(\("Alice" NIL "alice" "example\.com"\)\)/);
  }));

test('fetch-after-tagged: the FETCH data follows the tagged OK', () =>
  withDefect('fetch-after-tagged', async (c) => {
    await c.command('SELECT INBOX');
    c.write('F1 UID FETCH 1:2 (FLAGS)\r\n');
    assert.equal(await c.line(), 'F1 OK Fetch completed');
    assert.equal(await c.line(), '* 1 FETCH (UID 1 FLAGS ())');
    assert.equal(await c.line(), '* 2 FETCH (UID 2 FLAGS ())');
  }));

test('blank-line-after-literal: an empty line right after the literal', () =>
  withDefect('blank-line-after-literal', async (c) => {
    await c.command('SELECT INBOX');
    c.write('F1 FETCH 1 (BODY.PEEK[])\r\n');
    assert.equal(await c.line(), `* 1 FETCH (BODY[] {${ONE.length}}\r\n${ONE}`);
    assert.equal(await c.line(), ')');
    assert.equal(await c.line(), 'F1 OK Fetch completed');
  }));

test('leading-nul-bytes: NULs before the greeting and before tagged responses', async () => {
  const { server, port } = await startServer({ defects: ['leading-nul-bytes'] });
  try {
    const { RawClient } = await import('../helpers/raw-client.js');
    const c = await RawClient.connect(port);
    assert.match(await c.line(), /^\0\0\* OK /);
    c.write('N1 NOOP\r\n');
    assert.equal(await c.line(), '\0\0N1 OK NOOP completed');
    c.close();
  } finally {
    await server.stop();
  }
});

test('uidvalidity-zero: SELECT and STATUS say UIDVALIDITY 0', () =>
  withDefect('uidvalidity-zero', async (c) => {
    assert.ok((await c.command('SELECT INBOX')).includes('* OK [UIDVALIDITY 0] UIDs valid'));
    c.write('S1 STATUS INBOX (UIDVALIDITY MESSAGES)\r\n');
    assert.equal(await through(c, 'S1'), '* STATUS "INBOX" (UIDVALIDITY 0 MESSAGES 2)\r\nS1 OK Status completed\r\n');
  }));

test('missing-resp-text: tagged responses and coded untagged OKs without text', () =>
  withDefect('missing-resp-text', async (c) => {
    const select = await c.command('SELECT INBOX');
    assert.ok(select.includes('* OK [UIDNEXT 3]'), select.join('\n'));
    assert.match(select[select.length - 1]!, /^T\d+ OK \[READ-WRITE\]$/);
    c.write('N1 NOOP\r\n');
    assert.equal(await c.line(), 'N1 OK');
  }));

test('uid-after-literal: UID and FLAGS after the body literal', () =>
  withDefect('uid-after-literal', async (c) => {
    await c.command('SELECT INBOX');
    c.write('F1 UID FETCH 1 (FLAGS BODY.PEEK[])\r\n');
    assert.equal(await through(c, 'F1'), `* 1 FETCH (BODY[] {${ONE.length}}\r\n${ONE} UID 1 FLAGS ())\r\nF1 OK Fetch completed\r\n`);
  }));

test('exists-backwards: after SELECT said 2, a new message is announced as 1 EXISTS', () =>
  withDefect('exists-backwards', async (c, _port, server) => {
    assert.ok((await c.command('SELECT INBOX')).includes('* 2 EXISTS'));
    server.control.addMessage('INBOX', { raw: ONE });
    const noop = await c.command('NOOP');
    assert.ok(noop.includes('* 1 EXISTS'), noop.join('\n'));
  }));

function flow(port: number): ImapFlow {
  const client = new ImapFlow({ host: '127.0.0.1', port, secure: false, auth: { user: 'testuser', pass: 'testpass' }, logger: false, disableAutoIdle: true });
  client.on('error', () => undefined);
  return client;
}

test('imapflow: FETCH after the tagged OK leaves fetchAll empty; a blank line after a literal loses the message; UIDVALIDITY 0 is taken as 0', { timeout: 20000 }, async () => {
  for (const [defect, check] of [
    [
      'fetch-after-tagged',
      async (client: ImapFlow) => {
        const got = await client.fetchAll('1:*', { uid: true });
        assert.deepEqual(got, []);
      },
    ],
    [
      'blank-line-after-literal',
      async (client: ImapFlow) => {
        assert.equal(await client.fetchOne('1', { source: true }), false);
      },
    ],
    [
      'uidvalidity-zero',
      async (client: ImapFlow) => {
        const box = client.mailbox;
        assert.ok(box && box.uidValidity === 0n);
      },
    ],
  ] as const) {
    const { server, port } = await startServer({ storage: STORAGE, defects: [defect] });
    try {
      const client = flow(port);
      await client.connect();
      await client.mailboxOpen('INBOX');
      await check(client);
      await client.logout();
    } finally {
      await server.stop();
    }
  }
});

test('imapflow: a mutated literal is what the client reads', { timeout: 20000 }, async () => {
  const { server, port } = await startServer({ storage: STORAGE });
  try {
    const replaced = 'Subject: replaced\r\n\r\nnew body\r\n';
    server.script.add({ on: 'response', untagged: 'FETCH', mutate: [{ set: 'BODY[]', value: { literal: replaced } }] });
    const client = flow(port);
    await client.connect();
    await client.mailboxOpen('INBOX');
    const msg = await client.fetchOne('1', { source: true });
    assert.ok(msg);
    assert.equal(msg.source!.toString(), replaced);
    await client.logout();
  } finally {
    await server.stop();
  }
});

const PYTHON = process.env.PYTHON ?? 'python3';
const python = spawnSync(PYTHON, ['--version']).status === 0;

const IMAPLIB = `
import imaplib, sys
c = imaplib.IMAP4('127.0.0.1', int(sys.argv[1]))
try:
    c.login('testuser', 'testpass')
    c.select('INBOX')
    typ, data = c.fetch('1', '(BODY.PEEK[])')
    print('FETCHED', typ)
except Exception as e:
    print('ERROR', type(e).__name__, e)
`;

async function imaplib(port: number): Promise<string> {
  const child = spawn(PYTHON, ['-c', IMAPLIB, String(port)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
  const killer = setTimeout(() => child.kill('SIGKILL'), 15000);
  await new Promise((resolve) => child.on('close', resolve));
  clearTimeout(killer);
  return out;
}

test('Python imaplib: aborts on the blank line after a literal (cpython#88574) and on a tagged OK without text', { skip: python ? false : 'no python3', timeout: 30000 }, async () => {
  for (const [defect, expected] of [
    ['blank-line-after-literal', /ERROR abort .*unexpected response: b'\)'/],
    ['missing-resp-text', /abort.*unexpected response: b'\w+ OK'/],
  ] as const) {
    const { server, port } = await startServer({ storage: STORAGE, defects: [defect] });
    try {
      assert.match(await imaplib(port), expected);
    } finally {
      await server.stop();
    }
  }
  // Without the defect the same script reads the message.
  const { server, port } = await startServer({ storage: STORAGE });
  try {
    assert.match(await imaplib(port), /^FETCHED OK$/m);
  } finally {
    await server.stop();
  }
});

test('rookery --defect NAME (repeatable) turns defects on; an unknown name exits with the likely one', { timeout: 20000 }, async () => {
  const { startCli, exited, CLI } = await import('../helpers/cli.js');
  const { child, port } = await startCli(['--port', '0', '--defect', 'uidvalidity-zero', '--defect', 'missing-resp-text']);
  try {
    const c = await rawSession(port);
    const select = await c.command('SELECT INBOX');
    assert.ok(select.includes('* OK [UIDVALIDITY 0]'), select.join('\n'));
    assert.match(select[select.length - 1]!, /^T\d+ OK \[READ-WRITE\]$/);
    c.close();
  } finally {
    child.kill();
    await exited(child);
  }
  const bad = spawnSync(process.execPath, [CLI, '--port', '0', '--defect', 'uid-after-literl'], { encoding: 'utf8', timeout: 10000 });
  assert.notEqual(bad.status, 0);
  assert.match(bad.stderr, /defects\[0\]: no defect "uid-after-literl"; did you mean "uid-after-literal"\?/);
});

/** node-imap: the envelope subject and UID of message 1 as it parses them. */
async function nodeImapFetch(port: number): Promise<{ subject: string | undefined; uid: number; body: string }> {
  const { default: Imap } = await import('imap');
  const c = new Imap({ user: 'testuser', password: 'testpass', host: '127.0.0.1', port, tls: false });
  c.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    c.once('ready', () => resolve());
    c.once('error', reject);
    c.connect();
  });
  await new Promise<void>((resolve, reject) => c.openBox('INBOX', true, (e) => (e ? reject(e) : resolve())));
  const out = { subject: undefined as string | undefined, uid: 0, body: '' };
  const f = c.seq.fetch('1', { bodies: [''], envelope: true });
  const bodies: Promise<void>[] = [];
  f.on('message', (m) => {
    m.on('attributes', (a) => {
      out.subject = a.envelope?.subject ?? undefined;
      out.uid = a.uid;
    });
    m.on('body', (stream) => {
      bodies.push(
        new Promise((resolve) => {
          stream.on('data', (d: Buffer) => (out.body += d.toString('latin1')));
          stream.on('end', () => resolve());
        }),
      );
    });
  });
  await new Promise<void>((resolve) => f.once('end', () => resolve()));
  await Promise.all(bodies);
  c.end();
  return out;
}

test('node-imap: literals everywhere and UID after the literal parse fine; an unquoted subject is cut at the first space', { timeout: 20000 }, async () => {
  for (const [rules, subject] of [
    [[{ on: 'command', command: 'FETCH', literals: true }], 'Hello world'],
    [defects['uid-after-literal']!.rules, 'Hello world'],
    [defects['envelope-unquoted-strings']!.rules, 'Hello'],
  ] as const) {
    const { server, port } = await startServer({ storage: STORAGE });
    try {
      server.script.add([...rules]);
      const got = await nodeImapFetch(port);
      assert.equal(got.subject, subject);
      assert.equal(got.uid, 1);
      assert.equal(got.body, ONE);
    } finally {
      await server.stop();
    }
  }
});
