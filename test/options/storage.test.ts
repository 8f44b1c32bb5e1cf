import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { resolveOptions } from '../../src/options/resolve.js';
import type { SeedMailbox, Storage } from '../../src/options/types.js';
import { parseInternalDate } from '../../src/store/internal-date.js';
import { deepFreeze, invalid } from './helpers.js';

const NOW = Date.UTC(2024, 0, 2, 3, 4, 5);
const seed = (storage: unknown) => resolveOptions({ storage: storage as Storage, now: NOW }).storage;
const bad = (storage: unknown) => invalid(() => seed(storage));
const paths = (mailboxes: SeedMailbox[]) => mailboxes.map((m) => m.path);

/** A fixture in the shape hoodiecrow-era suites use. */
function fixture(): Storage {
  return {
    INBOX: {
      uidvalidity: 42,
      uidnext: 10,
      HIGHESTMODSEQ: 7,
      messages: [
        'Subject: one\r\n\r\nplain string',
        {
          raw: 'Subject: two\r\n\r\nhello',
          flags: ['\\seen', '\\FLAGGED', '$Label', '\\Recent', '\\Seen'],
          internaldate: '14-Sep-2013 21:22:28 -0300',
          uid: 3,
          modseq: 5,
          'x-note': { kept: [1, 2] },
        },
        { raw: 'Subject: three\r\n\r\n', uid: 9 },
      ],
      folders: {
        Receipts: { subscribed: false },
      },
      acl: { testuser: 'lrswipkxtea' },
    },
    '': {
      separator: '/',
      folders: {
        '[Gmail]': {
          flags: ['\\noselect', '\\HasChildren'],
          folders: {
            'All Mail': { 'special-use': '\\All' },
            Drafts: { 'special-use': ['\\drafts'] },
            'Sent Mail': { 'special-use': '\\Sent', permanentFlags: ['\\seen', '\\*'] },
          },
        },
        Work: { folders: { Projects: { folders: { Rookery: {} } } }, metadata: { '/private/comment': 'x' } },
      },
    },
    'Other Users/': {
      type: 'user',
      folders: { bob: { folders: { x: {} } } },
    },
    '#news.': { folders: { comp: { folders: { mail: {} } } } },
  };
}

