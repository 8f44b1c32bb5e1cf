/**
 * Issue 16, the live dashboard: the page at `/` of the REST listener, used
 * as a person would, in headless Chromium (Debian's `chromium`, driven by
 * playwright-core), against a real server with real IMAP clients. One
 * browser for the whole file; each test opens its own page.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser, type Page, type Request } from 'playwright-core';
import { ImapFlow } from 'imapflow';
import type { Server } from '../../src/index.js';
import type { ServerOptions } from '../../src/options/types.js';
import { BUILTIN_ROUTES } from '../../src/rest/routes.js';
import { rawSession } from '../helpers/server.js';
import { request, startRest, type Rest } from '../rest/helpers.js';

/** The bits of the DOM that the functions run in the page use (this file compiles without lib "dom"). */
interface PageElement {
  textContent: string | null;
  classList: { contains(name: string): boolean };
}
declare const document: { querySelector(selector: string): PageElement | null; querySelectorAll(selector: string): ArrayLike<PageElement> };

function chromiumPath(): string | null {
  try {
    return execFileSync('sh', ['-c', 'command -v chromium || command -v chromium-browser'], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
}

const executablePath = chromiumPath();
const skip = executablePath ? false : 'no chromium on PATH: install Debian\'s chromium (apt-get install chromium; .ci/run does) to run the dashboard test';

const mail = (subject: string): string =>
  `From: Alice <alice@example.com>\r\nTo: Bob <bob@example.com>\r\nSubject: ${subject}\r\nDate: Mon, 2 Nov 2026 10:00:00 +0000\r\n\r\nHello\r\n`;

const storage = { INBOX: { messages: [{ raw: mail('Already here'), flags: ['\\Seen'] }] }, '': { separator: '/', folders: { Archive: {} } } };
const users = { testuser: { password: 'testpass' } };

let browser: Browser;

/** Transcripts come from another part of the work (issue 15); the page shows them once the server has the route. */
const hasTranscripts = BUILTIN_ROUTES.some((r) => r.path === '/v1/sessions/{session}/transcript');

/** A page with its problems collected: script errors and CSP violations fail the test that opened it. */
async function open(rest: Rest): Promise<{ page: Page; problems: string[]; requests: Request[] }> {
  const page = await browser.newPage();
  const problems: string[] = [];
  const requests: Request[] = [];
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(`console: ${msg.text()}`);
  });
  page.on('request', (r) => requests.push(r));
  await page.goto(`${rest.base}/`);
  return { page, problems, requests };
}

const ready = (page: Page): Promise<unknown> => page.waitForSelector('body[data-ready="true"]', { timeout: 20_000 });

