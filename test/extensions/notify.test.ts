/**
 * NOTIFY (RFC 5465) over real sockets: the command's grammar and its
 * BAD/NO rules (§3.1, §5, §6.1), the RFC's example, STATUS for other
 * mailboxes reaching a session between commands (changes made over REST
 * and the control API too), LIST for MailboxName (OLDNAME on rename) and
 * SubscriptionChange, the selected mailbox's updates at once (`selected`,
 * `selected-delayed`) or held (NONE), ACL-hidden mailboxes, IDLE (§4),
 * NOTIFICATIONOVERFLOW (§5.8), and a client that does not read.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import zlib from 'node:zlib';
import { ImapFlow } from 'imapflow';
import type { Plugin, Server } from '../../src/index.js';
import type { RawClient } from '../helpers/raw-client.js';
import { mail, rawSession, startServer } from '../helpers/server.js';
import { request, startRest } from '../rest/helpers.js';
import { startChildServer } from '../hardening/child-server.js';

const users = { testuser: { password: 'testpass' }, alice: { password: 'alicepass' } };
const storage = {
  INBOX: {},
  '': {
    folders: {
      Lists: { folders: { Lemonade: {}, IETF: {} } },
      Other: {},
      Secret: { acl: { alice: 'lrswipkxtea' } },
      Peek: { acl: { testuser: 'l' } },
    },
  },
};

/** Waits a little and returns what arrived meanwhile (nothing expected, usually). */
async function quiet(c: RawClient, ms = 150): Promise<string> {
  await new Promise((r) => setTimeout(r, ms));
  return c.pending();
}

/** Lines up to (not including) the first that matches. */
async function linesUntil(c: RawClient, re: RegExp): Promise<string[]> {
  const out: string[] = [];
  for (;;) {
    const line = await c.line();
    out.push(line);
    if (re.test(line)) return out;
  }
}

const statusOf = (server: Server, path: string): string => {
  const m = server.store.get(path)!;
  return `* STATUS "${path}" (MESSAGES ${m.messages.length} UIDNEXT ${m.uidnext} UIDVALIDITY ${m.uidvalidity} UNSEEN ${m.unseen})`;
};

