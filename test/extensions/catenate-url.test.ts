/**
 * The IMAP URL parser of CATENATE (src/extensions/catenate/imap-url.ts):
 * the examples of RFC 5092 and RFC 4467, the grammar's edges, and a seeded
 * fuzz: any input either parses or throws ImapUrlError (nothing else), and
 * formatting a parsed URL and parsing it again gives the same URL; random
 * URLs survive format → parse unchanged.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatImapUrl, ImapUrlError, parseImapUrl, type ImapUrl } from '../../src/extensions/catenate/imap-url.js';
import { Prng } from '../../src/util/prng.js';

const url = (fields: Partial<ImapUrl>): ImapUrl => ({
  server: null,
  mailbox: 'INBOX',
  uidvalidity: null,
  uid: null,
  search: null,
  section: null,
  partial: null,
  urlauth: null,
  ...fields,
});

test('RFC 5092 §7 and RFC 4467 examples', () => {
  assert.deepEqual(
    parseImapUrl('imap://minbari.example.org/gray-council;UIDVALIDITY=385759045/;UID=20/;PARTIAL=0.1024'),
    url({ server: { user: null, auth: null, host: 'minbari.example.org', port: null }, mailbox: 'gray-council', uidvalidity: 385759045, uid: 20, partial: { offset: 0, length: 1024 } }),
  );
  assert.deepEqual(
    parseImapUrl('imap://psicorp.example.org/~peter/%E6%97%A5%E6%9C%AC%E8%AA%9E/%E5%8F%B0%E5%8C%97'),
    url({ server: { user: null, auth: null, host: 'psicorp.example.org', port: null }, mailbox: '~peter/日本語/台北' }),
  );
  assert.deepEqual(
    parseImapUrl('imap://;AUTH=*@minbari.example.org/gray%20council?SUBJECT%20shadows'),
    url({ server: { user: null, auth: '*', host: 'minbari.example.org', port: null }, mailbox: 'gray council', search: 'SUBJECT%20shadows' }),
  );
  assert.deepEqual(
    parseImapUrl('imap://michael@minbari.example.org/users.*'),
    url({ server: { user: 'michael', auth: null, host: 'minbari.example.org', port: null }, mailbox: 'users.*' }),
  );
  assert.deepEqual(
    parseImapUrl('imap://joe@example.com/INBOX/;uid=20/;section=1.2;urlauth=submit+fred:internal:91354a473744909de610943775f92038'),
    url({
      server: { user: 'joe', auth: null, host: 'example.com', port: null },
      uid: 20,
      section: '1.2',
      urlauth: ';URLAUTH=submit+fred:internal:91354a473744909de610943775f92038',
    }),
  );
  // RFC 4469 Appendix A: an absolute-path reference, lower-case parameter names.
  assert.deepEqual(
    parseImapUrl('/Drafts;UIDVALIDITY=385759045/;UID=20/;section=HEADER'),
    url({ mailbox: 'Drafts', uidvalidity: 385759045, uid: 20, section: 'HEADER' }),
  );
  assert.deepEqual(parseImapUrl('//[::1]:1143/a/b/;UID=1/;SECTION=HEADER.FIELDS%20(To)').server, { user: null, auth: null, host: '[::1]', port: 1143 });
  assert.equal(parseImapUrl('/a/b/;UID=1/;SECTION=HEADER.FIELDS%20(To)').section, 'HEADER.FIELDS (To)');
  assert.equal(parseImapUrl('/a/b/;UID=1').mailbox, 'a/b');
  // A relative-path reference resolves below the server's root.
  assert.deepEqual(parseImapUrl('Drafts;UIDVALIDITY=7/;UID=20'), url({ mailbox: 'Drafts', uidvalidity: 7, uid: 20 }));
  assert.equal(parseImapUrl('a.b/c/;UID=1').mailbox, 'a.b/c');
});

test('what the grammar refuses is an ImapUrlError', () => {
  const bad = [
    '', ';UID=1', ';SECTION=1', '../INBOX/;UID=1', './x', 'a/../b', '/', 'imap://', 'imap://host', 'imap://host/', 'imap:///x', 'imap://@host/x', 'imap://u;X=1@host/x',
    'imap://host:99999/x', 'imap://h st/x', '/INBOX;UID=1', '/INBOX/;UID=0', '/INBOX/;UID=4294967296', '/INBOX/;UID=1/', '/INBOX/;UID=1;SECTION=1',
    '/INBOX/;UID=1/;PARTIAL=x', '/INBOX/;UID=1/;PARTIAL=1.0', '/INBOX/;UID=1/;EXPIRE=2026-01-01T00:00:00Z', '/INBOX/;UID=1;URLAUTH=anonymous',
    '/INBOX;UIDVALIDITY=0/;UID=1', '/INBOX/;UIDVALIDITY=1/;UID=1', '/IN BOX/;UID=1', '/IN"BOX', '/%', '/%4', '/%GG', '/%FF', '/INBOX#x',
    '/INBOX/;UID=1?x', '/INBOX/;FOO=1', '/INBOX/;UID=1/;SECTION=', '/INBOX;', '/INBOX;=1', 'http://x/INBOX', 'x'.repeat(9000),
  ];
  for (const text of bad) assert.throws(() => parseImapUrl(text), ImapUrlError, JSON.stringify(text));
});

const MAILBOX_CHARS = ['a', 'Z', '0', '/', ';', '?', '%', '#', ' ', '"', ']', '&', '=', '~', '-', '.', '*', '@', ':', 'é', '日', '\u{1F600}', '+', ','];

function pick<T>(r: Prng, items: readonly T[]): T {
  return items[r.below(items.length)]!;
}

function text(r: Prng, chars: readonly string[], max: number): string {
  let out = '';
  const n = 1 + r.below(max);
  for (let i = 0; i < n; i++) out += pick(r, chars);
  return out;
}

function randomUrl(r: Prng): ImapUrl {
  const uid = r.below(3) === 0 ? null : 1 + r.below(0xffffffff);
  const u = url({
    mailbox: text(r, MAILBOX_CHARS, 12),
    uidvalidity: r.below(2) === 0 ? null : 1 + r.below(0xffffffff),
    uid,
  });
  if (r.below(2) === 0) {
    u.server = {
      user: r.below(2) === 0 ? null : text(r, MAILBOX_CHARS, 6),
      auth: pick(r, [null, '*', 'GSSAPI', 'X x']),
      host: pick(r, ['example.com', '127.0.0.1', '[::1]', 'h_1.example']),
      port: r.below(2) === 0 ? null : r.below(65536),
    };
  }
  if (uid === null) {
    if (r.below(2) === 0) u.search = text(r, ['SUBJECT', '%20', 'x', '@', ':', '/'], 4);
  } else {
    if (r.below(2) === 0) u.section = text(r, ['1', '.', 'HEADER', 'MIME', ' ', '(', ')', 'To', '/', ';', 'é'], 5);
    if (r.below(2) === 0) u.partial = { offset: r.below(0xffffffff), length: r.below(2) === 0 ? null : 1 + r.below(0xfffffffe) };
    if (r.below(3) === 0) u.urlauth = pick(r, [';URLAUTH=anonymous:internal:0123456789abcdef', ';EXPIRE=2026-11-24T00:00:00Z;URLAUTH=user+fred:internal:ab']);
  }
  return u;
}

test('random URLs survive format → parse', () => {
  const r = new Prng(3502);
  for (let i = 0; i < 3000; i++) {
    const u = randomUrl(r);
    const formatted = formatImapUrl(u);
    assert.deepEqual(parseImapUrl(formatted), u, formatted);
  }
});

const PIECES = [
  'imap://', '//', '/', ';', '?', '#', '@', ':', '%', '%2F', '%C3%A9', '%FF', '%', '=', '.', ' ', '"', ']', '[', 'INBOX', 'Drafts',
  ';UID=', ';uid=', ';UIDVALIDITY=', ';SECTION=', ';PARTIAL=', ';URLAUTH=', ';EXPIRE=', ';AUTH=', '*', '1', '0', '20', '4294967295',
  '4294967296', '99999999999999999999', 'HEADER', '1.2', 'HEADER.FIELDS%20(To)', 'user', 'host', '[::1]', 'anonymous:internal:ab', 'é', '\x00',
];

test('fuzz: any input parses or throws ImapUrlError, and what parses formats back to itself', () => {
  const r = new Prng(4469);
  for (let i = 0; i < 20000; i++) {
    let input: string;
    if (r.below(2) === 0) {
      input = '';
      const n = 1 + r.below(10);
      for (let k = 0; k < n; k++) input += pick(r, PIECES);
    } else {
      // A valid URL with a few bytes changed, dropped or repeated.
      input = formatImapUrl(randomUrl(r));
      const edits = 1 + r.below(3);
      for (let k = 0; k < edits && input.length > 0; k++) {
        const at = r.below(input.length);
        const kind = r.below(3);
        if (kind === 0) input = input.slice(0, at) + pick(r, PIECES) + input.slice(at + 1);
        else if (kind === 1) input = input.slice(0, at) + input.slice(at + 1 + r.below(4));
        else input = input.slice(0, at) + input.slice(at, at + 1 + r.below(6)).repeat(2) + input.slice(at);
      }
    }
    let parsed: ImapUrl;
    try {
      parsed = parseImapUrl(input);
    } catch (err) {
      assert.ok(err instanceof ImapUrlError, `${JSON.stringify(input)}: ${String(err)}`);
      continue;
    }
    assert.deepEqual(parseImapUrl(formatImapUrl(parsed)), parsed, JSON.stringify(input));
  }
});
