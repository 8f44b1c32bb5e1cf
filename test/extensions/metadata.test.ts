/**
 * METADATA and METADATA-SERVER (RFC 5464) over real sockets: the RFC's
 * examples of §4.2 and §4.3 byte for byte (with the verified errata: the
 * options come before the mailbox name), limits and their response codes,
 * literal8 values, case-insensitive names, the REST routes both ways,
 * snapshots, reset, rename and delete. imapflow has no METADATA support, so
 * every IMAP test is raw.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Plugin, type Server } from '../../src/index.js';
import { rawSession, startServer } from '../helpers/server.js';
import { tagged } from '../helpers/raw-client.js';
import { request, startRest } from '../rest/helpers.js';

describe('METADATA: RFC 5464 examples', () => {
  let server: Server;
  let port: number;
  before(async () => {
    ({ server, port } = await startServer({
      plugins: ['METADATA'],
      storage: {
        INBOX: {
          metadata: {
            '/shared/comment': 'Shared comment',
            '/private/comment': 'My own comment',
            '/private/filters/values/small': 'SMALLER 5000',
            '/private/filters/values/boss': 'FROM "boss@example.com"',
            '/private/filters/values/boss/deeper': 'not at depth 1',
          },
        },
        '': { metadata: { '/shared/comment': 'Shared comment' } },
      },
    }));
  });
  after(() => server.stop());

  test('capability: METADATA alone (it brings METADATA-SERVER, whose capability a full server does not list)', async () => {
    const c = await rawSession(port);
    const [caps] = await c.command('CAPABILITY');
    assert.match(caps!, / METADATA( |$)/);
    assert.doesNotMatch(caps!, /METADATA-SERVER/);
    c.close();
  });

  test('§4.2: server entry, one mailbox entry, a list of entries', async () => {
    const c = await rawSession(port);
    assert.deepEqual(await c.command('GETMETADATA "" /shared/comment'), [
      '* METADATA "" (/shared/comment "Shared comment")',
      'T2 OK GETMETADATA complete',
    ]);
    assert.deepEqual(await c.command('GETMETADATA INBOX /private/comment'), [
      '* METADATA "INBOX" (/private/comment "My own comment")',
      'T3 OK GETMETADATA complete',
    ]);
    assert.deepEqual(await c.command('GETMETADATA "INBOX" (/shared/comment /private/comment)'), [
      '* METADATA "INBOX" (/shared/comment "Shared comment" /private/comment "My own comment")',
      'T4 OK GETMETADATA complete',
    ]);
    // An entry that does not exist is left out; none at all sends no METADATA line.
    assert.deepEqual(await c.command('GETMETADATA "INBOX" (/shared/nothing)'), ['T5 OK GETMETADATA complete']);
    c.close();
  });

  test('§4.2.1 MAXSIZE: a longer value is left out and LONGENTRIES names the longest', async () => {
    await server.extension('METADATA')!.setMetadata('INBOX', { '/shared/comment': 'x'.repeat(2199) });
    try {
      const c = await rawSession(port);
      assert.deepEqual(await c.command('GETMETADATA (MAXSIZE 1024) "INBOX" (/shared/comment /private/comment)'), [
        '* METADATA "INBOX" (/private/comment "My own comment")',
        'T2 OK [METADATA LONGENTRIES 2199] GETMETADATA complete',
      ]);
      c.close();
    } finally {
      server.extension('METADATA')!.setMetadata('INBOX', { '/shared/comment': 'Shared comment' });
    }
  });

  test('§4.2.2 DEPTH 1: the children, not the grandchildren; infinity: all below; 0: the entry only', async () => {
    const c = await rawSession(port);
    assert.deepEqual(await c.command('GETMETADATA (DEPTH 1) "INBOX" (/private/filters/values)'), [
      '* METADATA "INBOX" (/private/filters/values/small "SMALLER 5000" /private/filters/values/boss "FROM \\"boss@example.com\\"")',
      'T2 OK GETMETADATA complete',
    ]);
    const all = await c.command('GETMETADATA (DEPTH infinity MAXSIZE 100) "INBOX" /private');
    assert.equal(
      all[0],
      '* METADATA "INBOX" (/private/comment "My own comment" /private/filters/values/small "SMALLER 5000" /private/filters/values/boss "FROM \\"boss@example.com\\"" /private/filters/values/boss/deeper "not at depth 1")',
    );
    assert.deepEqual(await c.command('GETMETADATA (DEPTH 0) "INBOX" /private/filters'), ['T4 OK GETMETADATA complete']);
    // An entry requested twice (itself and under DEPTH) is sent once.
    const twice = await c.command('GETMETADATA (DEPTH 1) "INBOX" (/private/comment /private)');
    assert.equal(twice[0], '* METADATA "INBOX" (/private/comment "My own comment")');
    c.close();
  });

  test('§4.3: SETMETADATA with a literal (continuation), then NIL removes the entry', async () => {
    const c = await rawSession(port);
    c.write('a SETMETADATA INBOX (/private/comment {33}\r\n');
    assert.match(await c.line(), /^\+ /);
    c.write('My new comment across\r\ntwo lines.)\r\n');
    assert.equal(await c.line(), 'a OK SETMETADATA complete');
    assert.deepEqual(await c.command('GETMETADATA "INBOX" /private/comment'), [
      '* METADATA "INBOX" (/private/comment {33}\r\nMy new comment across\r\ntwo lines.)',
      'T2 OK GETMETADATA complete',
    ]);
    assert.deepEqual(await c.command('SETMETADATA INBOX (/private/comment NIL)'), ['T3 OK SETMETADATA complete']);
    assert.deepEqual(await c.command('GETMETADATA "INBOX" /private/comment'), ['T4 OK GETMETADATA complete']);
    assert.equal(server.extension('METADATA')!.getMetadata('INBOX')['/private/comment'], undefined);
    assert.deepEqual(await c.command('SETMETADATA INBOX (/private/comment "My own comment")'), ['T5 OK SETMETADATA complete']);
    c.close();
  });

  test('server entries: SETMETADATA "" and GETMETADATA "" (DEPTH infinity) /shared', async () => {
    const c = await rawSession(port);
    assert.equal(tagged(await c.command('SETMETADATA "" (/shared/admin "mailto:admin@example.com" /private/vendor/x/y "1")')), 'T2 OK SETMETADATA complete');
    assert.deepEqual(await c.command('GETMETADATA (DEPTH infinity) "" (/shared)'), [
      '* METADATA "" (/shared/comment "Shared comment" /shared/admin "mailto:admin@example.com")',
      'T3 OK GETMETADATA complete',
    ]);
    assert.deepEqual(server.extension('METADATA')!.getMetadata(), {
      '/shared/comment': 'Shared comment',
      '/shared/admin': 'mailto:admin@example.com',
      '/private/vendor/x/y': '1',
    });
    c.close();
  });
});

describe('METADATA: limits and response codes (RFC 5464 §4.3)', () => {
  let server: Server;
  let port: number;
  before(async () => {
    ({ server, port } = await startServer({
      plugins: ['METADATA'],
      pluginOptions: { METADATA: { maxSize: 1024, maxEntries: 2 } },
      storage: { INBOX: {}, '': { folders: { Other: {} } } },
    }));
  });
  after(() => server.stop());

  test('MAXSIZE: a value over maxSize is NO [METADATA MAXSIZE n] and nothing of the command is set', async () => {
    const c = await rawSession(port);
    const big = 'y'.repeat(1025);
    assert.deepEqual((await c.command(`SETMETADATA INBOX (/private/a "ok" /private/comment "${big}")`)).map((l) => l.replace(/ Value.*/, '')), [
      'T2 NO [METADATA MAXSIZE 1024]',
    ]);
    assert.deepEqual(server.extension('METADATA')!.getMetadata('INBOX'), {});
    // A literal over maxSize is refused as soon as it is announced: no continuation, nothing read.
    c.write('b SETMETADATA INBOX (/private/comment {2000}\r\n');
    assert.match(await c.line(), /^b NO \[METADATA MAXSIZE 1024\] /);
    assert.equal(tagged(await c.command('NOOP')), 'T3 OK NOOP completed');
    c.close();
  });

  test('TOOMANY: more entries than maxEntries is NO [METADATA TOOMANY]; replacing and removing still work', async () => {
    const c = await rawSession(port);
    assert.equal(tagged(await c.command('SETMETADATA Other (/private/comment "My new comment")')), 'T2 OK SETMETADATA complete');
    assert.match(tagged(await c.command('SETMETADATA Other (/shared/a "1" /shared/comment "This one is for you!")')), /^T3 NO \[METADATA TOOMANY\] /);
    assert.deepEqual(server.extension('METADATA')!.getMetadata('Other'), { '/private/comment': 'My new comment' });
    assert.equal(tagged(await c.command('SETMETADATA Other (/shared/comment "This one is for you!")')), 'T4 OK SETMETADATA complete');
    assert.equal(tagged(await c.command('SETMETADATA Other (/private/comment "replaced" /shared/comment NIL /shared/b "2")')), 'T5 OK SETMETADATA complete');
    assert.deepEqual(server.extension('METADATA')!.getMetadata('Other'), { '/private/comment': 'replaced', '/shared/b': '2' });
    c.close();
  });

  test('NOPRIVATE: with private: false a /private entry is NO [METADATA NOPRIVATE]; setLimits changes limits at run time', async () => {
    const api = server.extension('METADATA')!;
    api.setLimits({ private: false });
    try {
      const c = await rawSession(port);
      assert.match(tagged(await c.command('SETMETADATA INBOX (/shared/x "1" /private/comment "My new comment")')), /^T2 NO \[METADATA NOPRIVATE\] /);
      assert.equal(tagged(await c.command('SETMETADATA INBOX (/shared/x "1")')), 'T3 OK SETMETADATA complete');
      c.close();
    } finally {
      api.setLimits({ private: true });
    }
    assert.throws(() => api.setLimits({ maxSize: -1 }), { code: 'INVALID' });
    assert.throws(() => api.setLimits({ maxsize: 1 } as never), { code: 'INVALID' });
    assert.deepEqual(api.limits, { maxSize: 1024, maxEntries: 2, private: true });
  });

  test('pluginOptions are checked: a typo names the key', () => {
    assert.throws(() => createServer({ plugins: ['METADATA'], pluginOptions: { METADATA: { maxSzie: 1 } } }), /maxSzie: unknown key; did you mean "maxSize"\?/);
    assert.throws(() => createServer({ plugins: ['METADATA'], pluginOptions: { METADATA: { maxEntries: 0 } } }), /maxEntries/);
  });
});