describe('NOTIFY command: grammar and rules', () => {
  let server: Server;
  let port: number;
  before(async () => {
    ({ server, port } = await startServer({ plugins: ['NOTIFY', 'ACL'], users, storage }));
  });
  after(() => server.stop());

  test('CAPABILITY lists NOTIFY; NOTIFY needs authentication', async () => {
    const c = await rawSession(port, false);
    assert.match((await c.command('CAPABILITY'))[0]!, /^\* CAPABILITY .*\bNOTIFY\b/);
    assert.match((await c.command('NOTIFY NONE')).at(-1)!, /^T2 BAD/);
    c.close();
  });

  test('the forms of §8 are accepted, in any case; NONE as events; several names', async () => {
    const c = await rawSession(port);
    for (const args of [
      'NONE',
      'SET (selected (MessageNew MessageExpunge))',
      'set (SELECTED-DELAYED (messagenew messageexpunge flagchange))',
      'SET STATUS (personal (MessageNew MessageExpunge FlagChange MailboxName SubscriptionChange))',
      'SET (inboxes (MessageNew MessageExpunge)) (subscribed (MailboxName))',
      'SET (subtree Lists (MessageNew MessageExpunge)) (mailboxes (INBOX "Other") (MailboxName))',
      'SET (personal NONE)',
      'SET (selected (MessageNew (UID FLAGS BODY.PEEK[HEADER.FIELDS (FROM)]) MessageExpunge)) (mailboxes "Lists/%" (MailboxName))',
    ]) {
      const lines = await c.command(`NOTIFY ${args}`);
      assert.match(lines.at(-1)!, / OK NOTIFY completed$/, `${args}: ${lines.join('\n')}`);
    }
    c.close();
  });

  test('§5, §6.1: the rules on which events go together are BAD; the session goes on', async () => {
    const c = await rawSession(port);
    for (const args of [
      // §5's pairing rules, for the selected mailbox (whose EXISTS and EXPUNGE keep sequence numbers right).
      'SET (selected (MessageNew))', // MessageNew without MessageExpunge
      'SET (selected (MessageExpunge))',
      'SET (selected-delayed (FlagChange))', // FlagChange needs both
      'SET (selected (MessageNew FlagChange))',
      'SET (selected-delayed (MessageExpunge FlagChange))',
      // §8: "The fett-att list may only be present for the SELECTED/SELECTED-DELAYED mailbox filter".
      'SET (mailboxes Other (MessageNew (UID) MessageExpunge))',
      'SET (personal (MessageNew (FLAGS)))',
      'SET (selected (MessageNew MessageExpunge MailboxName))', // only message events with selected
      'SET (selected-delayed (SubscriptionChange))',
      'SET (selected (MessageNew MessageExpunge)) (selected-delayed (MessageNew MessageExpunge))', // only one of them
      'SET (everything (MessageNew MessageExpunge))', // unknown filter
      'SET (personal ())', // an empty event list
      'SET (subtree (MessageNew MessageExpunge))', // subtree without a name
      'SET',
      'SET STATUS',
      'BOGUS',
      'NONE extra',
      'SET (personal (MessageNew (NOSUCHITEM) MessageExpunge))',
    ]) {
      const lines = await c.command(`NOTIFY ${args}`);
      assert.match(lines.at(-1)!, /^T\d+ BAD /, `${args}: ${lines.join('\n')}`);
      // Text written for clients stays ASCII (no "§").
      assert.match(lines.at(-1)!, /^[\x20-\x7e]*$/, args);
    }
    assert.match((await c.command('NOOP')).at(-1)!, /OK/);
    c.close();
  });

  test("§3.1, §6: another mailbox may watch MessageNew, MessageExpunge or FlagChange alone, as the RFC's examples do", async () => {
    const c = await rawSession(port);
    // The examples of §3.1 and the issue, with the event lists parenthesized as §8's `events` asks.
    for (const [args, boxes] of [
      ['(mailboxes Other (MessageExpunge))', ['Other']],
      ['(mailboxes Other (MessageNew))', ['Other']],
      ['(subtree Lists (MessageNew))', ['Lists', 'Lists/IETF', 'Lists/Lemonade']],
      ['(mailboxes Other (FlagChange))', ['Other']],
      ['(selected (MessageNew (uid body.peek[header.fields (from to subject)]) MessageExpunge)) (subtree Lists (MessageNew)) (mailboxes Other (MessageNew))', ['Lists', 'Lists/IETF', 'Lists/Lemonade', 'Other']],
      ['(personal (MailboxName)) (mailboxes Other (MessageExpunge FlagChange))', ['Other']],
    ] as const) {
      const lines = await c.command(`NOTIFY SET STATUS ${args}`);
      // MESSAGES (MessageExpunge), MESSAGES UIDNEXT UIDVALIDITY (MessageNew); no CONDSTORE here, so no HIGHESTMODSEQ.
      assert.deepEqual(lines.slice(0, -1), boxes.map((b) => statusOf(server, b)), args);
      assert.match(lines.at(-1)!, /^T\d+ OK NOTIFY completed$/, args);
    }
    // Without STATUS, nothing before the OK.
    assert.deepEqual((await c.command('NOTIFY SET (subtree Lists (MessageNew)) (mailboxes Other (MessageNew))')).length, 1);
    c.close();
  });

  test('§3.1: an unsupported event is NO [BADEVENT (...)] listing every supported event, not BAD', async () => {
    const c = await rawSession(port);
    const supported = '(MessageNew MessageExpunge FlagChange MailboxName SubscriptionChange)';
    for (const args of [
      'SET (personal (QuotaExceeded))',
      'SET (personal (MessageNew MessageExpunge AnnotationChange))', // no ANNOTATE here
      'SET (personal (MailboxMetadataChange))', // METADATA is not loaded
      'SET (personal (ServerMetadataChange))',
      'SET (personal (XNoSuchEvent))',
    ]) {
      const lines = await c.command(`NOTIFY ${args}`);
      assert.match(lines.at(-1)!, new RegExp(`^T\\d+ NO \\[BADEVENT \\${supported.slice(0, -1)}\\)\\] `), `${args}: ${lines.join('\n')}`);
    }
    c.close();
  });

  test('the metadata events are supported while METADATA / METADATA-SERVER are loaded, and arrive as METADATA responses', async () => {
    const started = await startServer({ plugins: ['NOTIFY', 'METADATA'] });
    try {
      const c = await rawSession(started.port);
      const lines = await c.command('NOTIFY SET (personal (MailboxMetadataChange ServerMetadataChange))');
      assert.match(lines.at(-1)!, /OK NOTIFY completed/);
      // §5.6, §5.7: the names of changed entries, without values (RFC 5464 §4.4.2).
      const other = await rawSession(started.port);
      assert.match((await other.command('SETMETADATA INBOX (/private/comment "x" /shared/comment "y")')).at(-1)!, /OK/);
      assert.equal(await c.line(), '* METADATA "INBOX" /private/comment /shared/comment');
      started.server.extension('METADATA')!.setMetadata('', { '/shared/admin': 'mailto:a@example.com' });
      assert.equal(await c.line(), '* METADATA "" /shared/admin');
      // The session's own change is not echoed.
      await c.command('SETMETADATA INBOX (/private/comment NIL)');
      assert.equal(await quiet(c), '');
      other.close();
      const bad = await c.command('NOTIFY SET (personal (QuotaChange))');
      assert.match(bad.at(-1)!, /NO \[BADEVENT \(MessageNew MessageExpunge FlagChange MailboxName SubscriptionChange MailboxMetadataChange ServerMetadataChange\)\]/);
      c.close();
    } finally {
      await started.server.stop();
    }
  });
});

