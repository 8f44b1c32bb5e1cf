/**
 * Quirk presets over real sockets: each preset starts, imapflow connects
 * and sees the capabilities, greeting and layout the provider's public
 * logs show (docs/presets.md lists them; the expectations below are taken
 * from those sources, not from our output); each script-rule quirk on a
 * raw socket; options next to a preset win over it; unknown names are
 * option errors with a suggestion; `rookery --preset`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { ImapFlow } from 'imapflow';
import { createServer, presets, PRESET_NAMES, type PresetName, type ScriptRule, type ServerOptions } from '../../src/index.js';
import { layOptions } from '../../src/presets/index.js';
import { RawClient } from '../helpers/raw-client.js';
import { CLI, exited, startCli } from '../helpers/cli.js';
import { mail, rawSession, startServer } from '../helpers/server.js';
import { invalid } from './helpers.js';

/** What each provider's sources show, as far as built-in plugins can serve it. */
const EXPECTED: Record<PresetName, { before: string[]; after: string[]; absent: string[]; delimiter: string; mailboxes: string[] }> = {
  // imapsync #338 (after login), MailKit #1276 (before), jakartaee/mail-api #8 (LIST).
  gmail: {
    before: ['IMAP4rev1', 'SASL-IR', 'AUTH=PLAIN', 'AUTH=XOAUTH2', 'AUTH=OAUTHBEARER', 'X-GM-EXT-1', 'ID', 'IDLE'],
    after: ['UNSELECT', 'IDLE', 'NAMESPACE', 'QUOTA', 'ID', 'CHILDREN', 'X-GM-EXT-1', 'UIDPLUS', 'COMPRESS=DEFLATE', 'ENABLE', 'MOVE', 'CONDSTORE', 'ESEARCH', 'LIST-STATUS', 'LITERAL-', 'SPECIAL-USE', 'APPENDLIMIT=35651584'],
    absent: ['LITERAL+', 'SORT', 'THREAD=REFERENCES', 'QRESYNC'],
    delimiter: '/',
    mailboxes: ['INBOX', '[Gmail]', '[Gmail]/All Mail', '[Gmail]/Drafts', '[Gmail]/Important', '[Gmail]/Sent Mail', '[Gmail]/Spam', '[Gmail]/Starred', '[Gmail]/Trash'],
  },
  // MailKit #1494, node-imap #523; Microsoft Graph's mailFolder page for the names.
  outlook: {
    before: ['IMAP4rev1', 'AUTH=PLAIN', 'AUTH=XOAUTH2', 'SASL-IR', 'UIDPLUS', 'ID', 'UNSELECT', 'CHILDREN', 'IDLE', 'NAMESPACE', 'LITERAL+'],
    after: ['MOVE', 'UIDPLUS', 'IDLE', 'NAMESPACE', 'LITERAL+'],
    absent: ['SPECIAL-USE', 'CONDSTORE', 'ENABLE', 'ESEARCH'],
    delimiter: '/',
    mailboxes: ['INBOX', 'Archive', 'Deleted Items', 'Drafts', 'Sent Items'],
  },
  // MailKit #242 and #358.
  yahoo: {
    before: ['IMAP4rev1', 'ID', 'MOVE', 'NAMESPACE', 'UIDPLUS', 'LITERAL+', 'CHILDREN', 'AUTH=PLAIN', 'AUTH=XOAUTH2'],
    after: ['ID', 'MOVE', 'NAMESPACE', 'UIDPLUS', 'LITERAL+'],
    absent: ['IDLE', 'SPECIAL-USE', 'CONDSTORE'],
    delimiter: '/',
    // imapflow takes "Inbox" for INBOX (the raw test below sees the name itself).
    mailboxes: ['INBOX', 'Bulk Mail', 'Draft', 'Sent'],
  },
  // nextcloud/mail #3401, QuickMail #149.
  icloud: {
    before: ['IMAP4rev1', 'SASL-IR', 'AUTH=PLAIN'],
    after: ['CONDSTORE', 'ENABLE', 'QRESYNC', 'QUOTA', 'NAMESPACE', 'UIDPLUS', 'CHILDREN', 'BINARY', 'UNSELECT', 'SORT', 'ESEARCH', 'ESORT', 'THREAD=ORDEREDSUBJECT', 'THREAD=REFERENCES', 'CONTEXT=SEARCH', 'CONTEXT=SORT', 'WITHIN', 'SEARCHRES', 'METADATA', 'ID', 'IDLE', 'LIST-STATUS', 'CATENATE'],
    absent: ['SPECIAL-USE', 'MOVE', 'LITERAL+', 'MULTIAPPEND', 'URL-PARTIAL'],
    delimiter: '/',
    mailboxes: ['INBOX', 'Archive', 'Deleted Messages', 'Sent Messages'],
  },
  // node-imap #354, nextcloud/mail #372, dovecot-xaps-plugin #12; Dovecot's docs for names and separator.
  dovecot: {
    before: ['IMAP4rev1', 'LITERAL+', 'SASL-IR', 'ID', 'ENABLE', 'IDLE', 'AUTH=PLAIN'],
    after: ['SORT', 'SORT=DISPLAY', 'THREAD=REFERENCES', 'THREAD=ORDEREDSUBJECT', 'UNSELECT', 'CHILDREN', 'NAMESPACE', 'UIDPLUS', 'CONDSTORE', 'QRESYNC', 'ESEARCH', 'ESORT', 'SEARCHRES', 'WITHIN', 'CONTEXT=SEARCH', 'LIST-STATUS', 'BINARY', 'MOVE', 'QUOTA', 'SPECIAL-USE', 'MULTIAPPEND', 'URL-PARTIAL', 'CATENATE'],
    absent: ['X-GM-EXT-1', 'LITERAL-', 'CONTEXT=SORT'],
    delimiter: '.',
    mailboxes: ['INBOX', 'Drafts', 'Junk', 'Sent', 'Trash'],
  },
};

