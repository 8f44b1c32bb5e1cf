/**
 * The normalizations and the allow-list on their own: each one makes
 * equal exactly what RFC 3501/9051 lets two servers write differently, and
 * turning it off (`--keep`) brings the difference back.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { allowedBy, masked, masksFor, parseAllowList, AllowListError } from '../../src/compare/allow.js';
import { NORMALIZATION_NAMES, normalizeResponse, type Normalization } from '../../src/compare/normalize.js';

const ALL = new Set(NORMALIZATION_NAMES);
const without = (n: Normalization): Set<Normalization> => new Set(NORMALIZATION_NAMES.filter((x) => x !== n));
const norm = (s: string, on: ReadonlySet<Normalization> = ALL): string => normalizeResponse(Buffer.from(`${s}\r\n`, 'latin1'), on);

/** [normalization, two responses it makes equal]. */
const PAIRS: [Normalization, string, string][] = [
  // RFC 3501 §4.3: a string is a literal or a quoted string; the same octets either way.
  ['string-form', '* 1 FETCH (BODY[HEADER] {9}\r\nSubject:x)', '* 1 FETCH (BODY[HEADER] "Subject:x")'],
  ['string-form', '* LIST (\\HasNoChildren) "." INBOX', '* LIST (\\HasNoChildren) "." "INBOX"'],
  ['response-text', 'a1 OK [READ-WRITE] SELECT completed', 'a1 OK [READ-WRITE] Select done.'],
  ['response-text', '+ idling', '+ Ready for literal data'],
  ['capability-order', '* CAPABILITY IMAP4rev1 IDLE MOVE', '* CAPABILITY MOVE IMAP4rev1 IDLE'],
  ['capability-order', '* OK [CAPABILITY IMAP4rev1 IDLE] hi', '* OK [CAPABILITY IDLE IMAP4rev1] hi'],
  ['uidvalidity', '* OK [UIDVALIDITY 1700000000] UIDs valid', '* OK [UIDVALIDITY 42] UIDs valid'],
  ['uidvalidity', 'a OK [APPENDUID 1700000000 7] done', 'a OK [APPENDUID 3 7] done'],
  ['uidvalidity', '* STATUS INBOX (UIDVALIDITY 5 MESSAGES 2)', '* STATUS INBOX (UIDVALIDITY 9 MESSAGES 2)'],
  ['internaldate', '* 1 FETCH (INTERNALDATE "01-Jan-2024 00:00:00 +0000")', '* 1 FETCH (INTERNALDATE "02-Feb-2025 10:00:00 +0100")'],
  ['modseq', '* 1 FETCH (FLAGS (\\Seen) MODSEQ (12))', '* 1 FETCH (FLAGS (\\Seen) MODSEQ (4))'],
  ['modseq', '* OK [HIGHESTMODSEQ 99] x', '* OK [HIGHESTMODSEQ 3] x'],
  ['object-ids', '* 1 FETCH (EMAILID (M6d99ac3275bb4e))', '* 1 FETCH (EMAILID (abc))'],
  ['server-id', '* ID ("name" "Dovecot")', '* ID ("name" "Rookery" "version" "1")'],
  ['flag-order', '* 1 FETCH (FLAGS (\\Seen $Junk \\Flagged))', '* 1 FETCH (FLAGS ($Junk \\Flagged \\Seen))'],
  ['flag-order', '* OK [PERMANENTFLAGS (\\Seen \\Deleted \\*)] x', '* OK [PERMANENTFLAGS (\\Deleted \\* \\Seen)] x'],
  ['flag-order', '* FLAGS (\\Seen \\Answered)', '* FLAGS (\\Answered \\Seen)'],
  // RFC 3501 §7.4.2: the data items of a FETCH response come in any order.
  ['fetch-item-order', '* 1 FETCH (UID 4 FLAGS (\\Seen))', '* 1 FETCH (FLAGS (\\Seen) UID 4)'],
  ['status-item-order', '* STATUS INBOX (MESSAGES 2 UIDNEXT 3)', '* STATUS INBOX (UIDNEXT 3 MESSAGES 2)'],
];

