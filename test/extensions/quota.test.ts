/**
 * QUOTA (RFC 9208) over real sockets: the RFC's examples on the one root
 * `""`, OVERQUOTA for APPEND, COPY, CREATE and RENAME, MOVE inside the root,
 * STATUS DELETED-STORAGE, usage that follows every kind of change (checked against
 * a recount), limits from pluginOptions and storage, the REST routes, and
 * the clients imapflow (getQuota) and Python imaplib (getquotaroot,
 * getquota, setquota).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { ImapFlow } from 'imapflow';
import { createServer, type Server } from '../../src/index.js';
import type { ServerOptions } from '../../src/options/types.js';
import { startCli } from '../helpers/cli.js';
import { mail, rawSession, startServer } from '../helpers/server.js';
import type { RawClient } from '../helpers/raw-client.js';
import { request, startRest } from '../rest/helpers.js';

const PYTHON = process.env.PYTHON ?? 'python3';
const pythonSkip = spawnSync(PYTHON, ['--version']).status === 0 || process.env.CI ? false : `${PYTHON} not installed`;

/** A message of exactly `octets` octets. */
function sized(octets: number, subject = 'sized'): string {
  const head = `Subject: ${subject}\r\n\r\n`;
  return head + 'x'.repeat(octets - head.length - 2) + '\r\n';
}

/** Usage counted from scratch, to compare with the incremental one. */
function recount(server: Server): { STORAGE: number; MESSAGE: number; MAILBOX: number } {
  let octets = 0;
  let messages = 0;
  const all = server.store.list();
  for (const m of all) for (const msg of m.messages) (octets += msg.size), messages++;
  return { STORAGE: Math.ceil(octets / 1024), MESSAGE: messages, MAILBOX: all.length };
}

async function append(c: RawClient, box: string, raw: string): Promise<string> {
  c.write(`A APPEND ${box} {${Buffer.byteLength(raw)}}\r\n`);
  const cont = await c.line();
  if (!cont.startsWith('+')) return cont;
  c.write(`${raw}\r\n`);
  return c.line();
}

async function withServer(options: ServerOptions, run: (server: Server, port: number) => Promise<void>): Promise<void> {
  const { server, port } = await startServer(options);
  try {
    await run(server, port);
  } finally {
    await server.stop();
  }
}

