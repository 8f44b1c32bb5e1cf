import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import Imap from 'imap';
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
  return Buffer.concat([head, high, Buffer.from('\r\n')]);
}

const MULTIPART =
  'From: Dave <dave@example.com>\r\nTo: Bob <bob@example.com>, Eve <eve@example.org>\r\nSubject: Multi part\r\n' +
  'Date: Wed, 4 Nov 2026 10:00:00 +0000\r\nMIME-Version: 1.0\r\n' +
  'Content-Type: multipart/alternative; boundary="XYZ"\r\n\r\n' +
  '--XYZ\r\nContent-Type: text/plain; charset=us-ascii\r\n\r\nPlain body\r\nsecond line\r\n' +
  '--XYZ\r\nContent-Type: text/html; charset=us-ascii\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n<b>Html=3D</b>\r\n--XYZ--\r\n';

interface Fetched {
  seqno: number;
  attrs: Imap.Attributes;
  bodies: Map<string, Buffer>;
}

function fetchAll(f: Imap.ImapFetch): Promise<Fetched[]> {
  return new Promise((resolve, reject) => {
    const out: Fetched[] = [];
    const pending: Promise<void>[] = [];
    f.on('message', (msg, seqno) => {
      const item: Fetched = { seqno, attrs: { uid: 0, flags: [], date: new Date(0) }, bodies: new Map() };
      out.push(item);
      msg.on('body', (stream, info) => {
        const chunks: Buffer[] = [];
        pending.push(
          new Promise((done) => {
            stream.on('data', (c: Buffer | string) => chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(c, 'binary')));
            stream.on('end', () => {
              item.bodies.set(info.which, Buffer.concat(chunks));
              done();
            });
          }),
        );
      });
      msg.on('attributes', (attrs) => {
        item.attrs = attrs;
      });
    });
    f.once('error', reject);
    f.once('end', () => {
      Promise.all(pending).then(() => resolve(out), reject);
    });
  });
}

function call<T>(fn: (cb: (err: Error | null, result?: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) => fn((err, result) => (err ? reject(err) : resolve(result as T))));
}

function waitEvent<A extends unknown[]>(imap: Imap, event: string, ms = 4000): Promise<A> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      imap.off(event, listener);
      reject(new Error(`timed out waiting for ${event}`));
    }, ms);
    const listener = (...args: unknown[]): void => {
      clearTimeout(timer);
      imap.off(event, listener);
      resolve(args as A);
    };
    imap.on(event, listener);
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

async function connect(debugLog: string[] = []): Promise<Imap> {
  const imap = new Imap({
    user: 'testuser',
    password: 'testpass',
    host: '127.0.0.1',
    port,
    tls: false,
    autotls: 'never',
    keepalive: { interval: 50, idleInterval: 60000 },
    debug: (line) => debugLog.push(line),
  });
  await new Promise<void>((resolve, reject) => {
    imap.once('ready', () => resolve());
    imap.once('error', reject);
    imap.connect();
  });
  imap.on('error', () => undefined);
  return imap;
}

async function logout(imap: Imap): Promise<void> {
  if (imap.state === 'disconnected') return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      imap.destroy();
      resolve();
    }, 2000);
    imap.once('end', () => {
      clearTimeout(timer);
      resolve();
    });
    imap.end();
  });
}

