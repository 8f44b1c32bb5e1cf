/**
 * Drives Rookery with isync (mbsync): pull to a Maildir, push flags and new messages back.
 */
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createServer } from '../../src/index.js';
import { mail } from '../helpers/server.js';

const version = spawnSync('mbsync', ['--version'], { encoding: 'utf8' });
const available = version.status === 0;
const skipReason = !available && !process.env.CI ? 'mbsync (isync) not installed' : false;

/** isync 1.5 renamed SSLType to TLSType (the old name still works there, but warns). */
function tlsKeyword(): string {
  const m = /(\d+)\.(\d+)/.exec(version.stdout ?? '');
  if (!m) return 'SSLType';
  const [major, minor] = [Number(m[1]), Number(m[2])];
  return major > 1 || (major === 1 && minor >= 5) ? 'TLSType' : 'SSLType';
}

function mbsync(config: string, home: string): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      'mbsync',
      ['-c', config, '-V', '-a'],
      { encoding: 'utf8', timeout: 15_000, env: { ...process.env, HOME: home } },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`mbsync failed: ${error.message}\n${stdout}\n${stderr}`));
        else resolve({ stdout, stderr });
      },
    );
  });
}

/** Maildir keeps LF line ends: mbsync converts CRLF <-> LF between IMAP and Maildir. */
const toLf = (b: Buffer): Buffer => Buffer.from(b.toString('latin1').replace(/\r\n/g, '\n'), 'latin1');
const toCrlf = (b: Buffer): Buffer => Buffer.from(b.toString('latin1').replace(/\r?\n/g, '\r\n'), 'latin1');

/**
 * mbsync writes an `X-TUID` line at the end of the header of every message it stores (its crash
 * recovery marker); everything else must be the server's bytes. Removes exactly that one line.
 */
function stripTuid(b: Buffer, eol = '\n'): Buffer {
  const text = b.toString('latin1');
  const re = new RegExp(`${eol}X-TUID: [A-Za-z0-9+/]{12}${eol}${eol}`);
  assert.match(text, re, `no X-TUID line at the end of the header: ${text}`);
  return Buffer.from(text.replace(re, `${eol}${eol}`), 'latin1');
}

/** Maildir files of a folder (cur and new), as { name, path, flags }. */
async function maildirFiles(folder: string): Promise<{ name: string; path: string; flags: string }[]> {
  const out: { name: string; path: string; flags: string }[] = [];
  for (const sub of ['cur', 'new']) {
    for (const name of (await readdir(join(folder, sub)).catch(() => [] as string[])).sort()) {
      out.push({ name, path: join(folder, sub, name), flags: /:2,([A-Za-z]*)$/.exec(name)?.[1] ?? '' });
    }
  }
  return out;
}

const LATIN1 = Buffer.concat([
  Buffer.from('From: Alice <alice@example.com>\r\nTo: Bob <bob@example.com>\r\nSubject: Gr'),
  Buffer.from([0xfc, 0xdf, 0x65]),
  Buffer.from('\r\nDate: Mon, 2 Nov 2026 10:20:00 +0000\r\nMessage-ID: <latin1-isync@example.com>\r\nMIME-Version: 1.0\r\n'),
  Buffer.from('Content-Type: text/plain; charset=ISO-8859-1\r\nContent-Transfer-Encoding: 8bit\r\n\r\nK'),
  Buffer.from([0xf6, 0x6c, 0x6e, 0x20, 0xe9, 0xff, 0x80]),
  Buffer.from('\r\n'),
]);