describe('QUOTA over IMAP', () => {
  // 10 KiB in INBOX: the usage of RFC 9208's examples.
  const options: ServerOptions = {
    plugins: ['QUOTA', 'MOVE', 'UIDPLUS'],
    pluginOptions: { QUOTA: { STORAGE: 512 } },
    storage: { INBOX: { messages: [sized(6 * 1024, 'one'), sized(4 * 1024, 'two')] } },
  };

  test('capabilities: QUOTA, one QUOTA=RES-* per resource, QUOTASET', () =>
    withServer(options, async (_server, port) => {
      const c = await rawSession(port);
      const [caps] = await c.command('CAPABILITY');
      assert.match(caps!, / QUOTA QUOTA=RES-STORAGE QUOTA=RES-MESSAGE QUOTA=RES-MAILBOX QUOTASET( |$)/);
      c.close();
    }));

  test('RFC 9208 §4.1.2 / §4.1.1: GETQUOTAROOT INBOX and GETQUOTA ""', () =>
    withServer(options, async (_server, port) => {
      const c = await rawSession(port);
      assert.deepEqual(await c.command('GETQUOTAROOT INBOX'), ['* QUOTAROOT "INBOX" ""', '* QUOTA "" (STORAGE 10 512)', 'T2 OK Getquotaroot completed']);
      assert.deepEqual(await c.command('GETQUOTA ""'), ['* QUOTA "" (STORAGE 10 512)', 'T3 OK Getquota completed']);
      // Another root name (the RFC's "!partition/sda4") does not exist here.
      assert.match((await c.command('GETQUOTA "!partition/sda4"'))[0]!, /^T4 NO \[NONEXISTENT\] No such quota root: "!partition\/sda4"/);
      // A mailbox that does not exist (the RFC's comp.mail.mime example names one that does).
      assert.match((await c.command('GETQUOTAROOT comp.mail.mime'))[0]!, /^T5 NO \[NONEXISTENT\] /);
      await c.command('CREATE comp.mail.mime');
      assert.deepEqual(await c.command('GETQUOTAROOT comp.mail.mime'), ['* QUOTAROOT "comp.mail.mime" ""', '* QUOTA "" (STORAGE 10 512)', 'T7 OK Getquotaroot completed']);
      c.close();
    }));

  test('RFC 9208 §4.1.3: SETQUOTA replaces all limits and answers the new QUOTA', () =>
    withServer(options, async (_server, port) => {
      const c = await rawSession(port);
      assert.deepEqual(await c.command('SETQUOTA "" (STORAGE 510)'), ['* QUOTA "" (STORAGE 10 510)', 'T2 OK Setquota completed']);
      // A resource left out loses its limit.
      assert.deepEqual(await c.command('SETQUOTA "" (MESSAGE 1000)'), ['* QUOTA "" (MESSAGE 2 1000)', 'T3 OK Setquota completed']);
      assert.deepEqual(await c.command('GETQUOTA ""'), ['* QUOTA "" (MESSAGE 2 1000)', 'T4 OK Getquota completed']);
      assert.deepEqual(await c.command('SETQUOTA "" (mailbox 3 STORAGE 100 MESSAGE 5)'), ['* QUOTA "" (STORAGE 10 100 MESSAGE 2 5 MAILBOX 1 3)', 'T5 OK Setquota completed']);
      // Resources this server does not have, a root that does not exist, bad syntax.
      assert.match((await c.command('SETQUOTA "" (ANNOTATION-STORAGE 10)'))[0]!, /^T6 NO \[CANNOT\] Unsupported quota resource ANNOTATION-STORAGE/);
      assert.match((await c.command('SETQUOTA "#user/alice" (STORAGE 10)'))[0]!, /^T7 NO \[NONEXISTENT\] /);
      assert.match((await c.command('SETQUOTA "" (STORAGE)'))[0]!, /^T8 BAD /);
      assert.match((await c.command('SETQUOTA "" (STORAGE -1)'))[0]!, /^T9 BAD /);
      assert.match((await c.command('SETQUOTA "" (STORAGE 1 STORAGE 2)'))[0]!, /^T10 BAD STORAGE given twice/);
      assert.match((await c.command('SETQUOTA ""'))[0]!, /^T11 BAD /);
      // Nothing of the refused commands was applied.
      assert.deepEqual(await c.command('GETQUOTA ""'), ['* QUOTA "" (STORAGE 10 100 MESSAGE 2 5 MAILBOX 1 3)', 'T12 OK Getquota completed']);
      // An empty list removes every limit: the root has nothing to report.
      assert.deepEqual(await c.command('SETQUOTA "" ()'), ['T13 OK Setquota completed']);
      assert.deepEqual(await c.command('GETQUOTAROOT INBOX'), ['* QUOTAROOT "INBOX"', 'T14 OK Getquotaroot completed']);
      assert.match((await c.command('GETQUOTA ""'))[0]!, /^T15 NO \[NONEXISTENT\] Quota root "" has no limits/);
      c.close();
    }));

  test('the commands need a login', () =>
    withServer(options, async (_server, port) => {
      const c = await rawSession(port, false);
      assert.match((await c.command('GETQUOTA ""'))[0]!, /^T1 BAD /);
      c.close();
    }));

  test('APPEND over STORAGE or MESSAGE is NO [OVERQUOTA] (RFC 9208 §4.3), and nothing is added', () =>
    withServer({ ...options, pluginOptions: { QUOTA: { STORAGE: 12, MESSAGE: 3 } } }, async (server, port) => {
      const c = await rawSession(port);
      // 10 KiB used of 12: 3 KiB more is over, 1 KiB more fits.
      assert.match(await append(c, 'INBOX', sized(3 * 1024)), /^A NO \[OVERQUOTA\] Quota exceeded: STORAGE would be 13 KiB/);
      assert.match(await append(c, 'INBOX', sized(1024)), /^A OK \[APPENDUID \d+ 3\]/);
      // 3 messages of 3: the fourth is over MESSAGE.
      assert.match(await append(c, 'INBOX', sized(100)), /^A NO \[OVERQUOTA\] Quota exceeded: MESSAGE would be 4, the limit is 3/);
      assert.equal(server.store.get('INBOX')!.messages.length, 3);
      assert.deepEqual(await c.command('GETQUOTA ""'), ['* QUOTA "" (STORAGE 11 12 MESSAGE 3 3)', 'T2 OK Getquota completed']);
      c.close();
    }));

  test('COPY over a limit is NO [OVERQUOTA]; MOVE inside the root changes no usage and is allowed', () =>
    withServer({ ...options, pluginOptions: { QUOTA: { MESSAGE: 2 } }, storage: { ...options.storage, '': { folders: { MEETING: {} } } } }, async (server, port) => {
      const c = await rawSession(port);
      await c.command('SELECT INBOX');
      assert.match((await c.command('COPY 1:2 MEETING'))[0]!, /^T3 NO \[OVERQUOTA\] Quota exceeded: MESSAGE would be 4, the limit is 2/);
      assert.equal(server.store.get('MEETING')!.messages.length, 0);
      const moved = await c.command('MOVE 1 MEETING');
      assert.equal(moved.at(-1), 'T4 OK Move completed');
      assert.deepEqual(await c.command('GETQUOTA ""'), ['* QUOTA "" (MESSAGE 2 2)', 'T5 OK Getquota completed']);
      // With room again, COPY works.
      await c.command('SETQUOTA "" (MESSAGE 3 STORAGE 100)');
      assert.match((await c.command('COPY 1 MEETING'))[0]!, /^T7 OK \[COPYUID /);
      assert.deepEqual(await c.command('GETQUOTA ""'), ['* QUOTA "" (STORAGE 14 100 MESSAGE 3 3)', 'T8 OK Getquota completed']);
      c.close();
    }));

  test('CREATE past MAILBOX is NO [OVERQUOTA], counting the missing superior levels it would create', () =>
    withServer({ ...options, pluginOptions: { QUOTA: { MAILBOX: 3 } } }, async (server, port) => {
      const c = await rawSession(port);
      assert.equal((await c.command('CREATE a'))[0], 'T2 OK Create completed');
      // a/b/c would add a/b and a/b/c: 4 of 3.
      assert.match((await c.command('CREATE a/b/c'))[0]!, /^T3 NO \[OVERQUOTA\] Quota exceeded: MAILBOX would be 4, the limit is 3/);
      assert.equal(server.store.has('a/b'), false);
      assert.equal((await c.command('CREATE a/b'))[0], 'T4 OK Create completed');
      assert.match((await c.command('CREATE z'))[0]!, /^T5 NO \[OVERQUOTA\] /);
      // A DELETE frees one.
      await c.command('DELETE a/b');
      assert.equal((await c.command('CREATE z'))[0], 'T7 OK Create completed');
      c.close();
    }));

  test('RENAME past MAILBOX is NO [OVERQUOTA]: missing superior levels of the new name, and INBOX\'s new mailbox', () =>
    withServer({ ...options, pluginOptions: { QUOTA: { MAILBOX: 3 } }, storage: { ...options.storage, '': { folders: { x: {} } } } }, async (server, port) => {
      const c = await rawSession(port);
      // INBOX and x: 2 of 3. p/q/r would add p and p/q.
      assert.match((await c.command('RENAME x p/q/r'))[0]!, /^T2 NO \[OVERQUOTA\] Quota exceeded: MAILBOX would be 4, the limit is 3/);
      assert.ok(server.store.has('x'));
      assert.equal((await c.command('RENAME x p/q'))[0], 'T3 OK Rename completed');
      // Renaming INBOX keeps INBOX and creates the new mailbox.
      assert.match((await c.command('RENAME INBOX Old'))[0]!, /^T4 NO \[OVERQUOTA\] Quota exceeded: MAILBOX would be 4/);
      assert.equal(server.store.get('INBOX')!.messages.length, 2);
      await c.command('SETQUOTA "" (MAILBOX 4 MESSAGE 2)');
      assert.equal((await c.command('RENAME INBOX Old'))[0], 'T6 OK Rename completed');
      // The messages moved inside the root: MESSAGE is unchanged.
      assert.deepEqual(await c.command('GETQUOTA ""'), ['* QUOTA "" (MESSAGE 2 2 MAILBOX 4 4)', 'T7 OK Getquota completed']);
      c.close();
    }));

  test('STATUS DELETED and DELETED-STORAGE (KiB held by \\Deleted messages)', () =>
    withServer(options, async (_server, port) => {
      const c = await rawSession(port);
      assert.deepEqual(await c.command('STATUS INBOX (DELETED DELETED-STORAGE)'), ['* STATUS "INBOX" (DELETED 0 DELETED-STORAGE 0)', 'T2 OK Status completed']);
      await c.command('SELECT INBOX');
      await c.command('STORE 1 +FLAGS.SILENT (\\Deleted)');
      assert.deepEqual(await c.command('STATUS INBOX (MESSAGES DELETED DELETED-STORAGE)'), [
        '* STATUS "INBOX" (MESSAGES 2 DELETED 1 DELETED-STORAGE 6)',
        'T5 OK Status completed',
      ]);
      // EXPUNGE frees what DELETED-STORAGE announced.
      await c.command('EXPUNGE');
      assert.deepEqual(await c.command('GETQUOTA ""'), ['* QUOTA "" (STORAGE 4 512)', 'T7 OK Getquota completed']);
      c.close();
    }));

  test('usage follows every kind of change (IMAP, control API, rename, delete, expunge, reset) without rescanning', () =>
    withServer({ ...options, pluginOptions: { QUOTA: { STORAGE: 1000, MESSAGE: 1000, MAILBOX: 100 } }, storage: { ...options.storage, '': { folders: { Box: { messages: [mail('c')] } } } } }, async (server, port) => {
      const quota = server.extension('QUOTA')!;
      const check = (what: string): void => assert.deepEqual(quota.getQuota().usage, recount(server), what);
      check('setup');
      const c = await rawSession(port);
      await c.command('SELECT INBOX');
      await c.command('COPY 1:2 Box');
      check('copy');
      await c.command('MOVE 1 Box');
      check('move');
      await c.command('STORE 1 +FLAGS (\\Deleted)');
      await c.command('EXPUNGE');
      check('expunge');
      await append(c, 'Box', mail('appended'));
      await c.command('CREATE New/Deep');
      check('append and create');
      await c.command('RENAME New Newer');
      check('rename');
      server.control.addMessage('Box', { raw: mail('d') });
      server.control.copyMessages('Box', { uids: [1, 2], target: 'INBOX' });
      server.control.renameMailbox('INBOX', { newPath: 'Old' });
      check('control API and INBOX rename');
      await c.command('LOGOUT');
      server.control.expungeMessages('Box', { uids: [1] });
      server.control.deleteMailbox('Old');
      server.control.resetUidValidity('Box', { uids: 'renumber' });
      check('control expunge, delete, uidvalidity');
      server.control.reset();
      check('reset');
      assert.deepEqual(quota.getQuota().usage, { STORAGE: 11, MESSAGE: 3, MAILBOX: 2 });
      assert.deepEqual(quota.usageOctets(), { storage: server.store.list().reduce((n, m) => n + m.messages.reduce((k, x) => k + x.size, 0), 0), messages: 3, mailboxes: 2 });
    }));
});

describe('QUOTA limits from options and storage', () => {
  test('pluginOptions.QUOTA is checked with typo detection', () => {
    assert.throws(() => createServer({ plugins: ['QUOTA'], pluginOptions: { QUOTA: { STORAGEE: 5 } } }), /pluginOptions\.QUOTA\.STORAGEE: unknown key; did you mean "STORAGE"\?/);
    assert.throws(() => createServer({ plugins: ['QUOTA'], pluginOptions: { QUOTA: { MESSAGE: -1 } } }), /pluginOptions\.QUOTA\.MESSAGE/);
    assert.throws(() => createServer({ pluginOptions: { QUOTA: { MESSAGE: 1 } } }), /QUOTA/);
  });

  test('the storage key quota on storage[""] sets limits, wins over the options; snapshots keep changes, reset restores', () => {
    const server = createServer({ plugins: ['QUOTA'], pluginOptions: { QUOTA: { STORAGE: 1 } }, storage: { '': { quota: { MESSAGE: 7 } } } });
    const quota = server.extension('QUOTA')!;
    assert.deepEqual(quota.getQuota().limits, { MESSAGE: 7 });
    quota.setQuota({ MAILBOX: 4 });
    const snap = server.control.snapshot();
    assert.deepEqual(snap['']!['quota'], { MAILBOX: 4 });
    // A server started from the snapshot has the same limits.
    assert.deepEqual(createServer({ plugins: ['QUOTA'], storage: snap }).extension('QUOTA')!.getQuota().limits, { MAILBOX: 4 });
    server.control.reset();
    assert.deepEqual(quota.getQuota().limits, { MESSAGE: 7 });
    // Without a storage key, reset goes back to the options' limits.
    const plain = createServer({ plugins: ['QUOTA'], pluginOptions: { QUOTA: { STORAGE: 1 } } });
    plain.extension('QUOTA')!.setQuota({});
    assert.deepEqual(plain.extension('QUOTA')!.getQuota().limits, {});
    plain.control.reset();
    assert.deepEqual(plain.extension('QUOTA')!.getQuota().limits, { STORAGE: 1 });
  });

  test('storage values are validated; the key is typo-checked', () => {
    assert.throws(() => createServer({ plugins: ['QUOTA'], storage: { '': { quota: { STORAGE: 'big' } } } }), /storage\[""\]\.quota: STORAGE: expected an integer from 0 \(KiB\), got "big"/);
    assert.throws(() => createServer({ plugins: ['QUOTA'], storage: { '': { quota: { storage: 1 } } } }), /storage: unknown quota resource; did you mean "STORAGE"\?/);
    assert.throws(() => createServer({ plugins: ['QUOTA'], storage: { '': { quotaa: { STORAGE: 1 } } } }), /quotaa: unknown key; did you mean "quota"\?/);
  });

  test('the control API refuses bad limits with INVALID; two servers keep their own usage', () => {
    const a = createServer({ plugins: ['QUOTA'] });
    const b = createServer({ plugins: ['QUOTA'] });
    assert.throws(() => a.extension('QUOTA')!.setQuota({ STORAGE: 1.5 }), (e: Error & { code?: string }) => e.code === 'INVALID');
    assert.throws(() => a.extension('QUOTA')!.setQuota({ FOO: 1 } as never), /FOO: unknown quota resource/);
    a.control.addMessage('INBOX', { raw: mail('x') });
    assert.equal(a.extension('QUOTA')!.getQuota().usage.MESSAGE, 1);
    assert.equal(b.extension('QUOTA')!.getQuota().usage.MESSAGE, 0);
    assert.equal(createServer({}).extension('QUOTA'), undefined);
  });
});

test('the command line: --plugin QUOTA --plugin-option QUOTA.STORAGE=512', async () => {
  const { child, port } = await startCli(['--port', '0', '--plugin', 'QUOTA', '--plugin-option', 'QUOTA.STORAGE=512', '--plugin-option', 'QUOTA.MESSAGE=3']);
  try {
    const c = await rawSession(port);
    assert.deepEqual(await c.command('GETQUOTA ""'), ['* QUOTA "" (STORAGE 0 512 MESSAGE 0 3)', 'T2 OK Getquota completed']);
    c.close();
  } finally {
    child.kill('SIGTERM');
  }
});

describe('QUOTA over REST', () => {
  test('GET/PUT /v1/quota, POST messages with checks: 409 OVERQUOTA, without: delivered; listed in openapi.json', async () => {
    const r = await startRest({ plugins: ['QUOTA'], pluginOptions: { QUOTA: { MESSAGE: 1 } } });
    try {
      const get = await request(r.restPort, 'GET', '/v1/quota');
      assert.equal(get.status, 200);
      assert.deepEqual(get.json, { root: '', limits: { MESSAGE: 1 }, usage: { STORAGE: 0, MESSAGE: 0, MAILBOX: 1 } });
      const raw = sized(2048);
      const add = (checks?: boolean): Promise<{ status: number; json: any }> =>
        request(r.restPort, 'POST', '/v1/mailboxes/INBOX/messages', { json: checks === undefined ? { raw } : { raw, checks } });
      assert.equal((await add(true)).status, 201);
      const refused = await add(true);
      assert.equal(refused.status, 409);
      assert.equal(refused.json.error.code, 'OVERQUOTA');
      assert.match(refused.json.error.message, /MESSAGE would be 2, the limit is 1/);
      // Without checks, a delivery goes through over the limit.
      assert.equal((await add()).status, 201);
      assert.equal((await add(false)).status, 201);
      // PUT replaces all limits.
      const put = await request(r.restPort, 'PUT', '/v1/quota', { json: { STORAGE: 5, MAILBOX: 10 } });
      assert.equal(put.status, 200);
      assert.deepEqual(put.json, { root: '', limits: { STORAGE: 5, MAILBOX: 10 }, usage: { STORAGE: 6, MESSAGE: 3, MAILBOX: 1 } });
      assert.equal((await add(true)).json.error.code, 'OVERQUOTA');
      // Bad bodies: unknown key (with a suggestion), negative, not an integer.
      for (const [body, pattern] of [
        [{ storage: 5 }, /storage.*did you mean "STORAGE"/],
        [{ MESSAGE: -1 }, /MESSAGE/],
        [{ MESSAGE: 1.5 }, /MESSAGE/],
        [{ STORAGE: '5' }, /STORAGE/],
      ] as const) {
        const bad = await request(r.restPort, 'PUT', '/v1/quota', { json: body });
        assert.equal(bad.status, 400, JSON.stringify(body));
        assert.equal(bad.json.error.code, 'INVALID');
        assert.match(bad.json.error.message, pattern);
      }
      const cleared = await request(r.restPort, 'PUT', '/v1/quota', { json: {} });
      assert.deepEqual(cleared.json.limits, {});
      assert.equal((await add(true)).status, 201);
      // The routes are described in the OpenAPI document.
      const doc = (await request(r.restPort, 'GET', '/v1/openapi.json')).json;
      assert.ok(doc.paths['/v1/quota']?.get, 'GET /v1/quota listed');
      assert.ok(doc.paths['/v1/quota']?.put, 'PUT /v1/quota listed');
      // The IMAP side sees the REST changes.
      await request(r.restPort, 'PUT', '/v1/quota', { json: { MESSAGE: 100 } });
      const c = await rawSession(r.imapPort);
      assert.deepEqual(await c.command('GETQUOTA ""'), ['* QUOTA "" (MESSAGE 4 100)', 'T2 OK Getquota completed']);
      c.close();
    } finally {
      await r.server.stop();
    }
  });

  test('without the plugin the routes are 404 NOTFOUND and absent from openapi.json', async () => {
    const r = await startRest({ plugins: ['APPENDLIMIT'] });
    try {
      for (const method of ['GET', 'PUT'] as const) {
        const res = await request(r.restPort, method, '/v1/quota', method === 'PUT' ? { json: { STORAGE: 1 } } : {});
        assert.equal(res.status, 404);
        assert.equal(res.json.error.code, 'NOTFOUND');
      }
      const doc = (await request(r.restPort, 'GET', '/v1/openapi.json')).json;
      assert.equal(doc.paths['/v1/quota'], undefined);
      // And IMAP has no quota commands.
      const c = await rawSession(r.imapPort);
      assert.match((await c.command('GETQUOTAROOT INBOX'))[0]!, /^T2 BAD /);
      c.close();
    } finally {
      await r.server.stop();
    }
  });
});

describe('QUOTA with real clients', () => {
  test('imapflow getQuota(): usage and limits in octets and counts', () =>
    withServer({ plugins: ['QUOTA'], pluginOptions: { QUOTA: { STORAGE: 512, MESSAGE: 50 } }, storage: { INBOX: { messages: [sized(10 * 1024)] } } }, async (_server, port) => {
      const client = new ImapFlow({ host: '127.0.0.1', port, secure: false, auth: { user: 'testuser', pass: 'testpass' }, logger: false });
      client.on('error', () => undefined);
      try {
        await client.connect();
        const quota = (await client.getQuota('INBOX')) as any;
        assert.equal(quota.path, 'INBOX');
        assert.deepEqual(quota.storage, { usage: 10 * 1024, limit: 512 * 1024, status: '2%' });
        assert.deepEqual(quota.message, { usage: 1, limit: 50, status: '2%' });
        // An APPEND over the limit fails with the OVERQUOTA code.
        await client.mailboxOpen('INBOX');
        await assert.rejects(client.append('INBOX', sized(600 * 1024)), (err: any) => {
          assert.equal(err.serverResponseCode, 'OVERQUOTA');
          assert.match(err.responseText, /^Quota exceeded: STORAGE would be 610 KiB/);
          return true;
        });
      } finally {
        await client.logout().catch(() => undefined);
      }
    }));

  test('Python imaplib: getquotaroot, getquota, setquota, and OVERQUOTA on append', { skip: pythonSkip, timeout: 20_000 }, () =>
    withServer({ plugins: ['QUOTA'], pluginOptions: { QUOTA: { STORAGE: 512 } }, storage: { INBOX: { messages: [sized(10 * 1024)] } } }, async (_server, port) => {
      const script = [
        'import imaplib, json, sys',
        'm = imaplib.IMAP4("127.0.0.1", int(sys.argv[1]))',
        'm.login("testuser", "testpass")',
        'out = {}',
        's = lambda v: [x.decode() if isinstance(x, bytes) else x for x in v]',
        'typ, data = m.getquotaroot("INBOX")',
        'out["getquotaroot"] = [typ, [s(d) for d in data]]',
        'typ, data = m.setquota(\'""\', "(STORAGE 11 MESSAGE 5)")',
        'out["setquota"] = [typ, s(data)]',
        'typ, data = m.getquota(\'""\')',
        'out["getquota"] = [typ, s(data)]',
        'typ, data = m.append("INBOX", None, None, b"Subject: big\\r\\n\\r\\n" + b"x" * 2048 + b"\\r\\n")',
        'out["append"] = [typ, s(data)]',
        'm.logout()',
        'print(json.dumps(out))',
      ].join('\n');
      const stdout = await new Promise<string>((resolve, reject) =>
        execFile(PYTHON, ['-c', script, String(port)], { timeout: 15_000 }, (err, out, stderr) => (err ? reject(new Error(stderr || String(err))) : resolve(out))),
      );
      const out = JSON.parse(stdout);
      assert.deepEqual(out.getquotaroot, ['OK', [['"INBOX" ""'], ['"" (STORAGE 10 512)']]]);
      assert.deepEqual(out.setquota, ['OK', ['"" (STORAGE 10 11 MESSAGE 1 5)']]);
      assert.deepEqual(out.getquota, ['OK', ['"" (STORAGE 10 11 MESSAGE 1 5)']]);
      assert.equal(out.append[0], 'NO');
      assert.match(out.append[1][0], /^\[OVERQUOTA\] Quota exceeded: STORAGE would be 13 KiB/);
    }));
});
