/**
 * X-GM-EXT-1 over real sockets, written from Google's "IMAP Extensions"
 * page (developers.google.com/gmail/imap/imap-extensions): the capability,
 * FETCH X-GM-MSGID / X-GM-THRID / X-GM-LABELS, STORE [+-]X-GM-LABELS,
 * SEARCH X-GM-MSGID / X-GM-THRID / X-GM-LABELS / X-GM-RAW, and Gmail's
 * model of labels as mailboxes over one message (one msgid in every label,
 * shared flags, All Mail, Trash, Starred). Also the control API and REST
 * routes while a client is connected, and imapflow's use of the extension
 * (`labels`, `emailId`, `threadId`, `useLabels`, `gmraw`).
 */
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { ImapFlow } from 'imapflow';
import { createServer, type Server } from '../../src/index.js';
import type { ServerOptions } from '../../src/options/types.js';
import { startCli } from '../helpers/cli.js';
import { rawSession, startServer } from '../helpers/server.js';
import type { RawClient } from '../helpers/raw-client.js';
import { request, startRest } from '../rest/helpers.js';

const GMAIL: ServerOptions = { plugins: ['X-GM-EXT-1', 'MOVE', 'UIDPLUS'] };

function msg(subject: string, opts: { id?: string; inReplyTo?: string; body?: string; extraHeaders?: string } = {}): string {
  const id = opts.id ?? `${subject.replace(/\W/g, '')}@example.com`;
  return (
    `From: Alice <alice@example.com>\r\nTo: Bob <bob@example.com>\r\nSubject: ${subject}\r\n` +
    `Date: Mon, 2 Nov 2026 10:00:00 +0000\r\nMessage-ID: <${id}>\r\n` +
    (opts.inReplyTo ? `In-Reply-To: <${opts.inReplyTo}>\r\n` : '') +
    (opts.extraHeaders ?? '') +
    `\r\n${opts.body ?? 'Hello'}\r\n`
  );
}

/** A server with the Gmail layout and `messages` delivered to INBOX. */
async function gmail(messages: string[], options: ServerOptions = {}): Promise<{ server: Server; port: number }> {
  const started = await startServer({ ...GMAIL, ...options });
  started.server.extension('X-GM-EXT-1')!.gmailLayout();
  for (const raw of messages) started.server.control.addMessage('INBOX', { raw });
  return started;
}

// \Recent depends on which session saw a message first; these tests are about stored flags.
const untagged = (lines: string[]): string[] => lines.filter((l) => l.startsWith('* ')).map((l) => l.replace(/ ?\\Recent/, ''));
const fetches = (lines: string[]): string[] => untagged(lines).filter((l) => / FETCH /.test(l));
const tagged = (lines: string[]): string => lines[lines.length - 1]!;
const item = (line: string, name: string): string => {
  const m = new RegExp(`${name} (\\([^)]*\\)|\\S+?)(?=[ )])`).exec(line);
  assert.ok(m, `${name} in ${line}`);
  return m![1]!;
};

async function fetchItem(c: RawClient, set: string, name: string): Promise<string[]> {
  const lines = await c.command(`FETCH ${set} (${name})`);
  assert.match(tagged(lines), /OK/);
  return untagged(lines).filter((l) => l.includes('FETCH')).map((l) => item(l, name));
}

describe('X-GM-EXT-1: loading', () => {
  test('the capability is advertised when the plugin is named, and "all" leaves it out (opt-in)', async () => {
    for (const [options, expected] of [
      [GMAIL, true],
      [{ plugins: 'all' }, false],
      [{ plugins: ['all'] }, false],
      [{ plugins: ['all', 'X-GM-EXT-1'] }, true],
    ] as [ServerOptions, boolean][]) {
      const { server, port } = await startServer(options);
      try {
        const c = await rawSession(port);
        const caps = untagged(await c.command('CAPABILITY'))[0]!.split(' ');
        assert.equal(caps.includes('X-GM-EXT-1'), expected, JSON.stringify(options));
        // Gmail always shows special-use attributes: SPECIAL-USE comes with it.
        if (expected) assert.ok(caps.includes('SPECIAL-USE'));
        c.close();
      } finally {
        await server.stop();
      }
    }
  });

  test('without the plugin, X-GM items are BAD and the session goes on', async () => {
    const { server, port } = await startServer({ plugins: 'all' });
    try {
      server.control.addMessage('INBOX', { raw: msg('one') });
      const c = await rawSession(port);
      await c.command('SELECT INBOX');
      assert.match(tagged(await c.command('FETCH 1 (X-GM-MSGID)')), /^T\d+ BAD/);
      assert.match(tagged(await c.command('STORE 1 +X-GM-LABELS (foo)')), /^T\d+ BAD/);
      assert.match(tagged(await c.command('SEARCH X-GM-RAW "foo"')), /^T\d+ BAD/);
      assert.match(tagged(await c.command('NOOP')), /OK/);
      c.close();
    } finally {
      await server.stop();
    }
  });
});