describe('NOTIFY delivery', () => {
  let server: Server;
  let port: number;
  let restPort: number;
  before(async () => {
    const rest = await startRest({ plugins: ['NOTIFY', 'ACL', 'CONDSTORE', 'IDLE', 'ENABLE'], users, storage });
    server = rest.server;
    port = rest.imapPort;
    restPort = rest.restPort;
  });
  after(() => server.stop());

  test("after RFC 5465 §3.1's example: SET STATUS sends STATUS of the watched mailboxes; MessageNew's FETCH follows EXISTS", async () => {
    server.control.addMessage('Lists/Lemonade', { raw: mail('old') });
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    const lines = await c.command(
      'NOTIFY SET STATUS (selected (MessageNew (uid body.peek[header.fields (from to subject)]) MessageExpunge)) (subtree Lists (MessageNew MessageExpunge))',
    );
    // §6.5: the named mailbox and every mailbox below it.
    assert.deepEqual(lines, [statusOf(server, 'Lists'), statusOf(server, 'Lists/IETF'), statusOf(server, 'Lists/Lemonade'), 'T3 OK NOTIFY completed']);
    // A new message in another watched mailbox: STATUS, between commands.
    server.control.addMessage('Lists/Lemonade', { raw: mail('lemonade') });
    assert.equal(await c.line(), statusOf(server, 'Lists/Lemonade'));
    // A new message in the selected mailbox: EXISTS, then the FETCH asked for.
    const { uid } = server.control.addMessage('INBOX', { raw: mail('hello') });
    const got = await linesUntil(c, /FETCH/);
    assert.equal(got[0], '* 1 EXISTS');
    const header = 'From: Alice <alice@example.com>\r\nTo: Bob <bob@example.com>\r\nSubject: hello\r\n\r\n';
    assert.equal(got.at(-1), `* 1 FETCH (UID ${uid} BODY[HEADER.FIELDS (FROM TO SUBJECT)] {${header.length}}\r\n${header})`);
    // Other mailboxes outside the filters say nothing.
    server.control.addMessage('Other', { raw: mail('elsewhere') });
    assert.equal(await quiet(c), '');
    c.close();
  });

  test('a REST append to another mailbox reaches a session idle between commands (no IDLE) as STATUS', async () => {
    const c = await rawSession(port);
    assert.match((await c.command('NOTIFY SET (personal (MessageNew MessageExpunge))')).at(-1)!, /OK/);
    const r = await request(restPort, 'POST', '/v1/mailboxes/Other/messages', { json: { raw: mail('via rest') } });
    assert.equal(r.status, 201);
    assert.equal(await c.line(), statusOf(server, 'Other'));
    // An expunge made over the control API as well.
    const { uid } = server.control.addMessage('Other', { raw: mail('second') });
    assert.equal(await c.line(), statusOf(server, 'Other'));
    server.control.expungeMessages('Other', { uids: [uid] });
    assert.equal(await c.line(), statusOf(server, 'Other'));
    // Flag changes are not asked for here.
    const left = server.control.listMessages('Other')[0]!.uid;
    server.control.setFlags('Other', { uids: [left], flags: ['\\Seen'], mode: 'add' });
    assert.equal(await quiet(c), '');
    c.close();
  });

  test('several groups match a mailbox: looked at in order until one has the event or NONE', async () => {
    const c = await rawSession(port);
    // Lists: its own group has NONE, so nothing, although `personal` would want it.
    // Lists/Lemonade: its own group lacks MessageNew, so `personal` (next) decides: yes.
    await c.command('NOTIFY SET (mailboxes Lists NONE) (subtree Lists/Lemonade (MailboxName)) (personal (MessageNew MessageExpunge))');
    server.control.addMessage('Lists', { raw: mail('quiet') });
    server.control.addMessage('Lists/Lemonade', { raw: mail('loud') });
    assert.equal(await c.line(), statusOf(server, 'Lists/Lemonade'));
    assert.equal(await quiet(c), '');
    c.close();
  });

  test('FlagChange in another mailbox: STATUS; with CONDSTORE enabled it carries HIGHESTMODSEQ', async () => {
    const c = await rawSession(port);
    await c.command('ENABLE CONDSTORE');
    await c.command('NOTIFY SET (mailboxes Other (MessageNew MessageExpunge FlagChange))');
    const { uid } = server.control.addMessage('Other', { raw: mail('flagged') });
    const m = server.store.get('Other')!;
    assert.equal(await c.line(), `${statusOf(server, 'Other').slice(0, -1)} HIGHESTMODSEQ ${m.highestModseq})`);
    server.control.setFlags('Other', { uids: [uid], flags: ['\\Flagged'], mode: 'add' });
    assert.equal(await c.line(), `${statusOf(server, 'Other').slice(0, -1)} HIGHESTMODSEQ ${m.highestModseq})`);
    c.close();
  });

  test('§3.1: with CONDSTORE supported, the initial STATUS of a FlagChange watch carries UIDVALIDITY and HIGHESTMODSEQ (enabled or not)', async () => {
    const c = await rawSession(port);
    const m = server.store.get('Other')!;
    const withModseq = `${statusOf(server, 'Other').slice(0, -1)} HIGHESTMODSEQ ${m.highestModseq})`;
    assert.deepEqual(await c.command('NOTIFY SET STATUS (mailboxes Other (FlagChange))'), [withModseq, 'T2 OK NOTIFY completed']);
    assert.deepEqual(await c.command('NOTIFY SET STATUS (mailboxes Other (MessageNew MessageExpunge FlagChange))'), [withModseq, 'T3 OK NOTIFY completed']);
    // Without FlagChange (and CONDSTORE not enabled) the STATUS needs no HIGHESTMODSEQ.
    assert.deepEqual(await c.command('NOTIFY SET STATUS (mailboxes Other (MessageNew))'), [statusOf(server, 'Other'), 'T4 OK NOTIFY completed']);
    c.close();
  });

  test('§5.1-5.3: a mailbox watched for one message event hears of that event only (and of a UIDVALIDITY change)', async () => {
    server.control.createMailbox('Solo');
    try {
      const c = await rawSession(port);
      const add = (): number => server.control.addMessage('Solo', { raw: mail('solo') }).uid;
      const keep = add();
      // MessageExpunge alone: an append says nothing, an expunge sends STATUS.
      await c.command('NOTIFY SET (mailboxes Solo (MessageExpunge))');
      const a = add();
      assert.equal(await quiet(c), '');
      server.control.expungeMessages('Solo', { uids: [a] });
      assert.equal(await c.line(), statusOf(server, 'Solo'));
      server.control.setFlags('Solo', { uids: [keep], flags: ['\\Seen'], mode: 'add' });
      assert.equal(await quiet(c), '');
      // MessageNew alone: the other way round.
      await c.command('NOTIFY SET (mailboxes Solo (MessageNew))');
      const b = add();
      assert.equal(await c.line(), statusOf(server, 'Solo'));
      server.control.expungeMessages('Solo', { uids: [b] });
      server.control.setFlags('Solo', { uids: [keep], flags: ['\\Flagged'], mode: 'add' });
      assert.equal(await quiet(c), '');
      // FlagChange alone: a flag change sends STATUS, an append or expunge does not.
      await c.command('NOTIFY SET (mailboxes Solo (FlagChange))');
      server.control.setFlags('Solo', { uids: [keep], flags: ['\\Seen'], mode: 'remove' });
      assert.equal(await c.line(), statusOf(server, 'Solo'));
      const d = add();
      server.control.expungeMessages('Solo', { uids: [d] });
      assert.equal(await quiet(c), '');
      // §5.1: "the server MUST notify the client about mailbox UIDVALIDITY changes".
      server.control.resetUidValidity('Solo');
      assert.equal(await c.line(), statusOf(server, 'Solo'));
      c.close();
    } finally {
      server.control.deleteMailbox('Solo');
    }
  });

  test('MailboxName: create, rename (with OLDNAME) and delete are LIST responses; the session\'s own CREATE is not reported', async () => {
    const c = await rawSession(port);
    await c.command('NOTIFY SET (personal (MailboxName))');
    server.control.createMailbox('Fresh', { subscribed: false });
    assert.equal(await c.line(), '* LIST (\\HasNoChildren) "/" "Fresh"');
    // §5.4: a mailbox subscribed as it is created shows \Subscribed.
    server.control.createMailbox('Auto');
    assert.equal(await c.line(), '* LIST (\\HasNoChildren \\Subscribed) "/" "Auto"');
    server.control.deleteMailbox('Auto');
    assert.equal(await c.line(), '* LIST (\\NonExistent \\Subscribed) "/" "Auto"');
    server.control.renameMailbox('Fresh', { newPath: 'Renamed' });
    assert.equal(await c.line(), '* LIST (\\HasNoChildren) "/" "Renamed" ("OLDNAME" ("Fresh"))');
    server.control.deleteMailbox('Renamed');
    assert.equal(await c.line(), '* LIST (\\NonExistent) "/" "Renamed"');
    // §5: what the client did itself is not echoed.
    assert.deepEqual(await c.command('CREATE Mine'), ['T3 OK Create completed']);
    assert.equal(await quiet(c), '');
    // Another session's RENAME is.
    const other = await rawSession(port);
    await other.command('RENAME Mine Yours');
    assert.equal(await c.line(), '* LIST (\\HasNoChildren) "/" "Yours" ("OLDNAME" ("Mine"))');
    await other.command('DELETE Yours');
    assert.equal(await c.line(), '* LIST (\\NonExistent) "/" "Yours"');
    other.close();
    c.close();
  });

  test('SubscriptionChange: LIST with \\Subscribed after SUBSCRIBE, without it after UNSUBSCRIBE', async () => {
    const c = await rawSession(port);
    await c.command('NOTIFY SET (personal (SubscriptionChange))');
    server.control.unsubscribe('Other');
    assert.equal(await c.line(), '* LIST (\\HasNoChildren) "/" "Other"');
    const other = await rawSession(port);
    await other.command('SUBSCRIBE Other');
    assert.equal(await c.line(), '* LIST (\\HasNoChildren \\Subscribed) "/" "Other"');
    server.control.unsubscribe('Other');
    assert.equal(await c.line(), '* LIST (\\HasNoChildren) "/" "Other"');
    other.close();
    c.close();
  });

  test('selected: EXISTS, FETCH FLAGS and EXPUNGE of the selected mailbox arrive at once, between commands', async () => {
    const c = await rawSession(port);
    await c.command('SELECT Lists/IETF');
    await c.command('NOTIFY SET (selected (MessageNew MessageExpunge FlagChange))');
    const { uid } = server.control.addMessage('Lists/IETF', { raw: mail('one') });
    assert.deepEqual(await linesUntil(c, /RECENT/), ['* 1 EXISTS', '* 1 RECENT']);
    server.control.setFlags('Lists/IETF', { uids: [uid], flags: ['\\Flagged'], mode: 'add' });
    // §5.1: with UID.
    assert.equal(await c.line(), `* 1 FETCH (UID ${uid} FLAGS (\\Flagged \\Recent))`);
    server.control.expungeMessages('Lists/IETF', { uids: [uid] });
    assert.equal(await c.line(), '* 1 EXPUNGE');
    c.close();
  });

  test('NOTIFY SET before SELECT holds for the mailbox selected later; the session\'s own APPEND gets no MessageNew FETCH (§5.2)', async () => {
    const c = await rawSession(port);
    server.control.createMailbox('Later', { subscribed: false });
    await c.command('NOTIFY SET (selected (MessageNew (UID) MessageExpunge))');
    await c.command('SELECT Later');
    const { uid } = server.control.addMessage('Later', { raw: mail('pushed') });
    assert.deepEqual(await linesUntil(c, /FETCH/), ['* 1 EXISTS', '* 1 RECENT', `* 1 FETCH (UID ${uid})`]);
    const raw = mail('mine');
    c.write(`A APPEND Later {${Buffer.byteLength(raw)}+}\r\n${raw}\r\n`);
    const lines = await linesUntil(c, /^A /);
    assert.deepEqual(lines.slice(0, 2), ['* 2 EXISTS', '* 2 RECENT']);
    assert.match(lines[2]!, /^A OK /);
    c.close();
    server.control.deleteMailbox('Later');
  });

  test("RFC 7162 section 3.1: with CONDSTORE on, MessageNew's FETCH carries UID and MODSEQ too (once each)", async () => {
    const c = await rawSession(port);
    server.control.createMailbox('Modseq', { subscribed: false });
    try {
      await c.command('ENABLE CONDSTORE');
      await c.command('NOTIFY SET (selected (MessageNew (FLAGS) MessageExpunge))');
      await c.command('SELECT Modseq');
      const { uid } = server.control.addMessage('Modseq', { raw: mail('with modseq') });
      const modseq = server.store.get('Modseq')!.messages.at(-1)!.modseq;
      assert.deepEqual(await linesUntil(c, /FETCH/), ['* 1 EXISTS', '* 1 RECENT', `* 1 FETCH (UID ${uid} FLAGS (\\Recent) MODSEQ (${modseq}))`]);
      // Asked for by the client: not sent twice.
      await c.command('NOTIFY SET (selected (MessageNew (UID MODSEQ) MessageExpunge))');
      const second = server.control.addMessage('Modseq', { raw: mail('asked') });
      const secondModseq = server.store.get('Modseq')!.messages.at(-1)!.modseq;
      assert.deepEqual(await linesUntil(c, /FETCH/), ['* 2 EXISTS', '* 2 RECENT', `* 2 FETCH (UID ${second.uid} MODSEQ (${secondModseq}))`]);
      c.close();
    } finally {
      server.control.deleteMailbox('Modseq');
    }
  });

  test('QRESYNC: expunges pushed between commands are VANISHED', async () => {
    const started = await startServer({ plugins: ['NOTIFY', 'QRESYNC', 'ENABLE'] });
    try {
      const { uid } = started.server.control.addMessage('INBOX', { raw: mail('one') });
      const c = await rawSession(started.port);
      await c.command('ENABLE QRESYNC');
      await c.command('SELECT INBOX');
      await c.command('NOTIFY SET (selected (MessageNew MessageExpunge))');
      started.server.control.expungeMessages('INBOX', { uids: [uid] });
      assert.equal(await c.line(), `* VANISHED ${uid}`);
      c.close();
    } finally {
      await started.server.stop();
    }
  });

  test('selected-delayed: EXISTS at once, EXPUNGE only with a command that may carry it', async () => {
    const c = await rawSession(port);
    server.control.addMessage('Lists/IETF', { raw: mail('keep') });
    const { uid } = server.control.addMessage('Lists/IETF', { raw: mail('gone') });
    await c.command('SELECT Lists/IETF');
    await c.command('NOTIFY SET (selected-delayed (MessageNew MessageExpunge))');
    server.control.expungeMessages('Lists/IETF', { uids: [uid] });
    server.control.addMessage('Lists/IETF', { raw: mail('three') });
    assert.deepEqual((await linesUntil(c, /RECENT/))[0], '* 3 EXISTS');
    assert.equal(await quiet(c), '');
    // Not during FETCH (RFC 3501 §7.4.1) ...
    const fetched = await c.command('FETCH 2 UID');
    assert.deepEqual(fetched, [`* 2 FETCH (UID ${uid})`, 'T4 OK Fetch completed']);
    // ... but with NOOP.
    assert.deepEqual(await c.command('NOOP'), ['* 2 EXPUNGE', 'T5 OK NOOP completed']);
    c.close();
  });

  test('NOTIFY NONE stops them (held, not lost); a later NOTIFY SET returns what accumulated (§3.1 implicit NOOP)', async () => {
    const c = await rawSession(port);
    const start = server.store.get('Other')!.messages.length;
    await c.command('SELECT Other');
    await c.command('NOTIFY SET (selected (MessageNew MessageExpunge))');
    server.control.addMessage('Other', { raw: mail('seen') });
    assert.deepEqual((await linesUntil(c, /RECENT/))[0], `* ${start + 1} EXISTS`);
    assert.deepEqual(await c.command('NOTIFY NONE'), ['T4 OK NOTIFY completed']);
    server.control.addMessage('Other', { raw: mail('unseen') });
    assert.equal(await quiet(c), '');
    assert.deepEqual(await c.command('NOOP'), ['T5 OK NOOP completed']);
    // No selected filter at all is the same as selected NONE (§3.1).
    await c.command('NOTIFY SET (personal (MailboxName))');
    server.control.addMessage('Other', { raw: mail('unseen too') });
    assert.equal(await quiet(c), '');
    const lines = await c.command('NOTIFY SET (selected (MessageNew MessageExpunge))');
    assert.deepEqual([lines[0], lines.length, lines.at(-1)], [`* ${start + 3} EXISTS`, 3, 'T7 OK NOTIFY completed']);
    c.close();
  });

  test('held back: a message expunged elsewhere stays in the view, but STORE and FETCH leave it alone; EXPUNGE comes once asked for', async () => {
    const c = await rawSession(port);
    server.control.createMailbox('Held', { subscribed: false });
    const { uid } = server.control.addMessage('Held', { raw: mail('doomed') });
    await c.command('SELECT Held');
    await c.command('NOTIFY NONE');
    server.control.expungeMessages('Held', { uids: [uid] });
    assert.equal(await quiet(c), '');
    // As for any expunge the client has not been told of (RFC 2180 §4.1): the STORE changes nothing in the store.
    const stored = await c.command('STORE 1 +FLAGS (\\Seen)');
    assert.equal(stored.at(-1), 'T4 OK Store completed');
    assert.equal(server.store.get('Held')!.unseen, 0);
    assert.deepEqual(await c.command('NOTIFY SET (selected (MessageNew MessageExpunge))'), ['* 1 EXPUNGE', 'T5 OK NOTIFY completed']);
    c.close();
    server.control.deleteMailbox('Held');
  });

  test('a mailbox the user may not see (ACL) sends nothing; one it may list but not read gets LIST (\\NoAccess)', async () => {
    const c = await rawSession(port);
    const lines = await c.command('NOTIFY SET STATUS (mailboxes (Secret Peek Other) (MessageNew MessageExpunge MailboxName))');
    assert.deepEqual(lines, ['* LIST (\\NoAccess) "/" "Peek"', statusOf(server, 'Other'), 'T2 OK NOTIFY completed']);
    server.control.addMessage('Secret', { raw: mail('hidden') });
    server.control.addMessage('Peek', { raw: mail('unreadable') });
    server.control.renameMailbox('Secret', { newPath: 'Secret2' });
    assert.equal(await quiet(c), '');
    server.control.renameMailbox('Secret2', { newPath: 'Secret' });
    c.close();
  });

  test('§4: inside IDLE the same notifications go out', async () => {
    const c = await rawSession(port);
    await c.command('NOTIFY SET (subtree Lists (MessageNew MessageExpunge))');
    c.write('I IDLE\r\n');
    assert.match(await c.line(), /^\+ /);
    server.control.addMessage('Lists/Lemonade', { raw: mail('idle') });
    assert.equal(await c.line(), statusOf(server, 'Lists/Lemonade'));
    c.write('DONE\r\n');
    assert.match(await c.line(), /^I OK/);
    c.close();
  });

  test('notifications that come while a command runs go out right after its tagged answer', async () => {
    // A plugin makes the change in the middle of NOOP (as another client or REST could).
    const during: Plugin = {
      name: 'XDURING',
      wrap: [{ command: 'NOOP', run: (ctx, next) => (ctx.session.server.control.createMailbox('During', { subscribed: false }), next()) }],
    };
    const started = await startServer({ plugins: ['NOTIFY', during] });
    try {
      const c = await rawSession(started.port);
      await c.command('NOTIFY SET (personal (MailboxName))');
      c.write('A NOOP\r\n');
      assert.deepEqual(await linesUntil(c, /During/), ['A OK NOOP completed', '* LIST (\\HasNoChildren) "/" "During"']);
      c.close();
    } finally {
      await started.server.stop();
    }
  });
});

