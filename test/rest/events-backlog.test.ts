/**
 * The event backlog over real sockets: ids on the stream when a client asks
 * for a position (`since`, `Last-Event-ID`), replay of what a late client
 * missed, a reconnecting EventSource that misses nothing, the `gap` frame for
 * a position older than the backlog, and plain streams unchanged.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EventSource, type FetchLike } from 'eventsource';
import { openEvents, request, startRest } from './helpers.js';

interface Frame {
  id: string | null;
  event: string;
  data: unknown;
}

/** The event frames of an SSE text (comments skipped). */
function frames(text: string): Frame[] {
  const out: Frame[] = [];
  for (const block of text.split('\n\n')) {
    let id: string | null = null;
    let event = '';
    let data: string | null = null;
    for (const line of block.split('\n')) {
      if (line.startsWith('id: ')) id = line.slice(4);
      else if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) data = line.slice(6);
    }
    if (data !== null) out.push({ id, event, data: JSON.parse(data) as unknown });
  }
  return out;
}

/** Creating a mailbox also subscribes it (a second mailbox event): the `create` events name the mailboxes. */
const creates = (fs: Frame[]): Frame[] => fs.filter((f) => f.event !== 'mailbox' || (f.data as { type: string }).type === 'create');
const paths = (fs: Frame[]): unknown[] => creates(fs).filter((f) => f.event === 'mailbox').map((f) => (f.data as { path: string }).path);