describe('X-GM-EXT-1: the Gmail layout and X-GM-MSGID', () => {
  test('gmailLayout() makes the [Gmail] mailboxes with their special use; All Mail holds every message', async () => {
    const { server, port } = await gmail([msg('one'), msg('two')]);
    try {
      const c = await rawSession(port);
      const list = untagged(await c.command('LIST "" "*"'));
      for (const [path, use] of [
        ['[Gmail]/All Mail', '\\All'],
        ['[Gmail]/Drafts', '\\Drafts'],
        ['[Gmail]/Important', '\\Important'],
        ['[Gmail]/Sent Mail', '\\Sent'],
        ['[Gmail]/Spam', '\\Junk'],
        ['[Gmail]/Starred', '\\Flagged'],
        ['[Gmail]/Trash', '\\Trash'],
      ]) {
        const line = list.find((l) => l.endsWith(`"${path}"`));
        assert.ok(line, path);
        assert.ok(line!.includes(use), line);
      }
      assert.ok(list.find((l) => l.endsWith('"[Gmail]"'))!.includes('\\Noselect'));
      // Layout a second time creates nothing.
      assert.deepEqual(server.extension('X-GM-EXT-1')!.gmailLayout(), { created: [] });
      const status = untagged(await c.command('STATUS "[Gmail]/All Mail" (MESSAGES)'));
      assert.deepEqual(status, ['* STATUS "[Gmail]/All Mail" (MESSAGES 2)']);
      c.close();
    } finally {
      await server.stop();
    }
  });

  test('FETCH X-GM-MSGID: a 64-bit number per message, the same in every label; UID SEARCH X-GM-MSGID finds it', async () => {
    const { server, port } = await gmail([msg('one'), msg('two')]);
    try {
      const c = await rawSession(port);
      await c.command('SELECT INBOX');
      const inbox = await fetchItem(c, '1:*', 'X-GM-MSGID');
      assert.equal(inbox.length, 2);
      for (const id of inbox) {
        assert.match(id, /^[1-9][0-9]{15,19}$/);
        assert.ok(BigInt(id) > 2n ** 53n && BigInt(id) < 2n ** 64n);
      }
      assert.notEqual(inbox[0], inbox[1]);
      await c.command('SELECT "[Gmail]/All Mail"');
      assert.deepEqual(await fetchItem(c, '1:*', 'X-GM-MSGID'), inbox);
      // The doc's example: UID SEARCH X-GM-MSGID <id> → the UID of that message.
      const uid = server.control.listMessages('[Gmail]/All Mail')[1]!.uid;
      assert.deepEqual(untagged(await c.command(`UID SEARCH X-GM-MSGID ${inbox[1]}`)), [`* SEARCH ${uid}`]);
      assert.deepEqual(untagged(await c.command('SEARCH X-GM-MSGID 1')), ['* SEARCH']);
      for (const bad of ['SEARCH X-GM-MSGID abc', 'SEARCH X-GM-MSGID 18446744073709551616', 'SEARCH X-GM-MSGID']) {
        assert.match(tagged(await c.command(bad)), /^T\d+ BAD/, bad);
      }
      // Stable across snapshot and reset: the id is a stored message field.
      const snap = server.control.snapshot();
      const restarted = await startServer({ ...GMAIL, storage: snap });
      try {
        const d = await rawSession(restarted.port);
        await d.command('SELECT INBOX');
        assert.deepEqual(await fetchItem(d, '1:*', 'X-GM-MSGID'), inbox);
        d.close();
      } finally {
        await restarted.server.stop();
      }
      c.close();
    } finally {
      await server.stop();
    }
  });
});

describe('X-GM-EXT-1: fixtures', () => {
  test('storage may give xGmMsgid/xGmThrid: messages in two mailboxes with one msgid are one message with two labels', async () => {
    const storage = {
      INBOX: { messages: [{ raw: msg('one'), xGmMsgid: '42' }, { raw: msg('two') }] },
      '': { folders: { Work: { messages: [{ raw: msg('one'), xGmMsgid: 42, xGmThrid: '7' }] } } },
    };
    const { server, port } = await startServer({ ...GMAIL, storage: storage as never });
    try {
      const c = await rawSession(port);
      await c.command('SELECT INBOX');
      assert.deepEqual(untagged(await c.command('FETCH 1:2 (X-GM-MSGID X-GM-LABELS)')), [
        '* 1 FETCH (X-GM-MSGID 42 X-GM-LABELS (Work))',
        '* 2 FETCH (X-GM-MSGID 1700000000000000000 X-GM-LABELS ())',
      ]);
      // The first copy seen (INBOX) had no thread id: it started one with its msgid; Work's copy keeps the one it was given.
      assert.deepEqual(await fetchItem(c, '1', 'X-GM-THRID'), ['42']);
      await c.command('STORE 1 +FLAGS.SILENT (\\Seen)');
      assert.deepEqual(server.control.listMessages('Work')[0]!.flags, ['\\Seen']);
      c.close();
    } finally {
      await server.stop();
    }
    for (const bad of ['abc', '0', '18446744073709551616', -1]) {
      assert.throws(
        () => createServer({ ...GMAIL, storage: { INBOX: { messages: [{ raw: msg('x'), xGmMsgid: bad }] } } as never }),
        /xGmMsgid: expected a decimal number/,
        String(bad),
      );
    }
  });
});

