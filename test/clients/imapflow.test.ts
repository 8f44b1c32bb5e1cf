import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ImapFlow } from 'imapflow';
import type { Server } from '../../src/index.js';
import { mail, startServer } from '../helpers/server.js';

/** A message whose body holds every byte 0x80-0xFF (declared 8bit, ISO-8859-1). */
function latin1Message(): Buffer {
  const head = Buffer.from(
    'From: Carol <carol@example.com>\r\nTo: Bob <bob@example.com>\r\nSubject: Latin bytes\r\n' +
      'Date: Tue, 3 Nov 2026 10:00:00 +0000\r\nMIME-Version: 1.0\r\n' +
      'Content-Type: text/plain; charset=ISO-8859-1\r\nContent-Transfer-Encoding: 8bit\r\n\r\n',
    'latin1',
  );
  const high = Buffer.alloc(128);
  for (let i = 0; i < 128; i++) high[i] = 0x80 + i;
  return Buffer.concat([head, Buffer.from('caf'), Buffer.from([0xe9]), Buffer.from('\r\n'), high, Buffer.from('\r\n')]);
}

const MULTIPART =
  'From: Dave <dave@example.com>\r\nTo: Bob <bob@example.com>\r\nSubject: Multi part\r\n' +
  'Date: Wed, 4 Nov 2026 10:00:00 +0000\r\nMIME-Version: 1.0\r\n' +
  'Content-Type: multipart/mixed; boundary="BOUND"\r\n\r\n' +
  'preamble\r\n--BOUND\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nFirst part text\r\nline two\r\n' +
  '--BOUND\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<p>Second</p>\r\n--BOUND--\r\n';

function waitFor<T>(client: ImapFlow, event: string, accept: (value: T) => boolean, ms = 4000): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      client.off(event, listener);
      reject(new Error(`timed out waiting for ${event}`));
    }, ms);
    const listener = (value: T): void => {
      if (!accept(value)) return;
      clearTimeout(timer);
      client.off(event, listener);
      resolve(value);
    };
    client.on(event, listener);
  });
}

let server: Server;
let port: number;

before(async () => {
  ({ server, port } = await startServer({ plugins: 'all' }));
});

after(async () => {
  await server.stop();
});

function newClient(): ImapFlow {
  return new ImapFlow({
    host: '127.0.0.1',
    port,
    secure: false,
    auth: { user: 'testuser', pass: 'testpass' },
    logger: false,
    disableAutoIdle: true,
    // These flows check IMAP4rev1 (\Recent among them); imapflow would ENABLE the IMAP4rev2
    // that plugins "all" offers. Its rev2 flow is in test/extensions/imap4rev2.test.ts.
    disableIMAP4rev2: true,
  });
}