/** Capabilities of a `* OK [CAPABILITY ...]` or `* CAPABILITY ...` line. */
/** A preset's script rules. */
const rulesOf = (name: PresetName): ScriptRule[] => presets[name].script;

function capsOf(line: string): string[] {
  const m = /CAPABILITY ([^\]\r\n]*)/.exec(line);
  return m ? m[1]!.split(' ') : [];
}

async function withServer(options: ServerOptions, run: (port: number) => Promise<void>): Promise<void> {
  const { server, port } = await startServer(options);
  try {
    await run(port);
  } finally {
    await server.stop();
  }
}

test('the presets are the documented five, each read a fresh copy', () => {
  assert.deepEqual([...PRESET_NAMES], ['gmail', 'outlook', 'yahoo', 'icloud', 'dovecot']);
  assert.deepEqual(Object.keys(presets), [...PRESET_NAMES]);
  const copy = presets.gmail;
  assert.notEqual(copy, presets.gmail);
  copy.greeting = 'changed';
  copy.plugins = [];
  assert.equal(presets.gmail.greeting, 'Gimap ready for requests from 127.0.0.1 k2if6111336rvb.0');
  assert.ok(Array.isArray(presets.gmail.plugins) && presets.gmail.plugins.length > 0);
  // Every preset is plain JSON: a config file can hold it.
  for (const name of PRESET_NAMES) assert.deepEqual(JSON.parse(JSON.stringify(presets[name])), presets[name]);
});

