/**
 * Messages added without flags share one empty flag set (issue 20: a
 * delivery should not cost a Set of its own). A flag stored on one of them,
 * by an IMAP client (RFC 3501 §6.4.6 STORE) or by the control API, must
 * change that message alone: the others still have no flags, and a later
 * delivery without flags has none either.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mail, rawSession, startServer } from '../helpers/server.js';

test('a flag stored on one unflagged message leaves the other unflagged messages without flags', async () => {
  const { server, port } = await startServer({ storage: { INBOX: { messages: [mail('seeded one'), mail('seeded two')] } } });
  try {
    server.control.addMessage('INBOX', { raw: mail('added three') });
    server.control.addMessage('INBOX', { raw: mail('added four'), flags: [] });
    server.control.addMessage('INBOX', { raw: mail('added five') });
    const c = await rawSession(port);
    try {
      await c.command('SELECT INBOX');
      const stored = (await c.command('STORE 1 +FLAGS (\\Flagged)')).join('\n');
      assert.match(stored, /\* 1 FETCH \(FLAGS \(\\Flagged\)\)/);
      server.control.setFlags('INBOX', { uids: [3], flags: ['\\Seen', 'Keep'], mode: 'add' });
      // \Recent is this session's state (RFC 3501 §2.3.2), not a stored flag: left out here.
      const flags = async (): Promise<string[]> =>
        (await c.command('FETCH 1:* (FLAGS)'))
          .filter((l) => l.startsWith('* ') && l.includes('FETCH'))
          .map((l) => {
            const stored = (/FLAGS \(([^)]*)\)/.exec(l)?.[1] ?? '').split(' ').filter((f) => f !== '' && f !== '\\Recent');
            return `${/^\* (\d+) FETCH/.exec(l)?.[1]} ${stored.join(' ')}`;
          });
      assert.deepEqual(await flags(), ['1 \\Flagged', '2 ', '3 \\Seen Keep', '4 ', '5 ']);
      // Removing the only flag leaves that message empty again, and the next delivery starts empty.
      await c.command('STORE 1 -FLAGS (\\Flagged)');
      server.control.addMessage('INBOX', { raw: mail('added six') });
      await c.command('NOOP');
      assert.deepEqual(await flags(), ['1 ', '2 ', '3 \\Seen Keep', '4 ', '5 ', '6 ']);
      const status = (await c.command('STATUS INBOX (MESSAGES UNSEEN)')).join('\n');
      assert.match(status, /\* STATUS "?INBOX"? \(MESSAGES 6 UNSEEN 5\)/);
    } finally {
      c.close();
    }
    assert.deepEqual(
      server.control.listMessages('INBOX').map((m) => m.flags),
      [[], [], ['\\Seen', 'Keep'], [], [], []],
    );
  } finally {
    await server.stop();
  }
});
