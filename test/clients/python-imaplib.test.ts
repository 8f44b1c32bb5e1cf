/**
 * Drives Rookery with Python's stdlib imaplib (test/clients/fixtures/imaplib_flow.py).
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { BUILTIN_PLUGINS, createServer } from '../../src/index.js';
import { mail } from '../helpers/server.js';

// The fixture is not compiled: resolve it in the source tree from build/test/clients/.
const SCRIPT = fileURLToPath(new URL('../../../test/clients/fixtures/imaplib_flow.py', import.meta.url));
const PYTHON = process.env.PYTHON ?? 'python3';
const available = spawnSync(PYTHON, ['--version']).status === 0;
const skipReason = !available && !process.env.CI ? `${PYTHON} not installed` : false;

const MULTIPART =
  'From: Alice <alice@example.com>\r\n' +
  'To: Bob <bob@example.com>\r\n' +
  'Subject: Multipart seed\r\n' +
  'Date: Mon, 2 Nov 2026 10:05:00 +0000\r\n' +
  'Message-ID: <multipart-seed@example.com>\r\n' +
  'MIME-Version: 1.0\r\n' +
  'Content-Type: multipart/alternative; boundary="b1"\r\n' +
  '\r\n' +
  '--b1\r\n' +
  'Content-Type: text/plain; charset=utf-8\r\n' +
  '\r\n' +
  'First part text\r\n' +
  '--b1\r\n' +
  'Content-Type: text/html; charset=utf-8\r\n' +
  '\r\n' +
  '<p>Second part</p>\r\n' +
  '--b1--\r\n';

interface Result {
  [key: string]: any;
}

test('Python imaplib: full session against Rookery', { skip: skipReason, timeout: 30_000 }, async () => {
  // Every plugin but UTF8=ACCEPT: with it, RFC 6855 §4 makes the APPEND of a message with 8-bit header
  // bytes NO for a client that did not ENABLE it, and imaplib cannot APPEND after ENABLE UTF8=ACCEPT
  // (its `UTF8 (...)` form counts the wrapper into the literal's size). The round trip of raw 8-bit
  // headers below is what a legacy client gets without that plugin.
  const server = createServer({ plugins: BUILTIN_PLUGINS.filter((p) => p !== 'UTF8=ACCEPT'), port: 0 });
  try {
    const { imap } = await server.start();
    server.control.addMessage('INBOX', { raw: mail('Seeded', 'Seed body') });
    server.control.addMessage('INBOX', { raw: MULTIPART });

    const child = spawn(PYTHON, [SCRIPT, imap.host, String(imap.port)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    const killer = setTimeout(() => child.kill('SIGKILL'), 25_000);

    let idleDelivered = false;
    const lines: string[] = [];
    for await (const line of createInterface({ input: child.stdout })) {
      lines.push(line);
      if (line === 'IDLING') {
        // The client is idling: deliver a message and expect the EXISTS to reach it.
        setTimeout(() => {
          server.control.addMessage('INBOX', { raw: mail('Delivered during IDLE') });
          idleDelivered = true;
        }, 100);
      }
    }
    const code = await exited;
    clearTimeout(killer);
    assert.equal(code, 0, `imaplib script failed:\n${stderr}\n${lines.join('\n')}`);
    assert.ok(idleDelivered, 'the script never reached IDLE');
    const r: Result = JSON.parse(lines[lines.length - 1]!);

    assert.match(r.greeting, /^\* OK/);
    assert.equal(r.login[0], 'OK');
    assert.ok(r.capability.includes('IMAP4rev1'));
    assert.ok(r.capability.includes('IDLE'));

    assert.equal(r.list[0], 'OK');
    assert.ok(r.list[1].some((l: string) => /"INBOX"$|\sINBOX$/.test(l)), JSON.stringify(r.list));
    assert.equal(r.create[0], 'OK');
    assert.ok(r.list_after_create[1].some((l: string) => /"?Archive"?$/.test(l)), JSON.stringify(r.list_after_create));
    assert.deepEqual(
      server.control.listMailboxes().map((m: { path: string }) => m.path).sort(),
      ['Archive', 'INBOX'],
    );

    assert.deepEqual(r.select, ['OK', ['2']]);

    // APPEND with flags and date, then a non-UTF-8 message that must round-trip byte for byte.
    assert.equal(r.append_text[0], 'OK');
    assert.match(r.append_text[1][0], /APPENDUID \d+ 3\]/);
    assert.equal(r.append_latin1[0], 'OK');
    assert.equal(r.latin1_uid, '4');
    const sent = Buffer.from(r.latin1_sent_b64, 'base64');
    assert.ok(!isUtf8(sent), 'fixture message must not be valid UTF-8');
    assert.equal(r.latin1_fetched_b64, r.latin1_sent_b64, 'BODY.PEEK[] differs from the appended bytes');
    assert.match(r.latin1_fetch_line, new RegExp(`RFC822\\.SIZE ${sent.length}\\b`));
    const stored = server.control.getMessage('INBOX', 4);
    assert.equal(stored.raw, r.latin1_sent_b64, 'stored source differs from the appended bytes');
    assert.equal(stored.size, sent.length);
    // (UID 3 is moved to Archive as UID 2 further down.)
    const appended = server.control.getMessage('Archive', 2);
    assert.deepEqual(appended.flags, ['\\Seen']);
    assert.match(appended.internaldate, /^03-Nov-2026 11:00:00 \+0000$/);

    // ENVELOPE
    assert.equal(r.envelopes[0], 'OK');
    const env: string[] = r.envelopes[1];
    assert.equal(env.length, 4, JSON.stringify(env));
    assert.match(env[0]!, /^1 \(UID 1 ENVELOPE \("Mon, 2 Nov 2026 10:00:00 \+0000" "Seeded" \(\("Alice" NIL "alice" "example.com"\)\)/);
    assert.match(env[0]!, /\(\("Bob" NIL "bob" "example.com"\)\) NIL NIL NIL "<Seeded@example.com>"\)\)$/);
    assert.match(env[1]!, /"Multipart seed"/);
    assert.match(env[2]!, /UID 3 .*"Appended by imaplib".*\(\("Carol" NIL "carol" "example.com"\)\)/);
    assert.match(env[3]!, /UID 4 .*"=\?ISO-8859-1\?Q\?Jos=E9\?=" NIL "jose" "example.com"/);
    assert.ok(env[3]!.includes('Caf\u00e9 cr\u00e8me'), `latin-1 subject bytes lost: ${env[3]}`);

    // BODYSTRUCTURE and a body section
    assert.equal(r.bodystructure[0], 'OK');
    // The CRLF before a boundary belongs to the boundary (RFC 2046 §5.1.1): 15 and 18 octets.
    assert.equal(
      r.bodystructure[1][0],
      '2 (UID 2 BODYSTRUCTURE (("text" "plain" ("charset" "utf-8") NIL NIL "7bit" 15 0 NIL NIL NIL NIL)' +
        '("text" "html" ("charset" "utf-8") NIL NIL "7bit" 18 0 NIL NIL NIL NIL) "alternative" ("boundary" "b1") NIL NIL NIL))',
    );
    assert.equal(r.body1[0], 'OK');
    const sections: [string, string | null][] = r.body1[1];
    const part1 = sections.find(([line]) => /BODY\[1\] \{\d+\}$/.test(line));
    assert.ok(part1, JSON.stringify(sections));
    assert.equal(part1[1], 'First part text');
    const mime2 = sections.find(([line]) => /BODY\[2\.MIME\] \{\d+\}$/.test(line));
    assert.ok(mime2, JSON.stringify(sections));
    assert.equal(mime2[1], 'Content-Type: text/html; charset=utf-8\r\n\r\n');
    assert.equal(r.flags_after_peek[1][0], '2 (UID 2 FLAGS (\\Recent))', 'BODY.PEEK must not set \\Seen');

    // SEARCH
    assert.deepEqual(r.search_subject, ['OK', ['1']]);
    assert.deepEqual(r.search_unseen, ['OK', ['1 2 4']]);
    assert.deepEqual(r.uid_search_from, ['OK', ['3']]);
    assert.deepEqual(r.search_body, ['OK', ['1']]);

    // STORE
    assert.equal(r.store[0], 'OK');
    assert.match(r.store[1][0], /^1 \(FLAGS \((\\Flagged \\Recent|\\Recent \\Flagged)\)( UID 1)?\)$/);
    assert.equal(r.uid_store_silent[0], 'OK');
    assert.deepEqual(r.uid_store_silent[1], [null]);
    assert.deepEqual(server.control.getMessage('INBOX', 2).flags.sort(), ['$Label1', '\\Answered']);

    // COPY
    assert.equal(r.copy[0], 'OK');
    assert.match(r.copy[1][0], /COPYUID \d+ 1 1\]/);
    assert.match(r.status_after_copy[1][0], /Archive"? \(MESSAGES 1 UIDNEXT 2\)/);
    const archived = server.control.listMessages('Archive', { raw: true });
    assert.equal(Buffer.from(archived[0]!.raw!, 'base64').toString('utf8'), mail('Seeded', 'Seed body'));
    assert.deepEqual(archived[0]!.flags, ['\\Flagged']);

    // UID MOVE
    assert.ok(r.capability.includes('MOVE'));
    assert.equal(r.move[0], 'OK', JSON.stringify(r.move));
    assert.deepEqual(r.move[2], ['3'], 'MOVE must expunge sequence number 3');
    assert.ok(
      [...r.move[1], ...r.move[3]].some((t: string | null) => t !== null && /COPYUID \d+ 3 2/.test(t)),
      JSON.stringify(r.move),
    );
    assert.match(r.status_after_move[1][0], /\(MESSAGES 2\)/);
    assert.deepEqual(server.control.listMessages('Archive').map((m) => m.uid), [1, 2]);

    // EXPUNGE
    assert.equal(r.store_deleted[0], 'OK');
    assert.deepEqual(r.expunge, ['OK', ['1']]);
    assert.deepEqual(r.after_expunge_all, ['OK', ['1 2']]);

    // IDLE saw the delivery made through the control API
    assert.equal(r.idle.continuation.slice(0, 1), '+');
    assert.equal(r.idle.timeout, undefined, JSON.stringify(r.idle));
    assert.ok(r.idle.lines.includes('* 3 EXISTS'), JSON.stringify(r.idle));
    assert.match(r.idle.tagged, /^\S+ OK/);

    assert.equal(r.logout[0], 'BYE');

    // The server's own view at the end.
    const inbox = server.control.listMessages('INBOX');
    assert.deepEqual(inbox.map((m) => m.uid), [2, 4, 5]);
  } finally {
    await server.stop();
  }
});

function isUtf8(buf: Buffer): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(buf);
    return true;
  } catch {
    return false;
  }
}