test('node-imap: full flow', { timeout: 15000 }, async () => {
  const log: string[] = [];
  const imap = await connect(log);
  if (process.env.IMAP_DEBUG) imap.on('close', () => console.log(log.join('\n')));
  try {
    // LIST + CREATE
    await call<void>((cb) => imap.addBox('Work', cb));
    await call<void>((cb) => imap.addBox('Work/Done', cb));
    const boxes = await call<Imap.MailBoxes>((cb) => imap.getBoxes(cb));
    assert.ok(boxes.INBOX);
    assert.ok(boxes.Work);
    assert.equal(boxes.Work.delimiter, '/');
    assert.ok(boxes.Work.attribs.includes('\\HasChildren'), boxes.Work.attribs.join(' '));
    assert.ok(boxes.Work.children?.Done);

    // APPEND (APPENDUID gives the new UID)
    const raw8 = latin1Message();
    const utf8 = mail('Alpha news', 'alpha body: Gr\u00fc\u00dfe \u20ac \u{1F426}');
    const uid1 = await call<number>((cb) => imap.append(utf8, { mailbox: 'INBOX', flags: ['Seen'] }, cb));
    // node-imap 0.8.19 turns a Buffer given to append() into a UTF-8 string (lossy for bytes that are not
    // UTF-8), so the non-UTF-8 message goes in through the control API and comes back over IMAP.
    const { uid: uid2 } = server.control.addMessage('INBOX', { raw: raw8.toString('base64'), encoding: 'base64' });
    const uid3 = await call<number>((cb) => imap.append(MULTIPART, { mailbox: 'INBOX', flags: ['$Important'] }, cb));
    assert.equal(typeof uid1, 'number');
    assert.deepEqual([uid2 - uid1, uid3 - uid2], [1, 1]);

    // SELECT
    const box = await call<Imap.Box>((cb) => imap.openBox('INBOX', false, cb));
    assert.equal(box.name, 'INBOX');
    assert.equal(box.readOnly, false);
    assert.equal(box.messages.total, 3);
    assert.equal(box.messages.new, 3);
    assert.equal(box.uidnext, uid3 + 1);
    assert.ok(box.permFlags.includes('\\Seen'));

    // Full source of the UTF-8 message (bytes 0x80-0xFF as sent by append), byte for byte
    const [src1] = await fetchAll(imap.fetch(uid1, { bodies: [''], size: true }));
    assert.ok(src1);
    assert.equal(src1.attrs.size, Buffer.byteLength(utf8));
    assert.ok(src1.bodies.get('')?.equals(Buffer.from(utf8, 'utf8')), 'fetched UTF-8 source differs');

    // Full source of the non-UTF-8 message, byte for byte
    const [src] = await fetchAll(imap.fetch(uid2, { bodies: [''], size: true }));
    assert.ok(src);
    assert.equal(src.attrs.uid, uid2);
    assert.equal(src.attrs.size, raw8.length);
    const got = src.bodies.get('');
    assert.ok(got);
    assert.equal(got.length, raw8.length);
    assert.ok(got.equals(raw8), 'fetched 8-bit source differs from appended bytes');

    // ENVELOPE + BODYSTRUCTURE + sections
    const [m3] = await fetchAll(
      imap.fetch(uid3, { envelope: true, struct: true, size: true, bodies: ['1', '2', 'HEADER.FIELDS (SUBJECT TO)', '2.MIME'] }),
    );
    assert.ok(m3);
    assert.equal(m3.seqno, 3);
    assert.equal(m3.attrs.size, Buffer.byteLength(MULTIPART));
    assert.deepEqual([...m3.attrs.flags].sort(), ['$Important', '\\Recent']);
    const env = m3.attrs.envelope;
    assert.ok(env);
    assert.equal(env.subject, 'Multi part');
    assert.deepEqual(env.from, [{ name: 'Dave', mailbox: 'dave', host: 'example.com' }]);
    assert.deepEqual(env.to, [
      { name: 'Bob', mailbox: 'bob', host: 'example.com' },
      { name: 'Eve', mailbox: 'eve', host: 'example.org' },
    ]);
    assert.equal(env.date?.toISOString(), '2026-11-04T10:00:00.000Z');
    const struct = m3.attrs.struct;
    assert.ok(struct);
    const root = struct[0] as Imap.StructPart;
    assert.equal(root.type, 'alternative');
    assert.equal(root.params?.boundary, 'XYZ');
    const p1 = (struct[1] as Imap.Struct)[0] as Imap.StructPart;
    const p2 = (struct[2] as Imap.Struct)[0] as Imap.StructPart;
    assert.deepEqual(
      [p1.partID, p1.type, p1.subtype, p1.params?.charset, p1.encoding, p1.size, p1.lines],
      ['1', 'text', 'plain', 'us-ascii', '7bit', 'Plain body\r\nsecond line'.length, 1],
    );
    assert.deepEqual(
      [p2.partID, p2.type, p2.subtype, p2.encoding, p2.size, p2.lines],
      ['2', 'text', 'html', 'quoted-printable', '<b>Html=3D</b>'.length, 0],
    );
    assert.equal(m3.bodies.get('1')?.toString(), 'Plain body\r\nsecond line');
    assert.equal(m3.bodies.get('2')?.toString(), '<b>Html=3D</b>');
    assert.equal(
      m3.bodies.get('2.MIME')?.toString(),
      'Content-Type: text/html; charset=us-ascii\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n',
    );
    const hf = m3.bodies.get('HEADER.FIELDS (SUBJECT TO)');
    assert.ok(hf, `sections: ${[...m3.bodies.keys()].join(' | ')}`);
    assert.deepEqual(Imap.parseHeader(hf.toString()), {
      to: ['Bob <bob@example.com>, Eve <eve@example.org>'],
      subject: ['Multi part'],
    });
    assert.equal(hf.toString(), 'To: Bob <bob@example.com>, Eve <eve@example.org>\r\nSubject: Multi part\r\n\r\n');

    // SEARCH (node-imap uses UID SEARCH)
    assert.deepEqual(await call<number[]>((cb) => imap.search([['SUBJECT', 'alpha']], cb)), [uid1]);
    assert.deepEqual(await call<number[]>((cb) => imap.search(['UNSEEN'], cb)), [uid2, uid3]);
    assert.deepEqual(await call<number[]>((cb) => imap.search([['UID', `${uid2}:*`]], cb)), [uid2, uid3]);
    assert.deepEqual(await call<number[]>((cb) => imap.search([['KEYWORD', '$Important']], cb)), [uid3]);
    assert.deepEqual(await call<number[]>((cb) => imap.search(['SEEN', ['BODY', 'alpha']], cb)), [uid1]);
    assert.deepEqual(await call<number[]>((cb) => imap.search([['LARGER', 300]], cb)), [uid2, uid3]);
    assert.deepEqual(await call<number[]>((cb) => imap.seq.search([['HEADER', 'Subject', 'Latin']], cb)), [2]);

    // STORE add / remove, then check
    await call<void>((cb) => imap.addFlags([uid2, uid3], ['\\Flagged', '\\Answered'], cb));
    await call<void>((cb) => imap.delFlags(uid3, '\\Answered', cb));
    const flagged = await fetchAll(imap.fetch(`${uid1}:${uid3}`, {}));
    assert.deepEqual(
      flagged.map((m) => [m.attrs.uid, [...m.attrs.flags].sort()]),
      [
        [uid1, ['\\Recent', '\\Seen']],
        [uid2, ['\\Answered', '\\Flagged', '\\Recent']],
        [uid3, ['$Important', '\\Flagged', '\\Recent']],
      ],
    );
    assert.deepEqual(await call<number[]>((cb) => imap.search(['FLAGGED', 'UNANSWERED'], cb)), [uid3]);

    // COPY (COPYUID)
    const copyUids = await call<string>((cb) => imap.copy([uid1, uid2], 'Work', cb));
    assert.equal(copyUids, '1:2');
    const work = server.control.listMessages('Work', { raw: true });
    assert.deepEqual(work.map((m) => m.uid), [1, 2]);
    assert.deepEqual(work[1]!.flags.sort(), ['\\Answered', '\\Flagged']);
    assert.ok(Buffer.from(work[1]!.raw ?? '', 'base64').equals(raw8));

    // MOVE
    // Rookery sends COPYUID in an untagged OK before the EXPUNGE (RFC 6851 §4.3); node-imap only
    // reads it from tagged responses, so the new UID is checked through the control API.
    const movedSeqs: number[] = [];
    const onMoved = (seq: number): void => void movedSeqs.push(seq);
    imap.on('expunge', onMoved);
    await call<string>((cb) => imap.move(uid3, 'Work/Done', cb));
    imap.off('expunge', onMoved);
    assert.deepEqual(movedSeqs, [3]);
    assert.deepEqual(server.control.listMessages('Work/Done').map((m) => m.uid), [1]);
    assert.deepEqual(server.control.listMessages('INBOX').map((m) => m.uid), [uid1, uid2]);
    assert.deepEqual(server.control.listMessages('Work/Done').map((m) => m.size), [Buffer.byteLength(MULTIPART)]);

    // EXPUNGE (UID EXPUNGE via UIDPLUS after \Deleted)
    const expunged: number[] = [];
    imap.on('expunge', (seq: number) => expunged.push(seq));
    await call<void>((cb) => imap.addFlags(uid1, '\\Deleted', cb));
    await call<void>((cb) => imap.expunge(uid1, cb));
    assert.deepEqual(expunged, [1]);
    assert.deepEqual(server.control.listMessages('INBOX').map((m) => m.uid), [uid2]);

    const status = await call<Imap.Box>((cb) => imap.status('Work', cb));
    assert.equal(status.messages.total, 2);
    assert.equal(status.messages.unseen, 1);
    assert.equal(status.uidnext, 3);
  } finally {
    await logout(imap);
  }
});

