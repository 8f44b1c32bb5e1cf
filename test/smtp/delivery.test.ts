/**
 * What a delivery does to the store and who sees it: IMAP in IDLE gets
 * EXISTS, REST lists the message, the event stream and in-process listeners
 * get `delivery`; recipients map to users (550 otherwise, unless catch-all);
 * QUOTA and APPENDLIMIT refusals become 452 and 552.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ImapFlow } from 'imapflow';
import nodemailer from 'nodemailer';
import { createServer, type DeliveryEvent, type Server } from '../../src/index.js';
import type { ServerOptions } from '../../src/options/types.js';
import { collect, mail } from '../helpers/server.js';
import { openEvents, request } from '../rest/helpers.js';
import { RawSmtp, transaction } from './smtp-client.js';

async function start(options: ServerOptions = {}): Promise<{ server: Server; imap: number; smtp: number; rest: number | null }> {
  const server = createServer({ port: 0, ...options, smtp: { port: 0, ...(options.smtp ?? {}) } });
  const a = await server.start();
  return { server, imap: a.imap.port, smtp: a.smtp!.port, rest: a.rest?.port ?? null };
}

const source = (server: Server, uid: number): string => Buffer.from(server.control.getMessage('INBOX', uid).raw!, 'base64').toString('latin1');

describe('delivery reaches every observer', () => {
  test('an imapflow client in IDLE sees EXISTS for a message sent with nodemailer', { timeout: 15_000 }, async () => {
    const s = await start({ plugins: ['IDLE'] });
    const client = new ImapFlow({ host: '127.0.0.1', port: s.imap, secure: false, auth: { user: 'testuser', pass: 'testpass' }, logger: false, disableAutoIdle: true });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.mailboxOpen('INBOX');
      const idling = client.idle();
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(client.idling, true);
      const exists = new Promise<{ path: string; count: number; prevCount: number }>((resolve) => client.once('exists', resolve));
      const transport = nodemailer.createTransport({ host: '127.0.0.1', port: s.smtp, ignoreTLS: true });
      await transport.sendMail({ from: 'alice@example.com', to: 'testuser@example.com', subject: 'Arrives during IDLE', text: 'Hi' });
      const e = await exists;
      assert.deepEqual({ path: e.path, count: e.count, prevCount: e.prevCount }, { path: 'INBOX', count: 1, prevCount: 0 });
      const msg = await client.fetchOne('*', { envelope: true, uid: true });
      assert.equal(msg && msg.envelope?.subject, 'Arrives during IDLE');
      await idling;
    } finally {
      await client.logout().catch(() => client.close());
      await s.server.stop();
    }
  });

  test('REST lists the message; the SSE stream and server.on get a delivery event', { timeout: 15_000 }, async () => {
    const fixed = Date.UTC(2026, 10, 2, 9, 30, 0);
    const s = await start({ rest: { port: 0 }, now: fixed });
    const seen = collect(s.server, 'delivery');
    const stream = await openEvents(s.rest!, '/v1/events?types=delivery');
    try {
      assert.equal(stream.status, 200);
      await stream.waitFor(/: connected/);
      const { client } = await RawSmtp.connect(s.smtp);
      assert.equal((await transaction(client, 'alice@example.com', ['testuser@example.com', 'TestUser@Example.com'])).code, 354);
      const done = await client.data(mail('Seen by REST'));
      assert.equal(done.code, 250);
      assert.equal((await client.command('QUIT')).code, 221);
      client.close();

      const event = JSON.parse((await stream.waitFor(/event: delivery\ndata: .*\n/)).split('\n')[1]!.slice('data: '.length)) as DeliveryEvent;
      // smtp-server keeps one entry per address compared without case (the later spelling wins).
      assert.deepEqual(event, { from: 'alice@example.com', to: ['TestUser@Example.com'], mailbox: 'INBOX', uid: 1 });
      assert.deepEqual(seen, [event]);

      const listing = await request(s.rest!, 'GET', '/v1/mailboxes/INBOX/messages');
      assert.equal(listing.status, 200);
      assert.equal(listing.json.length, 1);
      assert.equal(listing.json[0].uid, 1);
      // The internal date is the server clock (the `now` option), not the message's Date: header.
      assert.equal(listing.json[0].internaldate, '02-Nov-2026 09:30:00 +0000');
      assert.match(source(s.server, 1), /^Received: from client\.test \(\[127\.0\.0\.1\]\)\r\n\tby localhost \(Rookery\) with ESMTP id \S+\r\n\tfor <TestUser@Example\.com>;\r\n\tMon, 2 Nov 2026 09:30:00 \+0000\r\nFrom: Alice/);

      const types = await request(s.rest!, 'GET', '/v1/events?types=nope');
      assert.equal(types.status, 400);
      assert.match(types.json.error.message, /\bdelivery\b/);
    } finally {
      stream.close();
      await s.server.stop();
    }
  });

  test('the OpenAPI document names delivery among the event types and describes the SMTP listener in health', async () => {
    const s = await start({ rest: { port: 0 } });
    try {
      const doc = (await request(s.rest!, 'GET', '/v1/openapi.json')).json;
      const types = doc.paths['/v1/events'].get.parameters.find((p: { name: string }) => p.name === 'types');
      assert.match(types.description, /\bdelivery\b/);
      const health = (await request(s.rest!, 'GET', '/v1/health')).json;
      assert.deepEqual(health.smtp, { host: '127.0.0.1', port: s.smtp, secure: false });
      assert.ok(doc.components.schemas.Health.properties.smtp.oneOf);
      // Two clients connected: the health answer counts them, as it does IMAP's and POP3's.
      const a = await RawSmtp.connect(s.smtp);
      const b = await RawSmtp.connect(s.smtp);
      const busy = (await request(s.rest!, 'GET', '/v1/health')).json;
      assert.equal(busy.connections.smtp.open, 2);
      assert.equal(busy.connections.smtp.max, s.server.connectionCaps().smtp);
      assert.deepEqual(Object.keys(busy.connections.smtp).sort(), ['max', 'open']);
      a.client.close();
      b.client.close();
    } finally {
      await s.server.stop();
    }
  });
});

describe('recipients', () => {
  test('550 for an address that names no user; the whole address, the local part and smtp.addresses do; one copy for several', async () => {
    const s = await start({
      users: { testuser: { password: 'p' }, 'bob@example.org': { password: 'p' } },
      smtp: { addresses: { 'Team@Example.com': 'testuser' } },
    });
    try {
      const { client } = await RawSmtp.connect(s.smtp);
      await client.command('EHLO client.test');
      assert.equal((await client.command('MAIL FROM:<>')).code, 250, 'the null sender is allowed (RFC 5321 §4.5.5)');
      const unknown = await client.command('RCPT TO:<nobody@example.com>');
      assert.equal(unknown.code, 550);
      assert.match(unknown.text, /nobody@example\.com/);
      for (const rcpt of ['testuser@anywhere.test', 'bob@example.org', 'team@example.com']) {
        assert.equal((await client.command(`RCPT TO:<${rcpt}>`)).code, 250, rcpt);
      }
      assert.equal((await client.command('DATA')).code, 354);
      assert.equal((await client.data(mail('Three recipients'))).code, 250);
      // All users share one mailbox tree, so three local recipients are one message in INBOX.
      assert.equal(s.server.control.listMessages('INBOX').length, 1);
      // Several recipients: no `for` clause, which would disclose Bcc recipients.
      assert.doesNotMatch(source(s.server, 1).split('\r\nFrom:')[0]!, /\bfor </);

      s.server.control.addUser({ name: 'carol', password: 'x' });
      assert.equal((await client.command('MAIL FROM:<alice@example.com>')).code, 250);
      assert.equal((await client.command('RCPT TO:<carol@example.com>')).code, 250, 'a user added at run time receives mail');
      assert.equal((await client.command('RSET')).code, 250);
      client.close();
    } finally {
      await s.server.stop();
    }
  });

  test('case is ignored only when it picks one user', async () => {
    const s = await start({ users: { Bob: { password: 'p' }, bob: { password: 'p' }, Carol: { password: 'p' } } });
    try {
      const { client } = await RawSmtp.connect(s.smtp);
      await client.command('EHLO client.test');
      await client.command('MAIL FROM:<alice@example.com>');
      assert.equal((await client.command('RCPT TO:<bob@example.com>')).code, 250, 'exact name');
      assert.equal((await client.command('RCPT TO:<Bob@example.com>')).code, 250, 'exact name');
      assert.equal((await client.command('RCPT TO:<BOB@example.com>')).code, 550, 'Bob or bob: ambiguous');
      assert.equal((await client.command('RCPT TO:<carol@example.com>')).code, 250, 'only Carol');
      client.close();
    } finally {
      await s.server.stop();
    }
  });

  test('catchAll accepts every recipient', async () => {
    const s = await start({ smtp: { catchAll: true } });
    const seen = collect(s.server, 'delivery');
    try {
      const { client } = await RawSmtp.connect(s.smtp);
      assert.equal((await transaction(client, 'alice@example.com', ['anyone@else.test'])).code, 354);
      assert.equal((await client.data(mail('Caught'))).code, 250);
      client.close();
      assert.deepEqual(seen.map((e) => e.to), [['anyone@else.test']]);
    } finally {
      await s.server.stop();
    }
  });
});

describe('store refusals', () => {
  test('QUOTA: over the limit is 452 while the message could fit, 552 when it is larger than the whole quota; nothing is stored', async () => {
    const s = await start({ plugins: ['QUOTA'] });
    try {
      s.server.extension('QUOTA')!.setQuota({ STORAGE: 2 });
      const { client } = await RawSmtp.connect(s.smtp);
      assert.equal((await transaction(client, 'alice@example.com', ['testuser@example.com'])).code, 354);
      assert.equal((await client.data(mail('Fills most', 'x'.repeat(1200)))).code, 250);
      assert.equal((await transaction(client, 'alice@example.com', ['testuser@example.com'])).code, 354);
      const full = await client.data(mail('Does not fit now', 'x'.repeat(1200)));
      assert.equal(full.code, 452);
      assert.match(full.text, /storage/i);
      assert.equal((await transaction(client, 'alice@example.com', ['testuser@example.com'])).code, 354);
      const never = await client.data(mail('Never fits', 'x'.repeat(4000)));
      assert.equal(never.code, 552);
      assert.equal(s.server.control.listMessages('INBOX').length, 1);
      // The transaction is over; the session goes on (RFC 5321 §4.1.1.4).
      s.server.extension('QUOTA')!.setQuota({});
      assert.equal((await transaction(client, 'alice@example.com', ['testuser@example.com'])).code, 354);
      assert.equal((await client.data(mail('Fits now'))).code, 250);
      client.close();
    } finally {
      await s.server.stop();
    }
  });

  test('APPENDLIMIT: SIZE advertises the limit; a larger SIZE= or message is 552; setLimit reaches new connections', async () => {
    const s = await start({ plugins: ['APPENDLIMIT'], pluginOptions: { APPENDLIMIT: { limit: 1000 } } });
    try {
      const { client } = await RawSmtp.connect(s.smtp);
      const ehlo = await client.command('EHLO client.test');
      assert.ok(ehlo.lines.includes('250-SIZE 1000') || ehlo.lines.includes('250 SIZE 1000'), ehlo.lines.join(' | '));
      // RFC 1870 §6.1: a declared size over the fixed limit is refused at MAIL with 552.
      assert.equal((await client.command('MAIL FROM:<alice@example.com> SIZE=5000')).code, 552);
      assert.equal((await client.command('MAIL FROM:<alice@example.com> SIZE=500')).code, 250);
      assert.equal((await client.command('RCPT TO:<testuser@example.com>')).code, 250);
      assert.equal((await client.command('DATA')).code, 354);
      assert.equal((await client.data(mail('Big', 'y'.repeat(3000)))).code, 552);
      assert.equal(s.server.control.listMessages('INBOX').length, 0);
      client.close();

      s.server.extension('APPENDLIMIT')!.setLimit(100_000);
      const second = await RawSmtp.connect(s.smtp);
      const ehlo2 = await second.client.command('EHLO client.test');
      assert.ok(ehlo2.lines.some((l) => l.endsWith('SIZE 100000')), ehlo2.lines.join(' | '));
      assert.equal((await second.client.command('MAIL FROM:<alice@example.com>')).code, 250);
      assert.equal((await second.client.command('RCPT TO:<testuser@example.com>')).code, 250);
      assert.equal((await second.client.command('DATA')).code, 354);
      assert.equal((await second.client.data(mail('Big', 'y'.repeat(3000)))).code, 250);
      second.client.close();
    } finally {
      await s.server.stop();
    }
  });
});

describe('options', () => {
  test('typos, contradictions and wrong types are option errors; smtp without a port stays off', async () => {
    const invalid = (options: ServerOptions): string => {
      try {
        createServer(options);
      } catch (err) {
        return (err as Error).message;
      }
      return 'no error';
    };
    assert.match(invalid({ smtp: { port: 0, catchall: true } as never }), /smtp\.catchall: unknown key; did you mean "catchAll"\?/);
    assert.match(invalid({ smtp: { port: 0, secure: true, starttls: true } }), /smtp\.starttls: cannot go with smtp\.secure/);
    assert.match(invalid({ smtp: { port: 70000 } }), /smtp\.port: expected an integer from 0 to 65535/);
    assert.match(invalid({ smtp: { port: 0, addresses: { 'a@b': 3 } } as never }), /smtp\.addresses\["a@b"\]: expected a user name/);
    const server = createServer({ port: 0, smtp: { host: '127.0.0.1' } });
    const a = await server.start();
    try {
      assert.equal(a.smtp, null);
      assert.equal(server.smtpAddress(), null);
    } finally {
      await server.stop();
    }
  });

  test('an SMTP port in use fails start() naming the listener and the option, and closes what start() opened', async () => {
    const first = await start();
    const second = createServer({ port: 0, rest: { port: 0 }, smtp: { port: first.smtp } });
    try {
      await assert.rejects(second.start(), /^Error: SMTP listener: 127\.0\.0\.1:\d+ is already in use \(set by the smtp\.port option, --smtp-port \/ ROOKERY_SMTP_PORT\)/);
      await second.stopped;
      assert.equal(second.address(), null);
      assert.equal(second.restAddress(), null);
    } finally {
      await first.server.stop();
    }
  });

  test('debug: the wire log shows SMTP lines with AUTH hidden and DATA as its size', async () => {
    const lines: string[] = [];
    const s = await start({ smtp: { auth: true }, debug: (line) => lines.push(line) });
    try {
      const transport = nodemailer.createTransport({ host: '127.0.0.1', port: s.smtp, ignoreTLS: true, auth: { user: 'testuser', pass: 'testpass' }, authMethod: 'LOGIN' });
      await transport.sendMail({ from: 'alice@example.com', to: 'testuser@example.com', subject: 'logged', text: 'x' });
      const smtpLines = lines.filter((l) => l.startsWith('SMTP '));
      assert.ok(smtpLines.some((l) => / C: MAIL FROM:<alice@example\.com>$/.test(l)), smtpLines.join('\n'));
      assert.ok(smtpLines.some((l) => / S: 250 SIZE \d+$/.test(l)), 'each line of a multi-line reply is its own log line');
      assert.ok(smtpLines.some((l) => / C: <\d+ bytes of DATA>$/.test(l)));
      const secret = [Buffer.from('testuser').toString('base64'), Buffer.from('testpass').toString('base64'), 'testpass'];
      for (const l of smtpLines) for (const x of secret) assert.ok(!l.includes(x), `credential in ${l}`);
    } finally {
      await s.server.stop();
    }
  });

  test('stop() closes the SMTP listener and tells connected clients 421', async () => {
    const s = await start();
    const { client } = await RawSmtp.connect(s.smtp);
    await client.command('EHLO client.test');
    await s.server.stop();
    const bye = await client.reply();
    assert.equal(bye.code, 421);
    await client.waitClosed();
    await assert.rejects(RawSmtp.connect(s.smtp));
  });

  test('graceful shutdown: an idle client gets 421 at once, one in a transaction finishes it first', async () => {
    const s = await start();
    const idle = (await RawSmtp.connect(s.smtp)).client;
    await idle.command('EHLO idle.test');
    const busy = (await RawSmtp.connect(s.smtp)).client;
    assert.equal((await transaction(busy, 'alice@example.com', ['testuser@example.com'])).code, 354);
    const stopping = s.server.shutdown(true);
    assert.equal((await idle.reply()).code, 421);
    await idle.waitClosed();
    assert.equal((await busy.data(mail('Finished during shutdown'))).code, 250);
    assert.equal((await busy.command('MAIL FROM:<alice@example.com>')).code, 421);
    await busy.waitClosed();
    await stopping;
    assert.equal(s.server.control.listMessages('INBOX').length, 1);
  });
});
