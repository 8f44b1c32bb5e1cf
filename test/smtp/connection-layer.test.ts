/**
 * The SMTP intake on the protocol-neutral connection layer: its sessions
 * are in GET /v1/sessions, emit session and command events, have
 * transcripts with AUTH redacted, are counted by admission, take the
 * transport faults, and end with a 421 (RFC 5321 §3.8) on a disconnect.
 */
import assert from 'node:assert/strict';
import * as net from 'node:net';
import * as tls from 'node:tls';
import { describe, test } from 'node:test';
import nodemailer from 'nodemailer';
import { createServer, TEST_CERTIFICATE, type Server } from '../../src/index.js';
import type { ServerOptions } from '../../src/options/types.js';
import { collect } from '../helpers/server.js';
import { request } from '../rest/helpers.js';
import { RawSmtp } from './smtp-client.js';

async function start(options: ServerOptions = {}): Promise<{ server: Server; smtp: number; rest: number | null }> {
  const server = createServer({ port: 0, ...options, smtp: { port: 0, ...(options.smtp ?? {}) } });
  const a = await server.start();
  return { server, smtp: a.smtp!.port, rest: a.rest?.port ?? null };
}

const b64 = (s: string): string => Buffer.from(s).toString('base64');

async function until(what: string, ok: () => boolean, ms = 3000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A socket that keeps every byte the server sent, to compare with the transcript. */
async function wire(port: number, allowHalfOpen = false): Promise<{ socket: net.Socket; received: () => string; next: (re: RegExp) => Promise<void> }> {
  const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen });
  let all = '';
  let seen = 0;
  socket.on('data', (d: Buffer) => (all += d.toString('latin1')));
  socket.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const next = async (re: RegExp): Promise<void> => {
    await until(String(re), () => re.test(all.slice(seen)));
    const m = re.exec(all.slice(seen))!;
    seen += m.index + m[0].length;
  };
  return { socket, received: () => all, next };
}

describe('SMTP sessions in the registry', () => {
  test('GET /v1/sessions lists an SMTP session with protocol smtp until it closes', async () => {
    const s = await start({ rest: { port: 0 }, smtp: { auth: true } });
    try {
      const { client } = await RawSmtp.connect(s.smtp);
      const listed = (await request(s.rest!, 'GET', '/v1/sessions')).json as { session: number; protocol: string; state: string; user: string | null; remoteAddress: string }[];
      assert.equal(listed.length, 1);
      assert.deepEqual(
        { protocol: listed[0]!.protocol, state: listed[0]!.state, user: listed[0]!.user, remoteAddress: listed[0]!.remoteAddress },
        { protocol: 'smtp', state: 'Not Authenticated', user: null, remoteAddress: '127.0.0.1' },
      );
      await client.command('EHLO client.test');
      assert.equal((await client.command(`AUTH PLAIN ${b64('\0testuser\0testpass')}`)).code, 235);
      const after = (await request(s.rest!, 'GET', '/v1/sessions')).json as { session: number; user: string; state: string }[];
      assert.deepEqual(after.map((x) => [x.session, x.user, x.state]), [[listed[0]!.session, 'testuser', 'Authenticated']]);
      assert.equal((await client.command('QUIT')).code, 221);
      await client.waitClosed();
      await until('the session to leave the list', () => s.server.control.sessions().length === 0);
      assert.deepEqual((await request(s.rest!, 'GET', '/v1/sessions')).json, []);
    } finally {
      await s.server.stop();
    }
  });

  test('session events (open, login, close) and one command event per command, numbered, with the reply class', async () => {
    const s = await start({ smtp: { auth: true } });
    try {
      const sessions = collect(s.server, 'session');
      const commands = collect(s.server, 'command');
      const { client } = await RawSmtp.connect(s.smtp);
      const codes: number[] = [];
      const send = async (line: string): Promise<void> => void codes.push((await client.command(line)).code);
      await send('EHLO client.test');
      await send(`AUTH PLAIN ${b64('\0testuser\0testpass')}`);
      await send('MAIL FROM:<alice@example.com>');
      await send('RCPT TO:<nobody@example.com>');
      await send('RCPT TO:<testuser@example.com>');
      await send('DATA');
      codes.push((await client.data('Subject: x\r\n\r\nMAIL FROM:<not a command>\r\n')).code);
      await send('FROB');
      await send('RCPT TO:');
      await send('QUIT');
      await client.waitClosed();
      await until('the close event', () => sessions.some((e) => e.type === 'close'));
      assert.deepEqual(codes, [250, 235, 250, 550, 250, 354, 250, 500, 501, 221]);
      // DATA is one command: its 354 is intermediate and the body's lines are not commands.
      assert.deepEqual(
        commands.map((c) => [c.tag, c.command, c.status, c.user, c.protocol]),
        [
          ['1', 'EHLO', 'OK', null, 'smtp'],
          ['2', 'AUTH', 'OK', 'testuser', 'smtp'],
          ['3', 'MAIL', 'OK', 'testuser', 'smtp'],
          ['4', 'RCPT', 'NO', 'testuser', 'smtp'],
          ['5', 'RCPT', 'OK', 'testuser', 'smtp'],
          ['6', 'DATA', 'OK', 'testuser', 'smtp'],
          ['7', 'FROB', 'BAD', 'testuser', 'smtp'],
          ['8', 'RCPT', 'BAD', 'testuser', 'smtp'],
          ['9', 'QUIT', 'OK', 'testuser', 'smtp'],
        ],
      );
      assert.deepEqual(
        sessions.map((e) => [e.type, e.session.protocol, e.session.user]),
        [
          ['open', 'smtp', null],
          ['login', 'smtp', 'testuser'],
          ['close', 'smtp', 'testuser'],
        ],
      );
      assert.ok(commands.every((c) => c.session === sessions[0]!.session.session));
    } finally {
      await s.server.stop();
    }
  });

  test('control disconnect: 421 with the server name, then the close; reset: a TCP reset', async () => {
    const s = await start();
    try {
      const { client } = await RawSmtp.connect(s.smtp);
      await client.command('EHLO client.test');
      const [info] = s.server.control.sessions();
      s.server.control.disconnect(info!.session, { text: 'Going away' });
      const bye = await client.reply();
      assert.deepEqual([bye.code, bye.text], [421, 'localhost Going away']);
      await client.waitClosed();
      await until('the session to go', () => s.server.control.sessions().length === 0);

      const socket = net.connect(s.smtp, '127.0.0.1');
      const failure = new Promise<NodeJS.ErrnoException | null>((resolve) => {
        socket.on('error', resolve);
        socket.on('close', () => resolve(null));
      });
      await until('the second session', () => s.server.control.sessions().length === 1);
      s.server.control.disconnect(s.server.control.sessions()[0]!.session, { reset: true });
      assert.equal((await failure)?.code, 'ECONNRESET');
    } finally {
      await s.server.stop();
    }
  });

  test('control inject writes bytes to the SMTP client verbatim', async () => {
    const s = await start();
    try {
      const { client } = await RawSmtp.connect(s.smtp);
      s.server.control.inject(s.server.control.sessions()[0]!.session, '250 injected\r\n');
      assert.deepEqual((await client.reply()).lines, ['250 injected']);
      client.close();
    } finally {
      await s.server.stop();
    }
  });
});