test('imapflow: full flow', { timeout: 15000 }, async () => {
  const client = newClient();
  client.on('error', () => undefined);
  try {
    await client.connect();
    assert.ok(client.authenticated);

    // LIST + CREATE
    const before = await client.list();
    assert.ok(before.some((m) => m.path === 'INBOX'));
    const created = await client.mailboxCreate('Archive');
    assert.equal(created.path, 'Archive');
    assert.equal(created.created, true);
    await client.mailboxCreate('Moved');
    const listed = (await client.list()).map((m) => m.path).sort();
    assert.ok(listed.includes('Archive') && listed.includes('Moved'), listed.join(','));

    // APPEND
    const a1 = await client.append('INBOX', mail('First subject', 'Body one'), ['\\Seen']);
    assert.ok(a1);
    const raw8 = latin1Message();
    const a2 = await client.append('INBOX', raw8, []);
    assert.ok(a2);
    const a3 = await client.append('INBOX', MULTIPART, ['\\Flagged']);
    assert.ok(a3);
    assert.ok(a1.uid && a2.uid && a3.uid);
    assert.ok(a1.uid < a2.uid && a2.uid < a3.uid);

    // SELECT
    const box = await client.mailboxOpen('INBOX');
    assert.equal(box.path, 'INBOX');
    assert.equal(box.exists, 3);
    assert.equal(box.uidNext, a3.uid + 1);
    assert.equal(a1.uidValidity, box.uidValidity);

    // 8-bit source is byte-identical
    const m2 = await client.fetchOne(String(a2.uid), { source: true, size: true, flags: true }, { uid: true });
    assert.ok(m2 && m2.source);
    assert.equal(m2.size, raw8.length);
    assert.ok(m2.source.equals(raw8), 'fetched source differs from appended bytes');
    // First session to select: every message is \Recent (IMAP4rev1)
    assert.deepEqual([...(m2.flags ?? [])], ['\\Recent']);

    // ENVELOPE, BODYSTRUCTURE, body sections
    const m3 = await client.fetchOne(
      String(a3.uid),
      { envelope: true, bodyStructure: true, size: true, flags: true, bodyParts: ['1', '2'], headers: ['subject', 'from'] },
      { uid: true },
    );
    assert.ok(m3);
    assert.equal(m3.uid, a3.uid);
    assert.equal(m3.seq, 3);
    assert.equal(m3.size, Buffer.byteLength(MULTIPART));
    assert.deepEqual([...(m3.flags ?? [])].sort(), ['\\Flagged', '\\Recent']);
    assert.equal(m3.envelope?.subject, 'Multi part');
    assert.deepEqual(m3.envelope?.from, [{ name: 'Dave', address: 'dave@example.com' }]);
    assert.deepEqual(m3.envelope?.to, [{ name: 'Bob', address: 'bob@example.com' }]);
    const bs = m3.bodyStructure;
    assert.ok(bs);
    assert.equal(bs.type, 'multipart/mixed');
    assert.equal(bs.parameters?.boundary, 'BOUND');
    assert.equal(bs.childNodes?.length, 2);
    assert.equal(bs.childNodes?.[0]?.type, 'text/plain');
    assert.equal(bs.childNodes?.[0]?.part, '1');
    assert.equal(bs.childNodes?.[0]?.size, 'First part text\r\nline two'.length);
    // The CRLF before the boundary belongs to the delimiter: one LF-terminated line
    assert.equal(bs.childNodes?.[0]?.lineCount, 1);
    assert.equal(bs.childNodes?.[1]?.type, 'text/html');
    assert.equal(bs.childNodes?.[1]?.size, '<p>Second</p>'.length);
    assert.equal(m3.bodyParts?.get('1')?.toString(), 'First part text\r\nline two');
    assert.equal(m3.bodyParts?.get('2')?.toString(), '<p>Second</p>');
    // BODY.PEEK[HEADER.FIELDS (subject from)]: fields in message order, then the blank line
    assert.equal(m3.headers?.toString(), 'From: Dave <dave@example.com>\r\nSubject: Multi part\r\n\r\n');

    const m1 = await client.fetchOne('1', { envelope: true, headers: ['subject'] });
    assert.ok(m1);
    assert.equal(m1.uid, a1.uid);
    assert.equal(m1.envelope?.subject, 'First subject');
    assert.equal(m1.envelope?.messageId, '<Firstsubject@example.com>');
    assert.equal(m1.headers?.toString(), 'Subject: First subject\r\n\r\n');

    // SEARCH
    assert.deepEqual(await client.search({ subject: 'first' }, { uid: true }), [a1.uid]);
    assert.deepEqual(await client.search({ seen: false }, { uid: true }), [a2.uid, a3.uid]);
    assert.deepEqual(await client.search({ uid: `${a2.uid}:${a3.uid}` }, { uid: true }), [a2.uid, a3.uid]);
    assert.deepEqual(await client.search({ flagged: true }), [3]);
    assert.deepEqual(await client.search({ body: 'Second' }, { uid: true }), [a3.uid]);

    // STORE
    assert.equal(await client.messageFlagsAdd(String(a2.uid), ['\\Seen', '$Label1'], { uid: true }), true);
    let f2 = await client.fetchOne(String(a2.uid), { flags: true }, { uid: true });
    assert.ok(f2);
    assert.deepEqual([...(f2.flags ?? [])].sort(), ['$Label1', '\\Recent', '\\Seen']);
    assert.equal(await client.messageFlagsRemove(String(a2.uid), ['\\Seen'], { uid: true }), true);
    f2 = await client.fetchOne(String(a2.uid), { flags: true }, { uid: true });
    assert.ok(f2);
    assert.deepEqual([...(f2.flags ?? [])].sort(), ['$Label1', '\\Recent']);
    assert.deepEqual(await client.search({ seen: false }, { uid: true }), [a2.uid, a3.uid]);
    assert.deepEqual(await client.search({ keyword: '$Label1' }, { uid: true }), [a2.uid]);

    // COPY
    const copied = await client.messageCopy(`${a1.uid}:${a2.uid}`, 'Archive', { uid: true });
    assert.ok(copied);
    assert.equal(copied.destination, 'Archive');
    assert.equal(copied.uidMap?.size, 2);
    const archived = server.control.listMessages('Archive', { raw: true });
    assert.equal(archived.length, 2);
    const archivedLatin = archived.find((m) => m.uid === copied.uidMap?.get(a2.uid as number));
    assert.ok(archivedLatin && typeof archivedLatin.raw === 'string');
    assert.ok(Buffer.from(archivedLatin.raw, 'base64').equals(raw8));

    // MOVE
    const moved = await client.messageMove(String(a3.uid), 'Moved', { uid: true });
    assert.ok(moved);
    assert.equal(moved.uidMap?.size, 1);
    assert.equal(client.mailbox && client.mailbox.exists, 2);
    const movedList = server.control.listMessages('Moved');
    assert.deepEqual(movedList.map((m) => m.uid), [moved.uidMap?.get(a3.uid)]);

    // EXPUNGE (flag \Deleted + EXPUNGE)
    assert.equal(await client.messageDelete(String(a1.uid), { uid: true }), true);
    assert.equal(client.mailbox && client.mailbox.exists, 1);
    assert.deepEqual(
      server.control.listMessages('INBOX').map((m) => m.uid),
      [a2.uid],
    );
    const status = await client.status('Archive', { messages: true, unseen: true });
    assert.ok(status);
    assert.equal(status.messages, 2);
    assert.equal(status.unseen, 1);
  } finally {
    await client.logout().catch(() => client.close());
  }
});

