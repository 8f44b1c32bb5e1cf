/**
 * LIST-EXTENDED syntax (RFC 5258) as the core serves it for every
 * extension: selection options SUBSCRIBED and RECURSIVEMATCH, several
 * patterns, RETURN (SUBSCRIBED CHILDREN), and what stays BAD.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Server } from '../../src/index.js';
import type { RawClient } from '../helpers/raw-client.js';
import { rawSession, startServer } from '../helpers/server.js';

let server: Server;
let c: RawClient;

before(async () => {
  const started = await startServer({
    plugins: [], // the core's LIST-EXTENDED syntax, without the CHILDREN or SPECIAL-USE of the default set
    storage: {
      INBOX: {},
      '': {
        folders: {
          Foo: { subscribed: false, folders: { Bar: {}, Baz: { subscribed: false } } },
          Moo: {},
          Zoo: { subscribed: false },
        },
      },
    },
  });
  server = started.server;
  c = await rawSession(started.port);
  await c.command('SUBSCRIBE Gone');
});

after(async () => {
  c.close();
  await server.stop();
});

let tag = 2;
const run = async (command: string): Promise<string[]> => {
  tag++;
  const lines = await c.command(command);
  assert.equal(lines.at(-1)!.split(' ')[0], `T${tag}`);
  return lines.slice(0, -1);
};

test('LIST (SUBSCRIBED): subscribed names only, \\Subscribed on each, \\NonExistent for a name that is no mailbox', async () => {
  assert.deepEqual(await run('LIST (SUBSCRIBED) "" "*"'), [
    '* LIST (\\Subscribed) "/" "Foo/Bar"',
    '* LIST (\\NonExistent \\Subscribed) "/" "Gone"',
    '* LIST (\\Subscribed) "/" "INBOX"',
    '* LIST (\\Subscribed) "/" "Moo"',
  ]);
});

test('RFC 5258 §3: % with SUBSCRIBED lists no unsubscribed parent unless RECURSIVEMATCH, which adds CHILDINFO', async () => {
  assert.deepEqual(await run('LIST (SUBSCRIBED) "" "%"'), [
    '* LIST (\\NonExistent \\Subscribed) "/" "Gone"',
    '* LIST (\\Subscribed) "/" "INBOX"',
    '* LIST (\\Subscribed) "/" "Moo"',
  ]);
  assert.deepEqual(await run('LIST (SUBSCRIBED RECURSIVEMATCH) "" "%"'), [
    '* LIST () "/" "Foo" ("CHILDINFO" ("SUBSCRIBED"))',
    '* LIST (\\NonExistent \\Subscribed) "/" "Gone"',
    '* LIST (\\Subscribed) "/" "INBOX"',
    '* LIST (\\Subscribed) "/" "Moo"',
  ]);
});

test('several patterns, RETURN (SUBSCRIBED CHILDREN) without the CHILDREN plugin', async () => {
  assert.deepEqual(await run('LIST "" ("Foo" "Z*") RETURN (SUBSCRIBED CHILDREN)'), [
    '* LIST (\\HasChildren) "/" "Foo"',
    '* LIST (\\HasNoChildren) "/" "Zoo"',
  ]);
  assert.deepEqual(await run('LIST "" "Foo/%" RETURN (SUBSCRIBED)'), ['* LIST (\\Subscribed) "/" "Foo/Bar"', '* LIST () "/" "Foo/Baz"']);
  assert.deepEqual(await run('LIST () "" "Moo" RETURN ()'), ['* LIST () "/" "Moo"']);
});

test('the basic form is unchanged; unknown options, RECURSIVEMATCH alone and junk after the pattern are BAD', async () => {
  assert.deepEqual(await run('LIST "" "%"'), ['* LIST () "/" "Foo"', '* LIST () "/" "INBOX"', '* LIST () "/" "Moo"', '* LIST () "/" "Zoo"']);
  for (const bad of ['LIST (RECURSIVEMATCH) "" "*"', 'LIST (NOSUCH) "" "*"', 'LIST "" "*" RETURN (NOSUCH)', 'LIST "" "*" JUNK', 'LSUB (SUBSCRIBED) "" "*"']) {
    tag++;
    const lines = await c.command(bad);
    assert.match(lines.at(-1)!, new RegExp(`^T${tag} BAD `), bad);
  }
});

// ---------------------------------------------------------------------------
// RFC 5258 §5, every example, on the hierarchies they use (each on its own
// server). The RFC lists INBOX first; Rookery answers in name order, which
// RFC 5258 leaves free. There are no remote mailboxes here, so the REMOTE
// examples (4-6) answer as their local part, without the `\Remote` lines.

/** Runs one command on a fresh session and returns its untagged lines, checking the tagged OK. */
async function answer(port: number, command: string): Promise<string[]> {
  const client = await rawSession(port);
  try {
    const lines = await client.command(command);
    assert.match(lines.at(-1)!, /^T2 OK /, `${command}: ${lines.join('\n')}`);
    return lines.slice(0, -1);
  } finally {
    client.close();
  }
}

