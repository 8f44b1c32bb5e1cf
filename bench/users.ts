/**
 * Per-user mailboxes bench (issue 15): what resolving names through the
 * user's view costs against the one shared tree.
 *
 *   node build/bench/run.js users [--users N]   (default 200 users, 10 mailboxes each)
 *
 * Both servers hold the same mailboxes: one tree with `u<i>/Box<j>` for
 * every user, or (userMailboxes) each user's own `Box<j>`, every user
 * sharing Box0 with the next one (ACL `lr`). One client, loopback:
 * SELECT + STATUS pairs (the per-command name lookups), LIST "" "*"
 * (which with userMailboxes walks every tree for Other Users), build and
 * reset. Every answer is checked.
 */
import { createServer, type Server } from '../src/index.js';
import type { ServerOptions, Storage, StorageMailbox } from '../src/options/types.js';
import { RawClient, fmt, median, ms, table } from './client.js';

const BOXES = 10;
const PAIRS = 1000;

function option(args: string[], name: string, fallback: number): number {
  const i = args.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  const raw = i < 0 ? undefined : args[i]!.includes('=') ? args[i]!.split('=')[1] : args[i + 1];
  const n = Number(raw ?? fallback);
  if (!Number.isSafeInteger(n) || n < 2) throw new Error(`users bench: --${name}: not a number >= 2: ${raw}`);
  return n;
}

const msg = (i: number): string => `Subject: m${i}\r\n\r\nhi ${i}\r\n`;

function oneTree(users: number): ServerOptions {
  const folders: Record<string, StorageMailbox> = {};
  for (let u = 0; u < users; u++) {
    const sub: Record<string, StorageMailbox> = {};
    for (let b = 0; b < BOXES; b++) sub[`Box${b}`] = { messages: [msg(b)] };
    folders[`u${u}`] = { folders: sub };
  }
  return { storage: { INBOX: { messages: [msg(0), msg(1)] }, '': { folders } } };
}

function perUser(users: number): ServerOptions {
  const trees: Record<string, Storage> = {};
  for (let u = 0; u < users; u++) {
    const folders: Record<string, StorageMailbox> = {};
    for (let b = 0; b < BOXES; b++) folders[`Box${b}`] = { messages: [msg(b)] };
    folders.Box0!.acl = { [`u${u}`]: 'lrswipkxtea', [`u${(u + 1) % users}`]: 'lr' };
    trees[`u${u}`] = { INBOX: { messages: [msg(0), msg(1)] }, '': { folders } };
  }
  return { userMailboxes: true, storage: { users: trees } };
}

async function measure(name: string, users: number, options: ServerOptions, perUserMode: boolean): Promise<string[]> {
  const userList = Object.fromEntries(Array.from({ length: users }, (_, u) => [`u${u}`, { password: 'p' }]));
  const t0 = process.hrtime.bigint();
  const server: Server = createServer({ port: 0, plugins: ['ACL'], users: userList, ...options });
  const build = ms(t0);
  const { imap } = await server.start();
  const c = await RawClient.connect(imap.host, imap.port);
  await c.ok('LOGIN u1 p');
  const box = perUserMode ? 'Box3' : 'u1/Box3';
  const pairs: number[] = [];
  for (let round = 0; round < 3; round++) {
    const t = process.hrtime.bigint();
    for (let i = 0; i < PAIRS; i++) {
      const sel = await c.ok('SELECT INBOX');
      if (!sel.lines.includes('* 2 EXISTS')) throw new Error(`SELECT: ${sel.lines.join(' | ')}`);
      const st = await c.ok(`STATUS ${box} (MESSAGES)`);
      if (!st.lines.some((l) => l.endsWith('(MESSAGES 1)'))) throw new Error(`STATUS: ${st.lines.join(' | ')}`);
    }
    pairs.push(ms(t));
  }
  const lists: number[] = [];
  let listed = 0;
  for (let round = 0; round < 5; round++) {
    const t = process.hrtime.bigint();
    const r = await c.ok('LIST "" "*"');
    lists.push(ms(t));
    listed = r.lines.filter((l) => l.startsWith('* LIST ')).length;
  }
  // One tree: every user's boxes; per user: the own ones plus the one shared with u1 (u0's Box0).
  const expected = perUserMode ? 1 + BOXES + 1 : 1 + users * (1 + BOXES);
  if (listed !== expected) throw new Error(`LIST: ${listed} lines, expected ${expected}`);
  c.close();
  const t1 = process.hrtime.bigint();
  server.control.reset();
  // The first use after a reset makes the trees again (userMailboxes): count it with the reset.
  server.control.listMessages(perUserMode ? 'INBOX' : 'u1/Box3', {}, perUserMode ? { user: 'u1' } : undefined);
  const reset = ms(t1);
  await server.stop();
  return [name, fmt(build, 1), fmt((median(pairs) * 1000) / PAIRS, 1), fmt(median(lists), 2), String(listed), fmt(reset, 1)];
}

export async function run(args: string[] = []): Promise<void> {
  const users = option(args, 'users', 200);
  const rows = [['mode', 'build ms', 'SELECT+STATUS µs', 'LIST "" "*" ms', 'LIST lines', 'reset ms']];
  // A first pass of each warms the JIT up; the second is shown (the first mode measured would pay it alone).
  await measure('one tree', users, oneTree(users), false);
  await measure('userMailboxes', users, perUser(users), true);
  rows.push(await measure('one tree', users, oneTree(users), false));
  rows.push(await measure('userMailboxes', users, perUser(users), true));
  table(`users: ${users} users x ${BOXES} mailboxes, ${PAIRS} SELECT+STATUS pairs (median of 3), LIST median of 5, after a warm-up pass`, rows);
}
