/**
 * docs/debugging.md stays true: its example transcript is what Rookery
 * writes for the session it shows (times and dates aside), replays to a
 * client with other tags, and its wait and transcript snippets run as
 * written against imapflow and over REST.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ImapFlow } from 'imapflow';
import type { Server } from '../../src/index.js';
import { parseTranscripts } from '../../src/transcript/text.js';
import { request, startRest } from '../rest/helpers.js';
import { startServer } from '../helpers/server.js';
import { WireClient } from './wire-client.js';

const GUIDE = fileURLToPath(new URL('../../../docs/debugging.md', import.meta.url));

/** The text block after `<!-- example: transcript -->`. */
function exampleTranscript(): string {
  const doc = readFileSync(GUIDE, 'utf8');
  const m = /<!-- example: transcript -->\n```text\n([\s\S]*?)```/.exec(doc);
  assert.ok(m, 'the guide has its example transcript');
  return m[1]!;
}

/** Times and dates differ run to run; the rest must not. */
const normalize = (text: string): string =>
  text
    .replace(/^# (opened|closed): .*$/gm, '# $1: -')
    .replace(/^\d+ ([CS]):/gm, '0 $1:')
    .trimEnd();

const COMMANDS = ['a1 LOGIN testuser testpass', 'a2 SELECT INBOX', 'a3 FETCH 1 (FLAGS BODY[HEADER.FIELDS (SUBJECT)])', 'a4 STORE 1 +FLAGS (\\Seen)', 'a5 LOGOUT'];

test('the example transcript of the guide is what Rookery writes for that session', async () => {
  const { server, port } = await startServer({ storage: { INBOX: { messages: ['Subject: hello\r\n\r\nWorld\r\n'] }, '': {} } });
  try {
    const c = await WireClient.connect(port);
    await c.until(/\r\n/);
    for (const command of COMMANDS) {
      c.send(`${command}\r\n`);
      await c.until(new RegExp(`${command.split(' ')[0]} (OK|NO|BAD)[^\\r]*\\r\\n`));
    }
    await c.closedByServer();
    await server.waitFor('session', { type: 'close' }, { since: 0, timeout: 2000 });
    assert.equal(normalize(server.transcript(1)!.text()), normalize(exampleTranscript()));
  } finally {
    await server.stop();
  }
});

test('the example transcript of the guide replays to a client with other tags', async () => {
  const { server, port } = await startServer({ script: { replay: exampleTranscript() } });
  try {
    const recorded = parseTranscripts(exampleTranscript())[0]!;
    const c = await WireClient.connect(port);
    await c.until(/\r\n/);
    for (const command of COMMANDS) {
      const text = command.replace(/^a/, 'tag').replace('testpass', 'other-password');
      c.send(`${text}\r\n`);
      await c.until(new RegExp(`${text.split(' ')[0]} (OK|NO|BAD)[^\\r]*\\r\\n`));
    }
    await c.closedByServer();
    const expected = recorded.bytes('server').toString('latin1').replace(/^a(\d) /gm, 'tag$1 ');
    assert.equal(c.bytesReceived().toString('latin1'), expected);
  } finally {
    await server.stop();
  }
});

/** The guide's pattern, as written there. */
async function withTranscripts(server: Server, body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (err) {
    for (const n of server.transcripts.sessions()) console.error(server.transcript(n)!.text());
    throw err;
  }
}

test("the guide's wait and transcript snippets run as written", async () => {
  const rest = await startRest({ plugins: ['IDLE'] });
  const server = rest.server;
  const client = new ImapFlow({ host: '127.0.0.1', port: rest.imapPort, secure: false, auth: { user: 'testuser', pass: 'testpass' }, logger: false, disableAutoIdle: true });
  try {
    await withTranscripts(server, async () => {
      await client.connect();
      const since = server.lastEventId();
      await client.mailboxCreate('Archive');
      await server.waitFor('mailbox', { type: 'create', path: 'Archive' }, { since, timeout: 2000 });
      await server.waitFor('command', { command: 'CREATE', status: 'OK' }, { since });
      server.control.addMessage('INBOX', { raw: 'Subject: x\r\n\r\ny\r\n' });
      await server.waitUntil({ mailbox: 'INBOX', messages: 1 });
      await client.mailboxOpen('INBOX');
      const idle = client.idle();
      await server.waitUntil({ session: 1, idling: true });
      const waiting = await request(rest.restPort, 'GET', '/v1/events/wait?types=session&match=type=waiting&since=0&timeout=2000');
      assert.equal(waiting.status, 200);
      const state = await request(rest.restPort, 'GET', '/v1/events/wait?mailbox=INBOX&messages=1&timeout=2000');
      assert.equal(state.status, 200);

      const t = server.transcript(1);
      assert.match(t!.text(), /C: \S+ IDLE\n/);
      assert.ok(t!.bytes('client').toString('latin1').includes('CREATE Archive'));
      assert.deepEqual(server.transcripts.sessions(), [1]);
      const text = await request(rest.restPort, 'GET', '/v1/sessions/1/transcript', { headers: { Accept: 'text/plain' } });
      assert.match(text.text, /^# Rookery transcript 1\n/);
      await client.logout();
      await idle.catch(() => undefined);
    });
  } finally {
    client.close();
    await server.stop();
  }
});