describe('storage shape', () => {
  it('defaults to INBOX plus the personal namespace', () => {
    const s = seed(undefined);
    assert.deepEqual(s.namespaces, [{ prefix: '', type: 'personal', separator: '/', extra: {} }]);
    assert.deepEqual(paths(s.mailboxes), ['INBOX']);
  });

  it('flattens a hoodiecrow-style tree, parents first, in the order given', () => {
    const s = seed(fixture());
    assert.deepEqual(paths(s.mailboxes), [
      'INBOX',
      'INBOX/Receipts',
      '[Gmail]',
      '[Gmail]/All Mail',
      '[Gmail]/Drafts',
      '[Gmail]/Sent Mail',
      'Work',
      'Work/Projects',
      'Work/Projects/Rookery',
      'Other Users/bob',
      'Other Users/bob/x',
      '#news.comp',
      '#news.comp.mail',
    ]);
    assert.deepEqual(s.namespaces, [
      { prefix: '', type: 'personal', separator: '/', extra: {} },
      { prefix: 'Other Users/', type: 'user', separator: '/', extra: {} },
      { prefix: '#news.', type: 'shared', separator: '.', extra: {} },
    ]);
    const byPath = new Map(s.mailboxes.map((m) => [m.path, m]));
    assert.equal(byPath.get('#news.comp.mail')!.delimiter, '.');
    assert.equal(byPath.get('INBOX/Receipts')!.subscribed, false);
    assert.deepEqual(byPath.get('[Gmail]')!.flags, ['\\Noselect']);
    assert.deepEqual(byPath.get('[Gmail]/All Mail')!.specialUse, ['\\All']);
    assert.deepEqual(byPath.get('[Gmail]/Drafts')!.specialUse, ['\\Drafts']);
    assert.deepEqual(byPath.get('[Gmail]/Sent Mail')!.permanentFlags, ['\\Seen', '\\*']);
    assert.equal(byPath.get('[Gmail]/Sent Mail')!.permanentFlags !== undefined, true);
    assert.equal(byPath.get('Work')!.permanentFlags, undefined);
    assert.deepEqual(byPath.get('Work')!.extra, { metadata: { '/private/comment': 'x' } });

    const inbox = s.mailboxes[0]!;
    assert.equal(inbox.uidvalidity, 42);
    assert.equal(inbox.uidnext, 10);
    assert.equal(inbox.highestModseq, 7);
    assert.deepEqual(inbox.extra, { acl: { testuser: 'lrswipkxtea' } });
    assert.equal(inbox.messages.length, 3);
    const [one, two, three] = inbox.messages;
    assert.equal(one!.raw.toString(), 'Subject: one\r\n\r\nplain string');
    assert.deepEqual(one!.flags, []);
    assert.deepEqual(one!.internaldate, { ms: NOW, tz: 0 });
    assert.equal(one!.uid, undefined);
    assert.deepEqual(two!.flags, ['\\Seen', '\\Flagged', '$Label']);
    assert.deepEqual(two!.internaldate, parseInternalDate('14-Sep-2013 21:22:28 -0300'));
    assert.equal(two!.uid, 3);
    assert.equal(two!.modseq, 5);
    assert.deepEqual(two!.extra, { 'x-note': { kept: [1, 2] } });
    assert.equal(three!.uid, 9);
  });

  it('creates INBOX when missing, and reads "inbox" in any case as INBOX', () => {
    assert.deepEqual(paths(seed({ '': { folders: { a: {} } } }).mailboxes), ['INBOX', 'a']);
    const s = seed({ inbox: { messages: ['x'], folders: { sub: {} } } });
    assert.deepEqual(paths(s.mailboxes), ['INBOX', 'INBOX/sub']);
    assert.equal(s.mailboxes[0]!.messages.length, 1);
  });

  it('adds a personal "" namespace only when none is personal', () => {
    assert.deepEqual(
      seed({ INBOX: {}, 'Shared/': { folders: { t: {} } } }).namespaces.map((n) => [n.prefix, n.type]),
      [
        ['', 'personal'],
        ['Shared/', 'shared'],
      ],
    );
    const s = seed({ INBOX: { folders: { a: {} } }, 'INBOX.': { type: 'personal', folders: { b: {} } } });
    assert.deepEqual(s.namespaces.map((n) => [n.prefix, n.type, n.separator]), [['INBOX.', 'personal', '.']]);
    assert.deepEqual(paths(s.mailboxes), ['INBOX', 'INBOX.a', 'INBOX.b']);
  });

  it('uses the personal separator for INBOX and joins a prefix without a trailing separator', () => {
    const s = seed({ '': { separator: '.', folders: { a: { folders: { b: {} } } } }, '#shared': { folders: { t: {} } } });
    assert.deepEqual(
      s.mailboxes.map((m) => [m.path, m.delimiter]),
      [
        ['INBOX', '.'],
        ['a', '.'],
        ['a.b', '.'],
        ['#shared/t', '/'],
      ],
    );
  });

  it('keeps unknown namespace and mailbox keys in extra', () => {
    const s = seed({ '': { comment: 'hi', folders: { a: { custom: [1, { b: 2 }] } } } });
    assert.deepEqual(s.namespaces[0]!.extra, { comment: 'hi' });
    assert.deepEqual(s.mailboxes[1]!.extra, { custom: [1, { b: 2 }] });
  });

  it('accepts extension keys given in the context', async () => {
    const { resolveOptions: resolve } = await import('../../src/options/resolve.js');
    const storage = { INBOX: { quota: { STORAGE: 10 }, messages: [{ raw: 'x', annotation: 1 }] } };
    assert.match(
      invalid(() => resolve({ storage }, { mailboxKeys: ['quotas'] })),
      /^storage\.INBOX\.quota: unknown key; did you mean "quotas"\?$/,
    );
    const r = resolve({ storage }, { mailboxKeys: ['quota'], messageKeys: ['annotation'] });
    assert.deepEqual(r.storage.mailboxes[0]!.extra, { quota: { STORAGE: 10 } });
    assert.deepEqual(r.storage.mailboxes[0]!.messages[0]!.extra, { annotation: 1 });
  });
});