test('node-imap: IDLE sees EXISTS, FETCH and EXPUNGE caused by control', { timeout: 15000 }, async () => {
  const log: string[] = [];
  const imap = await connect(log);
  if (process.env.IMAP_DEBUG) imap.on('close', () => console.log(log.join('\n')));
  try {
    server.control.createMailbox({ path: 'Watch' });
    const { uid: first } = server.control.addMessage('Watch', { raw: mail('One') });
    const { uid: second } = server.control.addMessage('Watch', { raw: mail('Two') });
    let mark = log.length;
    const box = await call<Imap.Box>((cb) => imap.openBox('Watch', false, cb));
    assert.equal(box.messages.total, 2);
    mark = log.findIndex((l, i) => i >= mark && l.includes('OK [READ-WRITE]'));
    assert.ok(mark > 0);

    // node-imap enters IDLE by itself once its queue is empty
    const since = (): string[] => log.slice(mark);
    const deadline = Date.now() + 3000;
    while (!since().some((l) => l.includes('+ idling')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.ok(since().some((l) => /=> '?\w+ IDLE/.test(l)), 'client never sent IDLE');
    assert.ok(since().some((l) => l.includes('+ idling')), 'server never acknowledged IDLE');

    const mailEvent = waitEvent<[number]>(imap, 'mail');
    const { uid: third } = server.control.addMessage('Watch', { raw: mail('Three'), flags: ['\\Draft'] });
    assert.deepEqual(await mailEvent, [1]);
    assert.equal(third, second + 1);

    const update = waitEvent<[number, { uid?: number; flags?: string[] }]>(imap, 'update');
    server.control.setFlags('Watch', { uids: [second], flags: ['\\Seen', '$Done'], mode: 'add' });
    const [seq, info] = await update;
    assert.equal(seq, 2);
    assert.deepEqual([...(info.flags ?? [])].sort(), ['$Done', '\\Recent', '\\Seen']);

    const expunge = waitEvent<[number]>(imap, 'expunge');
    server.control.expungeMessages('Watch', { uids: [first] });
    assert.deepEqual(await expunge, [1]);

    // Still in the same IDLE: no DONE was needed to see all three
    assert.equal(since().filter((l) => l.includes('=> DONE')).length, 0);

    const now = await fetchAll(imap.fetch('1:*', { envelope: true }));
    assert.deepEqual(
      now.map((m) => [m.seqno, m.attrs.uid, m.attrs.envelope?.subject, [...m.attrs.flags].sort()]),
      [
        [1, second, 'Two', ['$Done', '\\Recent', '\\Seen']],
        [2, third, 'Three', ['\\Draft', '\\Recent']],
      ],
    );
  } finally {
    await logout(imap);
  }
});
