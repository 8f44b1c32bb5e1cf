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