describe('dashboard in headless Chromium', { skip }, () => {
  before(async () => {
    browser = await chromium.launch({ executablePath: executablePath! });
  });
  after(async () => {
    await browser?.close();
  });

  test('a message added over REST appears without a reload, and its view shows headers, MIME structure and source', async () => {
    const rest = await startRest({ users, storage });
    try {
      const { page, problems } = await open(rest);
      await ready(page);
      // A marker in the window: a reload or navigation would lose it.
      await page.evaluate(() => ((globalThis as unknown as { marker: number }).marker = 42));
      assert.equal(await page.locator('#messages tbody tr').count(), 1);
      assert.match((await page.textContent('#mailboxes li[data-path="INBOX"]')) ?? '', /1/);

      const raw =
        'From: =?UTF-8?Q?J=C3=BCrgen?= <j@example.com>\r\nSubject: Live one\r\nMIME-Version: 1.0\r\n' +
        'Content-Type: multipart/mixed; boundary="b1"\r\n\r\n--b1\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nHi\r\n' +
        '--b1\r\nContent-Type: image/png; name="a.png"\r\nContent-Disposition: attachment; filename="a.png"\r\nContent-Transfer-Encoding: base64\r\n\r\niVBORw0KGgo=\r\n--b1--\r\n';
      const added = await request(rest.restPort, 'POST', '/v1/mailboxes/INBOX/messages', { json: { raw, flags: ['\\Flagged'] } });
      assert.equal(added.status, 201);
      const uid = added.json.uid as number;
      const row = page.locator(`#messages tr[data-uid="${uid}"]`);
      await row.waitFor({ timeout: 15_000 });
      assert.match((await row.textContent()) ?? '', /Live one/);
      assert.match((await row.textContent()) ?? '', /Jürgen/);
      assert.match((await row.textContent()) ?? '', /\\Flagged/);
      // The mailbox count follows: 2 messages, 1 unseen.
      await page.waitForFunction(() => /1\/\s*2/.test(document.querySelector('#mailboxes li[data-path="INBOX"] .count')?.textContent ?? ''));

      // A flag change over REST shows too.
      await request(rest.restPort, 'POST', '/v1/mailboxes/INBOX/messages/flags', { json: { uids: [uid], flags: ['\\Seen'], mode: 'add' } });
      await page.waitForFunction((u) => /\\Seen/.test(document.querySelector(`#messages tr[data-uid="${u}"]`)?.textContent ?? ''), uid);

      // The message view, opened from the keyboard.
      await row.focus();
      await page.keyboard.press('Enter');
      await page.waitForFunction(() => (document.querySelector('#message-headers')?.textContent ?? '').includes('Live one'));
      assert.match((await page.textContent('#message-headers')) ?? '', /Content-Type\s*multipart\/mixed/);
      await page.click('#message-tabs button[data-tab="structure"]');
      const structure = (await page.textContent('#message-structure')) ?? '';
      assert.match(structure, /multipart\/mixed/);
      assert.match(structure, /1\s*text\/plain · charset=utf-8/);
      assert.match(structure, /2\s*image\/png · base64 · attachment · "a.png"/);
      await page.click('#message-tabs button[data-tab="raw"]');
      assert.equal(await page.textContent('#message-raw'), raw);

      // A mailbox created over REST joins the tree; an expunge empties the list.
      await request(rest.restPort, 'POST', '/v1/mailboxes', { json: { path: 'Work/Reports' } });
      await page.locator('#mailboxes li[data-path="Work/Reports"]').waitFor({ timeout: 15_000 });
      // Storage names are modified UTF-7 (RFC 3501 §5.1.3); the tree shows them decoded.
      await request(rest.restPort, 'POST', '/v1/mailboxes', { json: { path: 'Entw&APw-rfe' } });
      await page.waitForFunction(() => document.querySelector('#mailboxes li[data-path="Entw&APw-rfe"] .name')?.textContent === 'Entwürfe');
      await request(rest.restPort, 'POST', '/v1/mailboxes/INBOX/messages/expunge', { json: { uids: [1, uid] } });
      await page.waitForFunction(() => document.querySelectorAll('#messages tbody tr').length === 0);

      assert.equal(await page.evaluate(() => (globalThis as unknown as { marker?: number }).marker), 42, 'the page was not reloaded');
      assert.deepEqual(problems, []);
      await page.close();
    } finally {
      await rest.server.stop();
    }
  });

  test('a rule added in the page shows in GET /v1/script/rules and acts; Remove takes it out', async () => {
    const rest = await startRest({ users, storage });
    try {
      const { page, problems } = await open(rest);
      await ready(page);
      await page.fill('#rule-input', '{ "on": "command", "command": "NOOP", "send": "$TAG NO [UNAVAILABLE] From the page\\r\\n" }');
      await page.click('#rule-add');
      await page.locator('#rules li[data-id]').waitFor({ timeout: 15_000 });
      const listed = await request(rest.restPort, 'GET', '/v1/script/rules');
      assert.equal(listed.json.length, 1);
      assert.deepEqual(listed.json[0].rule, { on: 'command', command: 'NOOP', send: '$TAG NO [UNAVAILABLE] From the page\r\n' });
      const client = await rawSession(rest.imapPort);
      const lines = await client.command('NOOP');
      assert.match(lines.at(-1) ?? '', /^\S+ NO \[UNAVAILABLE\] From the page$/);
      client.close();
      // The rule's hit count follows its script event.
      await page.waitForFunction(() => /1\/1/.test(document.querySelector('#rules li[data-id] .count')?.textContent ?? ''));

      // An invalid rule is refused with the API's message, and nothing is added.
      await page.fill('#rule-input', '{ "on": "command", "comand": "NOOP" }');
      await page.click('#rule-add');
      await page.waitForFunction(() => (document.querySelector('#rule-error')?.textContent ?? '').startsWith('INVALID'));
      assert.equal((await request(rest.restPort, 'GET', '/v1/script/rules')).json.length, 1);

      await page.click('#rules li[data-id] button');
      await page.waitForFunction(() => document.querySelectorAll('#rules li[data-id]').length === 0);
      assert.deepEqual((await request(rest.restPort, 'GET', '/v1/script/rules')).json, []);
      // Chromium logs the refused POST (the 400 above) itself; nothing else may go wrong.
      assert.deepEqual(problems.filter((p) => !/status of 400/.test(p)), []);
      await page.close();
    } finally {
      await rest.server.stop();
    }
  });

  test('sessions show state, user and mailbox live; Disconnect gives the client its BYE; Reset server resets', async () => {
    const rest = await startRest({ users, storage, plugins: ['IDLE'], ...(hasTranscripts ? ({ transcript: true } as ServerOptions) : {}) });
    const imap = new ImapFlow({ host: '127.0.0.1', port: rest.imapPort, secure: false, auth: { user: 'testuser', pass: 'testpass' }, logger: false });
    imap.on('error', () => undefined);
    try {
      const { page, problems } = await open(rest);
      await ready(page);
      await imap.connect();
      await imap.mailboxOpen('Archive');
      const session = (await request(rest.restPort, 'GET', '/v1/sessions')).json[0].session as number;
      const row = page.locator(`#sessions tr[data-session="${session}"]`);
      await page.waitForFunction((n) => /Selected/.test(document.querySelector(`#sessions tr[data-session="${n}"]`)?.textContent ?? ''), session);
      const text = (await row.textContent()) ?? '';
      assert.match(text, /testuser/);
      assert.match(text, /Archive/);

      // A raw client, so the BYE line itself is seen.
      const raw = await rawSession(rest.imapPort);
      await raw.command('SELECT INBOX');
      const rawNumber = Math.max(...(await request(rest.restPort, 'GET', '/v1/sessions')).json.map((s: { session: number }) => s.session));
      const rawRow = page.locator(`#sessions tr[data-session="${rawNumber}"]`);
      await rawRow.waitFor({ timeout: 15_000 });
      // Its transcript, where the server keeps them (GET /v1/sessions/{n}/transcript).
      await rawRow.click();
      await page.waitForFunction(
        (expected) => new RegExp(expected).test(document.querySelector('#transcript')?.textContent ?? ''),
        hasTranscripts ? 'SELECT INBOX[\\s\\S]*OK' : 'keeps no transcripts',
      );
      // In IDLE the row says so (the session's `waiting` event), and Disconnect still ends it with BYE.
      raw.write('i1 IDLE\r\n');
      assert.match(await raw.line(), /^\+ /);
      await page.waitForFunction((n) => /IDLE/.test(document.querySelector(`#sessions tr[data-session="${n}"]`)?.textContent ?? ''), rawNumber);
      await rawRow.locator('button', { hasText: 'Disconnect' }).click();
      assert.equal(await raw.line(), '* BYE Disconnected by the server');
      await raw.closedByServer();
      await page.waitForFunction((n) => document.querySelector(`#sessions tr[data-session="${n}"]`)?.classList.contains('closed'), rawNumber);

      // Reset: every session gets BYE (imapflow sees its connection close).
      const closed = new Promise<void>((resolve) => imap.once('close', () => resolve()));
      await page.click('#reset');
      await closed;
      await page.waitForFunction((n) => document.querySelector(`#sessions tr[data-session="${n}"]`)?.classList.contains('closed'), session);
      await page.waitForFunction(() => document.querySelectorAll('#events tr[data-type="reset"]').length === 1);
      // A click on an event shows its whole data.
      const closeRow = page.locator(`#events tr[data-type="session"]`).first();
      await closeRow.click();
      assert.match((await closeRow.textContent()) ?? '', /"remoteAddress"/);
      assert.deepEqual(problems, []);
      await page.close();
    } finally {
      await imap.logout().catch(() => undefined);
      await rest.server.stop();
    }
  });

  test('the page rides out a server restart: it reconnects, gets a gap (ids from another run) and reloads what it shows', async () => {
    const first = await startRest({ users, storage });
    let second: Rest | null = null;
    try {
      const { page, problems } = await open(first);
      await ready(page);
      await page.evaluate(() => ((globalThis as unknown as { marker: number }).marker = 7));
      await request(first.restPort, 'POST', '/v1/mailboxes/INBOX/messages', { json: { raw: mail('Before restart') } });
      await page.locator('#messages tr[data-uid="2"]').waitFor({ timeout: 15_000 });
      await first.server.stop();
      await page.waitForFunction(() => document.querySelector('#live')?.textContent === 'reconnecting');
      // The same REST port, another store: the page's Last-Event-ID is newer than any id of this run.
      const fresh = { INBOX: { messages: [{ raw: mail('After restart one') }, { raw: mail('After restart two') }, { raw: mail('After restart three') }] } };
      second = await startRest({ users, storage: fresh, rest: { port: first.restPort } });
      await page.waitForFunction(() => document.querySelector('#live')?.textContent === 'live', undefined, { timeout: 20_000 });
      await page.waitForFunction(() => /After restart three/.test(document.querySelector('#messages')?.textContent ?? ''), undefined, { timeout: 20_000 });
      assert.doesNotMatch((await page.textContent('#messages')) ?? '', /Before restart/);
      assert.equal(await page.locator('#events tr[data-type="gap"]').count(), 1);
      assert.equal(await page.evaluate(() => (globalThis as unknown as { marker?: number }).marker), 7, 'the page was not reloaded');
      // While the server was down, Chromium logged the refused connections; nothing else may go wrong.
      assert.deepEqual(problems.filter((p) => !/ERR_CONNECTION_REFUSED|ERR_EMPTY_RESPONSE|ERR_CONNECTION_RESET/.test(p)), []);
      await page.close();
    } finally {
      await first.server.stop();
      await second?.server.stop();
    }
  });

  test('the message view reads MIME as RFC 2045/2046 say (module run in the page)', async () => {
    const rest = await startRest({ users, storage });
    try {
      const { page, problems } = await open(rest);
      await ready(page);
      const cases: Record<string, string> = {
        // Preamble and epilogue are not parts; LWSP after a boundary is padding (RFC 2046 §5.1.1).
        padding:
          'Content-Type: multipart/mixed; boundary="=_b?1"\r\n\r\nThis is the preamble.\r\n--=_b?1  \r\n\r\none\r\n--=_b?1\r\nContent-Type: text/html\r\n\r\n<b>two</b>\r\n--=_b?1--\t\r\nepilogue\r\n--=_b?1\r\n\r\nnot a part\r\n',
        // In multipart/digest a part without Content-Type is message/rfc822 (RFC 2046 §5.1.5), and is read inside.
        digest:
          'Content-Type: multipart/digest; boundary=d\r\n\r\n--d\r\n\r\nSubject: inner\r\nContent-Type: multipart/alternative; boundary=i\r\n\r\n--i\r\n\r\nx\r\n--i--\r\n--d--\r\n',
        // No Content-Type: text/plain (RFC 2045 §5.2).
        plain: 'Subject: plain\r\n\r\nbody\r\n',
        // Nesting far deeper than any real message stays bounded.
        deep: Array.from({ length: 60 }, (_, i) => `Content-Type: multipart/mixed; boundary=b${i}\r\n\r\n--b${i}\r\n`).join('') + '\r\nend\r\n',
      };
      const trees = await page.evaluate(async (all) => {
        type Node = { type: string; children: Node[] };
        const mime = (await import('/dashboard/mime.js' as string)) as { structure(s: string): Node };
        const shape = (n: Node): unknown => (n.children.length ? [n.type, n.children.map(shape)] : n.type);
        const depth = (n: Node): number => 1 + Math.max(0, ...n.children.map(depth));
        const out: Record<string, unknown> = {};
        for (const [name, text] of Object.entries(all)) out[name] = name === 'deep' ? depth(mime.structure(text)) : shape(mime.structure(text));
        return out;
      }, cases);
      assert.deepEqual(trees.padding, ['multipart/mixed', ['text/plain', 'text/html']]);
      assert.deepEqual(trees.digest, ['multipart/digest', [['message/rfc822', [['multipart/alternative', ['text/plain']]]]]]);
      assert.equal(trees.plain, 'text/plain');
      assert.ok((trees.deep as number) <= 21, `depth ${String(trees.deep)}`);
      assert.deepEqual(problems, []);
      await page.close();
    } finally {
      await rest.server.stop();
    }
  });

  test('with a token the page asks for it once, sends it as a header and never in a URL', async () => {
    const secret = 'dashboard-secret-7f3a';
    const rest = await startRest({ users, storage, rest: { port: 0, token: secret } });
    try {
      const { page, problems, requests } = await open(rest);
      await page.locator('#token-panel').waitFor({ state: 'visible', timeout: 15_000 });
      await page.fill('#token-input', 'wrong-token');
      await page.click('#token-submit');
      await page.waitForFunction(() => (document.querySelector('#token-error')?.textContent ?? '') !== '');
      await page.fill('#token-input', secret);
      await page.press('#token-input', 'Enter');
      await ready(page);
      assert.equal(await page.isVisible('#token-panel'), false);

      // Live with the token: the stream was opened with the header.
      const added = await request(rest.restPort, 'POST', '/v1/mailboxes/INBOX/messages', { json: { raw: mail('Behind a token') }, headers: { Authorization: `Bearer ${secret}` } });
      await page.locator(`#messages tr[data-uid="${added.json.uid}"]`).waitFor({ timeout: 15_000 });

      const api = requests.filter((r) => new URL(r.url()).pathname.startsWith('/v1/'));
      assert.ok(api.some((r) => new URL(r.url()).pathname === '/v1/events'), 'the event stream was requested');
      for (const r of requests) assert.ok(!r.url().includes(secret), `token in a URL: ${r.url()}`);
      const authorized = api.filter((r) => r.headers().authorization === `Bearer ${secret}`);
      assert.ok(authorized.length >= 4, 'API requests carry the token as a header');
      // Asked once: another page in the same tab session (a reload) does not ask again.
      await page.reload();
      await ready(page);
      assert.equal(await page.isVisible('#token-panel'), false);
      assert.deepEqual(problems.filter((p) => !/401/.test(p)), []);
      await page.close();
    } finally {
      await rest.server.stop();
    }
  });

  test('reading a failed test: marks as dividers, NO and BAD highlighted, events of one session, times in ms, script answers, findings, a transcript to enlarge and copy', async () => {
    const rest = await startRest({ users, storage, transcript: true, clientCheck: 'report' } as ServerOptions);
    const context = await browser.newContext({ permissions: ['clipboard-read', 'clipboard-write'] });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    try {
      await page.goto(`${rest.base}/`);
      await ready(page);
      const rule = await request(rest.restPort, 'POST', '/v1/script/rules', { json: { on: 'command', command: 'NOOP', times: 1, send: '$TAG NO [UNAVAILABLE] Scripted refusal\r\n' } });
      assert.equal(rule.status, 201);
      const start = await request(rest.restPort, 'POST', '/v1/events/mark', { json: { text: 'moves the draft', phase: 'start' } });
      assert.equal(start.status, 201);
      const faulty = await rawSession(rest.imapPort);
      // FETCH before SELECT: BAD, and a wrong-state finding of the client checker.
      const fetched = await faulty.command('FETCH 1 FLAGS');
      assert.match(fetched[fetched.length - 1]!, /^\S+ BAD /);
      const noop = await faulty.command('NOOP');
      assert.match(noop[noop.length - 1]!, /^\S+ NO \[UNAVAILABLE\] Scripted refusal$/);
      const other = await rawSession(rest.imapPort);
      await other.command('SELECT INBOX');
      await request(rest.restPort, 'POST', '/v1/events/mark', { json: { text: 'moves the draft', phase: 'end', outcome: 'fail' } });
      const numbers = (await request(rest.restPort, 'GET', '/v1/sessions')).json.map((s: { session: number }) => s.session) as number[];
      const [faultyNumber, otherNumber] = [Math.min(...numbers), Math.max(...numbers)];

      // The test's start and end divide the event list; the failed end says so.
      await page.waitForFunction(() => document.querySelectorAll('#events tr.mark').length === 2);
      const marks = await page.locator('#events tr.mark').allTextContents();
      assert.match(marks[0]!, /end of test: moves the draft \(FAILED\)/);
      assert.match(marks[1]!, /test: moves the draft/);
      assert.equal(await page.locator('#events tr.mark.mark-fail').count(), 1);
      // The BAD answer is marked; the NO a rule sent is shown as a rule's answer (the spec: a script event, no command event).
      await page.waitForFunction(() => (document.querySelector('#events tr.status-bad')?.textContent ?? '').includes('FETCH BAD'));
      assert.match((await page.locator('#events tr.scripted').first().textContent()) ?? '', new RegExp(`#${faultyNumber} \\S+ NOOP answered by a script rule`));
      // Times carry milliseconds.
      for (const time of await page.locator('#events tr td:first-child').allTextContents()) assert.match(time, /^\d\d:\d\d:\d\d\.\d{3}$/);

      // Only one session's events; the test boundaries stay.
      await page.selectOption('#event-session', String(otherNumber));
      const shown = await page.evaluate(() => Array.from(document.querySelectorAll('#events tbody tr')).filter((r) => !(r as unknown as { hidden: boolean }).hidden).map((r) => (r as unknown as { dataset: { type: string; session?: string } }).dataset));
      assert.ok(shown.length >= 3, JSON.stringify(shown));
      for (const d of shown) assert.ok(d.type === 'mark' || d.session === String(otherNumber), JSON.stringify(d));
      await page.selectOption('#event-session', '');

      // The client checker's finding is counted on the session's row and listed under its transcript.
      const faultyRow = page.locator(`#sessions tr[data-session="${faultyNumber}"]`);
      await page.waitForFunction((n) => document.querySelector(`#sessions tr[data-session="${n}"] .findings-count`)?.textContent === '1', faultyNumber);
      assert.equal(await page.locator(`#sessions tr[data-session="${otherNumber}"] .findings-count`).count(), 0);
      await faultyRow.click();
      await page.waitForFunction(() => (document.querySelector('#transcript .line-bad')?.textContent ?? '').includes('BAD'));
      assert.match((await page.locator('#transcript .line-no').first().textContent()) ?? '', /NO \[UNAVAILABLE\] Scripted refusal/);
      assert.match((await page.textContent('#findings')) ?? '', /wrong-state/);

      // Enlarged over the page, and copied whole.
      await page.click('#transcript-enlarge');
      assert.equal(await page.evaluate(() => document.querySelector('#transcript-box')?.classList.contains('enlarged')), true);
      await page.click('#transcript-copy');
      await page.waitForFunction(() => document.querySelector('#transcript-copied')?.textContent === 'Copied');
      const copied = await page.evaluate(() => (globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }).navigator.clipboard.readText());
      assert.equal(copied, await page.textContent('#transcript'));
      assert.match(copied, /FETCH 1 FLAGS/);
      await page.click('#transcript-enlarge');
      assert.equal(await page.evaluate(() => document.querySelector('#transcript-box')?.classList.contains('enlarged')), false);
      faulty.close();
      other.close();
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
      await rest.server.stop();
    }
  });
  test('oauth events read in words: issued, the login refused with a stale token, and which session', async () => {
    const rest = await startRest({ users, storage, plugins: ['AUTH=XOAUTH2', 'SASL-IR'] } as ServerOptions);
    const { page, problems } = await open(rest);
    try {
      await ready(page);
      const issued = await request(rest.restPort, 'POST', '/v1/oauth/tokens', { json: { user: 'testuser', client: 'testclient' } });
      assert.equal(issued.status, 201);
      const imap = await rawSession(rest.imapPort, false);
      imap.write(`a AUTHENTICATE XOAUTH2 ${Buffer.from('user=testuser\x01auth=Bearer stale\x01\x01').toString('base64')}\r\n`);
      await imap.line();
      imap.write('\r\n');
      await imap.line();
      await page.waitForFunction(() => Array.from(document.querySelectorAll('#events tr')).some((r) => (r.textContent ?? '').includes('rejected login XOAUTH2')));
      const rows = await page.locator('#events tr').allTextContents();
      assert.ok(rows.some((r) => /issued issue testclient -> testuser \(grant 1\)/.test(r)), rows.join('\n'));
      assert.ok(rows.some((r) => /#\d+ rejected login XOAUTH2 testuser: token unknown/.test(r)), rows.join('\n'));
      assert.equal(await page.locator('#events tr.oauth-end').count(), 1);
      imap.close();
      assert.deepEqual(problems, []);
    } finally {
      await page.close();
      await rest.server.stop();
    }
  });
});

describe('dashboard files over HTTP', () => {
  let rest: Rest;
  let server: Server;
  before(async () => {
    rest = await startRest({ users, storage });
    server = rest.server;
  });
  after(() => server.stop());

  test('GET / is the page with a strict Content-Security-Policy; its files have their types', async () => {
    const page = await request(rest.restPort, 'GET', '/');
    assert.equal(page.status, 200);
    assert.equal(page.headers['content-type'], 'text/html; charset=utf-8');
    assert.match(page.text, /<script type="module" src="\/dashboard\/dashboard.js">/);
    const csp = String(page.headers['content-security-policy']);
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|\*/);
    assert.equal(page.headers['x-content-type-options'], 'nosniff');
    // Nothing in the page comes from elsewhere (no CDN).
    assert.doesNotMatch(page.text, /(src|href)="(https?:)?\/\//);
    const files: [string, string][] = [
      ['/dashboard/dashboard.js', 'text/javascript; charset=utf-8'],
      ['/dashboard/mime.js', 'text/javascript; charset=utf-8'],
      ['/dashboard/dashboard.css', 'text/css; charset=utf-8'],
      ['/dashboard/favicon.svg', 'image/svg+xml'],
    ];
    for (const [path, type] of files) {
      const r = await request(rest.restPort, 'GET', path);
      assert.equal(r.status, 200, path);
      assert.equal(r.headers['content-type'], type, path);
      assert.ok(r.text.length > 0);
    }
    const head = await request(rest.restPort, 'HEAD', '/');
    assert.equal(head.status, 200);
    assert.equal(head.text, '');
  });

  test('unknown files, other methods and non-loopback hosts get the API\'s error object', async () => {
    const missing = await request(rest.restPort, 'GET', '/dashboard/../package.json');
    assert.equal(missing.status, 404);
    assert.equal(missing.json.error.code, 'NOTFOUND');
    const post = await request(rest.restPort, 'POST', '/', { json: {} });
    assert.equal(post.status, 405);
    assert.equal(post.json.error.code, 'METHOD');
    assert.equal(post.headers.allow, 'GET, HEAD');
    // Without a token the loopback Host rule applies (DNS rebinding).
    const rebound = await request(rest.restPort, 'GET', '/', { headers: { Host: 'attacker.example:8025' } });
    assert.equal(rebound.status, 401);
    assert.equal(rebound.json.error.code, 'UNAUTHORIZED');
    const bad = await request(rest.restPort, 'GET', '/', { headers: { Host: 'a b' } });
    assert.equal(bad.status, 400);
  });

  test('with a token the files need none (the page asks for it), the API still does', async () => {
    const tokened = await startRest({ users, storage, rest: { port: 0, token: 't0ken' } });
    try {
      const page = await request(tokened.restPort, 'GET', '/', { headers: { Host: 'rookery.internal:8025' } });
      assert.equal(page.status, 200);
      const api = await request(tokened.restPort, 'GET', '/v1/mailboxes');
      assert.equal(api.status, 401);
      assert.equal(api.headers['www-authenticate'], 'Bearer');
    } finally {
      await tokened.server.stop();
    }
  });
});