test("MessageNew's FETCH attributes may be extension items with arguments (PREVIEW, BINARY.PEEK[1])", async () => {
  const { server, port } = await startServer({ plugins: ['NOTIFY', 'PREVIEW', 'BINARY'] });
  try {
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    assert.deepEqual(await c.command('NOTIFY SET (selected (MessageNew (UID PREVIEW BINARY.PEEK[1]) MessageExpunge))'), ['T3 OK NOTIFY completed']);
    const { uid } = server.control.addMessage('INBOX', { raw: mail('peek', 'Hello there') });
    const lines = await linesUntil(c, /FETCH/);
    assert.deepEqual(lines.slice(0, 2), ['* 1 EXISTS', '* 1 RECENT']);
    assert.equal(lines[2], `* 1 FETCH (UID ${uid} PREVIEW "Hello there" BINARY[1] {13}\r\nHello there\r\n)`);
    c.close();
  } finally {
    await server.stop();
  }
});

test('§5.5: LIST notifications carry the attributes a LIST shows (special-use, children), once each', async () => {
  const { server, port } = await startServer({ plugins: ['NOTIFY', 'SPECIAL-USE', 'CHILDREN'], storage: { INBOX: {}, '': { folders: { Trash: { 'special-use': '\\Trash' } } } } });
  try {
    const c = await rawSession(port);
    await c.command('NOTIFY SET (personal (MailboxName))');
    server.control.renameMailbox('Trash', { newPath: 'Bin' });
    assert.equal(await c.line(), '* LIST (\\HasNoChildren \\Trash) "/" "Bin" ("OLDNAME" ("Trash"))');
    c.close();
  } finally {
    await server.stop();
  }
});