for (const name of PRESET_NAMES) {
  test(`preset ${name}: greeting and capabilities on a raw socket, layout and capabilities through imapflow`, { timeout: 20000 }, async () => {
    const want = EXPECTED[name];
    await withServer({ preset: name, storage: { INBOX: { messages: [mail('hello')] } } }, async (port) => {
      const raw = await RawClient.connect(port);
      const greeting = await raw.line();
      const text = presets[name].greeting!;
      if (presets[name].greetingCapabilities === false) {
        // Gmail and Microsoft 365 greet without a CAPABILITY code.
        assert.equal(greeting, `* OK ${text}`);
      } else {
        assert.match(greeting, /^\* OK \[CAPABILITY /);
        assert.ok(greeting.endsWith(`] ${text}`), greeting);
      }
      const before = capsOf((await raw.command('CAPABILITY'))[0]!);
      for (const cap of want.before) assert.ok(before.includes(cap), `${name}: ${cap} before login in ${before.join(' ')}`);
      raw.close();
      const session = await rawSession(port);
      const after = capsOf((await session.command('CAPABILITY'))[0]!);
      for (const cap of want.after) assert.ok(after.includes(cap), `${name}: ${cap} after login in ${after.join(' ')}`);
      for (const cap of want.absent) assert.ok(!after.includes(cap), `${name}: ${cap} must not be offered`);
      session.close();

      const client = new ImapFlow({ host: '127.0.0.1', port, secure: false, auth: { user: 'testuser', pass: 'testpass' }, logger: false });
      client.on('error', () => undefined);
      try {
        await client.connect();
        // imapflow read the same capabilities (asking for them where the greeting has none).
        for (const cap of want.after) assert.ok(client.capabilities.has(cap) || client.capabilities.has(cap.split('=')[0]!), `${name}: imapflow lacks ${cap}`);
        const list = await client.list();
        const paths = list.map((m) => m.path).sort();
        assert.deepEqual(paths, [...want.mailboxes].sort());
        for (const m of list) if (m.path !== 'INBOX' && m.path !== 'Inbox') assert.equal(m.delimiter, want.delimiter, m.path);
        const lock = await client.getMailboxLock('INBOX');
        try {
          const message = await client.fetchOne('*', { envelope: true, source: true });
          assert.ok(message && message.envelope?.subject === 'hello');
          assert.match(message.source!.toString(), /Subject: hello/);
        } finally {
          lock.release();
        }
        await client.logout();
      } finally {
        client.close();
      }
    });
  });
}

test('gmail: the special-use attributes of the [Gmail] folders and the \\Noselect parent', async () => {
  await withServer({ preset: 'gmail' }, async (port) => {
    const c = await rawSession(port);
    const lines = await c.command('LIST "" "*"');
    const attrs = (path: string): string => lines.find((l) => l.endsWith(`"${path}"`) || l.endsWith(` ${path}`)) ?? '';
    assert.match(attrs('[Gmail]'), /\\Noselect/);
    assert.match(attrs('[Gmail]/All Mail'), /\\All/);
    assert.match(attrs('[Gmail]/Sent Mail'), /\\Sent/);
    assert.match(attrs('[Gmail]/Spam'), /\\Junk/);
    assert.match(attrs('[Gmail]/Starred'), /\\Flagged/);
    assert.match(attrs('[Gmail]/Important'), /\\Important/);
    const status = await c.command('STATUS INBOX (APPENDLIMIT)');
    assert.match(status[0]!, /APPENDLIMIT 35651584/);
    c.close();
  });
});

test('outlook: a LIST pattern with an escaped quote gets BAD Command Argument Error. 12; others are served', async () => {
  await withServer({ preset: 'outlook' }, async (port) => {
    const c = await rawSession(port);
    const bad = await c.command('LIST "" "Deleted Items/Nature\'s Way/V \\"Vxx\\" Y/%"');
    assert.match(bad[bad.length - 1]!, /^T\d+ BAD Command Argument Error\. 12$/);
    const ok = await c.command('LIST "" "*"');
    assert.ok(ok.some((l) => l.includes('"Deleted Items"')));
    assert.match(ok[ok.length - 1]!, /^T\d+ OK/);
    c.close();
  });
});

test('outlook: UID FETCH with an empty item list gets BAD Command Argument Error. 11; a real one is served', async () => {
  await withServer({ preset: 'outlook', storage: { INBOX: { messages: [mail('one')] } } }, async (port) => {
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    const bad = await c.command('UID FETCH 1 ()');
    assert.deepEqual(bad.slice(-1).map((l) => l.replace(/^T\d+/, 'T')), ['T BAD Command Argument Error. 11']);
    const ok = await c.command('UID FETCH 1 (FLAGS)');
    assert.match(ok[0]!, /^\* 1 FETCH \(/);
    assert.match(ok[ok.length - 1]!, /^T\d+ OK/);
    c.close();
  });
});

test('outlook: SEARCH with a CHARSET other than US-ASCII is NO [BADCHARSET (US-ASCII)], as Exchange answers; US-ASCII and no CHARSET are searched', async () => {
  await withServer({ preset: 'outlook', storage: { INBOX: { messages: [mail('hello')] } } }, async (port) => {
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    // MailKit issue #16 and paperless-ngx issue #643 show this exchange with Exchange / Microsoft 365.
    const refused = 'NO [BADCHARSET (US-ASCII)] The specified charset is not supported.';
    for (const command of ['UID SEARCH CHARSET UTF-8 HEADER Message-Id <a@b>', 'SEARCH CHARSET utf-8 ALL', 'search charset "UTF-8" SUBJECT hello', 'SEARCH CHARSET ISO-8859-1 ALL']) {
      const lines = await c.command(command);
      assert.deepEqual(lines, [`${lines.at(-1)!.split(' ')[0]} ${refused}`], command);
    }
    assert.deepEqual((await c.command('SEARCH CHARSET US-ASCII SUBJECT hello')).slice(0, 1), ['* SEARCH 1']);
    assert.deepEqual((await c.command('UID SEARCH CHARSET "us-ascii" ALL')).slice(0, 1), ['* SEARCH 1']);
    assert.deepEqual((await c.command('SEARCH SUBJECT hello')).slice(0, 1), ['* SEARCH 1']);
    c.close();
  });
  // Without the preset UTF-8 is a charset Rookery searches in.
  await withServer({ storage: { INBOX: { messages: [mail('hello')] } } }, async (port) => {
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    assert.deepEqual((await c.command('SEARCH CHARSET UTF-8 SUBJECT hello')).slice(0, 1), ['* SEARCH 1']);
    c.close();
  });
});

test('outlook: IDLE answers with Exchange\'s continuation text and still ends on DONE', async () => {
  await withServer({ preset: 'outlook' }, async (port) => {
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    c.write('I1 IDLE\r\n');
    assert.equal(await c.line(), '+ IDLE accepted, awaiting DONE command.');
    c.write('DONE\r\n');
    assert.match(await c.line(), /^I1 OK/);
    c.close();
  });
});

test('yahoo: LIST "" "INBOX" names it "Inbox"; other LIST lines are untouched', async () => {
  await withServer({ preset: 'yahoo' }, async (port) => {
    const c = await rawSession(port);
    const inbox = await c.command('LIST "" "INBOX"');
    assert.equal(inbox[0], '* LIST (\\HasNoChildren) "/" "Inbox"');
    const sent = await c.command('LIST "" "Sent"');
    assert.match(sent[0]!, /^\* LIST \([^)]*\) "\/" "?Sent"?$/);
    // The mailbox is still INBOX: selecting it works under either name.
    assert.match((await c.command('SELECT Inbox')).slice(-1)[0]!, /^T\d+ OK/);
    c.close();
  });
});

test('icloud: FETCH RFC822 answers OK without the RFC822 item; BODY[] and RFC822.SIZE are served', async () => {
  await withServer({ preset: 'icloud', storage: { INBOX: { messages: [mail('one'), mail('two')] } } }, async (port) => {
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    const rfc822 = await c.command('FETCH 1 RFC822');
    assert.equal(rfc822.length, 1, rfc822.join('\n'));
    assert.match(rfc822[0]!, /^T\d+ OK/);
    const uid = await c.command('UID FETCH 2 (UID RFC822)');
    assert.ok(!uid.some((l) => l.includes('RFC822 {')), uid.join('\n'));
    assert.match(uid[uid.length - 1]!, /^T\d+ OK/);
    const body = await c.command('FETCH 1 (BODY.PEEK[] RFC822.SIZE)');
    assert.match(body[0]!, /^\* 1 FETCH \(.*RFC822\.SIZE \d+/s);
    assert.match(body[0]!, /Subject: one/);
    c.close();
  });
});

test('dovecot: "* OK Still here" while a client IDLEs (rule as the preset has it, with a short interval), not outside IDLE', { timeout: 10000 }, async () => {
  const rule = rulesOf('dovecot')[0]!;
  // The preset's own values: Dovecot's imap_idle_notify_interval default, during IDLE only.
  assert.equal(rule.quietFor, 120_000);
  assert.equal(rule.command, 'IDLE');
  await withServer({ preset: 'dovecot', script: [{ ...rulesOf('dovecot')[0]!, quietFor: 150 }] }, async (port) => {
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    c.write('I1 IDLE\r\n');
    assert.equal(await c.line(), '+ idling');
    assert.equal(await c.line(2000), '* OK Still here');
    assert.equal(await c.line(2000), '* OK Still here');
    c.write('DONE\r\n');
    assert.match(await c.line(), /^I1 OK/);
    await new Promise((r) => setTimeout(r, 400));
    assert.equal(c.pending(), '');
    c.close();
  });
});

test('dovecot: 8-bit quoted strings (imapfilter\'s UID SEARCH CHARSET UTF-8 SUBJECT "Grüße"), any escape and extra spaces are taken as Dovecot takes them; the client checker still records the 8-bit one; strict without the preset', async () => {
  // Subjects that are Grüße once decoded (RFC 2047 UTF-8, raw UTF-8, RFC 2047 Latin-1), and one that is not.
  const messages = [
    'Subject: =?UTF-8?Q?Gr=C3=BC=C3=9Fe?= aus Wien\r\n\r\nx\r\n',
    'Subject: Grüße\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nGrüße\r\n',
    'Subject: =?ISO-8859-1?Q?Gr=FC=DFe?=\r\n\r\nx\r\n',
    'Subject: plain\r\n\r\nx\r\n',
  ].map((raw, i) => ({ raw, uid: i + 1 }));
  const commands: [string, string[]][] = [
    ['UID SEARCH CHARSET UTF-8 SUBJECT "Grüße"', ['* SEARCH 1 2 3']],
    ['SEARCH SUBJECT "Grüße"', ['* SEARCH 1 2 3']],
    ['SEARCH CHARSET UTF-8 BODY "Grüße"', ['* SEARCH 2']],
    ['SEARCH SUBJECT "\\G\\r\\ü\\ß\\e"', ['* SEARCH 1 2 3']],
    ['SEARCH SUBJECT "a\\b"', ['* SEARCH']],
    ['FETCH 1  (UID  FLAGS )  ', ['* 1 FETCH (UID 1 FLAGS (\\Seen))']],
    ['SEARCH OR  SEEN  ( UNSEEN  ALL )', ['* SEARCH 1 2 3 4']],
    ['STORE 2  +FLAGS.SILENT ( \\Flagged  \\Answered )', []],
    ['UID FETCH 1,4, (UID)', ['* 1 FETCH (UID 1)', '* 4 FETCH (UID 4)']],
  ];
  // Dovecot 2.3 has no UTF8=ACCEPT to offer.
  assert.ok(!presets.dovecot.plugins.includes('UTF8=ACCEPT'));
  assert.deepEqual(presets.dovecot.leniency, { eightBitQuoted: true, anyEscape: true, extraSpaces: true, trailingComma: true });
  for (const preset of ['dovecot', undefined] as const) {
    const { server, port } = await startServer({ ...(preset ? { preset } : {}), storage: { INBOX: { messages: messages.map((m) => ({ ...m, flags: m.uid === 1 ? ['\\Seen'] : [] })) } } });
    try {
      const c = await rawSession(port);
      await c.command('SELECT INBOX');
      for (const [command, untagged] of commands) {
        const lines = await c.command(command);
        if (preset) assert.deepEqual(lines, [...untagged, lines.at(-1)!], command);
        assert.match(lines.at(-1)!, preset ? /^T\d+ OK / : /^T\d+ BAD /, `${preset ?? 'default'}: ${command}: ${lines.join(' | ')}`);
      }
      // Also lenient, the tag and the command name take one space, as in Dovecot; 8-bit mailbox names must
      // still be modified UTF-7 (NO, as Dovecot's "Mailbox name is not valid mUTF-7").
      assert.match((await c.command(' NOOP')).at(-1)!, /^T\d+ BAD /);
      assert.match((await c.command('UID  FETCH 1 FLAGS')).at(-1)!, /^T\d+ BAD /);
      if (preset) assert.match((await c.command('CREATE "Grüße"')).at(-1)!, /^T\d+ NO /);
      // The checker records the 8-bit strings either way (its report is the client's, not the server's).
      assert.ok(server.control.clientFindings().some((f) => f.rule === '8bit-without-utf8'), preset ?? 'default');
      c.close();
    } finally {
      await server.stop();
    }
  }
  // Each flag on its own, without the preset; typos and wrong types are option errors.
  const { server, port } = await startServer({ leniency: { eightBitQuoted: true }, storage: { INBOX: { messages } } });
  try {
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    assert.deepEqual(await c.command('SEARCH SUBJECT "Grüße"'), ['* SEARCH 1 2 3', 'T3 OK Search completed']);
    assert.match((await c.command('SEARCH  ALL')).at(-1)!, /^T4 BAD /);
    assert.match((await c.command('SEARCH SUBJECT "a\\b"')).at(-1)!, /^T5 BAD /);
    c.close();
  } finally {
    await server.stop();
  }
  assert.match(invalid(() => createServer({ leniency: { eightBitQuote: true } as never })), /^leniency\.eightBitQuote: unknown key; did you mean "eightBitQuoted"\?/m);
  assert.match(invalid(() => createServer({ leniency: { extraSpaces: 'yes' } as never })), /^leniency\.extraSpaces: expected/m);
  assert.match(invalid(() => createServer({ leniency: true as never })), /^leniency: expected an object/m);
  // A caller's flag wins over the preset's, the others stay (objects merge key by key).
  assert.deepEqual(createServer({ preset: 'dovecot', leniency: { extraSpaces: false } }).options.leniency, { eightBitQuoted: true, anyEscape: true, extraSpaces: false, trailingComma: true });
});

test('options next to a preset win: scalars and arrays replace, objects merge key by key', async () => {
  const { server, port } = await startServer({
    preset: 'gmail',
    greeting: 'Mine',
    greetingCapabilities: true,
    maxConnections: 3,
    plugins: [...presets.gmail.plugins, 'SORT'],
    pluginOptions: { APPENDLIMIT: { limit: 1000 } },
    storage: { INBOX: { messages: [mail('kept')] }, '': { folders: { Work: {} } } },
  });
  try {
    assert.equal(server.options.preset, 'gmail');
    assert.equal(server.options.greeting, 'Mine');
    assert.equal(server.options.maxConnections, 3);
    assert.ok(server.options.plugins.includes('SORT') && server.options.plugins.includes('X-GM-EXT-1'));
    const c = await RawClient.connect(port);
    const greeting = await c.line();
    assert.match(greeting, /^\* OK \[CAPABILITY [^\]]*APPENDLIMIT=1000[^\]]*\] Mine$/);
    c.close();
    const paths = server.control.listMailboxes().map((m) => m.path);
    for (const p of ['INBOX', 'Work', '[Gmail]/All Mail', '[Gmail]/Trash']) assert.ok(paths.includes(p), `${p} in ${paths.join(', ')}`);
    assert.equal(server.control.listMessages('INBOX').length, 1);
  } finally {
    await server.stop();
  }
  // A script of one's own replaces the preset's rules (spread them to keep them).
  const own = createServer({ preset: 'outlook', script: [] });
  assert.deepEqual(own.options.script, []);
  const kept = createServer({ preset: 'outlook', script: [...rulesOf('outlook'), { on: 'command', command: 'NOOP', send: '$TAG NO x\r\n' }] });
  assert.equal(kept.options.script.length, rulesOf('outlook').length + 1);
  // INBOX in another case is the preset's INBOX: the two merge.
  const icloud = createServer({ preset: 'icloud', storage: { inbox: { messages: [mail('lower')] } } });
  assert.ok(icloud.control.getMailbox('INBOX').flags.includes('\\Noinferiors'));
  assert.equal(icloud.control.listMessages('INBOX').length, 1);
  // Undefined means "not given".
  assert.equal(createServer({ preset: 'dovecot', greeting: undefined }).options.greeting, 'Dovecot ready.');
});