describe('METADATA: syntax, names and values', () => {
  let server: Server;
  let port: number;
  before(async () => {
    ({ server, port } = await startServer({ plugins: ['METADATA'] }));
  });
  after(() => server.stop());

  test('malformed entry names and options are BAD; options after the mailbox (the RFC text before erratum 2785) too', async () => {
    const c = await rawSession(port);
    for (const command of [
      'GETMETADATA "INBOX" (MAXSIZE 1024) (/shared/comment)',
      'GETMETADATA (DEPTH 2) "INBOX" /shared/comment',
      'GETMETADATA (MAXSIZE 1 MAXSIZE 2) "INBOX" /shared/comment',
      'GETMETADATA (NOSUCH 1) "INBOX" /shared/comment',
      'GETMETADATA () "INBOX" /shared/comment',
      'GETMETADATA "INBOX" ()',
      'GETMETADATA "INBOX" /shared/a*',
      'GETMETADATA "INBOX" "/shared/a%"',
      'GETMETADATA "INBOX" /other/comment',
      'GETMETADATA "INBOX" comment',
      'GETMETADATA "INBOX" /sharedx',
      'SETMETADATA INBOX (/shared//x "1")',
      'SETMETADATA INBOX (/shared/x/ "1")',
      'SETMETADATA INBOX (/shared "1")',
      'SETMETADATA INBOX ()',
      'SETMETADATA INBOX (/shared/x)',
      'SETMETADATA INBOX /shared/x "1"',
    ]) {
      assert.match(tagged(await c.command(command)), /^T\d+ BAD /, command);
    }
    assert.deepEqual(server.extension('METADATA')!.getMetadata('INBOX'), {});
    c.close();
  });

  test('a missing mailbox is NO [NONEXISTENT]; GETMETADATA needs a login', async () => {
    const c = await rawSession(port);
    assert.match(tagged(await c.command('GETMETADATA "Nope" /shared/comment')), /^T2 NO \[NONEXISTENT\] /);
    assert.match(tagged(await c.command('SETMETADATA Nope (/shared/comment "x")')), /^T3 NO \[NONEXISTENT\] /);
    c.close();
    const anonymous = await rawSession(port, false);
    assert.match(tagged(await anonymous.command('GETMETADATA "" /shared/comment')), /^T1 BAD /);
    anonymous.close();
  });

  test('entry names are case-insensitive (§3.2): the spelling last set is kept and shown', async () => {
    const c = await rawSession(port);
    assert.equal(tagged(await c.command('SETMETADATA INBOX (/Shared/Vendor/Rookery "1")')), 'T2 OK SETMETADATA complete');
    assert.deepEqual(await c.command('GETMETADATA "INBOX" /shared/vendor/rookery'), [
      '* METADATA "INBOX" (/Shared/Vendor/Rookery "1")',
      'T3 OK GETMETADATA complete',
    ]);
    assert.equal(tagged(await c.command('SETMETADATA INBOX (/shared/VENDOR/rookery "2")')), 'T4 OK SETMETADATA complete');
    assert.deepEqual(server.extension('METADATA')!.getMetadata('INBOX'), { '/shared/VENDOR/rookery': '2' });
    assert.deepEqual(await c.command('GETMETADATA (DEPTH 1) "INBOX" /SHARED/vendor'), [
      '* METADATA "INBOX" (/shared/VENDOR/rookery "2")',
      'T5 OK GETMETADATA complete',
    ]);
    assert.equal(tagged(await c.command('SETMETADATA INBOX (/SHARED/vendor/ROOKERY NIL)')), 'T6 OK SETMETADATA complete');
    assert.deepEqual(server.extension('METADATA')!.getMetadata('INBOX'), {});
    c.close();
  });

  test('values: literal8 with NUL comes back as literal8; UTF-8 text as a literal; names that are no atom are quoted', async () => {
    const c = await rawSession(port);
    c.write('a SETMETADATA INBOX (/private/bin ~{4}\r\n');
    assert.match(await c.line(), /^\+ /);
    c.write(Buffer.from([0x61, 0x00, 0xff, 0x62, 0x29, 0x0d, 0x0a]));
    assert.equal(await c.line(), 'a OK SETMETADATA complete');
    assert.deepEqual(await c.command('GETMETADATA "INBOX" /private/bin'), [
      '* METADATA "INBOX" (/private/bin ~{4}\r\na\x00\xffb)',
      'T2 OK GETMETADATA complete',
    ]);
    assert.equal(tagged(await c.command('SETMETADATA INBOX ("/shared/with space" {5+}\r\nété)')), 'T3 OK SETMETADATA complete');
    assert.deepEqual(await c.command('GETMETADATA "INBOX" "/shared/With Space"'), [
      `* METADATA "INBOX" ("/shared/with space" {5}\r\n${Buffer.from('été').toString('latin1')})`,
      'T4 OK GETMETADATA complete',
    ]);
    // Snapshots keep the exact bytes: text when UTF-8, base64 otherwise.
    const snap = server.control.snapshot();
    assert.deepEqual((snap.INBOX as Record<string, unknown>).metadata, {
      '/private/bin': { value: Buffer.from([0x61, 0x00, 0xff, 0x62]).toString('base64'), encoding: 'base64' },
      '/shared/with space': 'été',
    });
    assert.equal(tagged(await c.command('SETMETADATA INBOX (/private/bin NIL "/shared/with space" NIL)')), 'T5 OK SETMETADATA complete');
    c.close();
  });
});