/** The hierarchy of RFC 5258 Examples 1-6; `Fruit/Peach` is subscribed and does not exist. */
const FRUIT = {
  INBOX: { flags: ['\\Marked', '\\Noinferiors'] },
  '': {
    folders: {
      Fruit: { subscribed: false, folders: { Apple: { subscribed: false }, Banana: {} } },
      Tofu: { subscribed: false },
      Vegetable: { folders: { Broccoli: {}, Corn: { subscribed: false } } },
    },
  },
};

test('RFC 5258 Examples 1-6 (Fruit/Tofu/Vegetable), with the LIST-EXTENDED capability advertised', async () => {
  const { server: s, port } = await startServer({ plugins: ['LIST-EXTENDED'], storage: FRUIT });
  try {
    const client = await rawSession(port);
    const caps = await client.command('CAPABILITY');
    assert.match(caps[0]!, /^\* CAPABILITY IMAP4rev1 .*\bLIST-EXTENDED\b/);
    await client.command('SUBSCRIBE Fruit/Peach');
    client.close();
    // Example 1: the whole local hierarchy.
    assert.deepEqual(await answer(port, 'LIST "" "*"'), [
      '* LIST () "/" "Fruit"',
      '* LIST () "/" "Fruit/Apple"',
      '* LIST () "/" "Fruit/Banana"',
      '* LIST (\\Marked \\Noinferiors) "/" "INBOX"',
      '* LIST () "/" "Tofu"',
      '* LIST () "/" "Vegetable"',
      '* LIST () "/" "Vegetable/Broccoli"',
      '* LIST () "/" "Vegetable/Corn"',
    ]);
    // Example 2: subscribed mailboxes, one of which does not exist.
    const subscribed = [
      '* LIST (\\NonExistent \\Subscribed) "/" "Fruit/Peach"',
      '* LIST (\\Subscribed) "/" "Fruit/Banana"',
      '* LIST (\\Marked \\Noinferiors \\Subscribed) "/" "INBOX"',
      '* LIST (\\Subscribed) "/" "Vegetable"',
      '* LIST (\\Subscribed) "/" "Vegetable/Broccoli"',
    ].sort((a, b) => (a.split('"/" ')[1]! < b.split('"/" ')[1]! ? -1 : 1));
    assert.deepEqual(await answer(port, 'LIST (SUBSCRIBED) "" "*"'), subscribed);
    // Example 3: CHILDREN; \Noinferiors already says INBOX has none (no \HasNoChildren beside it).
    const children = [
      '* LIST (\\HasChildren) "/" "Fruit"',
      '* LIST (\\Marked \\Noinferiors) "/" "INBOX"',
      '* LIST (\\HasNoChildren) "/" "Tofu"',
      '* LIST (\\HasChildren) "/" "Vegetable"',
    ];
    assert.deepEqual(await answer(port, 'LIST () "" "%" RETURN (CHILDREN)'), children);
    // Example 4: REMOTE adds remote mailboxes (none here) to the same answer.
    assert.deepEqual(await answer(port, 'LIST (REMOTE) "" "%" RETURN (CHILDREN)'), children);
    // Example 5: REMOTE with SUBSCRIBED.
    assert.deepEqual(await answer(port, 'LIST (REMOTE SUBSCRIBED) "" "*"'), subscribed);
    // Example 6: every mailbox, with its subscription state.
    assert.deepEqual(await answer(port, 'LIST (REMOTE) "" "*" RETURN (SUBSCRIBED)'), [
      '* LIST () "/" "Fruit"',
      '* LIST () "/" "Fruit/Apple"',
      '* LIST (\\Subscribed) "/" "Fruit/Banana"',
      '* LIST (\\Marked \\Noinferiors \\Subscribed) "/" "INBOX"',
      '* LIST () "/" "Tofu"',
      '* LIST (\\Subscribed) "/" "Vegetable"',
      '* LIST (\\Subscribed) "/" "Vegetable/Broccoli"',
      '* LIST () "/" "Vegetable/Corn"',
    ]);
  } finally {
    await s.stop();
  }
});