test('layOptions: the merge rule on its own', () => {
  const base = { a: 1, list: [1, 2], obj: { x: 1, deep: { y: 1 } }, keep: 'k' };
  const out = layOptions(base, { a: 2, list: [3], obj: { deep: { z: 2 } }, extra: true, keep: undefined });
  assert.deepEqual(out, { a: 2, list: [3], obj: { x: 1, deep: { y: 1, z: 2 } }, keep: 'k', extra: true });
  assert.deepEqual(base, { a: 1, list: [1, 2], obj: { x: 1, deep: { y: 1 } }, keep: 'k' });
  // A key named __proto__ is data, not the prototype.
  const odd = layOptions({}, JSON.parse('{"__proto__": {"polluted": true}}') as Record<string, unknown>);
  assert.ok(Object.hasOwn(odd, '__proto__'));
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});

test('an unknown preset is an option error with the likely name; any case is taken', () => {
  assert.match(invalid(() => createServer({ preset: 'gmial' as PresetName })), /^preset: unknown preset "gmial"; did you mean "gmail"\? \(presets: gmail, outlook, yahoo, icloud, dovecot\)$/m);
  assert.match(invalid(() => createServer({ preset: 'outlok' as PresetName })), /did you mean "outlook"\?/);
  assert.match(invalid(() => createServer({ preset: 'exchange' as PresetName })), /^preset: unknown preset "exchange" \(presets: /m);
  assert.match(invalid(() => createServer({ preset: 3 as unknown as PresetName })), /^preset: expected one of gmail, outlook, yahoo, icloud, dovecot, got 3$/m);
  assert.match(invalid(() => createServer({ presett: 'gmail' } as ServerOptions)), /presett: unknown key; did you mean "preset"\?/);
  assert.equal(createServer({ preset: 'iCloud' as PresetName }).options.preset, 'icloud');
  // A preset's value that the caller spoils is reported like any other option.
  assert.match(invalid(() => createServer({ preset: 'gmail', greetingCapabilities: 'no' as unknown as boolean })), /greetingCapabilities: expected a boolean/);
});

test('rookery --preset: starts with the preset; a wrong name exits with the suggestion', { timeout: 20000 }, async () => {
  const wrong = spawnSync(process.execPath, [CLI, '--preset', 'yahooo', '--port', '0'], { encoding: 'utf8', timeout: 10000 });
  assert.notEqual(wrong.status, 0);
  assert.match(wrong.stderr, /preset: unknown preset "yahooo"; did you mean "yahoo"\?/);
  const { child, port } = await startCli(['--preset', 'yahoo', '--port', '0']);
  try {
    const c = await RawClient.connect(port);
    const greeting = await c.line();
    assert.match(greeting, /\] IMAP4rev1 imapgate-1\.8\.1_01\.20166 imap1015\.mail\.ir2\.yahoo\.com$/);
    assert.ok(!capsOf(greeting).includes('IDLE'));
    c.close();
  } finally {
    child.kill('SIGTERM');
    await exited(child);
  }
  // --demo with a preset: the demo's users and messages in the provider's layout and plugins.
  const demo = await startCli(['--preset', 'dovecot', '--demo', '--port', '0']);
  try {
    const c = await RawClient.connect(demo.port);
    await c.line();
    assert.match((await c.command('LOGIN alice alicepass')).slice(-1)[0]!, /^T\d+ OK/);
    const list = await c.command('LIST "" "*"');
    assert.ok(list.filter((l) => l.startsWith('* LIST')).every((l) => l.includes(' "." ')), list.join('\n'));
    assert.ok(!list.some((l) => l.includes('Projects')), list.join('\n'));
    assert.match((await c.command('STATUS INBOX (MESSAGES)'))[0]!, /MESSAGES 2/);
    assert.ok(!capsOf((await c.command('CAPABILITY'))[0]!).includes('X-GM-EXT-1'));
    c.close();
  } finally {
    demo.child.kill('SIGTERM');
    await exited(demo.child);
  }
  const help = spawnSync(process.execPath, [CLI, '--help'], { encoding: 'utf8', timeout: 10000 });
  assert.match(help.stdout, /--preset/);
  // ROOKERY_PRESET, like every flag; a flag next to it still wins over the preset's value.
  const fromEnv = await startCli(['--port', '0', '--max-connections', '7'], { ROOKERY_PRESET: 'dovecot' });
  try {
    const c = await RawClient.connect(fromEnv.port);
    assert.match(await c.line(), /\] Dovecot ready\.$/);
    c.close();
  } finally {
    fromEnv.child.kill('SIGTERM');
    await exited(fromEnv.child);
  }
});
