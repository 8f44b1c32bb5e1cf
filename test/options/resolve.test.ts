import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BUILTIN_PLUGINS, REMOVED_PLUGINS } from '../../src/extensions/catalog.js';
import { resolveOptions } from '../../src/options/resolve.js';
import type { ServerOptions } from '../../src/options/types.js';
import { invalid } from './helpers.js';

describe('resolveOptions defaults', () => {
  it('fills every default', () => {
    const before = Date.now();
    const r = resolveOptions();
    // Issue 30: the default is what mainstream servers offer (Dovecot 2.3's stock set, docs/plugins.md); [] is the bare core.
    for (const name of ['IDLE', 'NAMESPACE', 'UIDPLUS', 'MOVE', 'UNSELECT', 'ENABLE', 'ID', 'LITERAL+', 'SASL-IR', 'CHILDREN', 'SPECIAL-USE', 'CONDSTORE', 'ESEARCH']) {
      assert.ok(r.plugins.includes(name), `${name} is loaded by default`);
    }
    assert.deepEqual(r.plugins, [
      'IDLE', 'NAMESPACE', 'UIDPLUS', 'MOVE', 'UNSELECT', 'ENABLE', 'ID', 'LITERAL+', 'SASL-IR', 'AUTH=PLAIN', 'CHILDREN', 'SPECIAL-USE',
      'MULTIAPPEND', 'CATENATE', 'URL-PARTIAL', 'CONDSTORE', 'QRESYNC', 'LIST-STATUS', 'ESEARCH', 'SEARCHRES', 'SORT', 'THREAD', 'WITHIN', 'BINARY', 'LIST-EXTENDED',
    ]);
    assert.deepEqual(resolveOptions({ plugins: [] }).plugins, []);
    assert.equal(r.scriptSeed, 1);
    assert.equal(r.rest, null);
    assert.equal(r.port, 0);
    assert.equal(r.host, '127.0.0.1');
    assert.equal(r.greeting, 'Rookery ready');
    assert.equal(r.maxLineLength, 65536);
    assert.equal(r.maxLiteralBeforeLogin, 65536);
    assert.equal(r.maxLiteral, 64 * 1024 * 1024);
    const t = r.now();
    assert.ok(t >= before && t <= Date.now());
    assert.deepEqual(
      [...r.users],
      [['testuser', { password: 'testpass', xoauth2: { accessToken: 'testtoken', sessionTimeout: null } }]],
    );
    assert.deepEqual(r.storage.namespaces, [{ prefix: '', type: 'personal', separator: '/', extra: {} }]);
    assert.deepEqual(r.storage.mailboxes, [
      { path: 'INBOX', delimiter: '/', messages: [], flags: [], subscribed: true, specialUse: [], extra: {} },
    ]);
  });

  it('gives each call its own default user records', () => {
    const a = resolveOptions();
    a.users.get('testuser')!.xoauth2!.accessToken = 'changed';
    assert.equal(resolveOptions().users.get('testuser')!.xoauth2!.accessToken, 'testtoken');
  });

  it('accepts an empty object like no options', () => {
    assert.deepEqual(resolveOptions({}).storage, resolveOptions().storage);
  });

  it('rejects a non-object', () => {
    assert.match(invalid(() => resolveOptions(null as unknown as ServerOptions)), /^options: expected an object, got null$/);
  });
});