describe('METADATA: users and rights', () => {
  // An access plugin: "reader" may read (r) but not write (w) ReadOnly; nobody sees Hidden.
  const rights: Plugin = {
    name: 'XRIGHTS',
    access: (r) => {
      if (r.path === 'Hidden') return { allow: false, reveal: false };
      if (r.path === 'ReadOnly' && r.user === 'reader' && r.right === 'w') return { allow: false, reveal: true };
      return undefined;
    },
  };
  let server: Server;
  let port: number;
  before(async () => {
    ({ server, port } = await startServer({
      plugins: ['METADATA', rights],
      users: { testuser: { password: 'testpass' }, reader: { password: 'readerpass' } },
      storage: { INBOX: {}, '': { folders: { ReadOnly: { metadata: { '/shared/comment': 'ro' } }, Hidden: { metadata: { '/shared/comment': 'h' } } } } },
    }));
  });
  after(() => server.stop());

  test('/private entries belong to the one tree all users share: another user sees and changes them', async () => {
    const a = await rawSession(port);
    assert.equal(tagged(await a.command('SETMETADATA INBOX (/private/comment "set by testuser")')), 'T2 OK SETMETADATA complete');
    a.close();
    const b = await rawSession(port, false);
    assert.match(tagged(await b.command('LOGIN reader readerpass')), /^T1 OK /);
    assert.deepEqual(await b.command('GETMETADATA INBOX /private/comment'), [
      '* METADATA "INBOX" (/private/comment "set by testuser")',
      'T2 OK GETMETADATA complete',
    ]);
    b.close();
  });

  test('rights: r to read and to set /private entries, w too for /shared; a hidden mailbox is NONEXISTENT', async () => {
    const b = await rawSession(port, false);
    await b.command('LOGIN reader readerpass');
    assert.deepEqual(await b.command('GETMETADATA ReadOnly /shared/comment'), ['* METADATA "ReadOnly" (/shared/comment "ro")', 'T2 OK GETMETADATA complete']);
    assert.match(tagged(await b.command('SETMETADATA ReadOnly (/shared/comment "changed")')), /^T3 NO \[NOPERM\] /);
    assert.match(tagged(await b.command('SETMETADATA ReadOnly (/private/comment "mine" /shared/comment "changed")')), /^T4 NO \[NOPERM\] /);
    assert.equal(tagged(await b.command('SETMETADATA ReadOnly (/private/comment "mine")')), 'T5 OK SETMETADATA complete');
    assert.match(tagged(await b.command('GETMETADATA Hidden /shared/comment')), /^T6 NO \[NONEXISTENT\] /);
    assert.match(tagged(await b.command('SETMETADATA Hidden (/private/x "1")')), /^T7 NO \[NONEXISTENT\] /);
    assert.deepEqual(server.extension('METADATA')!.getMetadata('ReadOnly'), { '/shared/comment': 'ro', '/private/comment': 'mine' });
    b.close();
  });
});