test('held back, but bounded: past 10,000 held changes they go out at the next command, as without NOTIFY', async () => {
  const { server, port } = await startServer({ plugins: ['NOTIFY'] });
  try {
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    await c.command('NOTIFY NONE');
    const raw = mail('many');
    for (let i = 0; i < 10_000; i++) server.control.addMessage('INBOX', { raw });
    assert.deepEqual(await c.command('NOOP'), ['T4 OK NOOP completed']);
    server.control.addMessage('INBOX', { raw });
    const lines = await c.command('NOOP');
    assert.equal(lines[0], '* 10001 EXISTS');
    assert.equal(lines.at(-1), 'T5 OK NOOP completed');
    c.close();
  } finally {
    await server.stop();
  }
});

test('UNAUTHENTICATE ends what NOTIFY asked for; a new login starts without it', async () => {
  const { server, port } = await startServer({ plugins: ['NOTIFY', 'UNAUTHENTICATE'] });
  try {
    const c = await rawSession(port);
    await c.command('NOTIFY SET (personal (MailboxName))');
    assert.deepEqual(server.extension('NOTIFY')!.sessions().length, 1);
    assert.match((await c.command('UNAUTHENTICATE')).at(-1)!, /OK/);
    assert.match((await c.command('LOGIN testuser testpass')).at(-1)!, /OK/);
    assert.deepEqual(server.extension('NOTIFY')!.sessions(), []);
    server.control.createMailbox('Unwatched', { subscribed: false });
    assert.equal(await quiet(c), '');
    c.close();
  } finally {
    await server.stop();
  }
});