describe('X-GM-EXT-1: X-GM-LABELS', () => {
  test('FETCH lists the labels except the viewed mailbox; STORE +/- X-GM-LABELS answers with the new labels', async () => {
    const { server, port } = await gmail([msg('one'), msg('two')]);
    try {
      const c = await rawSession(port);
      await c.command('SELECT "[Gmail]/All Mail"');
      assert.deepEqual(await fetchItem(c, '1:2', 'X-GM-LABELS'), ['("\\\\Inbox")', '("\\\\Inbox")']);
      const added = await c.command('STORE 1 +X-GM-LABELS (foo "Muy Importante")');
      assert.deepEqual(untagged(added), ['* 1 FETCH (X-GM-LABELS ("\\\\Inbox" "Muy Importante" foo))']);
      assert.match(tagged(added), /OK/);
      // Gmail creates a label on first use: the message is in both mailboxes, as one message.
      const ids = await fetchItem(c, '1', 'X-GM-MSGID');
      for (const path of ['foo', 'Muy Importante']) {
        const copies = server.control.listMessages(path);
        assert.equal(copies.length, 1, path);
        assert.deepEqual(server.extension('X-GM-EXT-1')!.getMessage(path, copies[0]!.uid).msgid, ids[0]);
      }
      await c.command('SELECT foo');
      assert.deepEqual(await fetchItem(c, '1', 'X-GM-LABELS'), ['("\\\\Inbox" "Muy Importante")']);
      await c.command('SELECT "[Gmail]/All Mail"');
      const removed = await c.command('UID STORE 1 -X-GM-LABELS (foo)');
      assert.deepEqual(untagged(removed), ['* 1 FETCH (UID 1 X-GM-LABELS ("\\\\Inbox" "Muy Importante"))']);
      assert.equal(server.control.listMessages('foo').length, 0);
      // Replacing: X-GM-LABELS (list) sets the labels (the viewed mailbox is no label of its own).
      assert.deepEqual(untagged(await c.command('STORE 2 X-GM-LABELS (bar \\Important)')), ['* 2 FETCH (X-GM-LABELS ("\\\\Important" bar))']);
      assert.equal(server.control.listMessages('INBOX').length, 1);
      // .SILENT: no FETCH.
      assert.deepEqual(untagged(await c.command('STORE 2 +X-GM-LABELS.SILENT baz')), []);
      assert.deepEqual(await fetchItem(c, '2', 'X-GM-LABELS'), ['("\\\\Important" bar baz)']);
      // A system label may come quoted, as Gmail sends it ("\\Important").
      assert.deepEqual(untagged(await c.command('STORE 2 -X-GM-LABELS ("\\\\Important" "baz")')), ['* 2 FETCH (X-GM-LABELS (bar))']);
      c.close();
    } finally {
      await server.stop();
    }
  });

  test('removing the label of the viewed mailbox expunges the message from that view; it stays in All Mail', async () => {
    const { server, port } = await gmail([msg('one'), msg('two')]);
    try {
      const c = await rawSession(port);
      await c.command('SELECT INBOX');
      // FETCH, STORE and SEARCH hold expunges back (RFC 3501 §7.4.1): it comes with the next command.
      const store = await c.command('STORE 1 -X-GM-LABELS (\\Inbox)');
      assert.ok(!store.some((l) => l.includes('EXPUNGE')));
      assert.deepEqual(untagged(await c.command('NOOP')), ['* 1 EXPUNGE']);
      assert.equal(server.control.listMessages('INBOX').length, 1);
      assert.equal(server.control.listMessages('[Gmail]/All Mail').length, 2);
      c.close();
    } finally {
      await server.stop();
    }
  });

  test('flags are shared across labels: \\Seen in INBOX is \\Seen in All Mail for another session; \\Deleted stays per label', async () => {
    const { server, port } = await gmail([msg('one')]);
    try {
      const a = await rawSession(port);
      const b = await rawSession(port);
      await a.command('SELECT INBOX');
      await b.command('SELECT "[Gmail]/All Mail"');
      await a.command('STORE 1 +FLAGS.SILENT (\\Seen $Work)');
      assert.deepEqual(fetches(await b.command('NOOP')), ['* 1 FETCH (FLAGS (\\Seen $Work))']);
      await a.command('STORE 1 +FLAGS.SILENT (\\Deleted)');
      assert.deepEqual(untagged(await b.command('NOOP')), []);
      // Expunging in INBOX only removes the \Inbox label (Gmail's "archive").
      await a.command('EXPUNGE');
      assert.deepEqual(untagged(await b.command('FETCH 1 (FLAGS X-GM-LABELS)')), ['* 1 FETCH (FLAGS (\\Seen $Work) X-GM-LABELS ())']);
      a.close();
      b.close();
    } finally {
      await server.stop();
    }
  });

  test('\\Starred is the \\Flagged flag and the Starred mailbox; SEARCH X-GM-LABELS', async () => {
    const { server, port } = await gmail([msg('one'), msg('two'), msg('three')]);
    try {
      const c = await rawSession(port);
      await c.command('SELECT INBOX');
      assert.deepEqual(untagged(await c.command('STORE 1 +X-GM-LABELS (\\Starred)')), ['* 1 FETCH (X-GM-LABELS ("\\\\Starred"))']);
      assert.deepEqual(await fetchItem(c, '1', 'FLAGS'), ['(\\Flagged)']);
      assert.equal(server.control.listMessages('[Gmail]/Starred').length, 1);
      await c.command('STORE 2 +FLAGS.SILENT (\\Flagged)');
      assert.equal(server.control.listMessages('[Gmail]/Starred').length, 2);
      await c.command('STORE 1 -FLAGS.SILENT (\\Flagged)');
      assert.equal(server.control.listMessages('[Gmail]/Starred').length, 1);
      await c.command('STORE 3 +X-GM-LABELS foo');
      assert.deepEqual(untagged(await c.command('SEARCH X-GM-LABELS foo')), ['* SEARCH 3']);
      assert.deepEqual(untagged(await c.command('SEARCH X-GM-LABELS \\Starred')), ['* SEARCH 2']);
      // The viewed mailbox's own label counts in SEARCH.
      assert.deepEqual(untagged(await c.command('SEARCH X-GM-LABELS \\Inbox')), ['* SEARCH 1 2 3']);
      assert.deepEqual(untagged(await c.command('SEARCH NOT X-GM-LABELS "foo"')), ['* SEARCH 1 2']);
      c.close();
    } finally {
      await server.stop();
    }
  });

  test('moving to Trash takes the message out of every other label; expunging from All Mail deletes it everywhere', async () => {
    const { server, port } = await gmail([msg('one'), msg('two')]);
    try {
      const c = await rawSession(port);
      await c.command('SELECT INBOX');
      await c.command('STORE 1:2 +X-GM-LABELS (work)');
      assert.match(tagged(await c.command('MOVE 1 "[Gmail]/Trash"')), /OK/);
      for (const path of ['INBOX', 'work', '[Gmail]/All Mail']) assert.equal(server.control.listMessages(path).length, 1, path);
      assert.equal(server.control.listMessages('[Gmail]/Trash').length, 1);
      await c.command('SELECT "[Gmail]/All Mail"');
      await c.command('STORE 1 +FLAGS.SILENT (\\Deleted)');
      await c.command('EXPUNGE');
      for (const path of ['INBOX', 'work', '[Gmail]/All Mail']) assert.equal(server.control.listMessages(path).length, 0, path);
      c.close();
    } finally {
      await server.stop();
    }
  });

  test('MOVE out of All Mail adds the label and the message stays in All Mail; the view gets EXPUNGE and the new UID', async () => {
    const { server, port } = await gmail([msg('one'), msg('two')]);
    try {
      const c = await rawSession(port);
      await c.command('SELECT "[Gmail]/All Mail"');
      const id = (await fetchItem(c, '1', 'X-GM-MSGID'))[0];
      await c.command('CREATE Work');
      const moved = await c.command('UID MOVE 1 Work');
      assert.match(tagged(moved), /OK/);
      assert.ok(moved.includes('* 1 EXPUNGE'), moved.join('\n'));
      assert.ok(moved.includes('* 2 EXISTS'), moved.join('\n'));
      assert.deepEqual(await fetchItem(c, '2', 'X-GM-MSGID'), [id]);
      assert.deepEqual(await fetchItem(c, '2', 'X-GM-LABELS'), ['("\\\\Inbox" Work)']);
      assert.equal(server.control.listMessages('INBOX').length, 2);
      // The same through the control API (a copy and an expunge in one call).
      server.control.moveMessages('[Gmail]/All Mail', { uids: [server.control.listMessages('[Gmail]/All Mail')[0]!.uid], target: 'Work' });
      assert.equal(server.control.listMessages('Work').length, 2);
      assert.equal(server.control.listMessages('[Gmail]/All Mail').length, 2);
      c.close();
    } finally {
      await server.stop();
    }
  });

  test('RENAME renames the label, DELETE removes it (the message stays in All Mail), reset() brings back the fixture', async () => {
    const { server, port } = await gmail([msg('one')]);
    try {
      const c = await rawSession(port);
      await c.command('SELECT "[Gmail]/All Mail"');
      await c.command('STORE 1 +X-GM-LABELS (Projects)');
      assert.match(tagged(await c.command('RENAME Projects "Projects 2026"')), /OK/);
      assert.deepEqual(await fetchItem(c, '1', 'X-GM-LABELS'), ['("\\\\Inbox" "Projects 2026")']);
      assert.match(tagged(await c.command('DELETE "Projects 2026"')), /OK/);
      assert.deepEqual(await fetchItem(c, '1', 'X-GM-LABELS'), ['("\\\\Inbox")']);
      const id = (await fetchItem(c, '1', 'X-GM-MSGID'))[0]!;
      c.close();
      // reset() restores the storage option: no [Gmail] mailboxes, the same msgid again for the first message.
      server.control.reset();
      assert.equal(server.control.listMailboxes().some((m) => m.path.startsWith('[Gmail]')), false);
      const d = await rawSession(port);
      await d.command('SELECT INBOX');
      assert.deepEqual(untagged(await d.command('FETCH 1:* (X-GM-MSGID X-GM-LABELS)')), []);
      server.control.addMessage('INBOX', { raw: msg('again') });
      await d.command('NOOP');
      assert.deepEqual(await fetchItem(d, '1', 'X-GM-MSGID'), [id]);
      d.close();
    } finally {
      await server.stop();
    }
  });

  test('a COPY to a label the message already has adds no second copy', async () => {
    const { server, port } = await gmail([msg('one')]);
    try {
      const c = await rawSession(port);
      await c.command('SELECT INBOX');
      await c.command('COPY 1 "[Gmail]/All Mail"');
      assert.equal(server.control.listMessages('[Gmail]/All Mail').length, 1);
      await c.command('COPY 1 Later');
      assert.match(tagged(await c.command('CREATE Later')), /OK/);
      await c.command('COPY 1 Later');
      await c.command('COPY 1 Later');
      assert.equal(server.control.listMessages('Later').length, 1);
      c.close();
    } finally {
      await server.stop();
    }
  });

  test('with CONDSTORE a label change gives every copy a new MODSEQ: STORE answers it, CHANGEDSINCE finds it elsewhere', async () => {
    const { server, port } = await gmail([msg('one'), msg('two')], { plugins: ['X-GM-EXT-1', 'CONDSTORE'] });
    const a = await rawSession(port);
    const b = await rawSession(port);
    try {
      await b.command('SELECT "[Gmail]/All Mail" (CONDSTORE)');
      const since = Number(/MODSEQ \((\d+)\)/.exec(untagged(await b.command('FETCH 2 (MODSEQ)'))[0]!)![1]);
      await a.command('SELECT INBOX (CONDSTORE)');
      const stored = untagged(await a.command('STORE 2 +X-GM-LABELS (Later)'));
      assert.equal(stored.length, 1);
      // With CONDSTORE on, UID and MODSEQ in every untagged FETCH (RFC 7162 §3.1).
      assert.match(stored[0]!, /^\* 2 FETCH \(UID 2 X-GM-LABELS \(Later\) MODSEQ \(\d+\)\)$/);
      // The other session is told (a FETCH of the copy with its new MODSEQ) and finds it with CHANGEDSINCE.
      const noop = untagged(await b.command('NOOP'));
      assert.ok(noop.some((l) => /^\* 2 FETCH \(.*MODSEQ/.test(l)), noop.join('\n'));
      assert.deepEqual(
        untagged(await b.command(`FETCH 1:* (X-GM-LABELS) (CHANGEDSINCE ${since})`)).map((l) => l.replace(/ MODSEQ \(\d+\)/, '')),
        ['* 2 FETCH (X-GM-LABELS ("\\\\Inbox" Later))'],
      );
      // The session's own STORE answer stands for the change: no FETCH FLAGS follows.
      assert.deepEqual(untagged(await a.command('NOOP')), []);
    } finally {
      a.close();
      b.close();
      await server.stop();
    }
  });

  test('with ACL: adding a label needs `i` on its mailbox, removing one `e`, changing any `w` on the selected one (NO [NOPERM])', async () => {
    const { server, port } = await gmail([msg('one')], { plugins: ['X-GM-EXT-1', 'ACL'] });
    try {
      server.control.createMailbox('Locked');
      const acl = server.extension('ACL')!;
      // A mailbox without an ACL is open to anyone: narrow `anyone` too.
      for (const who of ['anyone', 'testuser']) {
        acl.setAcl('Locked', who, 'lr');
        acl.setAcl('INBOX', who, 'lrsw');
      }
      const c = await rawSession(port);
      await c.command('SELECT INBOX');
      assert.match(tagged(await c.command('STORE 1 +X-GM-LABELS (Locked)')), /^T\d+ NO \[NOPERM\]/);
      assert.match(tagged(await c.command('STORE 1 -X-GM-LABELS (\\Inbox)')), /^T\d+ NO \[NOPERM\]/);
      assert.match(tagged(await c.command('STORE 1 +X-GM-LABELS (Open)')), /OK/);
      for (const who of ['anyone', 'testuser']) acl.setAcl('INBOX', who, 'lrs');
      assert.match(tagged(await c.command('STORE 1 +X-GM-LABELS (Other)')), /^T\d+ NO \[NOPERM\]/);
      assert.equal(server.control.listMessages('Locked').length, 0);
      assert.equal(server.control.listMessages('INBOX').length, 1);
      c.close();
    } finally {
      await server.stop();
    }
  });

  test('bad STORE X-GM-LABELS: unknown system label NO [NONEXISTENT], read-only NO, syntax BAD; the session goes on', async () => {
    const { server, port } = await startServer(GMAIL);
    try {
      server.control.addMessage('INBOX', { raw: msg('one') });
      const c = await rawSession(port);
      await c.command('SELECT INBOX');
      assert.match(tagged(await c.command('STORE 1 +X-GM-LABELS (\\Important)')), /^T\d+ NO \[NONEXISTENT\]/);
      assert.match(tagged(await c.command('STORE 1 +X-GM-LABELS ()')), /OK/);
      assert.match(tagged(await c.command('STORE 1 +X-GM-LABELS')), /^T\d+ BAD/);
      assert.match(tagged(await c.command('STORE 1 +X-GM-LABELS ("")')), /^T\d+ BAD/);
      assert.match(tagged(await c.command('STORE 1 +X-GM-LABELS (a) extra')), /^T\d+ BAD/);
      await c.command('EXAMINE INBOX');
      assert.match(tagged(await c.command('STORE 1 +X-GM-LABELS (a)')), /^T\d+ NO/);
      assert.match(tagged(await c.command('NOOP')), /OK/);
      c.close();
    } finally {
      await server.stop();
    }
  });
});

describe('X-GM-EXT-1: X-GM-THRID', () => {
  test('a reply (In-Reply-To) and a "Re:" of the same subject share the thread id, which is the first message\'s msgid', async () => {
    const { server, port } = await gmail([
      msg('Lunch plans', { id: 'a@x' }),
      msg('Something else', { id: 'b@x' }),
      msg('Different words', { id: 'c@x', inReplyTo: 'a@x' }),
      msg('RE: Fwd: [team]  lunch   PLANS', { id: 'd@x' }),
    ]);
    try {
      const c = await rawSession(port);
      await c.command('SELECT INBOX');
      const ids = await fetchItem(c, '1:*', 'X-GM-MSGID');
      const threads = await fetchItem(c, '1:*', 'X-GM-THRID');
      assert.deepEqual(threads, [ids[0], ids[1], ids[0], ids[0]]);
      assert.deepEqual(untagged(await c.command(`SEARCH X-GM-THRID ${ids[0]}`)), ['* SEARCH 1 3 4']);
      // A reply seen before its original: the original joins the reply's thread.
      server.control.addMessage('INBOX', { raw: msg('Answer first', { id: 'r@x', inReplyTo: 'o@x' }) });
      server.control.addMessage('INBOX', { raw: msg('Original later', { id: 'o@x' }) });
      await c.command('NOOP');
      const later = await fetchItem(c, '5:6', 'X-GM-THRID');
      assert.equal(later[0], later[1]);
      c.close();
    } finally {
      await server.stop();
    }
  });
});

describe('X-GM-EXT-1: X-GM-RAW', () => {
  test('a subset of Gmail\'s search language', async () => {
    const attachment =
      'From: Carol <carol@example.org>\r\nTo: Bob <bob@example.com>\r\nSubject: Report\r\nMessage-ID: <rep@x>\r\nList-Id: Reports <reports.example.org>\r\nMIME-Version: 1.0\r\n' +
      'Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nsee file\r\n--b\r\n' +
      'Content-Type: application/pdf\r\nContent-Disposition: attachment; filename=r.pdf\r\n\r\nxx\r\n--b--\r\n';
    const { server, port } = await gmail([msg('Lunch plans', { body: 'pizza at noon' }), msg('Budget', { body: 'numbers' })]);
    try {
      server.control.addMessage('INBOX', { raw: attachment, internaldate: '10-Jan-2024 12:00:00 +0000' });
      const c = await rawSession(port);
      await c.command('SELECT INBOX');
      await c.command('STORE 1 +FLAGS.SILENT (\\Seen)');
      await c.command('STORE 2 +X-GM-LABELS (Work/Projects)');
      await c.command('STORE 2 +FLAGS.SILENT (\\Flagged)');
      const cases: [string, string][] = [
        ['pizza', '1'],
        ['"at noon"', '1'],
        ['from:carol', '3'],
        ['from:alice@example.com', '1 2'],
        ['to:bob', '1 2 3'],
        ['subject:"lunch plans"', '1'],
        ['is:unread', '2 3'],
        ['is:read', '1'],
        ['is:starred', '2'],
        ['has:attachment', '3'],
        ['label:work-projects', '2'],
        ['label:Work/Projects', '2'],
        ['in:inbox -label:work/projects', '1 3'],
        ['in:anywhere', '1 2 3'],
        ['before:2025/01/01', '3'],
        ['after:2025/01/01', '1 2'],
        ['larger:1K', ''],
        ['smaller:100000', '1 2 3'],
        ['rfc822msgid:rep@x', '3'],
        ['pizza OR numbers', '1 2'],
        ['(pizza OR numbers) is:unread', '2'],
        ['-(pizza OR numbers)', '3'],
        ['nothing:here', ''],
        ['{pizza numbers}', '1 2'],
        ['{pizza numbers} -is:read', '2'],
        ['filename:r.pdf', '3'],
        ['filename:doc', ''],
        ['list:reports.example.org', '3'],
      ];
      for (const [query, expected] of cases) {
        const lines = await c.command(`SEARCH X-GM-RAW ${JSON.stringify(query)}`);
        assert.deepEqual(untagged(lines), [`* SEARCH${expected ? ` ${expected}` : ''}`], query);
      }
      // UTF-8 in a literal with CHARSET UTF-8.
      server.control.addMessage('INBOX', { raw: msg('Caf\u00e9', { body: 'un caf\u00e9', extraHeaders: 'MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n' }) });
      await c.command('NOOP');
      c.write(Buffer.from('U1 SEARCH CHARSET UTF-8 X-GM-RAW {13}\r\n', 'utf8'));
      assert.match(await c.line(), /^\+ /);
      c.write(Buffer.from('subject:caf\u00e9\r\n', 'utf8'));
      assert.deepEqual(untagged(await c.until('U1')), ['* SEARCH 4']);
      // Combined with other keys.
      assert.deepEqual(untagged(await c.command('SEARCH UNSEEN X-GM-RAW "from:alice"')), ['* SEARCH 2 4']);
      for (const bad of ['"{pizza"', '"pizza}"', '"{}"', '"(pizza"', '"pizza)"', '"\\"open"', '"before:yesterday"', '"larger:big"', '"OR pizza"', '""']) {
        assert.match(tagged(await c.command(`SEARCH X-GM-RAW ${bad}`)), /^T\d+ BAD/, bad);
      }
      assert.match(tagged(await c.command('NOOP')), /OK/);
      c.close();
    } finally {
      await server.stop();
    }
  });
});

describe('X-GM-EXT-1: control API and REST', () => {
  test('setLabels while a client is connected: it sees the message arrive in the label it has selected, and the new labels', async () => {
    const { server, port } = await gmail([msg('one')]);
    try {
      const api = server.extension('X-GM-EXT-1')!;
      server.control.createMailbox('Work');
      const c = await rawSession(port);
      await c.command('SELECT Work');
      const uid = server.control.listMessages('INBOX')[0]!.uid;
      const info = api.setLabels('INBOX', uid, { labels: ['Work'], mode: 'add' });
      assert.deepEqual(info.labels, ['\\Inbox', 'Work']);
      assert.deepEqual(untagged(await c.command('NOOP')), ['* 1 EXISTS', '* 1 RECENT']);
      assert.deepEqual(await fetchItem(c, '1', 'X-GM-LABELS'), ['("\\\\Inbox")']);
      assert.deepEqual(api.getLabels('Work', 1), ['\\Inbox', 'Work']);
      // set: exactly these labels.
      api.setLabels('INBOX', uid, { labels: ['\\Starred'] });
      assert.deepEqual(untagged(await c.command('NOOP')), ['* 1 EXPUNGE']);
      assert.throws(() => api.setLabels('INBOX', 99, { labels: [] }), /No message with UID 99/);
      c.close();
    } finally {
      await server.stop();
    }
  });

  test('GET/PUT /v1/mailboxes/{path}/messages/{uid}/labels and POST /v1/gmail/layout; 404 without the plugin', async () => {
    const r = await startRest(GMAIL);
    try {
      const layout = await request(r.restPort, 'POST', '/v1/gmail/layout', { json: {} });
      assert.equal(layout.status, 200);
      assert.ok((layout.json as { created: string[] }).created.includes('[Gmail]/All Mail'));
      const { uid } = r.server.control.addMessage('INBOX', { raw: msg('one') });
      const put = await request(r.restPort, 'PUT', `/v1/mailboxes/INBOX/messages/${uid}/labels`, { json: { labels: ['Receipts'], mode: 'add' } });
      assert.equal(put.status, 200, JSON.stringify(put.json));
      const body = put.json as { msgid: string; thrid: string; labels: string[]; copies: { path: string }[] };
      assert.deepEqual(body.labels, ['\\Inbox', 'Receipts']);
      assert.equal(body.msgid, body.thrid);
      assert.deepEqual(body.copies.map((c) => c.path), ['INBOX', 'Receipts', '[Gmail]/All Mail']);
      const get = await request(r.restPort, 'GET', `/v1/mailboxes/Receipts/messages/1/labels`);
      assert.deepEqual(get.json, put.json);
      const bad = await request(r.restPort, 'PUT', `/v1/mailboxes/INBOX/messages/${uid}/labels`, { json: { labels: 'x' } });
      assert.equal(bad.status, 400);
      const missing = await request(r.restPort, 'GET', '/v1/mailboxes/INBOX/messages/77/labels');
      assert.equal(missing.status, 404);
      const doc = (await request(r.restPort, 'GET', '/v1/openapi.json')).json as { paths: Record<string, unknown> };
      assert.ok(doc.paths['/v1/mailboxes/{path}/messages/{uid}/labels']);
    } finally {
      await r.server.stop();
    }
    const plain = await startRest({ plugins: 'all' });
    try {
      assert.equal((await request(plain.restPort, 'POST', '/v1/gmail/layout', { json: {} })).status, 404);
    } finally {
      await plain.server.stop();
    }
  });
});

describe('X-GM-EXT-1 and script rules', () => {
  test('a rule can refuse label changes only (command STORE, match X-GM-LABELS); flag STOREs still run', async () => {
    const { server, port } = await gmail([msg('one')]);
    try {
      server.script.add({ on: 'command', command: 'STORE', match: /X-GM-LABELS/i, send: '$TAG NO [LIMIT] Too many labels\r\n' });
      const c = await rawSession(port);
      await c.command('SELECT INBOX');
      assert.deepEqual(await c.command('STORE 1 +X-GM-LABELS (a)'), ['T3 NO [LIMIT] Too many labels']);
      assert.match(tagged(await c.command('STORE 1 +FLAGS (\\Seen)')), /OK/);
      assert.equal(server.control.listMailboxes().some((m) => m.path === 'a'), false);
      c.close();
    } finally {
      await server.stop();
    }
  });
});

describe('X-GM-EXT-1 from the command line', () => {
  test('rookery --plugin all --plugin X-GM-EXT-1 --rest-port 0: the docs/plugins.md example (layout and labels over REST)', async () => {
    const { child, port, output } = await startCli(['--port', '0', '--plugin', 'all', '--plugin', 'X-GM-EXT-1', '--rest-port', '0']);
    try {
      const c = await rawSession(port);
      const caps = untagged(await c.command('CAPABILITY'))[0]!.split(' ');
      assert.ok(caps.includes('X-GM-EXT-1') && caps.includes('ESEARCH'), caps.join(' '));
      const rest = Number(/REST API listening on http:\/\/[^:]+:(\d+)/.exec(output())![1]);
      assert.equal((await request(rest, 'POST', '/v1/gmail/layout', { json: {} })).status, 200);
      assert.equal((await request(rest, 'POST', '/v1/mailboxes/INBOX/messages', { json: { raw: msg('one') } })).status, 201);
      const put = await request(rest, 'PUT', '/v1/mailboxes/INBOX/messages/1/labels', { json: { labels: ['Receipts'], mode: 'add' } });
      assert.deepEqual((put.json as { labels: string[] }).labels, ['\\Inbox', 'Receipts']);
      await c.command('SELECT Receipts');
      assert.deepEqual(await fetchItem(c, '1', 'X-GM-LABELS'), ['("\\\\Inbox")']);
      c.close();
    } finally {
      child.kill('SIGTERM');
    }
  });
});

describe('X-GM-EXT-1: examples/gmail.json', () => {
  test('the Gmail fixture: one message per msgid across labels, the thread of a reply in Sent Mail', async () => {
    // The example is not compiled: resolve it in the source tree from build/test/extensions/.
    const fixture = fileURLToPath(new URL('../../../examples/gmail.json', import.meta.url));
    const { child, port } = await startCli(['--port', '0', '--storage', fixture, '--plugin', 'X-GM-EXT-1']);
    try {
      const c = await rawSession(port);
      const list = untagged(await c.command('LIST "" "*"'));
      assert.ok(list.some((l) => l.includes('\\All') && l.endsWith('"[Gmail]/All Mail"')), list.join('\n'));
      await c.command('SELECT "[Gmail]/All Mail"');
      assert.deepEqual(untagged(await c.command('FETCH 1:* (X-GM-MSGID X-GM-THRID X-GM-LABELS)')), [
        '* 1 FETCH (X-GM-MSGID 1700000000000000101 X-GM-THRID 1700000000000000101 X-GM-LABELS ("\\\\Inbox" Travel))',
        '* 2 FETCH (X-GM-MSGID 1700000000000000102 X-GM-THRID 1700000000000000101 X-GM-LABELS ("\\\\Sent"))',
        '* 3 FETCH (X-GM-MSGID 1700000000000000103 X-GM-THRID 1700000000000000103 X-GM-LABELS ("\\\\Inbox" Receipts))',
      ]);
      assert.deepEqual(untagged(await c.command('SEARCH X-GM-RAW "in:inbox -label:travel"')), ['* SEARCH 3']);
      assert.deepEqual(untagged(await c.command('SEARCH X-GM-THRID 1700000000000000101')), ['* SEARCH 1 2']);
      c.close();
    } finally {
      child.kill('SIGTERM');
    }
  });
});

describe('X-GM-EXT-1 with imapflow', () => {
  test('imapflow reads labels, emailId (X-GM-MSGID) and threadId (X-GM-THRID), stores labels and searches with gmraw', async () => {
    const { server, port } = await gmail([msg('Lunch plans', { id: 'a@x' }), msg('Re: Lunch plans', { id: 'b@x', inReplyTo: 'a@x' })]);
    const client = new ImapFlow({ host: '127.0.0.1', port, secure: false, auth: { user: 'testuser', pass: 'testpass' }, logger: false });
    try {
      await client.connect();
      const lock = await client.getMailboxLock('INBOX');
      try {
        assert.ok(await client.messageFlagsAdd('1', ['Travel', '\\Important'].slice(0, 1), { useLabels: true }));
        const fetched = [];
        for await (const m of client.fetch('1:*', { uid: true, labels: true, threadId: true })) fetched.push(m);
        assert.equal(fetched.length, 2);
        assert.deepEqual([...fetched[0]!.labels!], ['Travel']);
        assert.deepEqual([...fetched[1]!.labels!], []);
        const api = server.extension('X-GM-EXT-1')!;
        const info = api.getMessage('INBOX', fetched[0]!.uid);
        assert.equal(fetched[0]!.emailId, info.msgid);
        assert.equal(fetched[0]!.threadId, info.msgid);
        assert.equal(fetched[1]!.threadId, info.msgid);
        assert.deepEqual(await client.search({ gmraw: 'label:travel' }, { uid: true }), [fetched[0]!.uid]);
        assert.deepEqual(await client.search({ labels: { has: ['Travel'] } }, { uid: true }), [fetched[0]!.uid]);
        assert.deepEqual(await client.search({ threadId: info.msgid }, { uid: true }), [fetched[0]!.uid, fetched[1]!.uid]);
        assert.deepEqual(await client.search({ emailId: fetched[1]!.emailId }, { uid: true }), [fetched[1]!.uid]);
        assert.ok(await client.messageFlagsRemove('1', ['Travel'], { useLabels: true }));
        assert.equal(server.control.listMessages('Travel').length, 0);
      } finally {
        lock.release();
      }
      await client.logout();
    } finally {
      await server.stop();
    }
  });
});

describe('X-GM-RAW parser fuzz', () => {
  test('20,000 random queries parse or fail with RawQueryError (a BAD), nothing else', async () => {
    const { parseRawQuery, RawQueryError } = await import('../../src/extensions/x-gm-ext-1/raw-query.js');
    const { Rand } = await import('../fuzz/generate.js');
    const r = new Rand(4242);
    const pieces = ['(', ')', '-', '"', 'OR', 'AND', 'from:', 'label:', 'in:', 'is:', 'has:', 'before:', 'after:', 'larger:', 'smaller:', '2024/01/02', '10K', 'x', ' ', ':', '\\', '\u00e9', '{', '}'];
    const counts = { ok: 0, bad: 0 };
    const surprises: string[] = [];
    for (let i = 0; i < 20_000; i++) {
      const query = Array.from({ length: r.int(0, 10) }, () => r.pick(pieces)).join(r.chance(0.5) ? ' ' : '');
      try {
        parseRawQuery(query);
        counts.ok++;
      } catch (err) {
        if (err instanceof RawQueryError) counts.bad++;
        else if (surprises.length < 5) surprises.push(`${JSON.stringify(query)}: ${(err as Error).message}`);
      }
    }
    assert.deepEqual(surprises, []);
    assert.ok(counts.ok > 2000 && counts.bad > 2000, JSON.stringify(counts));
    // Deep nesting is refused, not a stack overflow.
    assert.throws(() => parseRawQuery('('.repeat(10_000) + 'x' + ')'.repeat(10_000)), RawQueryError);
    assert.throws(() => parseRawQuery('-'.repeat(10_000) + 'x'), RawQueryError);
  });
});

describe('X-GM-EXT-1: the label model under random commands', () => {
  test('after every command: one copy per mailbox, shared flags (but \\Deleted), All Mail and Starred complete, one msgid per group', async () => {
    const { Rand } = await import('../fuzz/generate.js');
    const { storeProblems } = await import('../fuzz/driver.js');
    for (const seed of [777, 778, 779]) {
      const { server, port } = await gmail([msg('a1'), msg('a2'), msg('a3', { inReplyTo: 'a1@example.com' }), msg('a4')]);
      const r = new Rand(seed);
      const boxes = ['INBOX', '"[Gmail]/All Mail"', '"[Gmail]/Trash"', '"[Gmail]/Starred"', '"[Gmail]/Important"', 'Work', '"Work/Sub"'];
      const labels = ['\\Inbox', '\\Important', '\\Starred', '\\Trash', 'Work', '"Work/Sub"', 'New'];
      const flags = ['\\Seen', '\\Flagged', '\\Deleted', '$Kw'];
      const c = await rawSession(port);
      const problems: string[] = [];
      const check = (after: string): void => {
        const byId = new Map<string, { path: string; flags: string[]; thrid: string }[]>();
        for (const box of server.store.list()) {
          const seen = new Set<string>();
          for (const m of box.messages) {
            const id = String(m.extra?.xGmMsgid);
            if (seen.has(id)) problems.push(`${after}: ${id} twice in ${box.path}`);
            seen.add(id);
            const list = byId.get(id) ?? [];
            list.push({ path: box.path, flags: [...m.flags].filter((f) => f !== '\\Deleted').sort(), thrid: String(m.extra?.xGmThrid) });
            byId.set(id, list);
          }
        }
        for (const [id, copies] of byId) {
          const first = copies[0]!;
          for (const other of copies) {
            if (other.flags.join(' ') !== first.flags.join(' ')) problems.push(`${after}: ${id} flags ${first.path}=${first.flags} ${other.path}=${other.flags}`);
            if (other.thrid !== first.thrid) problems.push(`${after}: ${id} thread ids differ`);
          }
          const paths = copies.map((x) => x.path);
          const binned = paths.includes('[Gmail]/Trash');
          if (!binned && !paths.includes('[Gmail]/All Mail')) problems.push(`${after}: ${id} is not in All Mail (${paths})`);
          if (binned && paths.length > 1) problems.push(`${after}: ${id} is in Trash and in ${paths}`);
          if (first.flags.includes('\\Flagged') !== paths.includes('[Gmail]/Starred') && !binned) problems.push(`${after}: ${id} Starred does not follow \\Flagged (${paths})`);
        }
      };
      try {
        await c.command('CREATE "Work/Sub"');
        await c.command('SELECT INBOX');
        for (let step = 0; step < 400 && problems.length === 0; step++) {
          const set = r.pick(['1', '2', '1:2', '1:*', '3']);
          const command = r.pick([
            () => `SELECT ${r.pick(boxes)}`,
            () => `STORE ${set} ${r.pick(['+', '-', ''])}X-GM-LABELS (${r.pick(labels)}${r.chance(0.3) ? ` ${r.pick(labels)}` : ''})`,
            () => `STORE ${set} ${r.pick(['+', '-'])}FLAGS.SILENT (${r.pick(flags)})`,
            () => `COPY ${set} ${r.pick(boxes)}`,
            () => `MOVE ${set} ${r.pick(boxes)}`,
            () => 'EXPUNGE',
            () => `APPEND INBOX {${msg(`n${step}`).length}+}\r\n${msg(`n${step}`)}`,
          ])();
          const lines = await c.command(command);
          // A set past the end of the mailbox is BAD (RFC 3501); any other BAD is a mistake of the grammar.
          if (/^T\d+ BAD/.test(tagged(lines)) && !/Invalid messageset/.test(tagged(lines))) problems.push(`${command}: ${tagged(lines)}`);
          check(command);
          // The store's own counters (unseen, UIDs, MODSEQs) stay right under the cascades.
          for (const p of storeProblems(server)) problems.push(`${command}: ${p}`);
          if (r.chance(0.05)) {
            // The control API changes labels too.
            const inbox = server.control.listMessages('INBOX');
            if (inbox.length > 0) server.extension('X-GM-EXT-1')!.setLabels('INBOX', r.pick(inbox).uid, { labels: [r.pick(['Work', '\\Starred', '\\Inbox'])], mode: r.pick(['add', 'remove', 'set'] as const) });
            check('setLabels');
          }
        }
        assert.deepEqual(problems.slice(0, 5), [], `seed ${seed}`);
      } finally {
        c.close();
        await server.stop();
      }
    }
  });
});