describe('top-level options', () => {
  it('takes given values', () => {
    const r = resolveOptions({
      port: 1143,
      host: '0.0.0.0',
      greeting: 'hi',
      maxLineLength: 100,
      maxLiteralBeforeLogin: 0,
      maxLiteral: 1000,
      scriptSeed: -7,
    });
    assert.equal(r.port, 1143);
    assert.equal(r.host, '0.0.0.0');
    assert.equal(r.greeting, 'hi');
    assert.equal(r.maxLineLength, 100);
    assert.equal(r.maxLiteralBeforeLogin, 0);
    assert.equal(r.maxLiteral, 1000);
    assert.equal(r.scriptSeed, -7);
  });

  it('reports typos of known keys', () => {
    assert.equal(invalid(() => resolveOptions({ storge: {} } as ServerOptions)), 'storge: unknown key; did you mean "storage"?');
    assert.equal(invalid(() => resolveOptions({ Plugins: [] } as ServerOptions)), 'Plugins: unknown key; did you mean "plugins"?');
    assert.equal(
      invalid(() => resolveOptions({ maxLiterall: 5 } as ServerOptions)),
      'maxLiterall: unknown key; did you mean "maxLiteral"?',
    );
  });

  it('lets keys that are not typos through, including later options', () => {
    const input = { script: [], secure: true, tls: {}, smtp: {}, pingInterval: 5, somethingElse: 1 } as unknown as ServerOptions;
    assert.doesNotThrow(() => resolveOptions(input));
  });

  it('reports wrong types with the path', () => {
    assert.equal(invalid(() => resolveOptions({ port: 70000 })), 'port: expected an integer from 0 to 65535, got 70000');
    assert.equal(invalid(() => resolveOptions({ host: '' })), 'host: expected a non-empty string, got ""');
    assert.equal(invalid(() => resolveOptions({ scriptSeed: 1.5 })), 'scriptSeed: expected an integer, got 1.5');
    assert.equal(invalid(() => resolveOptions({ greeting: 'a\r\nb' })), 'greeting: expected a single-line string, got "a\\r\\nb"');
    assert.equal(invalid(() => resolveOptions({ maxLiteral: -1 })), 'maxLiteral: expected a non-negative integer, got -1');
    assert.equal(invalid(() => resolveOptions({ maxLineLength: 0 })), 'maxLineLength: expected a positive integer, got 0');
  });

  it('lists several problems, one per line', () => {
    const message = invalid(() => resolveOptions({ port: 'x', storge: 1 } as unknown as ServerOptions));
    assert.deepEqual(message.split('\n').sort(), [
      'port: expected an integer from 0 to 65535, got "x"',
      'storge: unknown key; did you mean "storage"?',
    ]);
  });
});

describe('now', () => {
  it('takes a Date, a number or a function', () => {
    assert.equal(resolveOptions({ now: new Date(5000) }).now(), 5000);
    assert.equal(resolveOptions({ now: 1234 }).now(), 1234);
    let t = 10;
    const r = resolveOptions({ now: () => (t += 1) });
    assert.equal(r.now(), 11);
    assert.equal(r.now(), 12);
    assert.equal(resolveOptions({ now: () => new Date(99) }).now(), 99);
  });

  it('copies a Date', () => {
    const d = new Date(5000);
    const r = resolveOptions({ now: d });
    d.setTime(0);
    assert.equal(r.now(), 5000);
  });

  it('rejects invalid clocks', () => {
    assert.match(invalid(() => resolveOptions({ now: new Date(NaN) })), /^now: expected a valid Date.*got a Date$/);
    assert.match(invalid(() => resolveOptions({ now: 'today' as unknown as number })), /^now: expected .* got "today"$/);
    const r = resolveOptions({ now: (() => 'x') as unknown as () => number });
    assert.match(invalid(() => r.now()), /^now: the clock function must return/);
  });

  it('is the default internal date of messages, in whole seconds and +0000', () => {
    const r = resolveOptions({ now: 1_700_000_000_123, storage: { INBOX: { messages: ['a', { raw: 'b' }] } } });
    for (const m of r.storage.mailboxes[0]!.messages) assert.deepEqual(m.internaldate, { ms: 1_700_000_000_000, tz: 0 });
  });
});