test('RFC 5258 Example 7: several patterns in one LIST, and the two-pattern form LIST "" ("INBOX" "Drafts")', async () => {
  const { server: s, port } = await startServer({ plugins: [],
    storage: {
      INBOX: {},
      '': {
        folders: {
          Drafts: { flags: ['\\Noinferiors'] },
          Sent: { folders: { March2004: {}, December2003: { flags: ['\\Marked'] }, August2004: {} } },
          Trash: {},
        },
      },
    },
  });
  try {
    assert.deepEqual(await answer(port, 'LIST "" ("INBOX" "Drafts" "Sent/%")'), [
      '* LIST (\\Noinferiors) "/" "Drafts"',
      '* LIST () "/" "INBOX"',
      '* LIST () "/" "Sent/August2004"',
      '* LIST (\\Marked) "/" "Sent/December2003"',
      '* LIST () "/" "Sent/March2004"',
    ]);
    assert.deepEqual(await answer(port, 'LIST "" ("INBOX" "Drafts")'), ['* LIST (\\Noinferiors) "/" "Drafts"', '* LIST () "/" "INBOX"']);
    // A name matched by two patterns is listed once.
    assert.deepEqual(await answer(port, 'LIST "" ("Sent/M*" "*2004")'), ['* LIST () "/" "Sent/August2004"', '* LIST () "/" "Sent/March2004"']);
  } finally {
    await s.stop();
  }
});

test('RFC 5258 Example 8: \\HasChildren against CHILDINFO, cases A, A1, A2, B and C', async () => {
  const { server: s, port } = await startServer({ plugins: [],
    storage: {
      INBOX: { subscribed: false },
      '': { folders: { Foo: { subscribed: false, folders: { Bar: { subscribed: false }, Baz: { subscribed: false } } }, Moo: { subscribed: false } } },
    },
  });
  const client = await rawSession(port);
  const sub = async (command: string): Promise<void> => assert.match((await client.command(command)).at(-1)!, / OK /);
  try {
    assert.deepEqual(await answer(port, 'LIST "" "%" RETURN (CHILDREN)'), [
      '* LIST (\\HasChildren) "/" "Foo"',
      '* LIST (\\HasNoChildren) "/" "INBOX"',
      '* LIST (\\HasNoChildren) "/" "Moo"',
    ]);
    // B: nothing subscribed, so nothing, although Foo has children.
    assert.deepEqual(await answer(port, 'LIST (SUBSCRIBED RECURSIVEMATCH) "" "%"'), []);
    // A: only Foo/Baz is subscribed.
    await sub('SUBSCRIBE Foo/Baz');
    assert.deepEqual(await answer(port, 'LIST (SUBSCRIBED) "" "*"'), ['* LIST (\\Subscribed) "/" "Foo/Baz"']);
    assert.deepEqual(await answer(port, 'LIST (SUBSCRIBED) "" "%"'), []);
    assert.deepEqual(await answer(port, 'LIST (SUBSCRIBED RECURSIVEMATCH) "" "%"'), ['* LIST () "/" "Foo" ("CHILDINFO" ("SUBSCRIBED"))']);
    // A1: Foo subscribed too: listed for itself, and still with CHILDINFO (Foo/Baz does not match %).
    await sub('SUBSCRIBE Foo');
    assert.deepEqual(await answer(port, 'LIST (SUBSCRIBED RECURSIVEMATCH) "" "%"'), ['* LIST (\\Subscribed) "/" "Foo" ("CHILDINFO" ("SUBSCRIBED"))']);
    assert.deepEqual(await answer(port, 'LIST (SUBSCRIBED RECURSIVEMATCH) "" "%" RETURN (CHILDREN)'), [
      '* LIST (\\HasChildren \\Subscribed) "/" "Foo" ("CHILDINFO" ("SUBSCRIBED"))',
    ]);
    // With "*" Foo/Baz is listed itself; Foo, subscribed and listed, still says it has a subscribed child.
    assert.deepEqual(await answer(port, 'LIST (SUBSCRIBED RECURSIVEMATCH) "" "*"'), [
      '* LIST (\\Subscribed) "/" "Foo" ("CHILDINFO" ("SUBSCRIBED"))',
      '* LIST (\\Subscribed) "/" "Foo/Baz"',
    ]);
    // A2: a parent that is not part of the hierarchy (and not subscribed) is \NonExistent.
    await sub('UNSUBSCRIBE Foo');
    await sub('UNSUBSCRIBE Foo/Baz');
    await sub('SUBSCRIBE Nope/Baz');
    assert.deepEqual(await answer(port, 'LIST (SUBSCRIBED RECURSIVEMATCH) "" "%"'), ['* LIST (\\NonExistent) "/" "Nope" ("CHILDINFO" ("SUBSCRIBED"))']);
    await sub('UNSUBSCRIBE Nope/Baz');
    // C: only Foo and Moo subscribed: Foo has children, none of them subscribed, so no CHILDINFO.
    await sub('SUBSCRIBE Foo');
    await sub('SUBSCRIBE Moo');
    assert.deepEqual(await answer(port, 'LIST (SUBSCRIBED RECURSIVEMATCH) "" "%" RETURN (CHILDREN)'), [
      '* LIST (\\HasChildren \\Subscribed) "/" "Foo"',
      '* LIST (\\HasNoChildren \\Subscribed) "/" "Moo"',
    ]);
  } finally {
    client.close();
    await s.stop();
  }
});

