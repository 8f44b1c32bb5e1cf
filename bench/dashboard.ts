/**
 * Dashboard bench: the live dashboard in headless Chromium with the demo data.
 *
 *   npm run bench -- dashboard [rounds=20] [screenshot=docs/dashboard.png]
 *
 * Prints the time from navigation to a page with its lists loaded and its
 * event stream live, and the time from a message added over REST to its row
 * in the page (p50 and max over `rounds` messages). With `screenshot=<file>`
 * it also saves a picture of the page (the one in the README). Needs
 * Debian's chromium (`command -v chromium`); without it says so and skips.
 */
import { execFileSync } from 'node:child_process';
import { chromium } from 'playwright-core';
import { ImapFlow } from 'imapflow';
import { createServer } from '../src/index.js';
import { demoOptions } from '../src/demo.js';
import type { ServerOptions } from '../src/options/types.js';
import { BUILTIN_ROUTES } from '../src/rest/routes.js';
import { fmt, median, table } from './client.js';

function chromiumPath(): string | null {
  try {
    return execFileSync('sh', ['-c', 'command -v chromium || command -v chromium-browser'], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
}

const multipart = [
  'From: =?UTF-8?Q?J=C3=BCrgen_M=C3=BCller?= <juergen@example.com>',
  'To: Test User <testuser@example.com>',
  'Subject: Quarterly report (with attachment)',
  'Date: Wed, 4 Nov 2026 14:12:00 +0100',
  'Message-ID: <report.q3@example.com>',
  'MIME-Version: 1.0',
  'Content-Type: multipart/mixed; boundary="outer"',
  '',
  '--outer',
  'Content-Type: multipart/alternative; boundary="inner"',
  '',
  '--inner',
  'Content-Type: text/plain; charset=utf-8',
  'Content-Transfer-Encoding: quoted-printable',
  '',
  'Hi, the report is attached. Gr=C3=BC=C3=9Fe',
  '--inner',
  'Content-Type: text/html; charset=utf-8',
  '',
  '<p>Hi, the report is attached.</p>',
  '--inner--',
  '--outer',
  'Content-Type: application/pdf; name="q3.pdf"',
  'Content-Disposition: attachment; filename="q3.pdf"',
  'Content-Transfer-Encoding: base64',
  '',
  'JVBERi0xLjQKJcfsj6IKMSAwIG9iago8PC9UeXBlL0NhdGFsb2c+PgplbmRvYmoK',
  '--outer--',
  '',
].join('\r\n');

export async function run(args: string[]): Promise<void> {
  const executablePath = chromiumPath();
  if (!executablePath) {
    console.log('dashboard: skipped, no chromium on PATH (apt-get install chromium)');
    return;
  }
  const rounds = Number(args.find((a) => /^\d+$/.test(a)) ?? 20);
  const shot = args.find((a) => a.startsWith('screenshot='))?.slice('screenshot='.length);
  // Session transcripts on where the server has them, so the picture shows one.
  const transcripts = BUILTIN_ROUTES.some((r) => r.path === '/v1/sessions/{session}/transcript');
  const server = createServer({ ...demoOptions(), port: 0, rest: { port: 0 }, ...(transcripts ? ({ transcript: true } as ServerOptions) : {}) });
  const { imap, rest } = await server.start();
  const base = `http://127.0.0.1:${rest!.port}`;
  server.control.addMessage('INBOX', { raw: multipart, flags: ['\\Flagged'] });
  server.script.add({ on: 'command', command: 'NOOP', times: 1, send: '$TAG NO [UNAVAILABLE] Try again\r\n' });
  const browser = await chromium.launch({ executablePath });
  const clients: ImapFlow[] = [];
  try {
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 }, deviceScaleFactor: 1 });
    const t0 = performance.now();
    await page.goto(`${base}/`);
    await page.waitForSelector('body[data-ready="true"]');
    const loadMs = performance.now() - t0;

    // Sessions and events for the picture: two clients doing ordinary things.
    for (const [user, pass, box] of [['testuser', 'testpass', 'INBOX'], ['alice', 'alicepass', 'Projects/Rookery']] as const) {
      const c = new ImapFlow({ host: '127.0.0.1', port: imap.port, secure: false, auth: { user, pass }, logger: false });
      c.on('error', () => undefined);
      await c.connect();
      await c.mailboxOpen(box);
      clients.push(c);
    }
    await clients[0]!.messageFlagsAdd('2', ['\\Seen']);

    if (shot) {
      server.control.addMessage('INBOX', {
        raw: 'From: CI <ci@example.com>\r\nTo: testuser@example.com\r\nSubject: Build #512 passed\r\nDate: Thu, 5 Nov 2026 08:00:00 +0000\r\n\r\nAll green.\r\n',
      });
      await page.waitForSelector('#messages tr[data-uid="4"]');
      await page.click('#messages tr[data-uid="3"]');
      await page.click('#message-tabs button[data-tab="structure"]');
      // A session's transcript, where the server keeps them.
      if (transcripts) await page.click('#sessions tr[data-session="1"]');
      // New event rows fade in for 1.5 s; the picture shows them settled.
      await page.waitForTimeout(1700);
      await page.screenshot({ path: shot });
      console.log(`dashboard: screenshot saved to ${shot}`);
    }

    const times: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const subject = `Bench message ${i}`;
      const start = performance.now();
      const res = await fetch(`${base}/v1/mailboxes/INBOX/messages`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ raw: `From: Bench <bench@example.com>\r\nSubject: ${subject}\r\n\r\nHi\r\n` }),
      });
      const { uid } = (await res.json()) as { uid: number };
      await page.waitForSelector(`#messages tr[data-uid="${uid}"]`);
      times.push(performance.now() - start);
    }
    table('dashboard (headless chromium)', [
      ['figure', 'ms'],
      ['navigation to a live page', fmt(loadMs)],
      [`REST add to row shown, p50 of ${rounds}`, fmt(median(times))],
      ['REST add to row shown, max', fmt(Math.max(...times))],
    ]);
  } finally {
    for (const c of clients) await c.logout().catch(() => undefined);
    await browser.close();
    await server.stop();
  }
}