describe('METADATA-SERVER only', () => {
  let server: Server;
  let port: number;
  before(async () => {
    ({ server, port } = await startServer({ plugins: ['METADATA-SERVER'], storage: { INBOX: { metadata: { '/shared/comment': 'kept' } }, '': {} } }));
  });
  after(() => server.stop());

  test('advertises METADATA-SERVER; server entries work, mailbox names other than "" are NO', async () => {
    const c = await rawSession(port);
    const [caps] = await c.command('CAPABILITY');
    assert.match(caps!, / METADATA-SERVER( |$)/);
    assert.doesNotMatch(caps!, / METADATA( |$)/);
    assert.equal(tagged(await c.command('SETMETADATA "" (/shared/motd "Hello")')), 'T3 OK SETMETADATA complete');
    assert.deepEqual(await c.command('GETMETADATA "" /shared/motd'), ['* METADATA "" (/shared/motd "Hello")', 'T4 OK GETMETADATA complete']);
    assert.match(tagged(await c.command('GETMETADATA "INBOX" /shared/comment')), /^T5 NO /);
    assert.match(tagged(await c.command('SETMETADATA INBOX (/shared/comment "x")')), /^T6 NO /);
    assert.equal(server.extension('METADATA'), undefined);
    assert.throws(() => server.extension('METADATA-SERVER')!.getMetadata('INBOX'), { code: 'INVALID' });
    // The mailbox's stored entries are kept (snapshots write them) though not served.
    assert.deepEqual((server.control.snapshot().INBOX as Record<string, unknown>).metadata, { '/shared/comment': 'kept' });
    c.close();
  });
});

