import assert from 'node:assert/strict';
import { test } from 'node:test';
import { rawSession, startServer } from '../helpers/server.js';

test('SEARCH TEXT matches decoded header words as well as the body', async () => {
  const { server, port } = await startServer();
  try {
    server.control.addMessage('INBOX', { raw: 'Subject: =?UTF-8?Q?Gr=C3=BC=C3=9Fe_aus_Berlin?=\r\n\r\nplain body\r\n' });
    server.control.addMessage('INBOX', { raw: 'Subject: other\r\n\r\nmentions Berlin in the body\r\n' });
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    // "Grüße" only appears encoded in the header of message 1.
    c.write('T9 SEARCH CHARSET UTF-8 TEXT {6+}\r\n');
    c.write(Buffer.concat([Buffer.from('grüße', 'utf8').subarray(0, 6), Buffer.from('\r\n')]));
    assert.deepEqual(await c.until('T9'), ['* SEARCH 1', 'T9 OK Search completed']);
    assert.deepEqual(await c.command('SEARCH TEXT berlin'), ['* SEARCH 1 2', 'T3 OK Search completed']);
    assert.deepEqual(await c.command('SEARCH TEXT =?UTF-8?Q'), ['* SEARCH', 'T4 OK Search completed']);
    c.close();
  } finally {
    await server.stop();
  }
});
