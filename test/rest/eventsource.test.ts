/**
 * The REST event stream (GET /v1/events) read by a real SSE client, the
 * `eventsource` package, against a started server: typed events with JSON
 * data, the `types` filter, the bearer token, the end of the stream when the
 * server stops, and the keep-alive pings (over a raw socket).
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { describe, test } from 'node:test';
import { EventSource, type ErrorEvent, type FetchLike } from 'eventsource';
// Payload types only; the list of event names below is the spec's, written out on purpose.
import type { CommandEvent, ExpungeEvent, FlagsEvent, MailboxEvent, SessionEvent, SessionInfo } from '../../src/index.js';
import { RawClient, tagged } from '../helpers/raw-client.js';
import { request, startRest, watchText, type Rest } from './helpers.js';

const WAIT = 3000;
const EVENT_TYPES = ['session', 'command', 'mailbox', 'expunge', 'flags', 'acl', 'script', 'reset'] as const;

interface Received {
  type: string;
  data: unknown;
}

/** An EventSource that records every typed event and lets a test wait for one. */
class Recorder {
  readonly received: Received[] = [];
  readonly errors: ErrorEvent[] = [];
  private waiters: (() => void)[] = [];

  constructor(readonly es: EventSource) {
    for (const type of EVENT_TYPES) {
      es.addEventListener(type, (ev: MessageEvent) => {
        this.received.push({ type, data: JSON.parse(String(ev.data)) as unknown });
        this.wake();
      });
    }
    // Unnamed events would arrive as `message`; the server never sends them.
    es.addEventListener('message', (ev: MessageEvent) => {
      this.received.push({ type: 'message', data: ev.data });
      this.wake();
    });
    es.addEventListener('error', (ev: ErrorEvent) => {
      this.errors.push(ev);
      this.wake();
    });
    es.addEventListener('open', () => this.wake());
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  private async until<T>(what: string, take: () => T | undefined, ms = WAIT): Promise<T> {
    const deadline = Date.now() + ms;
    for (;;) {
      const value = take();
      if (value !== undefined) return value;
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Error(`timed out waiting for ${what}; got ${JSON.stringify(this.received)}, errors ${JSON.stringify(this.errors.map((e) => ({ code: e.code, message: e.message })))}`);
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Resolves once the stream is open; fails on an error first. */
  opened(): Promise<void> {
    return this.until('open', () => {
      if (this.es.readyState === EventSource.OPEN) return true;
      if (this.errors.length > 0) throw new Error(`stream failed: ${this.errors[0]!.code ?? ''} ${this.errors[0]!.message ?? ''}`);
      return undefined;
    }).then(() => undefined);
  }

  /** The first error event (from now or earlier). */
  error(): Promise<ErrorEvent> {
    return this.until('an error event', () => this.errors[0]);
  }

  /** Waits for (and removes nothing of) the first event of `type` after index `from` that `pick` accepts. */
  event<T>(type: string, pick: (data: T) => boolean = () => true, from = 0): Promise<T> {
    return this.until(`a ${type} event`, () => {
      for (const r of this.received.slice(from)) if (r.type === type && pick(r.data as T)) return r.data as T;
      return undefined;
    });
  }
}

function open(r: Rest, query = '', fetchFn?: FetchLike): Recorder {
  const url = `${r.base}/v1/events${query}`;
  return new Recorder(fetchFn ? new EventSource(url, { fetch: fetchFn }) : new EventSource(url));
}

/** A fetch for EventSource that adds `Authorization: Bearer <token>`. */
const withBearer =
  (token: string): FetchLike =>
  (url, init) =>
    fetch(url, { ...init, headers: { ...init.headers, Authorization: `Bearer ${token}` } });

function assertSession(s: SessionInfo): void {
  assert.deepEqual(Object.keys(s).sort(), ['compressed', 'enabled', 'mailbox', 'protocol', 'readOnly', 'remoteAddress', 'secure', 'session', 'state', 'user']);
  assert.equal(typeof s.session, 'number');
  assert.ok(Array.isArray(s.enabled));
  assert.equal(typeof s.readOnly, 'boolean');
  assert.equal(typeof s.secure, 'boolean');
  assert.equal(typeof s.compressed, 'boolean');
}

const MAIL = 'Subject: sse\r\n\r\nbody\r\n';

describe('REST event stream with the eventsource client', () => {
  test('typed events carry JSON data with the spec fields', { timeout: 20_000 }, async () => {
    const r = await startRest();
    const rec = open(r);
    let imap: RawClient | null = null;
    try {
      await rec.opened();

      // mailbox: from the in-process control API and from REST
      r.server.control.createMailbox({ path: 'Alpha' });
      assert.deepEqual(await rec.event<MailboxEvent>('mailbox', (d) => d.path === 'Alpha'), { type: 'create', path: 'Alpha', oldPath: null, origin: null });
      const created = await request(r.restPort, 'POST', '/v1/mailboxes', { json: { path: 'Beta' } });
      assert.equal(created.status, 201, created.text);
      assert.deepEqual(await rec.event<MailboxEvent>('mailbox', (d) => d.path === 'Beta'), { type: 'create', path: 'Beta', oldPath: null, origin: null });
      const renamed = await request(r.restPort, 'POST', '/v1/mailboxes/Beta/rename', { json: { newPath: 'Gamma' } });
      assert.equal(renamed.status, 200, renamed.text);
      assert.deepEqual(await rec.event<MailboxEvent>('mailbox', (d) => d.type === 'rename'), { type: 'rename', path: 'Gamma', oldPath: 'Beta', origin: null });

      // flags and expunge from REST
      const added = await request(r.restPort, 'POST', '/v1/mailboxes/INBOX/messages', { json: { raw: MAIL } });
      assert.equal(added.status, 201, added.text);
      const uid = (added.json as { uid: number }).uid;
      const flagged = await request(r.restPort, 'POST', '/v1/mailboxes/INBOX/messages/flags', { json: { uids: [uid], flags: ['\\Flagged'] } });
      assert.equal(flagged.status, 200, flagged.text);
      assert.deepEqual(await rec.event<FlagsEvent>('flags'), { path: 'INBOX', messages: [{ uid, flags: ['\\Flagged'] }], origin: null });
      const expunged = await request(r.restPort, 'POST', '/v1/mailboxes/INBOX/messages/expunge', { json: { uids: [uid] } });
      assert.equal(expunged.status, 200, expunged.text);
      assert.deepEqual(await rec.event<ExpungeEvent>('expunge'), { path: 'INBOX', uids: [uid], origin: null });

      // session and command events from a real IMAP connection
      imap = await RawClient.connect(r.imapPort);
      assert.match(await imap.line(), /^\* OK/);
      const opened = await rec.event<SessionEvent>('session', (d) => d.type === 'open');
      assertSession(opened.session);
      assert.equal(opened.session.state, 'Not Authenticated');
      assert.equal(opened.session.user, null);
      assert.equal(opened.session.mailbox, null);
      assert.equal(typeof opened.session.remoteAddress, 'string');
      const id = opened.session.session;

      assert.match(tagged(await imap.command('LOGIN testuser testpass')), /^T1 OK/);
      const login = await rec.event<SessionEvent>('session', (d) => d.type === 'login');
      assertSession(login.session);
      assert.equal(login.session.session, id);
      assert.equal(login.session.state, 'Authenticated');
      assert.equal(login.session.user, 'testuser');
      assert.deepEqual(await rec.event<CommandEvent>('command', (d) => d.tag === 'T1'), { session: id, tag: 'T1', command: 'LOGIN', status: 'OK', user: 'testuser', protocol: 'imap' });

      assert.match(tagged(await imap.command('SELECT INBOX')), /^T2 OK/);
      const select = await rec.event<SessionEvent>('session', (d) => d.type === 'select');
      assert.equal(select.session.state, 'Selected');
      assert.equal(select.session.mailbox, 'INBOX');

      assert.match(tagged(await imap.command('FROB')), /^T3 BAD/);
      const bad = await rec.event<CommandEvent>('command', (d) => d.tag === 'T3');
      assert.equal(bad.status, 'BAD');
      assert.equal(bad.session, id);

      assert.match(tagged(await imap.command('LOGOUT')), /^T4 OK/);
      const closed = await rec.event<SessionEvent>('session', (d) => d.type === 'close');
      assertSession(closed.session);
      assert.equal(closed.session.session, id);
      assert.equal(closed.session.state, 'Logout');
      assert.equal(closed.session.mailbox, 'INBOX');
      assert.equal(closed.session.remoteAddress, null);

      // reset: `{}`
      const reset = await request(r.restPort, 'POST', '/v1/reset', { json: {} });
      assert.equal(reset.status, 200, reset.text);
      assert.deepEqual(await rec.event<Record<string, never>>('reset'), {});

      assert.ok(!rec.received.some((e) => e.type === 'message'), 'every event is named');
      assert.equal(rec.errors.length, 0);
    } finally {
      rec.es.close();
      imap?.close();
      await r.server.stop();
    }
  });

  test('types filter: only the requested types arrive', { timeout: 20_000 }, async () => {
    const r = await startRest();
    const rec = open(r, '?types=mailbox,expunge');
    let imap: RawClient | null = null;
    try {
      await rec.opened();
      // Things that would produce session, command, flags and reset events...
      imap = await RawClient.connect(r.imapPort);
      assert.match(await imap.line(), /^\* OK/);
      assert.match(tagged(await imap.command('LOGIN testuser testpass')), /^T1 OK/);
      const { uid } = r.server.control.addMessage('INBOX', { raw: MAIL });
      r.server.control.setFlags('INBOX', { uids: [uid], flags: ['\\Seen'] });
      // ...and the two wanted types; the expunge goes last, so its arrival
      // means everything before it has been through the stream.
      r.server.control.createMailbox({ path: 'Filtered', subscribed: false });
      r.server.control.expungeMessages('INBOX', { uids: [uid] });
      await rec.event<ExpungeEvent>('expunge');
      assert.deepEqual(
        rec.received.map((e) => e.type),
        ['mailbox', 'expunge'],
        JSON.stringify(rec.received),
      );
      assert.deepEqual(rec.received[0]!.data, { type: 'create', path: 'Filtered', oldPath: null, origin: null });
    } finally {
      rec.es.close();
      imap?.close();
      await r.server.stop();
    }
  });

  test('an unknown type fails the EventSource with 400', { timeout: 20_000 }, async () => {
    const r = await startRest();
    const rec = open(r, '?types=mailbox,bogus');
    try {
      const err = await rec.error();
      assert.equal(err.code, 400);
      assert.equal(rec.es.readyState, EventSource.CLOSED, 'no reconnection after a non-200 answer');
    } finally {
      rec.es.close();
      await r.server.stop();
    }
  });

  test('with a token: works with Authorization: Bearer, 401 without it or with a wrong one', { timeout: 20_000 }, async () => {
    const r = await startRest({ rest: { token: 'secret' } });
    const good = open(r, '', withBearer('secret'));
    const none = open(r);
    const wrong = open(r, '', withBearer('wrong'));
    try {
      await good.opened();
      r.server.control.createMailbox({ path: 'Authorized' });
      assert.equal((await good.event<MailboxEvent>('mailbox')).path, 'Authorized');

      for (const rec of [none, wrong]) {
        const err = await rec.error();
        assert.equal(err.code, 401);
        assert.equal(rec.es.readyState, EventSource.CLOSED);
        assert.equal(rec.received.length, 0);
      }
    } finally {
      for (const rec of [good, none, wrong]) rec.es.close();
      await r.server.stop();
    }
  });

  test('the stream ends when the server stops', { timeout: 20_000 }, async () => {
    const r = await startRest();
    const rec = open(r);
    try {
      await rec.opened();
      const stopped = r.server.stop();
      const err = await rec.error();
      assert.ok(err, 'the client saw the stream end');
      // Without close() the client would retry the (now closed) port forever.
      rec.es.close();
      assert.equal(rec.es.readyState, EventSource.CLOSED);
      await stopped;
    } finally {
      rec.es.close();
      await r.server.stop();
    }
  });
});

test('raw socket: `: connected` first, then `: ping` comments', { timeout: 20_000 }, async () => {
  const r = await startRest({ rest: { port: 0, pingInterval: 50 } });
  const socket = net.connect(r.restPort, '127.0.0.1');
  socket.on('error', () => undefined);
  const { waitFor, text } = watchText(socket, () => socket.destroyed);
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    socket.write('GET /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n');
    await waitFor(/^HTTP\/1\.1 200 /);
    await waitFor(/\r\n\r\n[\s\S]*: connected\n\n/);
    assert.match(text(), /\r\ncontent-type: text\/event-stream/i);
    await waitFor(/: connected\n\n[\s\S]*: ping\n\n/);
    await waitFor(/: ping\n\n[\s\S]*: ping\n\n/);
  } finally {
    socket.destroy();
    await r.server.stop();
  }
});
