/**
 * SMTP intake driven by real clients over real sockets: Python's smtplib
 * (plain, STARTTLS, implicit TLS, AUTH PLAIN and LOGIN), nodemailer and
 * curl's smtp:// each deliver a message that IMAP then shows.
 */
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import nodemailer from 'nodemailer';
import { createServer, TEST_CERTIFICATE, type Server } from '../../src/index.js';
import type { ServerOptions } from '../../src/options/types.js';
import { mail, rawSession } from '../helpers/server.js';

const SCRIPT = fileURLToPath(new URL('../../../test/smtp/fixtures/smtplib_send.py', import.meta.url));
const PYTHON = process.env.PYTHON ?? 'python3';
const python = spawnSync(PYTHON, ['--version']).status === 0;
const curlOk = spawnSync('curl', ['--version']).status === 0;
const noPython = !python && !process.env.CI ? `${PYTHON} not installed` : false;
const noCurl = !curlOk && !process.env.CI ? 'curl not installed' : false;

let dir: string;
let cafile: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rookery-smtp-'));
  cafile = join(dir, 'ca.pem');
  await writeFile(cafile, TEST_CERTIFICATE);
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function start(smtp: ServerOptions['smtp'], options: ServerOptions = {}): Promise<{ server: Server; imap: number; smtp: number }> {
  const server = createServer({ port: 0, ...options, smtp: { port: 0, ...smtp } });
  const addresses = await server.start();
  return { server, imap: addresses.imap.port, smtp: addresses.smtp!.port };
}

interface PyResult {
  ok: boolean;
  ehlo?: number;
  features?: string[];
  featuresAfterTls?: string[];
  starttls?: number;
  login?: number;
  refused?: Record<string, [number, string]>;
  recipientsRefused?: Record<string, [number, string]>;
  error?: [number, string];
}