test('imapflow: IDLE sees EXISTS, FETCH and EXPUNGE caused by control', { timeout: 15000 }, async () => {
  const client = newClient();
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.mailboxCreate('Idle');
    const { uid: seedUid } = server.control.addMessage('Idle', { raw: mail('Seed') });
    const box = await client.mailboxOpen('Idle');
    assert.equal(box.exists, 1);

    const idling = client.idle();
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(client.idling, true);

    const exists = waitFor<{ path: string; count: number; prevCount: number }>(client, 'exists', () => true);
    const { uid: newUid } = server.control.addMessage('Idle', { raw: mail('Arrived') });
    const e = await exists;
    assert.equal(e.path, 'Idle');
    assert.equal(e.count, 2);
    assert.equal(e.prevCount, 1);

    const flags = waitFor<{ path: string; seq: number; uid?: number; flags: Set<string> }>(client, 'flags', () => true);
    server.control.setFlags('Idle', { uids: [newUid], flags: ['\\Flagged', '\\Seen'], mode: 'add' });
    const f = await flags;
    assert.equal(f.path, 'Idle');
    assert.equal(f.seq, 2);
    // Arrived while this session had the mailbox selected, so it is \Recent here
    assert.deepEqual([...f.flags].sort(), ['\\Flagged', '\\Recent', '\\Seen']);

    const expunge = waitFor<{ path: string; seq?: number; uid?: number; vanished?: boolean }>(client, 'expunge', () => true);
    server.control.expungeMessages('Idle', { uids: [seedUid] });
    const x = await expunge;
    assert.equal(x.path, 'Idle');
    if (x.vanished) assert.equal(x.uid, seedUid);
    else assert.equal(x.seq, 1);

    assert.equal(client.mailbox && client.mailbox.exists, 1);
    // Leaving IDLE: the next command ends it
    const left = await client.fetchOne('*', { uid: true, flags: true, envelope: true });
    assert.ok(left);
    assert.equal(left.uid, newUid);
    assert.equal(left.seq, 1);
    assert.equal(left.envelope?.subject, 'Arrived');
    assert.deepEqual([...(left.flags ?? [])].sort(), ['\\Flagged', '\\Recent', '\\Seen']);
    await idling;
  } finally {
    await client.logout().catch(() => client.close());
  }
});