for (const [name, a, b] of PAIRS) {
  test(`${name}: ${a.slice(0, 50)} equals ${b.slice(0, 50)}, and not without it`, () => {
    assert.equal(norm(a), norm(b));
    assert.notEqual(norm(a, without(name)), norm(b, without(name)));
  });
}

test('what the normalizations must not hide stays different', () => {
  const differ: [string, string][] = [
    ['* 1 FETCH (FLAGS (\\Seen))', '* 1 FETCH (FLAGS (\\Seen \\Flagged))'],
    ['a1 OK done', 'a1 NO done'],
    ['a1 NO [TRYCREATE] x', 'a1 NO [NONEXISTENT] x'],
    ['* SEARCH 1 2 3', '* SEARCH 1 2'],
    ['* 3 EXISTS', '* 4 EXISTS'],
    ['* 1 FETCH (RFC822.SIZE 100)', '* 1 FETCH (RFC822.SIZE 101)'],
    ['* 1 FETCH (BODY[] "abc")', '* 1 FETCH (BODY[] "abd")'],
    ['* OK [UIDNEXT 5] x', '* OK [UIDNEXT 6] x'],
    ['* CAPABILITY IMAP4rev1 IDLE', '* CAPABILITY IMAP4rev1'],
    ['* LIST () "/" INBOX', '* LIST () "." INBOX'],
  ];
  for (const [a, b] of differ) assert.notEqual(norm(a), norm(b), `${a} vs ${b}`);
});

test('allow-list: line rules, mask rules, comments as reasons, and errors that name the line', () => {
  const rules = parseAllowList(['# capabilities differ', '* CAPABILITY', '', '# UID may be added', 'STORE ~  UID \\d+(?=\\))', 'UID_FETCH ^\\* \\d+ FETCH'].join('\n'), 'allow.txt');
  assert.equal(rules.length, 3);
  assert.equal(rules[0]!.reason, 'capabilities differ');
  assert.equal(rules[1]!.reason, 'UID may be added');
  assert.equal(rules[2]!.command, 'UID FETCH');
  assert.equal(allowedBy(rules, 'LOGIN', '* CAPABILITY IMAP4REV1')?.line, 2);
  assert.equal(allowedBy(rules, 'FETCH', '* 1 FETCH (UID 1)'), undefined);
  assert.equal(allowedBy(rules, 'UID FETCH', '* 1 FETCH (UID 1)')?.line, 6);
  const masks = masksFor(rules, 'STORE');
  assert.equal(masked(masks, '* 1 FETCH (FLAGS (\\Seen) MODSEQ * UID 1)'), masked(masks, '* 1 FETCH (FLAGS (\\Seen) MODSEQ *)'));
  assert.notEqual(masked(masks, '* 1 FETCH (FLAGS (\\Seen) UID 1)'), masked(masks, '* 1 FETCH (FLAGS () UID 1)'));
  const sided = parseAllowList('STORE:target ^\\* \\d+ FETCH', 'b.txt');
  assert.equal(allowedBy(sided, 'STORE', '* 1 FETCH (FLAGS ())', 'target')?.line, 1);
  assert.equal(allowedBy(sided, 'STORE', '* 1 FETCH (FLAGS ())', 'reference'), undefined);
  assert.throws(() => parseAllowList('STORE:both x', 'b.txt'), /b\.txt line 1: the side after ":" is "reference" or "target"/);
  assert.throws(() => parseAllowList('FETCH\n', 'a.txt'), (e: unknown) => e instanceof AllowListError && /a\.txt line 1: expected "COMMAND REGEX"/.test(e.message));
  assert.throws(() => parseAllowList('\n\nFETCH (unclosed\n', 'a.txt'), (e: unknown) => e instanceof AllowListError && /a\.txt line 3: /.test(e.message));
});