function smtplib(args: Record<string, unknown>): Promise<PyResult> {
  return new Promise((resolve, reject) => {
    execFile(PYTHON, [SCRIPT, JSON.stringify({ host: '127.0.0.1', from: 'alice@example.com', ...args })], { timeout: 20_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${err.message}\n${stderr}`));
      else resolve(JSON.parse(stdout) as PyResult);
    });
  });
}

/** The subjects of INBOX as an IMAP client sees them. */
async function subjects(imapPort: number): Promise<string[]> {
  const client = await rawSession(imapPort);
  try {
    await client.command('SELECT INBOX');
    const lines = await client.command('FETCH 1:* (BODY.PEEK[HEADER.FIELDS (SUBJECT)])');
    return lines.flatMap((l) => [...l.matchAll(/Subject: ([^\r\n]*)/g)].map((m) => m[1]!));
  } finally {
    client.close();
  }
}

describe('Python smtplib', { skip: noPython }, () => {
  test('plain: EHLO, MAIL, RCPT, DATA deliver to INBOX; no STARTTLS or AUTH required by default', async () => {
    const s = await start({});
    try {
      const r = await smtplib({ port: s.smtp, mode: 'plain', to: ['testuser@example.com'], message: mail('Python plain') });
      assert.equal(r.ok, true, JSON.stringify(r));
      assert.equal(r.ehlo, 250);
      assert.ok(!r.features!.includes('starttls'), 'STARTTLS is off unless smtp.starttls');
      assert.ok(r.features!.includes('size'), 'SIZE is advertised (RFC 1870)');
      assert.deepEqual(r.refused, {});
      assert.deepEqual(await subjects(s.imap), ['Python plain']);
    } finally {
      await s.server.stop();
    }
  });

  test('STARTTLS with the test certificate, then AUTH PLAIN', async () => {
    const s = await start({ starttls: true, auth: true });
    try {
      const r = await smtplib({ port: s.smtp, mode: 'starttls', cafile, user: 'testuser', password: 'testpass', to: ['testuser@localhost'], message: mail('Python starttls') });
      assert.equal(r.ok, true, JSON.stringify(r));
      assert.ok(r.features!.includes('starttls'));
      assert.equal(r.starttls, 220);
      // RFC 3207 §4.2: after the upgrade the client forgets what it knew; STARTTLS is not offered again.
      assert.ok(!r.featuresAfterTls!.includes('starttls'));
      assert.equal(r.login, 235);
      assert.deepEqual(await subjects(s.imap), ['Python starttls']);
      const raw = Buffer.from(s.server.control.getMessage('INBOX', 1).raw!, 'base64').toString('latin1');
      // RFC 3848: ESMTPSA is ESMTP with STARTTLS and AUTH.
      assert.match(raw, /^Received: from python\.test \(\[127\.0\.0\.1\]\)\r\n\tby localhost \(Rookery\) with ESMTPSA id \S+\r\n\tfor <testuser@localhost>;\r\n\t\w{3}, \d+ \w{3} \d{4} \d\d:\d\d:\d\d \+0000\r\n/);
    } finally {
      await s.server.stop();
    }
  });

  test('implicit TLS and AUTH LOGIN', async () => {
    const s = await start({ secure: true, auth: true });
    try {
      const r = await smtplib({ port: s.smtp, mode: 'ssl', cafile, user: 'testuser', password: 'testpass', mechanism: 'LOGIN', to: ['testuser@example.com'], message: mail('Python ssl') });
      assert.equal(r.ok, true, JSON.stringify(r));
      assert.equal(r.login, 235);
      assert.deepEqual(await subjects(s.imap), ['Python ssl']);
    } finally {
      await s.server.stop();
    }
  });

  test('auth: a wrong password is 535, and MAIL without AUTH is refused with 530', async () => {
    const s = await start({ auth: true });
    try {
      const bad = await smtplib({ port: s.smtp, mode: 'plain', user: 'testuser', password: 'nope', to: ['testuser@localhost'], message: mail('x') });
      assert.equal(bad.ok, false);
      assert.equal(bad.error![0], 535);
      const none = await smtplib({ port: s.smtp, mode: 'plain', to: ['testuser@localhost'], message: mail('x') });
      assert.equal(none.ok, false);
      assert.equal(none.error![0], 530);
      assert.equal(s.server.control.listMessages('INBOX').length, 0);
    } finally {
      await s.server.stop();
    }
  });

  test('an unknown recipient is refused with 550 while the known one is delivered', async () => {
    const s = await start({});
    try {
      const r = await smtplib({ port: s.smtp, mode: 'plain', to: ['nobody@example.com', 'testuser@example.com'], message: mail('Partly') });
      assert.equal(r.ok, true, JSON.stringify(r));
      assert.equal(r.refused!['nobody@example.com']![0], 550);
      assert.deepEqual(await subjects(s.imap), ['Partly']);
      const all = await smtplib({ port: s.smtp, mode: 'plain', to: ['nobody@example.com'], message: mail('Nobody') });
      assert.equal(all.ok, false);
      assert.equal(all.recipientsRefused!['nobody@example.com']![0], 550);
    } finally {
      await s.server.stop();
    }
  });
});

describe('nodemailer', () => {
  test('sends over STARTTLS with AUTH; the response names the UID', async () => {
    const s = await start({ starttls: true, auth: true });
    try {
      const transport = nodemailer.createTransport({
        host: '127.0.0.1',
        port: s.smtp,
        secure: false,
        requireTLS: true,
        tls: { ca: TEST_CERTIFICATE, servername: 'localhost' },
        auth: { user: 'testuser', pass: 'testpass' },
      });
      const info = await transport.sendMail({ from: 'alice@example.com', to: 'testuser@example.com', subject: 'From nodemailer', text: 'Hello\n.leading dot\n' });
      assert.deepEqual(info.accepted, ['testuser@example.com']);
      assert.match(info.response, /^250 .*UID 1\b/);
      assert.deepEqual(await subjects(s.imap), ['From nodemailer']);
      const raw = Buffer.from(s.server.control.getMessage('INBOX', 1).raw!, 'base64').toString('latin1');
      // Dot-stuffing is undone (RFC 5321 §4.5.2) and the end-of-data dot is not part of the message.
      assert.match(raw, /\r\n\r\nHello\r\n\.leading dot\r\n$/);
      transport.close();
    } finally {
      await s.server.stop();
    }
  });

  test('XOAUTH2 with the user\'s access token', async () => {
    const s = await start({ auth: true });
    try {
      const transport = nodemailer.createTransport({
        host: '127.0.0.1',
        port: s.smtp,
        ignoreTLS: true,
        auth: { type: 'OAuth2', user: 'testuser', accessToken: 'testtoken' },
      });
      await transport.sendMail({ from: 'alice@example.com', to: 'testuser@example.com', subject: 'OAuth', text: 'x' });
      assert.deepEqual(await subjects(s.imap), ['OAuth']);
      const wrong = nodemailer.createTransport({ host: '127.0.0.1', port: s.smtp, ignoreTLS: true, auth: { type: 'OAuth2', user: 'testuser', accessToken: 'wrong' } });
      await assert.rejects(wrong.sendMail({ from: 'a@example.com', to: 'testuser@example.com', subject: 'no', text: 'x' }), (err: { responseCode?: number }) => err.responseCode === 535);
    } finally {
      await s.server.stop();
    }
  });
});

describe('curl smtp://', { skip: noCurl }, () => {
  test('delivers a message read from a file, with the envelope from the command line', async () => {
    const s = await start({ auth: true });
    try {
      const file = join(dir, 'curl.eml');
      await writeFile(file, mail('From curl'));
      await new Promise<void>((resolve, reject) => {
        execFile(
          'curl',
          ['-sS', '--max-time', '10', `smtp://127.0.0.1:${s.smtp}`, '-u', 'testuser:testpass', '--mail-from', 'alice@example.com', '--mail-rcpt', 'testuser@example.com', '-T', file],
          { timeout: 15_000 },
          (err, _out, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve()),
        );
      });
      assert.deepEqual(await subjects(s.imap), ['From curl']);
    } finally {
      await s.server.stop();
    }
  });
});