test('a script rule can answer NOTIFY by its command name (a client test of a server that refuses it)', async () => {
  const { server, port } = await startServer({ plugins: ['NOTIFY'] });
  try {
    server.script.add({ on: 'command', command: 'NOTIFY', times: 1, send: '$TAG NO [NOTIFICATIONOVERFLOW] Too expensive\r\n' });
    const c = await rawSession(port);
    assert.deepEqual(await c.command('NOTIFY SET (personal (MailboxName))'), ['T2 NO [NOTIFICATIONOVERFLOW] Too expensive']);
    assert.deepEqual(await c.command('NOTIFY SET (personal (MailboxName))'), ['T3 OK NOTIFY completed']);
    c.close();
  } finally {
    await server.stop();
  }
});

test('COMPRESS: a notification that comes during COMPRESS goes after its OK, compressed, as do later ones', async () => {
  // The change happens while COMPRESS runs, before its tagged OK is written.
  const during: Plugin = {
    name: 'XDURING',
    wrap: [{ command: 'COMPRESS', run: (ctx, next) => (ctx.session.server.control.createMailbox('During', { subscribed: false }), next()) }],
  };
  const { server, port } = await startServer({ plugins: ['NOTIFY', 'COMPRESS', during] });
  try {
    const socket = net.connect(port, '127.0.0.1');
    await new Promise<void>((r) => socket.once('connect', () => r()));
    let plain = '';
    let inflated = '';
    let inflater: zlib.InflateRaw | null = null;
    const wait = async (done: () => boolean): Promise<void> => {
      for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
      assert.ok(done(), `plain ${JSON.stringify(plain)}, inflated ${JSON.stringify(inflated)}`);
    };
    socket.on('data', (chunk: Buffer) => {
      if (inflater) return void inflater.write(chunk);
      plain += chunk.toString('latin1');
      const at = plain.indexOf('c OK');
      if (at >= 0 && plain.indexOf('\r\n', at) >= 0) {
        // Everything after the OK's line is DEFLATE data.
        const end = plain.indexOf('\r\n', at) + 2;
        const rest = Buffer.from(plain.slice(end), 'latin1');
        plain = plain.slice(0, end);
        inflater = zlib.createInflateRaw();
        inflater.on('data', (d: Buffer) => (inflated += d.toString('latin1')));
        if (rest.length) inflater.write(rest);
      }
    });
    socket.write('a LOGIN testuser testpass\r\nb NOTIFY SET (personal (MailboxName))\r\n');
    await wait(() => plain.includes('b OK'));
    socket.write('c COMPRESS DEFLATE\r\n');
    await wait(() => inflated.includes('During'));
    assert.equal(inflated, '* LIST (\\HasNoChildren) "/" "During"\r\n');
    assert.ok(!plain.includes('* LIST'), plain);
    server.control.deleteMailbox('During');
    await wait(() => inflated.includes('NonExistent'));
    assert.ok(inflated.endsWith('* LIST (\\NonExistent) "/" "During"\r\n'), inflated);
    socket.destroy();
  } finally {
    await server.stop();
  }
});