describe('SMTP transcripts', () => {
  test('hold the bytes both sides sent, with AUTH PLAIN and AUTH LOGIN credentials as ***', async () => {
    const s = await start({ smtp: { auth: true } });
    try {
      const c = await wire(s.smtp);
      await c.next(/^220 [^\r]*\r\n/);
      c.socket.write('EHLO client.test\r\n');
      await c.next(/250 [^\r]*\r\n/);
      // A refused AUTH PLAIN (its secret is still one), then AUTH LOGIN's two SASL lines.
      c.socket.write(`AUTH PLAIN ${b64('\0testuser\0wrongpass')}\r\n`);
      await c.next(/535 [^\r]*\r\n/);
      c.socket.write('RSET\r\nAUTH LOGIN\r\n');
      await c.next(/334 [^\r]*\r\n/);
      c.socket.write(`${b64('testuser')}\r\n`);
      await c.next(/334 [^\r]*\r\n/);
      c.socket.write(`${b64('testpass')}\r\n`);
      await c.next(/235 [^\r]*\r\n/);
      c.socket.write('MAIL FROM:<a@example.com>\r\nRCPT TO:<testuser@example.com>\r\nDATA\r\n');
      await c.next(/354 [^\r]*\r\n/);
      // A body line that looks like AUTH is mail, not a credential.
      c.socket.write('AUTH PLAIN notasecret\r\n.\r\nQUIT\r\n');
      await c.next(/221 [^\r]*\r\n/);
      await until('the close', () => c.socket.destroyed || c.socket.readableEnded);
      const n = 1;
      await until('the transcript to close', () => s.server.transcript(n)?.open === false);
      const t = s.server.transcript(n)!;
      assert.equal(t.bytes('server').toString('latin1'), c.received());
      const sent = t.bytes('client').toString('latin1');
      assert.equal(
        sent,
        'EHLO client.test\r\nAUTH PLAIN ***\r\nRSET\r\nAUTH LOGIN\r\n***\r\n***\r\n' +
          'MAIL FROM:<a@example.com>\r\nRCPT TO:<testuser@example.com>\r\nDATA\r\nAUTH PLAIN notasecret\r\n.\r\nQUIT\r\n',
      );
      assert.ok(!sent.includes(b64('testpass')) && !sent.includes(b64('\0testuser\0wrongpass')));
    } finally {
      await s.server.stop();
    }
  });

  test('the end of a body split across reads still ends it: the next command is a command again', async () => {
    const s = await start({ smtp: { catchAll: true } });
    try {
      const commands = collect(s.server, 'command');
      const c = await wire(s.smtp);
      await c.next(/^220 [^\r]*\r\n/);
      c.socket.write('HELO client.test\r\nMAIL FROM:<a@example.com>\r\nRCPT TO:<b@example.com>\r\nDATA\r\n');
      await c.next(/354 [^\r]*\r\n/);
      // `.` and its CRLF in separate reads, and a body line that begins with a stuffed dot.
      for (const part of ['Subject: split\r\n\r\n..not the end\r', '\n.', '\r', '\nNOOP\r\n']) {
        c.socket.write(part);
        await new Promise((r) => setTimeout(r, 30));
      }
      await c.next(/250 [^\r]*\r\n250 [^\r]*\r\n/);
      c.socket.end('QUIT\r\n');
      await until('the transcript to close', () => s.server.transcript(1)?.open === false);
      assert.deepEqual(commands.map((e) => `${e.command} ${e.status}`), ['HELO OK', 'MAIL OK', 'RCPT OK', 'DATA OK', 'NOOP OK', 'QUIT OK']);
      assert.equal(s.server.transcript(1)!.bytes('client').toString('latin1'), 'HELO client.test\r\nMAIL FROM:<a@example.com>\r\nRCPT TO:<b@example.com>\r\nDATA\r\nSubject: split\r\n\r\n..not the end\r\n.\r\nNOOP\r\nQUIT\r\n');
    } finally {
      await s.server.stop();
    }
  });

  test('an AUTH initial response is redacted whatever the spacing and case (found by the SMTP fuzzer)', async () => {
    const s = await start({ smtp: { auth: true } });
    try {
      const c = await wire(s.smtp);
      await c.next(/^220 [^\r]*\r\n/);
      const secret = b64('\0testuser\0testpass');
      for (const line of [` AUTH PLAIN ${secret}`, `AUTH\tPLAIN\t${secret}`, `auth plain  ${secret}`]) {
        c.socket.write(`${line}\r\n`);
        await c.next(/\d{3} [^\r]*\r\n/);
      }
      c.socket.end('QUIT\r\n');
      await until('the transcript to close', () => s.server.transcript(1)?.open === false);
      assert.equal(s.server.transcript(1)!.bytes('client').toString('latin1'), ' AUTH PLAIN ***\r\nAUTH\tPLAIN\t***\r\nauth plain  ***\r\nQUIT\r\n');
    } finally {
      await s.server.stop();
    }
  });

  test('after STARTTLS (nodemailer) the transcript and command events follow the cleartext', async () => {
    const s = await start({ smtp: { starttls: true, auth: true } });
    try {
      const commands = collect(s.server, 'command');
      const transport = nodemailer.createTransport({
        host: '127.0.0.1', port: s.smtp, secure: false, requireTLS: true,
        tls: { ca: TEST_CERTIFICATE, servername: 'localhost' },
        auth: { user: 'testuser', pass: 'testpass' },
      });
      await transport.sendMail({ from: 'alice@example.com', to: 'testuser@example.com', subject: 'Over TLS', text: 'Hi' });
      transport.close();
      await until('the transcript to close', () => s.server.transcript(1)?.open === false);
      const sent = s.server.transcript(1)!.bytes('client').toString('latin1');
      assert.match(sent, /^EHLO [^\r]+\r\nSTARTTLS\r\nEHLO [^\r]+\r\nAUTH PLAIN \*\*\*\r\nMAIL FROM:<alice@example\.com>/);
      assert.match(s.server.transcript(1)!.bytes('server').toString('latin1'), /\r\n220 [^\r]*\r\n250-[^\r]*\r\n(?:250-[^\r]*\r\n)*250 [^\r]*\r\n235 /);
      const verbs = commands.map((c) => `${c.command} ${c.status}`);
      assert.deepEqual(verbs.slice(0, 6), ['EHLO OK', 'STARTTLS OK', 'EHLO OK', 'AUTH OK', 'MAIL OK', 'RCPT OK']);
      assert.equal(s.server.control.sessions().length, 0);
    } finally {
      await s.server.stop();
    }
  });
});

