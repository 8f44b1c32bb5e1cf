/**
 * The interface points OBJECTID, SAVEDATE and UTF8=ACCEPT brought, used by
 * user plugin objects as any plugin would: a CREATE result code, STATUS
 * items answering any value, APPEND data forms (two plugins with one form
 * fail construction), `mayEnable`, the per-session `utf8` mode, the bytes
 * in the append check, and store fields `shown` in the control API.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { atom, createServer, ServiceError, type Plugin } from '../../src/index.js';
import { rawSession, startServer } from '../helpers/server.js';

test('a plugin adds a CREATE code, a list-valued STATUS item, an APPEND data form, and sees the bytes in the append check', async () => {
  const seen: number[] = [];
  const plugin: Plugin = {
    name: 'XPOINTS',
    codes: { create: (mailbox) => `XMADE ${mailbox.path.length}` },
    statusItems: [{ name: 'XTAGS', value: () => [atom('a'), 'b c', null] }],
    // `X-REVERSED literal`: the message bytes come reversed.
    appendForms: [{ name: 'X-REVERSED', parse: (args) => { args.sp(); return Buffer.from(args.literal()).reverse(); } }],
    checks: {
      append: ({ raw }) => {
        if (raw) seen.push(raw.length);
        if (raw?.includes('refuse')) throw new ServiceError('CANNOT', 'refused by content');
      },
    },
  };
  const { server, port } = await startServer({ plugins: [plugin] });
  try {
    const c = await rawSession(port);
    assert.deepEqual(await c.command('CREATE Abc'), ['T2 OK [XMADE 3] Create completed']);
    assert.deepEqual(await c.command('STATUS Abc (MESSAGES XTAGS)'), ['* STATUS "Abc" (MESSAGES 0 XTAGS (a "b c" NIL))', 'T3 OK Status completed']);
    const m = 'Subject: x\r\n\r\nbody\r\n';
    assert.match((await c.command(`APPEND Abc X-REVERSED {${m.length}+}\r\n${[...m].reverse().join('')}`))[0]!, /^T4 OK/);
    assert.equal(server.store.get('Abc')!.messages[0]!.raw.toString(), m);
    assert.match((await c.command(`APPEND Abc {7+}\r\nrefuse!`))[0]!, /^T5 NO \[CANNOT\] refused by content/);
    assert.match((await c.command(`APPEND Abc X-OTHER {1+}\r\nx`))[0]!, /^T6 BAD/);
    assert.deepEqual(seen, [m.length, 7]);
    c.close();
  } finally {
    await server.stop();
  }
  const twin = (name: string): Plugin => ({ name, appendForms: [{ name: 'X-FORM', parse: (args) => args.literal() }] });
  assert.throws(() => createServer({ plugins: [twin('XA'), twin('XB')] }), /XA and XB both add the APPEND data form X-FORM/);
});

test('a plugin decides when its capability may be enabled and turns on the UTF-8 mode of a session', async () => {
  const plugin: Plugin = {
    name: 'XUTF',
    requires: ['ENABLE'],
    capabilities: () => ['X-UTF'],
    enable: ['X-UTF'],
    mayEnable: (session) => session.selected === null,
    utf8: (session) => session.enabled.has('X-UTF'),
  };
  const { server, port } = await startServer({ plugins: [plugin], storage: { INBOX: {}, '': { folders: { 'K&AOQ-se': {} } } } });
  try {
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    assert.deepEqual(await c.command('ENABLE X-UTF'), ['* ENABLED', 'T3 OK Enabled']);
    assert.deepEqual((await c.command('LIST "" K*'))[0], '* LIST () "/" "K&AOQ-se"');
    const d = await rawSession(port);
    assert.deepEqual(await d.command('ENABLE X-UTF'), ['* ENABLED X-UTF', 'T2 OK Enabled']);
    d.write(Buffer.from('U1 LIST "" K*\r\n'));
    assert.equal(Buffer.from((await d.until('U1'))[0]!, 'latin1').toString('utf8'), '* LIST () "/" "Käse"');
    c.close();
    d.close();
  } finally {
    await server.stop();
  }
});

test('store fields marked shown appear in MailboxInfo/MessageInfo fields while their plugin is loaded', () => {
  const plugin: Plugin = { name: 'XSHOWN', storage: { mailbox: [{ key: 'xLabel', shown: true }, { key: 'xHidden' }], message: [{ key: 'xScore', shown: true }] } };
  const storage = { INBOX: { xLabel: 'in', xHidden: 1, messages: [{ raw: 'Subject: a\r\n\r\na\r\n', xScore: 7 }, 'Subject: b\r\n\r\nb\r\n'] } };
  const server = createServer({ plugins: [plugin], storage });
  assert.deepEqual(server.control.getMailbox('INBOX').fields, { xLabel: 'in' });
  assert.deepEqual(server.control.listMessages('INBOX').map((m) => m.fields), [{ xScore: 7 }, undefined]);
  assert.equal(createServer({ storage }).control.getMailbox('INBOX').fields, undefined);
});