test('imapflow (no IDLE) gets exists and expunge events pushed between its commands once NOTIFY SET (selected ...) is on', { timeout: 20000 }, async () => {
  const { server, port } = await startServer({ plugins: ['NOTIFY', 'UIDPLUS'] });
  const client = new ImapFlow({ host: '127.0.0.1', port, secure: false, auth: { user: 'testuser', pass: 'testpass' }, logger: false, disableAutoIdle: true });
  client.on('error', () => undefined);
  try {
    server.control.addMessage('INBOX', { raw: mail('first') });
    await client.connect();
    const lock = await client.getMailboxLock('INBOX');
    try {
      // imapflow has no NOTIFY method: its generic command path sends it (and waits for next() before reading on).
      const exec = (client as unknown as { exec(command: string, attributes: unknown[]): Promise<{ next(): void }> }).exec.bind(client);
      const atom = (value: string): { type: 'ATOM'; value: string } => ({ type: 'ATOM', value });
      (await exec('NOTIFY', [atom('SET'), [atom('selected'), [atom('MessageNew'), atom('MessageExpunge')]]])).next();
      const exists = new Promise<number>((resolve) => client.on('exists', (d: { count: number }) => resolve(d.count)));
      server.control.addMessage('INBOX', { raw: mail('second') });
      assert.equal(await exists, 2);
      const expunged = new Promise<number>((resolve) => client.on('expunge', (d: { seq: number }) => resolve(d.seq)));
      const uid = server.control.listMessages('INBOX')[0]!.uid;
      server.control.expungeMessages('INBOX', { uids: [uid] });
      assert.equal(await expunged, 1);
      // imapflow's view matches the server's after the pushes.
      const list = await client.fetchAll('1:*', { uid: true, envelope: true });
      assert.deepEqual(list.map((m) => m.envelope!.subject), ['second']);
    } finally {
      lock.release();
    }
    await client.logout();
  } finally {
    client.close();
    await server.stop();
  }
});

