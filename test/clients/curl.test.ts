/**
 * Drives Rookery with curl's IMAP support.
 */
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createServer } from '../../src/index.js';
import { mail } from '../helpers/server.js';

const available = spawnSync('curl', ['--version']).status === 0;
const skipReason = !available && !process.env.CI ? 'curl not installed' : false;

/** Runs curl asynchronously (the server lives in this process) and returns stdout as bytes. */
function curl(args: string[]): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    execFile(
      'curl',
      ['-sS', '--max-time', '10', '-u', 'testuser:testpass', ...args],
      { encoding: 'buffer', timeout: 15_000 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`curl ${args.join(' ')} failed: ${error.message}\n${stderr.toString()}`));
        else resolve(stdout);
      },
    );
  });
}

/** The bytes curl received, from a `--trace` file (hex dump of every "<= Recv" block). */
function receivedBytes(trace: string): Buffer {
  const bytes: number[] = [];
  let receiving = false;
  for (const line of trace.split('\n')) {
    if (line.startsWith('<= Recv header') || line.startsWith('<= Recv data')) receiving = true;
    else if (/^(=>|==|<=)/.test(line)) receiving = false;
    else if (receiving) {
      const m = /^[0-9a-f]{4}: ((?:[0-9a-f]{2} ){1,16})/.exec(line);
      if (m) for (const hex of m[1]!.trim().split(' ')) bytes.push(parseInt(hex, 16));
    }
  }
  return Buffer.from(bytes);
}

// 8-bit ISO-8859-1 bytes: not valid UTF-8, must survive byte for byte.
const LATIN1 = Buffer.concat([
  Buffer.from('From: Alice <alice@example.com>\r\nTo: Bob <bob@example.com>\r\nSubject: Caf'),
  Buffer.from([0xe9]),
  Buffer.from('\r\nDate: Mon, 2 Nov 2026 10:10:00 +0000\r\nMIME-Version: 1.0\r\n'),
  Buffer.from('Content-Type: text/plain; charset=ISO-8859-1\r\nContent-Transfer-Encoding: 8bit\r\n\r\nK'),
  Buffer.from([0xf6, 0x6c, 0x6e, 0x20, 0xff, 0x80]),
  Buffer.from('\r\n'),
]);

