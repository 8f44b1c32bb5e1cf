/**
 * The `delivery` event on the REST event stream, read by a real SSE client
 * (the `eventsource` package) while nodemailer delivers, the null sender included.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EventSource } from 'eventsource';
import nodemailer from 'nodemailer';
import { createServer, type DeliveryEvent } from '../../src/index.js';

test('EventSource with types=delivery receives one event per delivered message', { timeout: 15_000 }, async () => {
  const server = createServer({ port: 0, rest: { port: 0 }, smtp: { port: 0, catchAll: true } });
  const { rest, smtp } = await server.start();
  const es = new EventSource(`http://127.0.0.1:${rest!.port}/v1/events?types=delivery`);
  try {
    const received: DeliveryEvent[] = [];
    let wake: () => void = () => undefined;
    es.addEventListener('delivery', (ev: MessageEvent) => {
      received.push(JSON.parse(String(ev.data)) as DeliveryEvent);
      wake();
    });
    // Any other type would be a filter failure.
    es.addEventListener('message', () => assert.fail('unnamed event'));
    await new Promise<void>((resolve, reject) => {
      es.addEventListener('open', () => resolve());
      es.addEventListener('error', (e) => reject(new Error(String(e.message))));
    });
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: smtp!.port, ignoreTLS: true });
    await transport.sendMail({ envelope: { from: '', to: ['x@example.com', 'y@example.com'] }, from: 'bounce@example.com', subject: 'One', text: '1' });
    await transport.sendMail({ from: 'alice@example.com', to: 'testuser@example.com', subject: 'Two', text: '2' });
    const deadline = Date.now() + 5000;
    while (received.length < 2 && Date.now() < deadline) await new Promise<void>((r) => ((wake = r), setTimeout(r, 200)));
    assert.deepEqual(received, [
      { from: '', to: ['x@example.com', 'y@example.com'], mailbox: 'INBOX', uid: 1 },
      { from: 'alice@example.com', to: ['testuser@example.com'], mailbox: 'INBOX', uid: 2 },
    ]);
    transport.close();
  } finally {
    es.close();
    await server.stop();
  }
});
