/**
 * The extension interface: the catalog comes from the folders, loading
 * order never changes behaviour, and a user plugin reaches every point
 * the built-ins use (state per server, access, checks, store fields kept in
 * snapshots and restored by reset, the change feed, FETCH/SEARCH/STATUS,
 * LIST, SELECT, wrappers, control APIs).
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { atom, BUILTIN_PLUGINS, CommandFailure, createServer, ServiceError, type Plugin } from '../../src/index.js';
import { builtinExtensions } from '../../src/extensions/index.js';
import { BUILTIN_ROWS, type BuiltinRow } from '../../src/extensions/builtins.js';
import { getField, setField } from '../../src/store/fields.js';
import { rawSession, startServer } from '../helpers/server.js';
import { openEvents, request, startRest } from '../rest/helpers.js';

test('the catalog is made from the folders: one folder per built-in, names and requires from the objects', async () => {
  const dir = fileURLToPath(new URL('../../src/extensions/', import.meta.url));
  // A folder without an index yet is one being written; every folder with one must be in the catalog.
  const folders = readdirSync(dir).filter((f) => statSync(`${dir}/${f}`).isDirectory() && existsSync(`${dir}/${f}/index.js`));
  const registered = new Set(builtinExtensions().values());
  for (const folder of folders) {
    const module = (await import(`../../src/extensions/${folder}/index.js`)) as { extension?: unknown };
    assert.ok(module.extension, `src/extensions/${folder}/index.ts must export its extension object as \`extension\``);
    assert.ok(
      registered.has(module.extension as never),
      `src/extensions/${folder} is not in the catalog: add its import line to src/extensions/index.ts`,
    );
  }
  assert.equal(folders.length, BUILTIN_PLUGINS.length, 'every built-in lives in a folder of its own');
  assert.deepEqual([...builtinExtensions().keys()], [...BUILTIN_PLUGINS]);
  // requires and aliases come from the objects.
  assert.deepEqual(createServer({ plugins: ['SASL-IR'] }).options.plugins, ['SASL-IR', 'AUTH=PLAIN']);
  assert.deepEqual(createServer({ plugins: ['CREATE-SPECIAL-USE'] }).options.plugins, ['SPECIAL-USE', 'CREATE-SPECIAL-USE']);
  assert.ok(createServer({ plugins: ['literalplus'] }).options.plugins.includes('LITERAL+'));
});

test('each catalog row (src/extensions/builtins.ts) repeats its folder\'s extension object, in the same order', () => {
  // The rows let a server resolve plugins without loading every folder; they must never say other than the objects.
  const objects = [...builtinExtensions().values()];
  assert.deepEqual(BUILTIN_ROWS.map((r) => r.name), objects.map((e) => e.name), 'the rows are in the order of the imports in src/extensions/index.ts');
  for (const e of objects) {
    const folder = BUILTIN_ROWS.find((r) => r.name === e.name)!.folder;
    const keys = (level: 'mailbox' | 'message' | 'server'): string[] | undefined => {
      const fields = e.storage?.[level];
      return fields?.length ? fields.map((f) => f.key) : undefined;
    };
    const storage = { mailbox: keys('mailbox'), message: keys('message'), server: keys('server') };
    const expected: BuiltinRow = JSON.parse(
      JSON.stringify({
        name: e.name,
        aliases: e.aliases?.length ? e.aliases : undefined,
        requires: e.requires?.length ? e.requires : undefined,
        optIn: e.optIn ? true : undefined,
        produces: e.produces?.length ? e.produces : undefined,
        storage: Object.values(storage).some(Boolean) ? storage : undefined,
        folder,
      }),
    );
    const row = BUILTIN_ROWS.find((r) => r.name === e.name)!;
    assert.deepEqual(row, expected, `the row of ${e.name} in src/extensions/builtins.ts must be ${JSON.stringify(expected)}`);
  }
});

test('a process that imports the server module alone loads a built-in when a server is given it', async () => {
  // As the rookery command does: no entry module imported the folders, so SORT is loaded by createServer itself.
  const script = `
    import { createServer } from './server.js';
    import { connect } from 'node:net';
    const server = createServer({ port: 0, plugins: ['SORT', 'SASL-IR'], storage: { INBOX: { messages: ['Subject: b\\r\\n\\r\\nx\\r\\n', 'Subject: a\\r\\n\\r\\ny\\r\\n'] } } });
    const sort = await import('./extensions/sort/index.js');
    const { imap } = await server.start();
    const socket = connect(imap.port, imap.host);
    let text = '';
    let sorted = false;
    let done = false;
    socket.on('data', (d) => {
      text += d;
      if (!sorted && text.includes('A2 OK')) {
        sorted = true;
        socket.write('A3 SORT (SUBJECT) UTF-8 ALL\\r\\n');
      }
      if (!done && /^A3 /m.test(text)) {
        done = true;
        socket.end();
        void server.stop().then(() => console.log(JSON.stringify({ plugins: server.options.plugins, same: server.options.extensions.includes(sort.extension), sort: /\\* SORT .*/.exec(text)?.[0] })));
      }
    });
    socket.write('A1 LOGIN testuser testpass\\r\\nA2 SELECT INBOX\\r\\n');
  `;
  const src = fileURLToPath(new URL('../../src/', import.meta.url));
  const { execFile } = await import('node:child_process');
  const out = await new Promise<string>((resolve, reject) =>
    execFile(process.execPath, ['--input-type=module', '-e', script], { cwd: src, encoding: 'utf8', timeout: 20_000 }, (err, stdout) => (err ? reject(err) : resolve(stdout))),
  );
  assert.deepEqual(JSON.parse(out), { plugins: ['SASL-IR', 'AUTH=PLAIN', 'SORT'], same: true, sort: '* SORT 2 1' });
});

interface Audit {
  appends: number;
  changes: string[];
}

/** A user plugin that uses most points; `hide` is a mailbox it hides from everyone but LIST of INBOX. */
function auditPlugin(name: string, options: { deny?: string } = {}): Plugin<Audit> {
  return {
    name,
    options: { type: 'object', properties: { quota: { type: 'integer', minimum: 0 } } },
    setup: ({ options: o }) => ({ appends: 0, changes: [], quota: o.quota }) as Audit,
    capabilities: () => [name],
    storage: {
      mailbox: [{ key: 'xaudit', validate: (v, report) => (typeof v === 'string' ? v : report('expected a string')) }],
    },
    checks: {
      append: ({ size }, state) => {
        if (size > 1000) throw new ServiceError('OVERQUOTA', `${name}: over quota`);
        state.appends++;
      },
    },
    access: (request) => {
      if (options.deny && request.path === options.deny) return { allow: false, reveal: request.right !== 'l' && request.path !== 'Secret' };
      return undefined;
    },
    onChange: (change, state) => {
      state.changes.push(change.kind === 'mailbox' ? `mailbox:${change.type}:${change.path}` : change.kind);
    },
    statusItems: [{ name: `${name}-APPENDS`, value: (_m, _s, state) => state.appends }],
    fetchItems: [{ name: `${name}-AUDIT`, value: (message) => String(getField(message, 'xnote') ?? 'none') }],
    searchKeys: [{ name: `${name}-BIG`, matches: (message) => message.size > 30 }],
    list: { attributes: (entry) => (entry.mailbox && getField(entry.mailbox, 'xaudit') !== undefined ? [`\\X-${name}`] : []) },
    select: { responses: (_s, selected) => [[atom('OK'), atom(`[${name} ${selected.exists}]`), atom('audited')]] },
    wrap: [{ command: 'NOOP', run: async (ctx, next) => ({ ...(await next()), text: `${name} saw NOOP` }) }],
  };
}

test('a user plugin reaches every point', async () => {
  const plugin = auditPlugin('XAUDIT', { deny: 'Secret' });
  const { server, port } = await startServer({
    plugins: ['UIDPLUS', plugin],
    pluginOptions: { XAUDIT: { quota: 5 } },
    storage: {
      INBOX: { messages: [{ raw: 'Subject: a\r\n\r\nsmall\r\n', xnote: 'first' }, 'Subject: b\r\n\r\nthis one is bigger than twenty\r\n'] },
      '': { folders: { Audited: { xaudit: 'yes' }, Secret: {}, Shown: {} } },
    },
  });
  try {
    const c = await rawSession(port);
    const [caps] = await c.command('CAPABILITY');
    assert.match(caps!, / XAUDIT$/);
    // Store field: the LIST attribute, hidden mailbox (no `l`), others listed.
    assert.deepEqual(await c.command('LIST "" "*"'), [
      '* LIST (\\X-XAUDIT) "/" "Audited"',
      '* LIST () "/" "INBOX"',
      '* LIST () "/" "Shown"',
      'T3 OK LIST completed',
    ]);
    // A hidden mailbox answers as a missing one.
    assert.match((await c.command('SELECT Secret'))[0]!, /^T4 NO \[NONEXISTENT\] /);
    assert.match((await c.command('STATUS Secret (MESSAGES)'))[0]!, /^T5 NO \[NONEXISTENT\] /);
    // STATUS item, checks before APPEND (and their effect on the state).
    c.write('A1 APPEND INBOX {10}\r\n');
    await c.line();
    c.write('Subject: x\r\n');
    assert.match(await c.line(), /^A1 OK \[APPENDUID /);
    c.write('A2 APPEND INBOX {1001}\r\n');
    await c.line();
    c.write(`${'x'.repeat(1001)}\r\n`);
    assert.match(await c.line(), /^A2 NO \[OVERQUOTA\] XAUDIT: over quota/);
    assert.deepEqual(await c.command('STATUS INBOX (MESSAGES XAUDIT-APPENDS)'), ['* STATUS "INBOX" (MESSAGES 3 XAUDIT-APPENDS 1)', 'T6 OK Status completed']);
    // SELECT responses, FETCH item (a message field from storage), SEARCH key, wrapper.
    const select = await c.command('SELECT INBOX');
    assert.ok(select.includes('* OK [XAUDIT 3] audited'), select.join('\n'));
    assert.deepEqual(await c.command('FETCH 1:2 (XAUDIT-AUDIT)'), ['* 1 FETCH (XAUDIT-AUDIT "first")', '* 2 FETCH (XAUDIT-AUDIT "none")', 'T8 OK Fetch completed']);
    assert.deepEqual(await c.command('SEARCH XAUDIT-BIG'), ['* SEARCH 2', 'T9 OK Search completed']);
    assert.deepEqual(await c.command('NOOP'), ['T10 OK XAUDIT saw NOOP']);
    // The control API reaches the state; the change feed fed it.
    const state = server.extension<Audit>('XAUDIT')!;
    assert.equal(state.appends, 1);
    assert.ok(state.changes.includes('append'));
    // Store fields: kept in snapshots, restored by reset.
    const audited = server.store.get('Audited')!;
    setField(audited, 'xaudit', 'changed');
    assert.equal(server.control.snapshot()['']!.folders!['Audited']!['xaudit'], 'changed');
    server.control.reset();
    assert.equal(getField(server.store.get('Audited')!, 'xaudit'), 'yes');
    assert.equal(state.changes.at(-1), 'reset');
    c.close();
  } finally {
    await server.stop();
  }
});

test('a FETCH item with arguments: parse reads them once, value gets them, the label is echoed, setsSeen sets \\Seen, a CommandFailure ends the FETCH', async () => {
  // `X-HEAD[n]`: the first n bytes of the message; `X-HEAD.PEEK[n]` the same without \Seen.
  const head = (name: string): NonNullable<Plugin['fetchItems']>[number] => ({
    name,
    parse: (args) => {
      args.char('[');
      const n = args.nzNumber();
      args.char(']');
      return { data: n, label: `X-HEAD[${n}]`, setsSeen: name === 'X-HEAD' };
    },
    value: (message, ctx) => {
      if ((ctx.data as number) > 1000) throw new CommandFailure({ status: 'NO', code: 'LIMIT', text: 'Too far' });
      return message.raw.subarray(0, ctx.data as number).toString('latin1');
    },
  });
  const plugin: Plugin = { name: 'XHEAD', fetchItems: [head('X-HEAD'), head('X-HEAD.PEEK')] };
  const { server, port } = await startServer({ plugins: [plugin] });
  try {
    server.control.addMessage('INBOX', { raw: 'Subject: hi\r\n\r\nbody\r\n' });
    server.control.addMessage('INBOX', { raw: 'Subject: two\r\n\r\nbody\r\n' });
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    assert.deepEqual(await c.command('FETCH 1 (X-HEAD.PEEK[4] x-head.peek[7])'), ['* 1 FETCH (X-HEAD[4] "Subj" X-HEAD[7] "Subject")', 'T3 OK Fetch completed']);
    assert.equal(server.control.listMessages('INBOX')[0]!.flags.includes('\\Seen'), false);
    const lines = await c.command('FETCH 1 X-HEAD[4]');
    assert.match(lines[0]!, /^\* 1 FETCH \(X-HEAD\[4\] "Subj" FLAGS \(\\Seen/);
    assert.equal(server.control.listMessages('INBOX')[0]!.flags.includes('\\Seen'), true);
    assert.match((await c.command('FETCH 1 X-HEAD[x]')).at(-1)!, /^T5 BAD/);
    assert.match((await c.command('FETCH 1 X-HEAD')).at(-1)!, /^T6 BAD/);
    assert.deepEqual(await c.command('FETCH 1:2 X-HEAD.PEEK[2000]'), ['T7 NO [LIMIT] Too far']);
    assert.equal((await c.command('NOOP')).at(-1), 'T8 OK NOOP completed');
    c.close();
  } finally {
    await server.stop();
  }
});

test('store field values are validated when the plugin is loaded, typo-checked always', () => {
  assert.throws(
    () => createServer({ plugins: [auditPlugin('XAUDIT')], storage: { INBOX: { xaudit: 5 } } }),
    /storage\.INBOX\.xaudit: expected a string/,
  );
  assert.throws(() => createServer({ plugins: [auditPlugin('XAUDIT')], storage: { INBOX: { xaudt: 'a' } } }), /storage\.INBOX\.xaudt: unknown key; did you mean "xaudit"\?/);
  // A built-in's keys are known without the plugin (fixtures carry them).
  assert.throws(() => createServer({ storage: { INBOX: { 'special-uze': '\\Sent' } } }), /did you mean "special-use"\?/);
});

test('two extensions adding the same command or item fail construction, naming both', () => {
  const a: Plugin = { name: 'XA', commands: [{ name: 'XCMD', states: ['authenticated'], run: () => ({ status: 'OK', text: 'a' }) }] };
  const b: Plugin = { name: 'XB', commands: [{ name: 'XCMD', states: ['authenticated'], run: () => ({ status: 'OK', text: 'b' }) }] };
  assert.throws(() => createServer({ plugins: [a, b] }), /XA and XB both add the command XCMD/);
  const c: Plugin = { name: 'XC', statusItems: [{ name: 'APPENDLIMIT', value: () => 1 }] };
  assert.throws(() => createServer({ plugins: ['APPENDLIMIT', c] }), /APPENDLIMIT and XC both add the STATUS item APPENDLIMIT/);
});

/** What a client sees from one server: capabilities, LIST, STATUS, a denied SELECT, a refused APPEND, NOOP. */
async function observe(plugins: NonNullable<Parameters<typeof createServer>[0]>['plugins']): Promise<string[]> {
  const { server, port } = await startServer({
    plugins,
    pluginOptions: { APPENDLIMIT: { limit: 100 } },
    storage: { INBOX: {}, '': { folders: { Sent: { 'special-use': '\\Sent' }, Secret: {}, Audited: { xaudit: 'x' } } } },
  });
  try {
    const c = await rawSession(port);
    const out: string[] = [];
    out.push(...(await c.command('CAPABILITY')));
    out.push(...(await c.command('LIST "" "*" RETURN (SPECIAL-USE)')));
    out.push(...(await c.command('STATUS INBOX (MESSAGES APPENDLIMIT XA-APPENDS XB-APPENDS)')));
    out.push(...(await c.command('SELECT Secret')));
    out.push(...(await c.command('NOOP')));
    c.write('A1 APPEND INBOX {101}\r\n');
    out.push(await c.line());
    c.close();
    return out;
  } finally {
    await server.stop();
  }
}

test('loading order never changes behaviour', async () => {
  // XA hides Secret (NONEXISTENT), XB denies it openly (NOPERM): the revealing deny wins in both orders.
  const xa = (): Plugin => auditPlugin('XA', { deny: 'Secret' });
  const xb = (): Plugin => ({ ...auditPlugin('XB'), access: (r) => (r.path === 'Secret' && r.right === 'r' ? { allow: false, reveal: true } : undefined) });
  const one = await observe(['IDLE', 'APPENDLIMIT', xa(), 'SPECIAL-USE', 'CHILDREN', xb(), 'UIDPLUS']);
  const two = await observe([xb(), 'UIDPLUS', 'CHILDREN', 'SPECIAL-USE', xa(), 'APPENDLIMIT', 'IDLE']);
  assert.deepEqual(one, two);
  assert.ok(one.some((l) => /NO \[NOPERM\]/.test(l)), one.join('\n'));
  assert.ok(one.includes('* LIST (\\HasNoChildren \\Sent) "/" "Sent"'), one.join('\n'));
  assert.ok(one.some((l) => /^A1 NO \[TOOBIG\]/.test(l)), one.join('\n'));
  // Wrappers nest in the canonical order too: XA's is outermost.
  assert.ok(one.includes('T6 OK XA saw NOOP'), one.join('\n'));
});

test('per-server state: two servers never share it', () => {
  const plugin = auditPlugin('XAUDIT');
  const s1 = createServer({ plugins: [plugin] });
  const s2 = createServer({ plugins: [plugin] });
  s1.control.addMessage('INBOX', { raw: 'Subject: a\r\n\r\nb\r\n', checks: true });
  assert.equal(s1.extension<Audit>('XAUDIT')!.appends, 1);
  assert.equal(s2.extension<Audit>('XAUDIT')!.appends, 0);
  assert.equal(s1.extension('NOPE'), undefined);
});

test('events: a type an extension declares is valid in the REST event stream and reaches it', async () => {
  const plugin: Plugin = { name: 'XEVENTS', events: ['xping'] };
  const { server, restPort } = await startRest({ plugins: [plugin] });
  try {
    assert.ok(server.eventTypes().includes('xping'));
    const stream = await openEvents(restPort, '/v1/events?types=xping');
    assert.equal(stream.status, 200);
    await stream.waitFor(/: connected/);
    (server as unknown as { emit(type: string, payload: unknown): boolean }).emit('xping', { n: 1 });
    assert.equal(await stream.waitFor(/event: xping\ndata: \{"n":1\}/), 'event: xping\ndata: {"n":1}');
    stream.close();
    const bad = await request(restPort, 'GET', '/v1/events?types=nope');
    assert.equal(bad.status, 400);
    assert.match(bad.json.error.message, /valid types: .*acl.*xping/);
  } finally {
    await server.stop();
  }
});

test('usage kept incrementally from the change feed (the QUOTA pattern) matches a recount after every kind of change', async () => {
  interface Usage { bytes: number; messages: number }
  const recount = (server: ReturnType<typeof createServer>): Usage => {
    let bytes = 0;
    let messages = 0;
    for (const m of server.store.list()) for (const msg of m.messages) (bytes += msg.size), messages++;
    return { bytes, messages };
  };
  let serverRef: ReturnType<typeof createServer> | null = null;
  const usage: Plugin<Usage> = {
    name: 'XUSAGE',
    setup: ({ server }) => {
      serverRef = server;
      return { ...recount(server) };
    },
    onChange: (change, state) => {
      if (change.kind === 'append') for (const m of change.messages) (state.bytes += m.size), state.messages++;
      else if (change.kind === 'expunge') for (const m of change.messages) (state.bytes -= m.size), state.messages--;
      else if (change.kind === 'mailbox' && change.type === 'delete' && change.mailbox) {
        for (const m of change.mailbox.messages) (state.bytes -= m.size), state.messages--;
      } else if (change.kind === 'reset') Object.assign(state, recount(serverRef!));
    },
  };
  const { server, port } = await startServer({
    plugins: ['MOVE', usage],
    storage: { INBOX: { messages: ['Subject: a\r\n\r\n1\r\n', 'Subject: b\r\n\r\n22\r\n'] }, '': { folders: { Box: { messages: ['Subject: c\r\n\r\n333\r\n'] } } } },
  });
  try {
    const state = server.extension<Usage>('XUSAGE')!;
    const check = (): void => assert.deepEqual({ ...state }, recount(server));
    check();
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    await c.command('COPY 1:2 Box');
    check();
    await c.command('MOVE 1 Box');
    check();
    await c.command('STORE 1 +FLAGS (\\Deleted)');
    await c.command('EXPUNGE');
    check();
    server.control.addMessage('Box', { raw: 'Subject: d\r\n\r\n4444\r\n' });
    server.control.renameMailbox('INBOX', { newPath: 'Old' });
    check();
    await c.command('LOGOUT');
    server.control.expungeMessages('Box', { uids: [1] });
    server.control.deleteMailbox('Old');
    check();
    server.control.reset();
    check();
  } finally {
    await server.stop();
  }
});

test('two plugins serving the same REST route fail construction', () => {
  const route = { method: 'GET' as const, path: '/v1/x/{id}', params: [{ name: 'id', type: 'string' as const, description: 'id' }], summary: 'x', status: 200, response: { type: 'object' as const }, handle: () => ({}) };
  assert.throws(
    () => createServer({ plugins: [{ name: 'XR1', routes: [route] }, { name: 'XR2', routes: [{ ...route, path: '/v1/x/{other}', params: [{ name: 'other', type: 'string', description: 'o' }] }] }] }),
    /XR1 and XR2 both add the REST route GET \/V1\/X\/\{\}/,
  );
});

test('the example of docs/extensions.md works as written', () => {
  interface Counter { count: number; max: number; reset(): void }
  const counter: Plugin<Counter> = {
    name: 'XCOUNT',
    options: { type: 'object', properties: { max: { type: 'integer', minimum: 1 } } },
    setup: ({ options }) => {
      const max = (options.max as number | undefined) ?? 3;
      const state: Counter = { count: 0, max, reset: () => void (state.count = 0) };
      return state;
    },
    capabilities: () => ['XCOUNT'],
    checks: {
      append: (_input, state) => {
        if (state.count >= state.max) throw new ServiceError('LIMIT', 'No more appends');
        state.count++;
      },
    },
    onChange: (change, state) => {
      if (change.kind === 'reset') state.reset();
    },
    statusItems: [{ name: 'XCOUNT', value: (_mailbox, _session, state) => state.count }],
  };
  const server = createServer({ plugins: [counter], pluginOptions: { XCOUNT: { max: 2 } } });
  const add = (): unknown => server.control.addMessage('INBOX', { raw: 'Subject: x\r\n\r\ny\r\n', checks: true });
  add();
  add();
  assert.throws(add, /No more appends/);
  assert.equal(server.extension<Counter>('XCOUNT')!.count, 2);
  server.control.reset();
  assert.equal(server.extension<Counter>('XCOUNT')!.count, 0);
});

test('a plugin adds a STORE data item (`store.items`): [+-]NAME[.SILENT], answered from its FETCH item; clashes fail construction', async () => {
  // Tags kept per message in a store field: STORE +XTAG (a b) / -XTAG / XTAG, FETCH XTAG.
  const tags = (m: { extra: Record<string, unknown> | null }): string[] => (getField(m, 'xtags') as string[] | undefined) ?? [];
  const plugin: Plugin = {
    name: 'XTAGS',
    fetchItems: [{ name: 'XTAG', value: (m) => tags(m) }],
    store: {
      items: [
        {
          name: 'XTAG',
          parse: (args) => args.list(() => args.atom()),
          apply: (ctx) => {
            const given = ctx.value as string[];
            if (given.includes('NOPE')) return { status: 'NO', text: 'not that tag' };
            for (const { message } of ctx.targets) {
              const now = new Set(ctx.mode === 'set' ? [] : tags(message));
              for (const t of given) if (ctx.mode === 'remove') now.delete(t); else now.add(t);
              setField(message, 'xtags', [...now]);
            }
            return undefined;
          },
        },
      ],
    },
  };
  const { server, port } = await startServer({ plugins: [plugin] });
  try {
    server.control.addMessage('INBOX', { raw: 'Subject: x\r\n\r\ny\r\n' });
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    assert.deepEqual(await c.command('STORE 1 +XTAG (a b)'), ['* 1 FETCH (XTAG ("a" "b"))', 'T3 OK Store completed']);
    assert.deepEqual(await c.command('UID STORE 1 -XTAG (a)'), ['* 1 FETCH (UID 1 XTAG ("b"))', 'T4 OK Store completed']);
    assert.deepEqual(await c.command('STORE 1 XTAG.SILENT (c)'), ['T5 OK Store completed']);
    assert.deepEqual(await c.command('FETCH 1 XTAG'), ['* 1 FETCH (XTAG ("c"))', 'T6 OK Fetch completed']);
    assert.deepEqual(await c.command('STORE 1 +XTAG (NOPE)'), ['T7 NO not that tag']);
    assert.match((await c.command('STORE 1 +XTAG a'))[0]!, /^T8 BAD/);
    assert.match((await c.command('STORE 1 +XTAGS (a)'))[0]!, /^T9 BAD/);
    await c.command('EXAMINE INBOX');
    assert.match((await c.command('STORE 1 +XTAG (a)'))[0]!, /^T11 NO \[READ-ONLY\]/);
    c.close();
  } finally {
    await server.stop();
  }
  const item = { name: 'XTAG', parse: () => null, apply: () => undefined };
  assert.throws(() => createServer({ plugins: [{ name: 'XA', store: { items: [item] } }, { name: 'XB', store: { items: [item] } }] }), /XA and XB both add the STORE item XTAG/);
  assert.throws(() => createServer({ plugins: [{ name: 'XC', store: { items: [{ ...item, name: 'FLAGS' }] } }] }), /STORE item FLAGS/);
});

test('an opt-in built-in (X-GM-EXT-1) is left out of plugins: "all" and loads when named', () => {
  const optIn = [...builtinExtensions().values()].filter((e) => e.optIn).map((e) => e.name);
  assert.deepEqual(optIn, ['X-GM-EXT-1']);
  const all = createServer({ plugins: 'all' }).options.plugins;
  for (const name of optIn) assert.ok(!all.includes(name), name);
  assert.ok(createServer({ plugins: ['all', ...optIn] }).options.plugins.includes('X-GM-EXT-1'));
});
