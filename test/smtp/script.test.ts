/**
 * Script rules `on: "smtp"`: a test makes delivery fail transiently or
 * permanently, slow, or cut off, at MAIL, RCPT or DATA.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import nodemailer from 'nodemailer';
import { createServer, type Server } from '../../src/index.js';
import type { ServerOptions } from '../../src/options/types.js';
import { collect, mail } from '../helpers/server.js';
import { request } from '../rest/helpers.js';
import { RawSmtp, transaction } from './smtp-client.js';

async function start(options: ServerOptions = {}): Promise<{ server: Server; smtp: number; rest: number | null }> {
  const server = createServer({ port: 0, ...options, smtp: { port: 0, ...(options.smtp ?? {}) } });
  const a = await server.start();
  return { server, smtp: a.smtp!.port, rest: a.rest?.port ?? null };
}

describe('on: smtp rules', () => {
  test('a scripted 451 at DATA makes nodemailer report the failure; the next attempt is delivered', async () => {
    const s = await start();
    const fired = collect(s.server, 'script');
    const delivered = collect(s.server, 'delivery');
    try {
      s.server.script.add({ on: 'smtp', command: 'DATA', times: 1, send: '451 4.3.0 Try again later' });
      const transport = nodemailer.createTransport({ host: '127.0.0.1', port: s.smtp, ignoreTLS: true });
      await assert.rejects(
        transport.sendMail({ from: 'alice@example.com', to: 'testuser@example.com', subject: 'First try', text: 'x' }),
        (err: { responseCode?: number; response?: string }) => err.responseCode === 451 && /Try again later/.test(err.response ?? ''),
      );
      assert.equal(s.server.control.listMessages('INBOX').length, 0);
      assert.deepEqual(fired.map((f) => [f.event, f.command]), [['smtp', 'DATA']]);
      // The rule fired for a numbered SMTP session (numbers are shared with IMAP and POP3 ones).
      assert.ok(Number.isInteger(fired[0]!.session) && fired[0]!.session! >= 1, String(fired[0]!.session));
      await transport.sendMail({ from: 'alice@example.com', to: 'testuser@example.com', subject: 'Second try', text: 'x' });
      assert.equal(delivered.length, 1);
      assert.equal(s.server.script.rules[0]!.hits, 1);
    } finally {
      await s.server.stop();
    }
  });

  test('a rule with `session` acts on that SMTP session only; the event names it', async () => {
    const s = await start({ smtp: { catchAll: true } });
    const fired = collect(s.server, 'script');
    try {
      const { client: first } = await RawSmtp.connect(s.smtp);
      const { client: second } = await RawSmtp.connect(s.smtp);
      const numbers = s.server.control.sessions().filter((x) => x.protocol === 'smtp').map((x) => x.session).sort((a, b) => a - b);
      assert.equal(numbers.length, 2);
      s.server.script.add({ on: 'smtp', command: 'MAIL', session: numbers[1]!, send: '451 4.3.2 Not you' });
      for (const c of [first, second]) await c.command('EHLO client.test');
      assert.equal((await first.command('MAIL FROM:<alice@example.com>')).code, 250);
      const refused = await second.command('MAIL FROM:<alice@example.com>');
      assert.deepEqual([refused.code, refused.text], [451, '4.3.2 Not you']);
      assert.deepEqual(fired.map((f) => [f.command, f.session]), [['MAIL', numbers[1]]]);
      first.close();
      second.close();
    } finally {
      await s.server.stop();
    }
  });

  test('seedScope "session": an SMTP session\'s chance faults depend on its number, not on other sessions\' traffic', async () => {
    // Same session number, same rule id, same seed: the same RCPT answers whether or not another session talks first.
    const outcomes = async (noiseFirst: boolean): Promise<number[]> => {
      const s = await start({ smtp: { catchAll: true }, scriptSeed: 7 });
      try {
        s.server.script.add({ on: 'smtp', command: 'RCPT', chance: 0.5, seedScope: 'session', send: '451 4.3.0 Later' });
        const { client: a } = await RawSmtp.connect(s.smtp);
        const { client: b } = await RawSmtp.connect(s.smtp);
        for (const c of [a, b]) {
          await c.command('EHLO client.test');
          await c.command('MAIL FROM:<alice@example.com>');
        }
        if (noiseFirst) for (let i = 0; i < 8; i++) await a.command(`RCPT TO:<n${i}@example.com>`);
        const codes: number[] = [];
        for (let i = 0; i < 12; i++) codes.push((await b.command(`RCPT TO:<r${i}@example.com>`)).code);
        a.close();
        b.close();
        return codes;
      } finally {
        await s.server.stop();
      }
    };
    const quiet = await outcomes(false);
    assert.deepEqual(await outcomes(true), quiet);
    assert.ok(quiet.includes(451) && quiet.includes(250), `a mix of answers: ${quiet.join(' ')}`);
  });

  test('match picks the recipient; a permanent 550 from RCPT, other recipients unaffected', async () => {
    const s = await start({ smtp: { catchAll: true } });
    try {
      s.server.script.add({ on: 'smtp', command: 'rcpt', match: 'bounce@', send: '550 5.1.1 Mailbox unavailable' });
      const { client } = await RawSmtp.connect(s.smtp);
      await client.command('EHLO client.test');
      await client.command('MAIL FROM:<alice@example.com>');
      const refused = await client.command('RCPT TO:<bounce@example.com>');
      assert.deepEqual([refused.code, refused.text], [550, '5.1.1 Mailbox unavailable']);
      assert.equal((await client.command('RCPT TO:<ok@example.com>')).code, 250);
      client.close();
    } finally {
      await s.server.stop();
    }
  });

  test('DATA rules see the message: match on a header', async () => {
    const s = await start();
    try {
      s.server.script.add({ on: 'smtp', command: 'DATA', match: '^Subject: reject me', send: '554 5.7.1 Rejected by test' });
      const { client } = await RawSmtp.connect(s.smtp);
      assert.equal((await transaction(client, 'alice@example.com', ['testuser@example.com'])).code, 354);
      const reply = await client.data('Subject: reject me\r\n\r\nbody\r\n');
      assert.equal(reply.code, 554);
      assert.equal((await transaction(client, 'alice@example.com', ['testuser@example.com'])).code, 354);
      assert.equal((await client.data(mail('keep me'))).code, 250);
      client.close();
    } finally {
      await s.server.stop();
    }
  });

  test('close: the connection ends without a reply; a 421 reply closes it too (RFC 5321 §3.8)', async () => {
    const s = await start();
    try {
      const rule = s.server.script.add({ on: 'smtp', command: 'MAIL', times: 1, close: true });
      const first = await RawSmtp.connect(s.smtp);
      await first.client.command('EHLO client.test');
      first.client.command('MAIL FROM:<alice@example.com>').catch(() => undefined);
      await first.client.waitClosed();
      rule.remove();

      s.server.script.add({ on: 'smtp', command: 'MAIL', times: 1, send: '421 4.3.2 Going away' });
      const second = await RawSmtp.connect(s.smtp);
      await second.client.command('EHLO client.test');
      assert.equal((await second.client.command('MAIL FROM:<alice@example.com>')).code, 421);
      await second.client.waitClosed();
    } finally {
      await s.server.stop();
    }
  });

  test('delay holds the answer, then the command goes on normally; user matches the AUTH user', async () => {
    const s = await start({ users: { testuser: { password: 'testpass' }, slow: { password: 'slow' } } });
    try {
      s.server.script.add({ on: 'smtp', command: 'MAIL', user: 'slow', delay: 300 });
      const transport = (user: string, pass: string) => nodemailer.createTransport({ host: '127.0.0.1', port: s.smtp, ignoreTLS: true, auth: { user, pass } });
      let t0 = Date.now();
      await transport('testuser', 'testpass').sendMail({ from: 'a@example.com', to: 'testuser@example.com', subject: 'fast', text: 'x' });
      const fast = Date.now() - t0;
      t0 = Date.now();
      await transport('slow', 'slow').sendMail({ from: 'a@example.com', to: 'testuser@example.com', subject: 'slow', text: 'x' });
      const slow = Date.now() - t0;
      assert.ok(slow >= 300, `slow took ${slow} ms`);
      assert.ok(fast < 300, `fast took ${fast} ms`);
      assert.equal(s.server.control.listMessages('INBOX').length, 2);
    } finally {
      await s.server.stop();
    }
  });

  test('chance draws from the seeded PRNG: the same seed refuses the same attempts', async () => {
    const outcomes = async (): Promise<number[]> => {
      const s = await start({ scriptSeed: 7, smtp: { catchAll: true } });
      try {
        s.server.script.add({ on: 'smtp', command: 'RCPT', chance: 0.5, send: '450 Busy' });
        const { client } = await RawSmtp.connect(s.smtp);
        await client.command('EHLO client.test');
        await client.command('MAIL FROM:<a@example.com>');
        const codes: number[] = [];
        for (let i = 0; i < 12; i++) codes.push((await client.command(`RCPT TO:<r${i}@example.com>`)).code);
        client.close();
        return codes;
      } finally {
        await s.server.stop();
      }
    };
    const a = await outcomes();
    assert.deepEqual(await outcomes(), a);
    assert.ok(a.includes(450) && a.includes(250), a.join(','));
  });
});

describe('validation of on: smtp rules', () => {
  test('wrong commands, replies and IMAP-only fields are INVALID with the field named', () => {
    const server = createServer({});
    const invalid = (rule: object): string => {
      try {
        server.script.add(rule as never);
      } catch (err) {
        return (err as Error).message;
      }
      return 'no error';
    };
    assert.match(invalid({ on: 'smtp', command: 'FETCH', send: '451 x' }), /^command: for on: smtp one of MAIL, RCPT, DATA, got "FETCH"/);
    assert.match(invalid({ on: 'smtp', command: 'RCTP' }), /did you mean "RCPT"\?/);
    assert.match(invalid({ on: 'smtp', send: '250 OK' }), /^send: for on: smtp an SMTP reply with a 4xx or 5xx code/);
    assert.match(invalid({ on: 'smtp', tag: 'A1', send: '451 x' }), /^tag: not meaningful for on: smtp/);
    assert.match(invalid({ on: 'smtp', chunk: 2 }), /^chunk: not meaningful for on: smtp/);
    assert.match(invalid({ on: 'smpt' }), /^on: .*did you mean "smtp"\?/);
    assert.equal(server.script.rules.length, 0);
  });

  test('REST takes an on: smtp rule and refuses a bad one with 400', async () => {
    const s = await start({ rest: { port: 0 } });
    try {
      const ok = await request(s.rest!, 'POST', '/v1/script/rules', { json: { on: 'smtp', command: 'DATA', send: '452 4.2.2 Mailbox full' } });
      assert.equal(ok.status, 201, ok.text);
      const bad = await request(s.rest!, 'POST', '/v1/script/rules', { json: { on: 'smtp', command: 'DATA', send: 'OK' } });
      assert.equal(bad.status, 400);
      assert.equal(bad.json.error.code, 'INVALID');
      const { client } = await RawSmtp.connect(s.smtp);
      assert.equal((await transaction(client, 'alice@example.com', ['testuser@example.com'])).code, 354);
      assert.equal((await client.data(mail('Full'))).code, 452);
      client.close();
    } finally {
      await s.server.stop();
    }
  });
});