describe('admission and transport faults', () => {
  test('maxUnauthenticated counts SMTP connections until AUTH; one more gets 421', async () => {
    const s = await start({ maxUnauthenticated: 1, smtp: { auth: true } });
    try {
      const first = await RawSmtp.connect(s.smtp);
      assert.equal(first.greeting.code, 220);
      const second = await RawSmtp.connect(s.smtp);
      assert.equal(second.greeting.code, 421);
      assert.match(second.greeting.text, /waiting to log in \(limit 1\)/);
      await second.client.waitClosed();
      await first.client.command('EHLO client.test');
      assert.equal((await first.client.command(`AUTH PLAIN ${b64('\0testuser\0testpass')}`)).code, 235);
      const third = await RawSmtp.connect(s.smtp);
      assert.equal(third.greeting.code, 220);
      first.client.close();
      third.client.close();
    } finally {
      await s.server.stop();
    }
  });

  test('loginTimeout ends an SMTP session that has not authenticated with 421', async () => {
    const s = await start({ loginTimeout: 200, smtp: { auth: true } });
    try {
      const { client } = await RawSmtp.connect(s.smtp);
      const bye = await client.reply();
      assert.equal(bye.code, 421);
      await client.waitClosed();
    } finally {
      await s.server.stop();
    }
  });

  test('a bandwidth fault caps the SMTP replies to its rate', async () => {
    const rate = 400;
    const s = await start({ faults: { bandwidth: rate } });
    try {
      const { client } = await RawSmtp.connect(s.smtp);
      const began = Date.now();
      const ehlo = await client.command('EHLO client.test');
      const elapsed = Date.now() - began;
      const bytes = ehlo.lines.reduce((n, l) => n + l.length + 2, 0);
      // The cap sends slices of rate/20 bytes, each no sooner than the rate allows for what went before it.
      const least = ((bytes - rate / 20) / rate) * 1000;
      assert.ok(bytes > rate / 4, `EHLO reply of ${bytes} bytes`);
      assert.ok(elapsed >= least * 0.9, `${bytes} bytes in ${elapsed} ms at ${rate} B/s (at least ${least} ms)`);
      client.close();
    } finally {
      await s.server.stop();
    }
  });

  test('a tlsFailure fault fails the implicit-TLS handshake of the SMTP listener', async () => {
    const s = await start({ faults: { tlsFailure: true }, smtp: { secure: true } });
    try {
      const outcome = await new Promise<string>((resolve) => {
        const socket = tls.connect({ port: s.smtp, host: '127.0.0.1', ca: TEST_CERTIFICATE, servername: 'localhost' });
        socket.once('secureConnect', () => {
          socket.destroy();
          resolve('secure');
        });
        socket.once('error', (e) => resolve(`error ${(e as NodeJS.ErrnoException).code ?? e.message}`));
        socket.once('close', () => resolve('closed'));
      });
      assert.notEqual(outcome, 'secure');
      assert.equal(s.server.control.sessions().length, 0);
    } finally {
      await s.server.stop();
    }
  });
});