test('RFC 5258 Example 9: CHILDINFO only where a subscribed descendant is not listed itself (no redundant CHILDINFO)', async () => {
  const { server: s, port } = await startServer({ plugins: [],
    storage: {
      INBOX: { subscribed: false },
      '': {
        folders: {
          Foo2: { subscribed: false, folders: { Bar1: {}, Bar2: {} } },
          Baz2: { subscribed: false, folders: { Bar2: {}, Bar22: {}, Bar222: {} } },
          Eps2: { folders: { Mamba: {} } },
          Qux2: { subscribed: false, folders: { Bar2: {} } },
        },
      },
    },
  });
  try {
    assert.deepEqual(await answer(port, 'LIST (SUBSCRIBED RECURSIVEMATCH) "" "*2"'), [
      '* LIST (\\Subscribed) "/" "Baz2/Bar2"',
      '* LIST (\\Subscribed) "/" "Baz2/Bar22"',
      '* LIST (\\Subscribed) "/" "Baz2/Bar222"',
      '* LIST (\\Subscribed) "/" "Eps2" ("CHILDINFO" ("SUBSCRIBED"))',
      '* LIST () "/" "Foo2" ("CHILDINFO" ("SUBSCRIBED"))',
      '* LIST (\\Subscribed) "/" "Foo2/Bar2"',
      '* LIST (\\Subscribed) "/" "Qux2/Bar2"',
    ]);
  } finally {
    await s.stop();
  }
});

test('RFC 5258 §3.1: RECURSIVEMATCH modifies a base option; REMOTE is none, so (REMOTE RECURSIVEMATCH) is BAD and the session goes on', async () => {
  const { server: s, port } = await startServer({ plugins: [], storage: FRUIT });
  const client = await rawSession(port);
  try {
    assert.match((await client.command('LIST (REMOTE RECURSIVEMATCH) "" "*"')).at(-1)!, /^T2 BAD /);
    assert.match((await client.command('LIST (RECURSIVEMATCH REMOTE SUBSCRIBED) "" "Tofu"')).at(-1)!, /^T3 OK /);
    assert.match((await client.command('NOOP')).at(-1)!, /^T4 OK /);
  } finally {
    client.close();
    await s.stop();
  }
});