test('isync (mbsync): pull to Maildir, push flags and new messages', { skip: skipReason, timeout: 30_000 }, async () => {
  const server = createServer({ plugins: 'all', port: 0 });
  const dir = await mkdtemp(join(tmpdir(), 'rookery-isync-'));
  try {
    const { imap } = await server.start();
    server.control.createMailbox({ path: 'Work' });
    const first = Buffer.from(mail('Sync one', 'First body'));
    server.control.addMessage('INBOX', { raw: first, flags: ['\\Seen'] });
    server.control.addMessage('INBOX', { raw: LATIN1 });
    const work = Buffer.from(mail('Work item', 'Work body'));
    server.control.addMessage('Work', { raw: work, flags: ['\\Flagged'] });

    const maildir = join(dir, 'mail');
    await mkdir(maildir);
    const config = join(dir, 'mbsyncrc');
    await writeFile(
      config,
      [
        'IMAPAccount rookery',
        `Host ${imap.host}`,
        `Port ${imap.port}`,
        'User testuser',
        'Pass testpass',
        `${tlsKeyword()} None`,
        'AuthMechs LOGIN',
        '',
        'IMAPStore rookery-far',
        'Account rookery',
        '',
        'MaildirStore rookery-near',
        `Path ${maildir}/`,
        `Inbox ${maildir}/INBOX`,
        'SubFolders Verbatim',
        '',
        'Channel rookery',
        'Far :rookery-far:',
        'Near :rookery-near:',
        'Patterns *',
        'Create Near',
        'Sync Pull Push',
        'SyncState *',
        '',
      ].join('\n'),
    );

    // 1. Pull: every server message arrives as a Maildir file with the same bytes (LF line ends).
    await mbsync(config, dir);
    const inbox = await maildirFiles(join(maildir, 'INBOX'));
    assert.equal(inbox.length, 2, JSON.stringify(inbox));
    const contents = await Promise.all(inbox.map(async (f) => stripTuid(await readFile(f.path))));
    const firstIdx = contents.findIndex((c) => c.equals(toLf(first)));
    const latinIdx = contents.findIndex((c) => c.equals(toLf(LATIN1)));
    assert.ok(firstIdx >= 0, `first message differs: ${contents.map((c) => c.toString('latin1')).join('\n---\n')}`);
    assert.ok(latinIdx >= 0, `8-bit message differs: ${contents.map((c) => c.toString('latin1')).join('\n---\n')}`);
    assert.equal(inbox[firstIdx]!.flags, 'S');
    assert.equal(inbox[latinIdx]!.flags, '');
    const workFiles = await maildirFiles(join(maildir, 'Work'));
    assert.equal(workFiles.length, 1);
    assert.ok(stripTuid(await readFile(workFiles[0]!.path)).equals(toLf(work)));
    assert.equal(workFiles[0]!.flags, 'F');

    // 2. Push: flag the 8-bit message and mark the first one replied; add a new local message.
    const latin = inbox[latinIdx]!;
    const flaggedName = latin.name.includes(':2,') ? latin.name.replace(/:2,.*$/, ':2,FS') : `${latin.name}:2,FS`;
    await rename(latin.path, join(maildir, 'INBOX', 'cur', flaggedName));
    const one = inbox[firstIdx]!;
    await rename(one.path, join(maildir, 'INBOX', 'cur', one.name.replace(/:2,.*$/, ':2,RS')));
    const local = Buffer.from(
      'From: Dave <dave@example.com>\nTo: Bob <bob@example.com>\nSubject: Written locally\n' +
        'Date: Tue, 3 Nov 2026 09:00:00 +0000\nMessage-ID: <local-isync@example.com>\n\nLocal body\n',
    );
    await writeFile(join(maildir, 'INBOX', 'new', `1790000000.rookery-test.localhost`), local);

    // Meanwhile on the server: a new delivery and a flag change.
    const third = Buffer.from(mail('Sync three', 'Third body'));
    server.control.addMessage('INBOX', { raw: third });
    server.control.setFlags('Work', { uids: [1], flags: ['\\Seen'], mode: 'add' });

    await mbsync(config, dir);

    const messages = server.control.listMessages('INBOX', { raw: true });
    assert.equal(messages.length, 4, JSON.stringify(messages.map((m) => m.uid)));
    assert.deepEqual(messages[0]!.flags.sort(), ['\\Answered', '\\Seen']);
    assert.deepEqual(messages[1]!.flags.sort(), ['\\Flagged', '\\Seen']);
    assert.deepEqual(messages[2]!.flags, []);
    // The local message was APPENDed (with mbsync's X-TUID line, which it uses to find it again).
    const pushed = Buffer.from(messages[3]!.raw!, 'base64');
    assert.ok(stripTuid(pushed, '\r\n').equals(toCrlf(local)), `pushed message differs: ${pushed.toString('latin1')}`);
    // Server sources are unchanged by the sync.
    assert.ok(Buffer.from(messages[1]!.raw!, 'base64').equals(LATIN1));

    // The server delivery and the server flag change were pulled.
    const inbox2 = await maildirFiles(join(maildir, 'INBOX'));
    assert.equal(inbox2.length, 4);
    const contents2 = await Promise.all(inbox2.map(async (f) => readFile(f.path)));
    const stripped2 = contents2.map((c) => (c.includes('X-TUID: ') ? stripTuid(c) : c));
    assert.ok(stripped2.some((c) => c.equals(toLf(third))), 'server delivery not pulled');
    const work2 = await maildirFiles(join(maildir, 'Work'));
    assert.equal(work2.length, 1);
    assert.equal(work2[0]!.flags, 'FS');

    // 3. A message trashed locally becomes \Deleted on the server (Expunge None: it stays).
    const thirdFile = inbox2[stripped2.findIndex((c) => c.equals(toLf(third)))]!;
    await rename(thirdFile.path, join(maildir, 'INBOX', 'cur', thirdFile.name.replace(/:2,.*$/, '') + ':2,T'));
    await mbsync(config, dir);
    const after = server.control.listMessages('INBOX');
    assert.equal(after.length, 4);
    assert.deepEqual(after[2]!.flags, ['\\Deleted']);

    // 4. A run with nothing to do changes nothing.
    const before = JSON.stringify(server.control.listMessages('INBOX', { raw: true }));
    await mbsync(config, dir);
    assert.equal(JSON.stringify(server.control.listMessages('INBOX', { raw: true })), before);

    // 5. An expunge on the server (the control API, as REST would) reaches the Maildir: mbsync marks the
    //    message trashed (T; with Expunge None it keeps the file).
    const firstUid = server.control.listMessages('INBOX')[0]!.uid;
    server.control.expungeMessages('INBOX', { uids: [firstUid] });
    await mbsync(config, dir);
    const inbox5 = await maildirFiles(join(maildir, 'INBOX'));
    const gone = inbox5.find((f) => f.name.includes(`,U=${firstUid}:`));
    assert.ok(gone, JSON.stringify(inbox5));
    assert.match(gone.flags, /T/, 'the expunged message should be marked trashed');
    assert.equal(inbox5.filter((f) => f.flags.includes('T')).length, 2, JSON.stringify(inbox5));
    server.control.resetUidValidity('Work', { uidvalidity: 4242 });
    server.control.setFlags('Work', { uids: [1], flags: ['\\Answered'], mode: 'add' });
    // isync 1.4 recovers from a new UIDVALIDITY by matching the messages it knows (no duplicate, flags pulled).
    await mbsync(config, dir);
    const work5 = await maildirFiles(join(maildir, 'Work'));
    assert.equal(work5.length, 1, JSON.stringify(work5));
    assert.equal(work5[0]!.flags, 'FRS');
  } finally {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
});
