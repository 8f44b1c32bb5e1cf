/**
 * The APPEND points for user plugins: a message-data form whose bytes are
 * built when the command runs (`appendForms` returning `{ build }`, refused
 * with a ServiceError as NO [code]), `checks.append` seeing the earlier
 * messages of a MULTIAPPEND in `before`, and two plugins adding one form
 * failing construction.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, ServiceError, type Plugin } from '../../src/index.js';
import { rawSession, startServer } from '../helpers/server.js';

/** `XREPEAT n literal`: the literal n times. */
const repeat: Plugin = {
  name: 'XREPEAT',
  appendForms: [
    {
      name: 'XREPEAT',
      parse(args) {
        args.sp();
        const n = args.number();
        args.sp();
        const data = args.literal();
        return {
          build: () => {
            if (n === 0) throw new ServiceError('CANNOT', 'Nothing to repeat');
            return Buffer.concat(Array.from({ length: n }, () => data));
          },
        };
      },
    },
  ],
};

test('a plugin adds an APPEND data form; a ServiceError from build is NO [code] and stores nothing', async () => {
  const seen: { size: number; before: { messages: number; size: number } }[] = [];
  const watcher: Plugin = { name: 'XWATCH', checks: { append: ({ size, before }) => void seen.push({ size, before }) } };
  const { server, port } = await startServer({ plugins: ['MULTIAPPEND', 'LITERAL+', repeat, watcher] });
  try {
    const c = await rawSession(port);
    assert.deepEqual(await c.command('APPEND INBOX XREPEAT 3 {3+}\r\nab\n {2+}\r\nxy'), ['T2 OK Append completed']);
    const raws = server.control.listMessages('INBOX', { raw: true }).map((m) => Buffer.from(m.raw!, 'base64').toString());
    assert.deepEqual(raws, ['ab\nab\nab\n', 'xy']);
    // The check ran per message, the second one seeing the first.
    assert.deepEqual(seen, [
      { size: 9, before: { messages: 0, size: 0 } },
      { size: 2, before: { messages: 1, size: 9 } },
    ]);
    assert.match((await c.command('APPEND INBOX {2+}\r\nxy XREPEAT 0 {1+}\r\nz')).at(-1)!, /^T3 NO \[CANNOT\] Nothing to repeat/);
    assert.match((await c.command('APPEND INBOX XREPEAT x {1+}\r\nz')).at(-1)!, /^T4 BAD /);
    assert.equal(server.control.listMessages('INBOX').length, 2);
    c.close();
  } finally {
    await server.stop();
  }
});

test('two plugins adding one APPEND data form fail construction', () => {
  const twin: Plugin = { ...repeat, name: 'XTWIN' };
  assert.throws(() => createServer({ plugins: [repeat, twin] }), (e: unknown) => e instanceof ServiceError && /both add the APPEND data form XREPEAT/.test(e.message));
});
