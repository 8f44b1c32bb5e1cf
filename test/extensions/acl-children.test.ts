/**
 * CHILDREN with ACL: a child the user may not list does not show, not even
 * as `\HasChildren` on its parent (RFC 4314 §4: a mailbox without `l` must
 * look as if it did not exist).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RawClient } from '../helpers/raw-client.js';
import { startServer } from '../helpers/server.js';

async function login(port: number, user: string, password: string): Promise<RawClient> {
  const c = await RawClient.connect(port);
  await c.line();
  const lines = await c.command(`LOGIN ${user} ${password}`);
  assert.match(lines.at(-1)!, /OK/);
  return c;
}

test('a parent whose only child is hidden from a user is \\HasNoChildren for that user, \\HasChildren for the owner', async () => {
  const { server, port } = await startServer({
    plugins: ['ACL', 'CHILDREN'],
    users: { testuser: { password: 'testpass' }, alice: { password: 'alicepass' } },
    storage: { INBOX: {}, '': { folders: { Team: { folders: { Secret: {} } } } } },
  });
  try {
    const acl = server.extension('ACL')!;
    acl.setAcl('Team/Secret', 'testuser', 'lrswipkxtea');
    acl.deleteAcl('Team/Secret', 'anyone');
    const alice = await login(port, 'alice', 'alicepass');
    assert.deepEqual(await alice.command('LIST "" Team*'), ['* LIST (\\HasNoChildren) "/" "Team"', 'T2 OK LIST completed']);
    const owner = await login(port, 'testuser', 'testpass');
    assert.deepEqual(await owner.command('LIST "" Team*'), [
      '* LIST (\\HasChildren) "/" "Team"',
      '* LIST (\\HasNoChildren) "/" "Team/Secret"',
      'T2 OK LIST completed',
    ]);
    alice.close();
    owner.close();
  } finally {
    await server.stop();
  }
});