test('curl: LIST, FETCH, download by UID, SEARCH, STORE, APPEND', { skip: skipReason, timeout: 30_000 }, async () => {
  const server = createServer({ plugins: 'all', port: 0 });
  const dir = await mkdtemp(join(tmpdir(), 'rookery-curl-'));
  try {
    const { imap } = await server.start();
    const base = `imap://${imap.host}:${imap.port}`;
    server.control.createMailbox({ path: 'Work' });
    server.control.addMessage('INBOX', { raw: mail('First', 'Body one') });
    server.control.addMessage('INBOX', { raw: LATIN1 });
    server.control.addMessage('INBOX', { raw: mail('Third report', 'Body three') });

    // LIST: curl prints the untagged responses of a custom command.
    const list = (await curl([`${base}/`, '-X', 'LIST "" *'])).toString('latin1');
    const listLines = list.split('\r\n').filter(Boolean);
    assert.ok(listLines.some((l) => /^\* LIST \([^)]*\) "\/" "?INBOX"?$/.test(l)), list);
    assert.ok(listLines.some((l) => /^\* LIST \([^)]*\) "\/" "?Work"?$/.test(l)), list);
    assert.equal(listLines.length, 2, list);

    // Plain URL with no path: curl's own LIST.
    const defaultList = (await curl([`${base}/`])).toString('latin1');
    assert.match(defaultList, /^\* LIST .*INBOX/m);

    // FETCH as a custom command. curl prints only the untagged lines that start with "*", not the
    // literal that follows, so the bytes on the wire are checked through curl's --trace.
    const trace = join(dir, 'fetch.trace');
    const fetched = await curl([`${base}/INBOX`, '-X', 'FETCH 1 BODY[]', '--trace', trace]);
    const first = Buffer.from(mail('First', 'Body one'));
    assert.equal(fetched.toString('latin1'), `* 1 FETCH (BODY[] {${first.length}}\r\n`);
    const received = receivedBytes(await readFile(trace, 'latin1'));
    const expectedFetch = Buffer.concat([
      Buffer.from(`* 1 FETCH (BODY[] {${first.length}}\r\n`),
      first,
      // The implicit \\Seen is reported; this session is the first to see the messages, hence \\Recent.
      Buffer.from(' FLAGS (\\Seen \\Recent))\r\n'),
    ]);
    assert.ok(received.includes(expectedFetch), received.toString('latin1'));
    // That was BODY[] (not PEEK): \Seen is now set.
    assert.deepEqual(server.control.getMessage('INBOX', 1).flags, ['\\Seen']);

    // The same for the 8-bit message with BODY.PEEK[]: byte-identical on the wire, no \Seen.
    const trace2 = join(dir, 'fetch2.trace');
    await curl([`${base}/INBOX`, '-X', 'FETCH 2 BODY.PEEK[]', '--trace', trace2]);
    const received2 = receivedBytes(await readFile(trace2, 'latin1'));
    const expected2 = Buffer.concat([Buffer.from(`* 2 FETCH (BODY[] {${LATIN1.length}}\r\n`), LATIN1, Buffer.from(')\r\n')]);
    assert.ok(received2.includes(expected2), received2.toString('latin1'));
    assert.deepEqual(server.control.getMessage('INBOX', 2).flags, []);

    // Download by UID: curl writes exactly the message bytes.
    const downloaded = await curl([`${base}/INBOX;UID=2`]);
    assert.ok(downloaded.equals(LATIN1), `downloaded ${downloaded.toString('latin1')}`);
    const viaFile = join(dir, 'uid2.eml');
    await curl([`${base}/INBOX;UID=2`, '-o', viaFile]);
    assert.ok((await readFile(viaFile)).equals(LATIN1));

    // A section by UID.
    const section = await curl([`${base}/INBOX;UID=3;SECTION=TEXT`]);
    assert.equal(section.toString('latin1'), 'Body three\r\n');

    // SEARCH as a custom command and through the URL query.
    const search = (await curl([`${base}/INBOX`, '-X', 'SEARCH SUBJECT report'])).toString('latin1');
    assert.equal(search, '* SEARCH 3\r\n');
    const searchAll = (await curl([`${base}/INBOX`, '-X', 'SEARCH ALL'])).toString('latin1');
    assert.equal(searchAll, '* SEARCH 1 2 3\r\n');
    const searchUrl = (await curl([`${base}/INBOX?FROM%20alice`])).toString('latin1');
    assert.equal(searchUrl, '* SEARCH 1 2 3\r\n');

    // STORE through a custom command shows in the control API.
    const store = (await curl([`${base}/INBOX`, '-X', 'STORE 2 +FLAGS (\\Flagged)'])).toString('latin1');
    assert.match(store, /^\* 2 FETCH \(FLAGS \([^)]*\\Flagged[^)]*\)\)\r\n$/);
    // (\\Seen comes from the earlier download: curl fetches with BODY[], not BODY.PEEK[].)
    assert.deepEqual(server.control.getMessage('INBOX', 2).flags.sort(), ['\\Flagged', '\\Seen']);

    // APPEND with --upload-file, including 8-bit bytes.
    const upload = join(dir, 'upload.eml');
    const uploaded = Buffer.concat([Buffer.from(mail('Uploaded by curl', 'Upload body')), LATIN1.subarray(LATIN1.length - 8)]);
    await writeFile(upload, uploaded);
    await curl([`${base}/Work`, '--upload-file', upload]);
    const work = server.control.listMessages('Work', { raw: true });
    assert.equal(work.length, 1);
    assert.ok(Buffer.from(work[0]!.raw!, 'base64').equals(uploaded), 'APPENDed bytes differ');
    assert.equal(work[0]!.size, uploaded.length);

    // And it can be read back.
    const back = await curl([`${base}/Work;UID=${work[0]!.uid}`]);
    assert.ok(back.equals(uploaded));

    // EXAMINE-style status of the mailbox with a custom command.
    const status = (await curl([`${base}/`, '-X', 'STATUS Work (MESSAGES UIDNEXT)'])).toString('latin1');
    assert.match(status, /^\* STATUS "?Work"? \(MESSAGES 1 UIDNEXT 2\)\r\n$/);
  } finally {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
});