describe('users', () => {
  it('converts entries to records', () => {
    const r = resolveOptions({
      users: {
        alice: { password: 'pw' },
        bob: { xoauth2: { accessToken: 'tok', sessionTimeout: 1500 } },
        carol: { password: 'c', xoauth2: null },
        dave: {},
      },
    });
    assert.deepEqual(Object.fromEntries(r.users), {
      alice: { password: 'pw', xoauth2: null },
      bob: { password: null, xoauth2: { accessToken: 'tok', sessionTimeout: 1500 } },
      carol: { password: 'c', xoauth2: null },
      dave: { password: null, xoauth2: null },
    });
  });

  it('takes an empty users object as no users', () => {
    assert.equal(resolveOptions({ users: {} }).users.size, 0);
  });

  it('reports bad users', () => {
    assert.equal(invalid(() => resolveOptions({ users: { '': { password: 'x' } } })), 'users[""]: a user name must not be empty');
    assert.equal(
      invalid(() => resolveOptions({ users: { a: { passwd: 'x' } as never } })),
      'users.a.passwd: unknown key; did you mean "password"?',
    );
    assert.equal(invalid(() => resolveOptions({ users: { a: { password: 5 as never } } })), 'users.a.password: expected a string, got 5');
    assert.equal(
      invalid(() => resolveOptions({ users: { a: { xoauth2: { accessToken: 't', sessionTimeout: -1 } } } })),
      'users.a.xoauth2.sessionTimeout: expected a non-negative integer, got -1',
    );
    assert.equal(
      invalid(() => resolveOptions({ users: { a: { xoauth2: { acessToken: 't' } as never } } })),
      'users.a.xoauth2.acessToken: unknown key; did you mean "accessToken"?\n' +
        'users.a.xoauth2.accessToken: expected a non-empty string, got undefined',
    );
    assert.equal(invalid(() => resolveOptions({ users: { 'x y': 'pw' as never } })), 'users["x y"]: expected an object ({password, xoauth2}), got "pw"');
    assert.equal(invalid(() => resolveOptions({ users: [] as never })), 'users: expected an object of users by name, got an array');
  });
});

describe('plugins', () => {
  it('loads "all" in catalog order, without the opt-in built-ins', () => {
    // X-GM-EXT-1 changes how mailboxes behave (labels over one message): it must be named.
    const all = BUILTIN_PLUGINS.filter((name) => name !== 'X-GM-EXT-1');
    assert.deepEqual(resolveOptions({ plugins: 'all' }).plugins, all);
    assert.deepEqual(resolveOptions({ plugins: 'ALL' as 'all' }).plugins, all);
    assert.ok(BUILTIN_PLUGINS.includes('X-GM-EXT-1'));
    assert.deepEqual(resolveOptions({ plugins: ['all', 'x-gm-ext-1'] }).plugins, [...BUILTIN_PLUGINS]);
  });

  it('is case-insensitive, maps aliases, adds requirements, dedupes and orders', () => {
    const r = resolveOptions({ plugins: ['sasl-ir', 'literalplus', 'idle', 'IDLE', 'auth-plain', 'Namespace'] });
    assert.deepEqual(r.plugins, ['IDLE', 'NAMESPACE', 'LITERAL+', 'SASL-IR', 'AUTH=PLAIN']);
  });

  it('lists valid names for an unknown plugin', () => {
    assert.equal(
      invalid(() => resolveOptions({ plugins: ['IDLE', 'FOO'] })),
      `plugins: unknown plugin "FOO"; valid names: ${BUILTIN_PLUGINS.join(', ')}`,
    );
    assert.match(invalid(() => resolveOptions({ plugins: ['FOO'] })), /valid names: IMAP4REV2, IDLE, NAMESPACE, /);
  });

  it('refuses XTOYBIRD in any case, pointing to the control and REST APIs', () => {
    for (const name of ['XTOYBIRD', 'xToyBird']) {
      const message = invalid(() => resolveOptions({ plugins: [name] }));
      assert.equal(message, `plugins: ${REMOVED_PLUGINS.XTOYBIRD}`);
      assert.match(message, /control API/);
      assert.match(message, /REST API/);
    }
  });

  it('reports wrong types', () => {
    assert.equal(invalid(() => resolveOptions({ plugins: 'IDLE' as 'all' })), 'plugins: expected an array of plugin names or plugin objects, or "all", got "IDLE"');
    assert.equal(invalid(() => resolveOptions({ plugins: ['IDLE', 3 as never] })), 'plugins[1]: expected a plugin name or a plugin object, got 3');
  });
});