describe('messages', () => {
  it('decodes utf-8, binary and base64 raw, and copies byte arrays', () => {
    const bytes = Uint8Array.from([0x53, 0xff, 0x00, 0x80]);
    const buffer = Buffer.from('buf');
    const s = seed({
      INBOX: {
        messages: [
          { raw: 'Subject: é' },
          { raw: 'Subject: é', encoding: 'utf-8' },
          { raw: 'S\xff\x00\x80', encoding: 'binary' },
          { raw: Buffer.from('S\xff\x00\x80', 'latin1').toString('base64'), encoding: 'base64' },
          { raw: bytes },
          { raw: buffer, flags: ['\\Seen'] },
          bytes,
        ],
      },
    });
    const raws = s.mailboxes[0]!.messages.map((m) => m.raw);
    for (const raw of raws) assert.ok(Buffer.isBuffer(raw));
    assert.deepEqual(raws[0], Buffer.from('Subject: \xc3\xa9', 'latin1'));
    assert.deepEqual(raws[1], raws[0]);
    assert.deepEqual([...raws[2]!], [0x53, 0xff, 0x00, 0x80]);
    assert.deepEqual(raws[3], raws[2]);
    assert.deepEqual(raws[4], raws[2]);
    assert.equal(raws[5]!.toString(), 'buf');
    assert.deepEqual(raws[6], raws[2]);
    bytes[0] = 0;
    buffer[0] = 0;
    assert.equal(raws[4]![0], 0x53);
    assert.equal(raws[6]![0], 0x53);
    assert.equal(raws[5]!.toString(), 'buf');
  });

  it('accepts a Date internal date', () => {
    const s = seed({ INBOX: { messages: [{ raw: 'x', internaldate: new Date(1_000_500) }] } });
    assert.deepEqual(s.mailboxes[0]!.messages[0]!.internaldate, { ms: 1_000_000, tz: 0 });
  });

  it('reports a bad internal date with its path', () => {
    assert.equal(
      bad({ INBOX: { messages: [{ raw: 'x', internaldate: 'yesterday' }] } }),
      'storage.INBOX.messages[0].internaldate: not an RFC 3501 date-time ("dd-Mon-yyyy hh:mm:ss +zzzz"): "yesterday"',
    );
    assert.equal(
      bad({ INBOX: { messages: ['a', { raw: 'x', internaldate: '31-Feb-2020 00:00:00 +0000' }] } }),
      'storage.INBOX.messages[1].internaldate: not an RFC 3501 date-time ("dd-Mon-yyyy hh:mm:ss +zzzz"): "31-Feb-2020 00:00:00 +0000"',
    );
    assert.equal(
      bad({ INBOX: { messages: [{ raw: 'x', internaldate: new Date(NaN) }] } }),
      'storage.INBOX.messages[0].internaldate: expected a valid Date, got an invalid Date',
    );
    assert.equal(
      bad({ INBOX: { messages: [{ raw: 'x', internaldate: 5 }] } }),
      'storage.INBOX.messages[0].internaldate: expected an RFC 3501 date-time string or a Date, got 5',
    );
  });

  it('reports bad raw and encoding', () => {
    assert.equal(
      bad({ INBOX: { messages: [{ flags: [] }] } }),
      'storage.INBOX.messages[0].raw: missing; a message object needs the message source in "raw"',
    );
    assert.equal(bad({ INBOX: { messages: [{ raw: 5 }] } }), 'storage.INBOX.messages[0].raw: expected a string or a Uint8Array, got 5');
    assert.equal(
      bad({ INBOX: { messages: [{ raw: 'x', encoding: 'hex' }] } }),
      'storage.INBOX.messages[0].encoding: expected "utf-8", "binary" or "base64", got "hex"',
    );
    assert.equal(
      bad({ INBOX: { messages: [{ raw: 'ab\u0100', encoding: 'binary' }] } }),
      'storage.INBOX.messages[0].raw: encoding "binary" takes one character per byte, but offset 2 holds U+0100',
    );
    assert.equal(bad({ INBOX: { messages: [{ raw: 'a*b', encoding: 'base64' }] } }), 'storage.INBOX.messages[0].raw: not valid base64');
    assert.equal(bad({ INBOX: { messages: [5] } }), 'storage.INBOX.messages[0]: expected a message (a string, or an object with "raw"), got 5');
    assert.equal(bad({ INBOX: { messages: 'x' } }), 'storage.INBOX.messages: expected an array of messages, got "x"');
  });

  it('reports bad flags, uids and modseqs', () => {
    assert.equal(bad({ INBOX: { messages: [{ raw: 'x', flags: '\\Seen' }] } }), 'storage.INBOX.messages[0].flags: expected an array of strings, got "\\\\Seen"');
    assert.equal(bad({ INBOX: { messages: [{ raw: 'x', flags: ['a b'] }] } }), 'storage.INBOX.messages[0].flags[0]: not a valid flag: "a b"');
    assert.equal(bad({ INBOX: { messages: [{ raw: 'x', flags: [1] }] } }), 'storage.INBOX.messages[0].flags[0]: expected a string, got 1');
    assert.equal(bad({ INBOX: { messages: [{ raw: 'x', uid: 0 }] } }), 'storage.INBOX.messages[0].uid: expected a positive integer, got 0');
    assert.equal(
      bad({ INBOX: { messages: [{ raw: 'x', uid: 2 ** 32 }] } }),
      'storage.INBOX.messages[0].uid: expected a positive integer up to 4294967295, got 4294967296',
    );
    assert.equal(bad({ INBOX: { messages: [{ raw: 'x', modseq: '3' }] } }), 'storage.INBOX.messages[0].modseq: expected a positive integer, got "3"');
  });

  it('requires strictly increasing uids when given', () => {
    assert.doesNotThrow(() => seed({ INBOX: { messages: [{ raw: 'a', uid: 2 }, 'b', { raw: 'c', uid: 5 }] } }));
    assert.equal(
      bad({ INBOX: { messages: [{ raw: 'a', uid: 5 }, 'b', { raw: 'c', uid: 5 }] } }),
      'storage.INBOX.messages[2].uid: uid 5 is not greater than the uid 5 of messages[0]; list messages in ascending uid order',
    );
    assert.equal(
      bad({ INBOX: { uidnext: 5, messages: [{ raw: 'a', uid: 5 }] } }),
      'storage.INBOX.uidnext: must be greater than the highest message uid (5), got 5',
    );
  });
});