describe('transport faults from on: "smtp" rules and the faults option', () => {
  test('halfClose: the reply, then FIN from the server; the client can still write', async () => {
    const s = await start({ script: [{ on: 'smtp', command: 'MAIL', halfClose: true, times: 1 }] });
    try {
      const c = await wire(s.smtp, true);
      let ended = false;
      c.socket.on('end', () => (ended = true));
      await c.next(/^220 [^\r]*\r\n/);
      c.socket.write('EHLO client.test\r\n');
      await c.next(/250 [^\r]*\r\n/);
      c.socket.write('MAIL FROM:<alice@example.com>\r\n');
      await c.next(/250 [^\r]*\r\n/);
      await until('the FIN', () => ended);
      // Half-closed, not closed: the server still reads what the client sends.
      c.socket.write('RSET\r\n');
      await until('the RSET to be read', () => /RSET\r\n$/.test(s.server.transcript(1)?.bytes('client').toString('latin1') ?? ''));
      assert.equal(s.server.control.sessions().length, 1);
      c.socket.destroy();
    } finally {
      await s.server.stop();
    }
  });

  test('stall: no further command is read for the stall time', async () => {
    const s = await start({ script: [{ on: 'smtp', command: 'MAIL', stall: 400, times: 1 }] });
    try {
      const { client } = await RawSmtp.connect(s.smtp);
      await client.command('EHLO client.test');
      assert.equal((await client.command('MAIL FROM:<alice@example.com>')).code, 250);
      const began = Date.now();
      assert.equal((await client.command('RSET')).code, 250);
      assert.ok(Date.now() - began >= 350, `RSET answered after ${Date.now() - began} ms`);
      client.close();
    } finally {
      await s.server.stop();
    }
  });

  test('slowClose (faults option): the FIN after QUIT comes that much later', async () => {
    const s = await start({ faults: { slowClose: 400 } });
    try {
      const { client } = await RawSmtp.connect(s.smtp);
      const began = Date.now();
      assert.equal((await client.command('QUIT')).code, 221);
      await client.waitClosed();
      assert.ok(Date.now() - began >= 350, `closed after ${Date.now() - began} ms`);
    } finally {
      await s.server.stop();
    }
  });
});