describe('NOTIFICATIONOVERFLOW and a client that does not read', () => {
  test('§5.8: more waiting notifications than queueLimit: one OK [NOTIFICATIONOVERFLOW], then as after NOTIFY NONE', async () => {
    const { server, port } = await startServer({ plugins: ['NOTIFY'], pluginOptions: { NOTIFY: { queueLimit: 3 } } });
    try {
      assert.equal(server.extension('NOTIFY')!.queueLimit, 3);
      const c = await rawSession(port);
      await c.command('SELECT INBOX');
      await c.command('NOTIFY SET (selected (MessageNew MessageExpunge)) (personal (MailboxName))');
      // Five in one turn of the event loop: more than the queue holds before it can be sent.
      for (let i = 0; i < 5; i++) server.control.createMailbox(`Box${i}`, { subscribed: false });
      assert.match(await c.line(), /^\* OK \[NOTIFICATIONOVERFLOW\] /);
      assert.deepEqual(server.extension('NOTIFY')!.sessions(), []);
      server.control.createMailbox('After', { subscribed: false });
      server.control.addMessage('INBOX', { raw: mail('held') });
      assert.equal(await quiet(c), '');
      assert.deepEqual(await c.command('NOOP'), ['T4 OK NOOP completed']);
      // Below the limit nothing overflows.
      await c.command('NOTIFY SET (personal (MailboxName))');
      server.control.deleteMailbox('After');
      assert.equal(await c.line(), '* LIST (\\NonExistent) "/" "After"');
      c.close();
    } finally {
      await server.stop();
    }
  });

  test('a session that never reads: notifications wait (bounded by queueLimit), the connection is not reset, and reading resumes them', async () => {
    const body = 'x'.repeat(1022) + '\r\n';
    const raw = `Subject: big\r\n\r\n${body.repeat(1024)}`;
    const { server, port } = await startServer({ plugins: ['NOTIFY'], pluginOptions: { NOTIFY: { queueLimit: 50 } } });
    try {
      for (let i = 0; i < 16; i++) server.control.addMessage('INBOX', { raw });
      const c = await rawSession(port);
      await c.command('SELECT INBOX');
      await c.command('NOTIFY SET (personal (MessageNew MessageExpunge MailboxName))');
      c.socket.pause();
      c.write('F FETCH 1:* BODY.PEEK[]\r\n');
      await new Promise((r) => setTimeout(r, 200));
      // Changes arrive one by one while the client reads nothing.
      for (let i = 0; i < 200; i++) {
        server.control.createMailbox(`Many${i}`, { subscribed: false });
        await new Promise((r) => setImmediate(r));
      }
      c.socket.resume();
      let fetches = 0;
      let lists = 0;
      let overflow = 0;
      for (;;) {
        const line = await c.line(10_000);
        if (/^\* \d+ FETCH/.test(line)) fetches++;
        else if (line.startsWith('* LIST')) lists++;
        else if (line.startsWith('* OK [NOTIFICATIONOVERFLOW]')) overflow++;
        if (overflow || lists >= 200) break;
      }
      assert.equal(fetches, 16);
      // The server kept at most queueLimit of them, then gave up on NOTIFY for this session.
      assert.ok(lists <= 50, `${lists} LIST lines`);
      assert.equal(overflow, 1);
      assert.match((await c.command('NOOP')).at(-1)!, /OK NOOP completed/);
      c.close();
    } finally {
      await server.stop();
    }
  });

  test('a session that never reads while 200,000 mailboxes come and go: the live heap grows by under 16 MB, RSS under 128 MB (abuse pattern of test/hardening)', async () => {
    // The event backlog (its own bound, tested in test/rest) is off so that the live heap is NOTIFY's alone.
    const child = await startChildServer({ plugins: ['NOTIFY'], events: { backlog: 0 } }, 0, 0);
    const ask = child.ask;
    try {
      const port = child.port;
      const socket = net.connect(port, '127.0.0.1');
      await new Promise<void>((r) => socket.once('connect', () => r()));
      socket.pause(); // never read
      socket.write('a LOGIN testuser testpass\r\nb NOTIFY SET (personal (MailboxName))\r\n');
      await new Promise((r) => setTimeout(r, 300));
      const before = await ask('rss');
      const heapBefore = await ask('heap');
      const after = await ask('churn 200000');
      const heapAfter = await ask('heap');
      const grown = (after - before) / 1024 / 1024;
      const retained = (heapAfter - heapBefore) / 1024 / 1024;
      console.log(`notify churn: RSS +${grown.toFixed(1)} MB, live heap +${retained.toFixed(1)} MB`);
      // RSS also holds the pages V8 grew to for the churn's garbage (40-70 MB here, varying run to run);
      // the live heap is what the 400,000 notifications could have kept: queueLimit keeps it small.
      assert.ok(grown < 128, `RSS grew by ${grown.toFixed(1)} MB`);
      assert.ok(retained < 16, `the live heap grew by ${retained.toFixed(1)} MB`);
      // Reading again: what fitted in the socket buffers (the kernel's too: some MB) went out, not all 400,000,
      // then the overflow notice; the session goes on.
      let text = '';
      const done = new Promise<void>((resolve) => {
        socket.on('data', (d: Buffer) => {
          text += d.toString('latin1');
          if (text.includes('c OK NOOP completed')) resolve();
        });
      });
      socket.resume();
      socket.write('c NOOP\r\n');
      await done;
      socket.destroy();
      assert.match(text, /\* OK \[NOTIFICATIONOVERFLOW\] /);
      const lists = text.split('\r\n').filter((l) => l.startsWith('* LIST')).length;
      assert.ok(lists < 400_000, `${lists} LIST lines`);
    } finally {
      child.stop();
    }
  });
});