describe('storage typos and types', () => {
  it('reports a typo of a mailbox key with the exact text', () => {
    assert.equal(bad({ INBOX: { mesages: [] } }), 'storage.INBOX.mesages: unknown key; did you mean "messages"?');
  });

  it('reports typos at every level', () => {
    assert.equal(bad({ '': { seperator: '.' } }), 'storage[""].seperator: unknown key; did you mean "separator"?');
    assert.equal(bad({ '': { folders: { a: { folder: {} } } } }), 'storage[""].folders.a.folder: unknown key; did you mean "folders"?');
    assert.equal(
      bad({ INBOX: { messages: [{ raw: 'x', internalDate: 'x' }] } }),
      'storage.INBOX.messages[0].internalDate: unknown key; did you mean "internaldate"?',
    );
    assert.equal(bad({ INBOX: { specialUse: '\\Sent' } }), 'storage.INBOX.specialUse: unknown key; did you mean "special-use"?');
    assert.equal(bad({ INBOX: { highestmodseq: 4 } }), 'storage.INBOX.highestmodseq: unknown key; did you mean "HIGHESTMODSEQ"?');
    assert.equal(bad({ INBOX: { uidvalidty: 4 } }), 'storage.INBOX.uidvalidty: unknown key; did you mean "uidvalidity"?');
    assert.equal(bad({ INBOX: { metdata: {} } }), 'storage.INBOX.metdata: unknown key; did you mean "metadata"?');
  });

  it('does not typo-check folder names or namespace prefixes', () => {
    const s = seed({ messges: { folders: { mesages: {}, flag: {} } }, '': { folders: { folderz: {} } } });
    assert.deepEqual(paths(s.mailboxes), ['INBOX', 'messges/mesages', 'messges/flag', 'folderz']);
  });

  it('reports wrong types', () => {
    assert.equal(bad({ INBOX: { uidvalidity: 'abc' } }), 'storage.INBOX.uidvalidity: expected a positive integer, got "abc"');
    assert.equal(bad({ INBOX: { subscribed: 'yes' } }), 'storage.INBOX.subscribed: expected a boolean, got "yes"');
    assert.equal(bad({ INBOX: { 'special-use': 'Sent' } }), 'storage.INBOX["special-use"]: expected a special-use attribute such as "\\Sent", got "Sent"');
    assert.equal(bad({ INBOX: { folders: [] } }), 'storage.INBOX.folders: expected an object of mailboxes by name, got an array');
    assert.equal(bad({ INBOX: [] }), 'storage.INBOX: expected a mailbox object, got an array');
    assert.equal(bad({ '': { type: 'public' } }), 'storage[""].type: expected "personal", "user" or "shared", got "public"');
    assert.equal(
      bad({ '': { separator: '//' } }),
      'storage[""].separator: expected one printable ASCII character other than a letter, digit or "&", got "//"',
    );
    assert.equal(bad({ '': { folders: { a: 5 } } }), 'storage[""].folders.a: expected a mailbox object, got 5');
    assert.equal(bad([]), 'storage: expected an object, got an array');
    assert.equal(bad({ 'Shared/': 'x' }), 'storage["Shared/"]: expected a namespace object ({type, separator, folders}), got "x"');
  });

  it('reports a mailbox given where a namespace belongs', () => {
    assert.match(bad({ Sent: { messages: [] } }), /^storage\.Sent\.messages: a namespace has no messages; .* under storage\[""\]\.folders$/);
  });

  it('reports bad mailbox names', () => {
    assert.equal(bad({ '': { folders: { '': {} } } }), 'storage[""].folders[""]: a mailbox name must not be empty');
    assert.equal(
      bad({ '': { folders: { 'a/b': {} } } }),
      'storage[""].folders["a/b"]: a mailbox name must not contain the separator "/"; nest it under "folders" instead',
    );
    assert.equal(bad({ '': { folders: { 'Entwürfe': {} } } }), 'storage[""].folders["Entwürfe"]: not valid modified UTF-7; write "Entw&APw-rfe"');
    assert.doesNotThrow(() => seed({ '': { folders: { 'Entw&APw-rfe': {} } } }));
  });

  it('refuses a second INBOX', () => {
    assert.equal(
      bad({ '': { folders: { INBOX: {} } } }),
      'storage[""].folders.INBOX: duplicates INBOX; give INBOX as the top-level storage key "INBOX"',
    );
    assert.equal(
      bad({ '': { folders: { Inbox: {} } } }),
      'storage[""].folders.Inbox: duplicates INBOX; give INBOX as the top-level storage key "INBOX"',
    );
    assert.equal(bad({ INBOX: {}, inbox: {} }), 'storage.inbox: duplicates storage.INBOX (INBOX is case-insensitive)');
    assert.equal(
      bad({ INBOX: { folders: { a: {} } }, 'INBOX/': { type: 'personal', folders: { a: {} } } }),
      'storage["INBOX/"].folders.a: mailbox "INBOX/a" is also given at storage.INBOX.folders.a',
    );
    // A folder named INBOX below another mailbox is an ordinary name.
    assert.deepEqual(paths(seed({ '': { folders: { a: { folders: { INBOX: {} } } } } }).mailboxes), ['INBOX', 'a', 'a/INBOX']);
  });
});