describe('event backlog', () => {
  test('a late stream with since=0 gets the past events in order, each with an id; a plain stream gets neither', { timeout: 10_000 }, async () => {
    const r = await startRest();
    try {
      for (const p of ['A', 'B', 'C']) r.server.control.createMailbox({ path: p });
      const plain = await openEvents(r.restPort, '/v1/events?types=mailbox');
      const late = await openEvents(r.restPort, '/v1/events?types=mailbox&since=0');
      assert.equal(late.status, 200);
      await late.waitFor(/path":"C"/);
      r.server.control.createMailbox({ path: 'D' });
      await late.waitFor(/path":"D"/);
      await plain.waitFor(/path":"D"/);
      const got = frames(late.text());
      assert.deepEqual(paths(got), ['A', 'B', 'C', 'D']);
      const ids = got.map((f) => Number(f.id));
      assert.ok(ids.every((id, i) => Number.isSafeInteger(id) && id > 0 && (i === 0 || id > ids[i - 1]!)), `ids grow: ${ids.join(',')}`);
      // The spec's frame without a position: `event:` and `data:` lines only, live events only.
      assert.deepEqual(paths(frames(plain.text())), ['D']);
      assert.ok(!/^id:/m.test(plain.text()), plain.text());
      const blocks = plain.text().split('\n\n').filter((b) => b !== '' && !b.startsWith(':'));
      assert.ok(blocks.length > 0 && blocks.every((b) => /^event: \w+\ndata: .*$/.test(b)), plain.text());
      plain.close();
      late.close();
    } finally {
      await r.server.stop();
    }
  });

  test('since=<id> replays only what came after it; since=now only live events, with ids; types filter the replay', { timeout: 10_000 }, async () => {
    const r = await startRest();
    try {
      r.server.control.createMailbox({ path: 'Old' });
      const mark = await request(r.restPort, 'GET', '/v1/events/latest');
      assert.equal(mark.status, 200, mark.text);
      const since = (mark.json as { id: number }).id;
      assert.equal(since, r.server.lastEventId());
      r.server.control.createMailbox({ path: 'New' });
      await request(r.restPort, 'POST', '/v1/mailboxes/New/messages', { json: { raw: 'Subject: x\r\n\r\nx\r\n' } });
      r.server.control.expungeMessages("New", { uids: [1] });

      const after = await openEvents(r.restPort, `/v1/events?types=mailbox,expunge&since=${since}`);
      await after.waitFor(/event: expunge/);
      const got = frames(after.text());
      assert.deepEqual(creates(got).map((f) => f.event), ['mailbox', 'expunge']);
      assert.deepEqual(paths(got), ['New']);
      assert.ok(Number(got[0]!.id) > since);

      const now = await openEvents(r.restPort, '/v1/events?types=mailbox&since=now');
      const before = r.server.lastEventId();
      r.server.control.createMailbox({ path: 'Live' });
      await now.waitFor(/path":"Live"/);
      const live = frames(now.text());
      assert.deepEqual(paths(live), ['Live']);
      assert.equal(Number(live[0]!.id), before + 1);
      // The position itself, as an id-only block before any event.
      assert.match(now.text(), new RegExp(`^: connected\\n\\nid: ${before}\\n\\nid: ${before + 1}\\nevent: mailbox\\n`));
      after.close();
      now.close();
    } finally {
      await r.server.stop();
    }
  });

  test('a reconnecting EventSource sends Last-Event-ID and misses nothing that happened while it was away', { timeout: 20_000 }, async () => {
    const r = await startRest();
    const sent: (string | null)[] = [];
    let cut: (() => void) | null = null;
    // A fetch that records Last-Event-ID and lets the test end the connection, as a dropped connection would.
    const cuttable: FetchLike = async (url, init) => {
      sent.push(new Headers(init.headers as Record<string, string>).get('last-event-id'));
      const res = await fetch(url, init);
      const reader = res.body!.getReader();
      let ended = false;
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          cut = () => {
            ended = true;
            controller.close();
            void reader.cancel();
          };
        },
        async pull(controller) {
          const { done, value } = await reader.read();
          if (ended) return;
          if (done) controller.close();
          else controller.enqueue(value);
        },
      });
      return new Response(body, { status: res.status, headers: res.headers });
    };
    const seen: { id: string; path: string }[] = [];
    let wake: (() => void) | null = null;
    const es = new EventSource(`${r.base}/v1/events?types=mailbox&since=now`, { fetch: cuttable });
    es.addEventListener('mailbox', (ev: MessageEvent) => {
      if ((JSON.parse(String(ev.data)) as { type: string }).type !== 'create') return;
      seen.push({ id: ev.lastEventId, path: (JSON.parse(String(ev.data)) as { path: string }).path });
      wake?.();
    });
    const until = async (n: number): Promise<void> => {
      const deadline = Date.now() + 10_000;
      while (seen.length < n) {
        assert.ok(Date.now() < deadline, `got ${JSON.stringify(seen)}`);
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 100);
        });
      }
    };
    try {
      await new Promise<void>((resolve) => es.addEventListener('open', () => resolve(), { once: true }));
      r.server.control.createMailbox({ path: 'One' });
      await until(1);
      cut!();
      // While the client is away (it waits before reconnecting) events go on.
      for (const p of ['Two', 'Three', 'Four']) r.server.control.createMailbox({ path: p });
      await until(4);
      r.server.control.createMailbox({ path: 'Five' });
      await until(5);
      assert.deepEqual(seen.map((s) => s.path), ['One', 'Two', 'Three', 'Four', 'Five']);
      assert.equal(sent.length, 2, 'one reconnect');
      assert.equal(sent[0], null);
      assert.equal(Number(sent[1]), Number(seen[0]!.id) + 1, 'the reconnect names the last id it saw (the subscribe after the create)');
      const ids = seen.map((s) => Number(s.id));
      assert.deepEqual(ids, [...ids].sort((a, b) => a - b));
      assert.equal(new Set(ids).size, ids.length, 'no event twice');
    } finally {
      es.close();
      await r.server.stop();
    }
  });

  test('a position older than the backlog starts with a gap frame, then everything kept', { timeout: 10_000 }, async () => {
    const r = await startRest({ events: { backlog: 6 } });
    try {
      for (const p of ['M1', 'M2', 'M3', 'M4', 'M5']) r.server.control.createMailbox({ path: p });
      const last = r.server.lastEventId();
      const s = await openEvents(r.restPort, '/v1/events?since=1');
      await s.waitFor(/path":"M5"/);
      const got = frames(s.text());
      assert.equal(got[0]!.event, 'gap');
      assert.equal(got[0]!.id, null);
      assert.deepEqual(got[0]!.data, { since: 1, oldest: last - 5, last });
      assert.deepEqual(paths(got), ['M3', 'M4', 'M5']);
      s.close();
      // An id newer than any (a client of an earlier server run) is a gap too.
      const future = await openEvents(r.restPort, '/v1/events', { 'Last-Event-ID': String(last + 100) });
      await future.waitFor(/path":"M5"/);
      assert.equal(frames(future.text())[0]!.event, 'gap');
      future.close();
      const latest = await request(r.restPort, 'GET', '/v1/events/latest');
      assert.deepEqual(latest.json, { id: last, oldest: last - 5 });
    } finally {
      await r.server.stop();
    }
  });

  test('backlogBytes bounds the kept bytes; backlog 0 keeps nothing', { timeout: 10_000 }, async () => {
    const r = await startRest({ events: { backlogBytes: 200 } });
    try {
      for (let i = 0; i < 20; i++) r.server.control.createMailbox({ path: `Box${i}` });
      const s = await openEvents(r.restPort, '/v1/events?types=mailbox&since=0');
      await s.waitFor(/path":"Box19"/);
      const got = frames(s.text());
      assert.equal(got[0]!.event, 'gap');
      const kept = got.filter((f) => f.event === 'mailbox');
      assert.ok(kept.length >= 1 && kept.length < 5, `kept ${kept.length}`);
      assert.ok(kept.reduce((n, f) => n + JSON.stringify(f.data).length + 'mailbox'.length, 0) <= 200);
      s.close();
    } finally {
      await r.server.stop();
    }
    const none = await startRest({ events: { backlog: 0 } });
    try {
      none.server.control.createMailbox({ path: 'Gone' });
      const s = await openEvents(none.restPort, '/v1/events?since=0');
      await s.waitFor(/event: gap/);
      none.server.control.createMailbox({ path: 'Seen' });
      await s.waitFor(/path":"Seen"/);
      assert.ok(!s.text().includes('"Gone"'));
      s.close();
    } finally {
      await none.server.stop();
    }
  });

  test('a long run keeps exactly the newest events, in order, with consecutive ids', { timeout: 20_000 }, async () => {
    const r = await startRest({ events: { backlog: 100 } });
    try {
      const { uid } = r.server.control.addMessage('INBOX', { raw: 'Subject: f\r\n\r\nf\r\n' });
      for (let i = 0; i < 3000; i++) r.server.control.setFlags('INBOX', { uids: [uid], flags: [`k${i}`] });
      const last = r.server.lastEventId();
      const s = await openEvents(r.restPort, `/v1/events?types=flags&since=${last - 100}`);
      await s.waitFor(/"k2999"/);
      const got = frames(s.text());
      assert.equal(got.length, 100);
      assert.deepEqual(got.map((f) => Number(f.id)), Array.from({ length: 100 }, (_, i) => last - 99 + i));
      assert.deepEqual((got[0]!.data as { messages: { flags: string[] }[] }).messages[0]!.flags, ['k2900']);
      s.close();
      const early = await openEvents(r.restPort, `/v1/events?types=flags&since=${last - 101}`);
      await early.waitFor(/"k2999"/);
      assert.equal(frames(early.text())[0]!.event, 'gap');
      early.close();
    } finally {
      await r.server.stop();
    }
  });

  test('reset keeps the backlog and the ids: a position from before it stays valid', { timeout: 10_000 }, async () => {
    const r = await startRest();
    try {
      r.server.control.createMailbox({ path: 'Before' });
      const since = r.server.lastEventId();
      const reset = await request(r.restPort, 'POST', '/v1/reset', { json: {} });
      assert.equal(reset.status, 200);
      r.server.control.createMailbox({ path: 'After' });
      const s = await openEvents(r.restPort, `/v1/events?types=mailbox,reset&since=${since}`);
      await s.waitFor(/path":"After"/);
      const got = frames(s.text());
      assert.deepEqual(creates(got).map((f) => f.event), ['reset', 'mailbox']);
      assert.ok(Number(got[0]!.id) > since);
      s.close();
    } finally {
      await r.server.stop();
    }
  });

  test('bad positions are refused before the stream starts', { timeout: 10_000 }, async () => {
    const r = await startRest();
    try {
      for (const [path, headers, pattern] of [
        ['/v1/events?since=abc', {}, /since: expected an event id/],
        ['/v1/events?since=-1', {}, /since/],
        ['/v1/events?since=1&since=2', {}, /more than once/],
        ['/v1/events', { 'Last-Event-ID': 'x1' }, /Last-Event-ID/],
      ] as const) {
        const reply = await request(r.restPort, 'GET', path, { headers: { ...headers } });
        assert.equal(reply.status, 400, `${path}: ${reply.text}`);
        assert.equal(reply.json.error.code, 'INVALID');
        assert.match(reply.json.error.message, pattern);
      }
    } finally {
      await r.server.stop();
    }
  });

  test('the OpenAPI document lists since on the stream and the latest route', async () => {
    const r = await startRest();
    try {
      const doc = (await request(r.restPort, 'GET', '/v1/openapi.json')).json;
      const params = doc.paths['/v1/events'].get.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`);
      assert.deepEqual(params, ['query:types', 'query:since', 'header:Last-Event-ID']);
      assert.ok(doc.paths['/v1/events/latest'].get);
    } finally {
      await r.server.stop();
    }
  });
});