describe('METADATA over REST', () => {
  test('routes: GET/PUT server and mailbox entries, null removes, IMAP and REST see each other', async () => {
    const { server, restPort, imapPort } = await startRest({ plugins: ['METADATA'], storage: { INBOX: {}, '': { folders: { 'A B': {} } } } });
    try {
      let r = await request(restPort, 'PUT', '/v1/metadata', { json: { '/shared/comment': 'Server note', '/private/x': 'p' } });
      assert.equal(r.status, 200);
      assert.deepEqual(r.json, { '/shared/comment': 'Server note', '/private/x': 'p' });
      r = await request(restPort, 'PUT', '/v1/metadata', { json: { '/private/x': null } });
      assert.deepEqual(r.json, { '/shared/comment': 'Server note' });
      r = await request(restPort, 'PUT', '/v1/mailboxes/A%20B/metadata', { json: { '/shared/comment': 'From REST' } });
      assert.equal(r.status, 200);
      assert.deepEqual(r.json, { '/shared/comment': 'From REST' });

      const c = await rawSession(imapPort);
      assert.deepEqual(await c.command('GETMETADATA "A B" /shared/comment'), ['* METADATA "A B" (/shared/comment "From REST")', 'T2 OK GETMETADATA complete']);
      assert.deepEqual(await c.command('GETMETADATA "" /shared/comment'), ['* METADATA "" (/shared/comment "Server note")', 'T3 OK GETMETADATA complete']);
      assert.equal(tagged(await c.command('SETMETADATA INBOX (/private/comment "From IMAP")')), 'T4 OK SETMETADATA complete');
      c.close();

      r = await request(restPort, 'GET', '/v1/mailboxes/INBOX/metadata');
      assert.equal(r.status, 200);
      assert.deepEqual(r.json, { '/private/comment': 'From IMAP' });
      r = await request(restPort, 'GET', '/v1/metadata');
      assert.deepEqual(r.json, { '/shared/comment': 'Server note' });

      // Errors: a bad name, a non-string value, names equal but for case, a missing mailbox.
      for (const [body, pattern] of [
        ['{"comment":"x"}', /begin with \/private\/ or \/shared\//],
        ['{"__proto__":"x"}', /__proto__/],
        ['{"/shared/a":1}', /expected/],
        ['{"/shared/a":"1","/SHARED/A":"2"}', /case-insensitive/],
        ['[]', /.*/],
      ] as const) {
        r = await request(restPort, 'PUT', '/v1/mailboxes/INBOX/metadata', { body, headers: { 'Content-Type': 'application/json' } });
        assert.equal(r.status, 400, body);
        assert.equal(r.json.error.code, 'INVALID');
        assert.match(r.json.error.message, pattern);
      }
      r = await request(restPort, 'GET', '/v1/mailboxes/Nope/metadata');
      assert.equal(r.status, 404);
      assert.equal(r.json.error.code, 'NONEXISTENT');
      assert.deepEqual(server.extension('METADATA')!.getMetadata('INBOX'), { '/private/comment': 'From IMAP' });

      // Names like Object.prototype members are plain names (raw JSON: an object literal would eat __proto__).
      r = await request(restPort, 'PUT', '/v1/metadata', {
        body: '{"/shared/__proto__":"p","/shared/constructor":"c","/private/hasOwnProperty":"h"}',
        headers: { 'Content-Type': 'application/json' },
      });
      assert.equal(r.status, 200);
      assert.equal(r.text, '{"/shared/comment":"Server note","/shared/__proto__":"p","/shared/constructor":"c","/private/hasOwnProperty":"h"}');

      const openapi = (await request(restPort, 'GET', '/v1/openapi.json')).json;
      assert.deepEqual(Object.keys(openapi.paths['/v1/metadata']).sort(), ['get', 'put']);
      assert.deepEqual(Object.keys(openapi.paths['/v1/mailboxes/{path}/metadata']).sort(), ['get', 'put']);
    } finally {
      await server.stop();
    }
  });

  test('with only METADATA-SERVER the mailbox routes answer 400 INVALID; without either plugin every route is 404 NOTFOUND', async () => {
    const only = await startRest({ plugins: ['METADATA-SERVER'] });
    try {
      assert.equal((await request(only.restPort, 'PUT', '/v1/metadata', { json: { '/shared/a': 'b' } })).status, 200);
      for (const [method, path] of [
        ['GET', '/v1/mailboxes/INBOX/metadata'],
        ['PUT', '/v1/mailboxes/INBOX/metadata'],
        ['GET', '/v1/mailboxes/Nope/metadata'],
      ] as const) {
        const r = await request(only.restPort, method, path, method === 'PUT' ? { json: { '/shared/a': 'b' } } : {});
        assert.equal(r.status, 400, `${method} ${path}`);
        assert.equal(r.json.error.code, 'INVALID');
        assert.match(r.json.error.message, /METADATA plugin/);
      }
      const openapi = (await request(only.restPort, 'GET', '/v1/openapi.json')).json;
      assert.ok(openapi.paths['/v1/mailboxes/{path}/metadata']);
    } finally {
      await only.server.stop();
    }
    const none = await startRest({ plugins: ['APPENDLIMIT'] });
    try {
      for (const [method, path] of [
        ['GET', '/v1/metadata'],
        ['PUT', '/v1/metadata'],
        ['GET', '/v1/mailboxes/INBOX/metadata'],
        ['PUT', '/v1/mailboxes/INBOX/metadata'],
      ] as const) {
        const r = await request(none.restPort, method, path, method === 'PUT' ? { json: { '/shared/a': 'b' } } : {});
        assert.equal(r.status, 404, `${method} ${path}`);
        assert.equal(r.json.error.code, 'NOTFOUND');
      }
      const openapi = (await request(none.restPort, 'GET', '/v1/openapi.json')).json;
      assert.equal(openapi.paths['/v1/metadata'], undefined);
      assert.equal(openapi.paths['/v1/mailboxes/{path}/metadata'], undefined);
      const c = await rawSession(none.imapPort);
      assert.match(tagged(await c.command('GETMETADATA "" /shared/a')), /^T2 BAD /);
      c.close();
    } finally {
      await none.server.stop();
    }
  });
});

describe('METADATA in the store: snapshots, reset, rename, delete', () => {
  test('snapshot keeps server and mailbox entries (odd names and bytes too) and loads back; reset restores the options', async () => {
    const storage = {
      INBOX: { metadata: { '/shared/comment': 'Seed' } },
      '': { metadata: { '/shared/motd': 'Hi' }, folders: { Work: { folders: { Old: { metadata: { '/private/x': 'moves' } } } } } },
    };
    const { server, port } = await startServer({ plugins: ['METADATA'], storage });
    try {
      const api = server.extension('METADATA')!;
      const c = await rawSession(port);
      c.write('a SETMETADATA INBOX (/shared/__proto__ ~{2}\r\n');
      await c.line();
      c.write(Buffer.from([0x00, 0xfe, 0x29, 0x0d, 0x0a]));
      assert.equal(await c.line(), 'a OK SETMETADATA complete');
      api.setMetadata('', { '/private/constructor': 'c' });

      // Rename carries (children too), delete drops: a new mailbox of the old name has none.
      assert.match(tagged(await c.command('RENAME Work Play')), /^T2 OK /);
      assert.deepEqual(api.getMetadata('Play/Old'), { '/private/x': 'moves' });
      assert.match(tagged(await c.command('DELETE Play/Old')), /^T3 OK /);
      assert.match(tagged(await c.command('CREATE Play/Old')), /^T4 OK /);
      assert.deepEqual(api.getMetadata('Play/Old'), {});
      // RENAME INBOX moves the messages, not the entries: INBOX keeps them, the new mailbox starts without.
      assert.match(tagged(await c.command('RENAME INBOX Moved')), /^T5 OK /);
      assert.deepEqual(Object.keys(api.getMetadata('INBOX')), ['/shared/comment', '/shared/__proto__']);
      assert.deepEqual(api.getMetadata('Moved'), {});
      c.close();

      const snap = server.control.snapshot();
      const inbox = snap.INBOX as Record<string, unknown>;
      assert.deepEqual(Object.keys(inbox.metadata as object), ['/shared/comment', '/shared/__proto__']);
      assert.deepEqual((inbox.metadata as Record<string, unknown>)['/shared/__proto__'], { value: 'AP4=', encoding: 'base64' });
      assert.deepEqual((snap[''] as Record<string, unknown>).metadata, { '/shared/motd': 'Hi', '/private/constructor': 'c' });

      // Through JSON, as a fixture file would carry it.
      const again = createServer({ plugins: ['METADATA'], storage: JSON.parse(JSON.stringify(snap)) });
      const api2 = again.extension('METADATA')!;
      assert.deepEqual(Object.keys(api2.getMetadata('INBOX')), ['/shared/comment', '/shared/__proto__']);
      const { imap: { port: port2 } } = await again.start();
      try {
        const c2 = await rawSession(port2);
        assert.deepEqual(await c2.command('GETMETADATA "INBOX" /shared/__PROTO__'), [
          '* METADATA "INBOX" (/shared/__proto__ ~{2}\r\n\x00\xfe)',
          'T2 OK GETMETADATA complete',
        ]);
        c2.close();
      } finally {
        await again.stop();
      }

      server.control.reset();
      assert.deepEqual(api.getMetadata('INBOX'), { '/shared/comment': 'Seed' });
      assert.deepEqual(api.getMetadata(''), { '/shared/motd': 'Hi' });
      assert.deepEqual(api.getMetadata('Work/Old'), { '/private/x': 'moves' });
    } finally {
      await server.stop();
    }
  });

  test('the storage option is checked: bad names, values and case duplicates are errors naming the path', () => {
    assert.throws(
      () => createServer({ plugins: ['METADATA'], storage: { INBOX: { metadata: { comment: 'x' } } } }),
      /storage\.INBOX\.metadata: "comment": an entry name must begin with \/private\/ or \/shared\//,
    );
    assert.throws(() => createServer({ plugins: ['METADATA'], storage: { INBOX: { metadata: { '/shared/a': 1 } } } }), /"\/shared\/a": expected a string/);
    assert.throws(
      () => createServer({ plugins: ['METADATA'], storage: { INBOX: { metadata: { '/shared/a': 'x', '/Shared/A': 'y' } } } }),
      /case-insensitive/,
    );
    assert.throws(() => createServer({ plugins: ['METADATA'], storage: { '': { metadata: JSON.parse('{"__proto__":"x"}') } } }), /__proto__/);
    assert.throws(() => createServer({ plugins: ['METADATA'], storage: { INBOX: { metadta: {} } } }), /did you mean "metadata"/);
    // Loaded with base64 values as snapshots write them.
    const s = createServer({ plugins: ['METADATA-SERVER'], storage: { '': { metadata: { '/shared/b': { value: 'AAE=', encoding: 'base64' } } } } });
    assert.deepEqual(s.extension('METADATA-SERVER')!.getMetadata(), { '/shared/b': '\u0000\u0001' });
  });
});