describe('rest', () => {
  it('is null without a port', () => {
    assert.equal(resolveOptions({ rest: {} }).rest, null);
    assert.equal(resolveOptions({ rest: { host: '::1', token: 't' } }).rest, null);
  });

  it('resolves with a port', () => {
    const limits = { maxConnections: 1000, headersTimeout: 20_000, requestTimeout: 30_000, bodyTimeout: 10_000, maxBodyBytesInFlight: 128 * 1024 * 1024 };
    assert.deepEqual(resolveOptions({ rest: { port: 0 } }).rest, {
      port: 0, host: '127.0.0.1', token: null, pingInterval: 15000, maxEventStreams: 100, maxStreamBuffer: 1048576, ...limits,
    });
    // Issue 31: the REST port's own limits; a headers timeout follows a shorter request timeout.
    assert.deepEqual(resolveOptions({ rest: { port: 0, requestTimeout: 5000 } }).rest!.headersTimeout, 5000);
    assert.deepEqual(resolveOptions({ rest: { port: 0, requestTimeout: 0 } }).rest!.headersTimeout, 20_000);
    const given = { maxConnections: 7, headersTimeout: 100, requestTimeout: 200, bodyTimeout: 0, maxBodyBytesInFlight: 1 };
    assert.deepEqual({ ...resolveOptions({ rest: { port: 0, ...given } }).rest, port: 0 }, { port: 0, host: '127.0.0.1', token: null, pingInterval: 15000, maxEventStreams: 100, maxStreamBuffer: 1048576, ...given });
    assert.equal(resolveOptions({ rest: { port: 0, maxEventStreams: 3, maxStreamBuffer: 4096 } }).rest!.maxEventStreams, 3);
    // An empty token is kept so that start() can refuse it with the reason.
    assert.equal(resolveOptions({ rest: { port: 0, token: '', pingInterval: 20 } }).rest!.token, '');
    assert.equal(resolveOptions({ rest: { port: 0, pingInterval: 20 } }).rest!.pingInterval, 20);
    assert.deepEqual(resolveOptions({ rest: { port: 8080, host: '0.0.0.0', token: 'secret' } }).rest, {
      port: 8080,
      host: '0.0.0.0',
      token: 'secret',
      pingInterval: 15000,
      maxEventStreams: 100,
      maxStreamBuffer: 1048576,
      ...limits,
    });
  });

  it('reports problems', () => {
    assert.equal(invalid(() => resolveOptions({ rest: { port: 1.5 } })), 'rest.port: expected an integer from 0 to 65535, got 1.5');
    assert.equal(invalid(() => resolveOptions({ rest: { prot: 1 } as never })), 'rest.prot: unknown key; did you mean "port"?');
    assert.equal(invalid(() => resolveOptions({ rest: { port: 1, token: 5 as never } })), 'rest.token: expected a string, got 5');
    assert.equal(invalid(() => resolveOptions({ rest: { port: 1, pingInterval: 0 } })), 'rest.pingInterval: expected a positive integer, got 0');
    assert.equal(invalid(() => resolveOptions({ rest: { port: 1, maxEventStreams: 0 } })), 'rest.maxEventStreams: expected a positive integer, got 0');
    assert.equal(invalid(() => resolveOptions({ rest: { port: 1, maxStreamBuffer: '1M' as never } })), 'rest.maxStreamBuffer: expected a positive integer, got "1M"');
    assert.equal(invalid(() => resolveOptions({ rest: { port: 1, maxStreamBufer: 5 } as never })), 'rest.maxStreamBufer: unknown key; did you mean "maxStreamBuffer"?');
    assert.equal(invalid(() => resolveOptions({ rest: { port: 1, maxConnections: 0 } })), 'rest.maxConnections: expected a positive integer, got 0');
    assert.equal(invalid(() => resolveOptions({ rest: { port: 1, bodyTimeout: -1 } })), 'rest.bodyTimeout: expected a non-negative integer, got -1');
    assert.equal(invalid(() => resolveOptions({ rest: { port: 1, maxBodyBytesInFlight: 0 } })), 'rest.maxBodyBytesInFlight: expected a positive integer, got 0');
    assert.equal(invalid(() => resolveOptions({ rest: { port: 1, requestTimout: 5 } as never })), 'rest.requestTimout: unknown key; did you mean "requestTimeout"?');
    assert.equal(invalid(() => resolveOptions({ maxMesages: 5 } as never)), 'maxMesages: unknown key; did you mean "maxMessages"?');
    assert.equal(invalid(() => resolveOptions({ maxStoreBytes: 1.5 })), 'maxStoreBytes: expected a non-negative integer, got 1.5');
    assert.equal(invalid(() => resolveOptions({ rest: 8080 as never })), 'rest: expected an object ({port, host, token, pingInterval}), got 8080');
  });
});