describe('copies', () => {
  it('never mutates the input and shares nothing mutable with it', () => {
    const input = { storage: fixture(), users: { u: { password: 'p', xoauth2: { accessToken: 't' } } }, plugins: ['IDLE'] };
    deepFreeze(input);
    const copy = structuredClone(input);
    const r = resolveOptions(input);
    assert.deepEqual(input, copy);

    const inbox = r.storage.mailboxes[0]!;
    (inbox.extra.acl as Record<string, string>).testuser = 'changed';
    const note = inbox.messages[1]!.extra['x-note'] as { kept: number[] };
    note.kept.push(3);
    assert.equal(input.storage.INBOX!.acl && (input.storage.INBOX!.acl as Record<string, string>).testuser, 'lrswipkxtea');
    assert.deepEqual(input, copy);
  });

  it('copies byte arrays inside extra values', () => {
    const blob = Buffer.from('abc');
    const s = seed({ INBOX: { blob, messages: [{ raw: 'x', attachment: { data: blob } }] } });
    blob[0] = 0x7a;
    assert.equal((s.mailboxes[0]!.extra.blob as Buffer).toString(), 'abc');
    assert.equal(((s.mailboxes[0]!.messages[0]!.extra.attachment as { data: Buffer }).data).toString(), 'abc');
  });

  it('keeps a "__proto__" key as data', () => {
    const storage = JSON.parse('{"INBOX": {"__proto__": {"polluted": true}}}') as Storage;
    const extra = seed(storage).mailboxes[0]!.extra;
    assert.deepEqual(Object.keys(extra), ['__proto__']);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(Object.getPrototypeOf(extra), Object.prototype);
  });
});

// Speed is measured by `npm run bench -- lifecycle`, not asserted here.
describe('large stores', () => {
  it('resolves a 1,000-message store with every message intact', () => {
    const messages = Array.from({ length: 1000 }, (_, i) => ({
      raw: `Subject: message ${i}\r\nFrom: a@example.com\r\n\r\n${'body text '.repeat(20)}`,
      flags: i % 2 ? ['\\Seen'] : [],
      internaldate: '14-Sep-2013 21:22:28 -0300',
      uid: i + 1,
    }));
    const options = { storage: { INBOX: { messages } } };
    const seeded = resolveOptions(options).storage.mailboxes.find((m) => m.path === 'INBOX')!.messages;
    assert.equal(seeded.length, 1000);
    assert.equal(seeded[999]!.uid, 1000);
    assert.deepEqual(seeded[1]!.flags, ['\\Seen']);
    assert.equal(seeded[500]!.raw.toString('latin1'), messages[500]!.raw);
  });
});
