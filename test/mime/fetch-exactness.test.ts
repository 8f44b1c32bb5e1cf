/**
 * Issue 22, items 1–9, over a real socket: the exact bytes of FETCH
 * responses for messages a strict MIME client trips over. Expected bytes
 * follow the RFC 3501 / RFC 9051 grammar and, where the RFCs leave room,
 * what Dovecot 2.3.19 answers for the same appended bytes (docs/mime.md).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Server } from '../../src/index.js';
import type { RawClient } from '../helpers/raw-client.js';
import { rawSession, startServer } from '../helpers/server.js';

const ALT =
  'From: a@example.org\r\nTo: u0@example.org, u1@example.org\r\nSubject: alt\r\nMIME-Version: 1.0\r\n' +
  'Content-Type: multipart/alternative; boundary="b"\r\n\r\n' +
  '--b\r\nContent-Type: text/plain\r\n\r\nhi\r\n--b\r\nContent-Type: text/html\r\n\r\n<p>hi</p>\r\n--b--\r\n';

/** Part 2: a message/rfc822 part whose message is only the blank line before the next delimiter; 3 and 4: headers cut by the delimiter. */
const NESTED =
  'Subject: nested\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\n\r\nfirst\r\n' +
  '--b\r\nContent-Type: message/rfc822\r\n\r\n\r\n' +
  '--b\r\nContent-Type: message/rfc822\r\n\r\nSubject: x\r\n\r\n' +
  '--b\r\nContent-Type: message/rfc822\r\n\r\nSubject: y\r\n--b--\r\n';

const BARE_LF = 'Subject: lf\nFrom: a@example.org\nContent-Type: multipart/mixed; boundary=z\n\n--z\nContent-Type: text/plain\n\nline1\nline2\n--z--\n';

const ADDRESSES = 'From: a@example.org\r\nTo: <>\r\nCc: @\r\nBcc: <alice@example.com\r\nFrom: "C D" <c@example.org>, e@example.org\r\nSubject: dup\r\n\r\nx\r\n';

const BAD_TYPE = 'MIME-Version: 1.0\r\nContent-Type: foo/bar/baz\r\nContent-Disposition: ;filename=d.txt\r\n\r\nabc';

const NO_BOUNDARY = 'Content-Type: multipart/mixed\r\n\r\npre\r\n--\r\nContent-Type: text/html\r\n\r\nA\r\n--\r\n\r\nB\r\n----\r\nepi\r\n';
const EMPTY_BOUNDARY = 'Content-Type: multipart/mixed; boundary=""\r\n\r\npre\r\n--\r\nContent-Type: text/html\r\n\r\nA\r\n--\r\n\r\nB\r\n----\r\nepi\r\n';

function deep(levels: number): string {
  let body = 'Content-Type: text/plain\r\n\r\ninnermost\r\n';
  for (let i = levels; i > 0; i--) body = `Content-Type: multipart/mixed; boundary="d${i}x"\r\n\r\n--d${i}x\r\n${body}\r\n--d${i}x--\r\n`;
  return `Subject: deep\r\nMIME-Version: 1.0\r\n${body}`;
}

const GLOBAL = 'Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: message/global\r\n\r\nSubject: g\r\n\r\ngbody\r\n--b--\r\n';

const MALFORMED = 'From: a@example.org\r\nTo: <>\r\nCc: @\r\nBcc: <alice@example.com\r\n\r\nx\r\n';

const MESSAGES = [ALT, NESTED, BARE_LF, ADDRESSES, BAD_TYPE, NO_BOUNDARY, EMPTY_BOUNDARY, deep(105), GLOBAL, MALFORMED];

let server: Server;
let c: RawClient;

before(async () => {
  let port: number;
  ({ server, port } = await startServer({ storage: { INBOX: { messages: MESSAGES } } }));
  c = await rawSession(port);
  await c.command('EXAMINE INBOX');
});
after(async () => {
  c.close();
  await server.stop();
});

/** The untagged FETCH line of `FETCH n (items)`. */
async function fetch(n: number, items: string): Promise<string> {
  const lines = await c.command(`FETCH ${n} (${items})`);
  assert.match(lines[lines.length - 1]!, /^T\d+ OK/);
  return lines[0]!;
}

describe('issue 22', () => {
  test('1: no SP between sibling parts and between addresses', async () => {
    assert.equal(
      await fetch(1, 'BODY BODYSTRUCTURE'),
      '* 1 FETCH (BODY (("text" "plain" ("charset" "us-ascii") NIL NIL "7bit" 2 0)("text" "html" ("charset" "us-ascii") NIL NIL "7bit" 9 0) "alternative") ' +
        'BODYSTRUCTURE (("text" "plain" ("charset" "us-ascii") NIL NIL "7bit" 2 0 NIL NIL NIL NIL)("text" "html" ("charset" "us-ascii") NIL NIL "7bit" 9 0 NIL NIL NIL NIL) "alternative" ("boundary" "b") NIL NIL NIL))',
    );
    assert.equal(
      await fetch(1, 'ENVELOPE'),
      '* 1 FETCH (ENVELOPE (NIL "alt" ((NIL NIL "a" "example.org")) ((NIL NIL "a" "example.org")) ((NIL NIL "a" "example.org")) ' +
        '((NIL NIL "u0" "example.org")(NIL NIL "u1" "example.org")) NIL NIL NIL NIL))',
    );
  });

  test('2: no blank line that is not in the message', async () => {
    assert.equal(
      await fetch(2, 'BODY.PEEK[2] BODY.PEEK[2.MIME] BODY.PEEK[2.HEADER] BODY.PEEK[2.TEXT]'),
      '* 2 FETCH (BODY[2] {2}\r\n\r\n BODY[2.MIME] {32}\r\nContent-Type: message/rfc822\r\n\r\n BODY[2.HEADER] {0}\r\n BODY[2.TEXT] {0}\r\n)',
    );
    // the blank line before a delimiter is the delimiter's line break: a header without a blank line
    assert.equal(
      await fetch(2, 'BODY.PEEK[3.HEADER] BODY.PEEK[4.HEADER] BODY.PEEK[4]'),
      '* 2 FETCH (BODY[3.HEADER] {12}\r\nSubject: x\r\n BODY[4.HEADER] {10}\r\nSubject: y BODY[4] {12}\r\nSubject: y\r\n)',
    );
    // the top level keeps its blank line
    assert.equal(await fetch(2, 'BODY.PEEK[HEADER]'), '* 2 FETCH (BODY[HEADER] {62}\r\nSubject: nested\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n)');
  });

  test('3: bare LF is served as CRLF, sizes to match; the store keeps the bytes', async () => {
    assert.equal(
      await fetch(3, 'RFC822.SIZE BODY BODY.PEEK[HEADER.FIELDS (SUBJECT)] BODY.PEEK[1] BODY.PEEK[1.MIME]'),
      '* 3 FETCH (RFC822.SIZE 133 BODY (("text" "plain" ("charset" "us-ascii") NIL NIL "7bit" 12 1) "mixed") ' +
        'BODY[HEADER.FIELDS (SUBJECT)] {15}\r\nSubject: lf\r\n\r\n BODY[1] {12}\r\nline1\r\nline2 BODY[1.MIME] {28}\r\nContent-Type: text/plain\r\n\r\n)',
    );
    const whole = await fetch(3, 'BODY.PEEK[]');
    assert.equal(whole, `* 3 FETCH (BODY[] {133}\r\n${BARE_LF.replace(/\n/g, '\r\n')})`);
    assert.equal(await fetch(3, 'RFC822.SIZE'), '* 3 FETCH (RFC822.SIZE 133)'); // the metadata-only path too
    const snap = server.control.snapshot().INBOX!.messages![2]!;
    assert.equal(typeof snap === 'string' ? snap : snap.raw, BARE_LF);
  });

  test('4: every address of every From line', async () => {
    assert.equal(
      await fetch(4, 'ENVELOPE'),
      '* 4 FETCH (ENVELOPE (NIL "dup" ((NIL NIL "a" "example.org")("C D" NIL "c" "example.org")(NIL NIL "e" "example.org")) ' +
        '((NIL NIL "a" "example.org")("C D" NIL "c" "example.org")(NIL NIL "e" "example.org")) ' +
        '((NIL NIL "a" "example.org")("C D" NIL "c" "example.org")(NIL NIL "e" "example.org")) ' +
        '((NIL NIL "MISSING_MAILBOX" "MISSING_DOMAIN")) ((NIL NIL "MISSING_MAILBOX" "MISSING_DOMAIN")) ((NIL NIL "alice" "SYNTAX_ERROR")) NIL NIL))',
    );
  });

  test('5: <>, @ and an unclosed <addr', async () => {
    assert.equal(
      await fetch(10, 'ENVELOPE'),
      '* 10 FETCH (ENVELOPE (NIL NIL ((NIL NIL "a" "example.org")) ((NIL NIL "a" "example.org")) ((NIL NIL "a" "example.org")) ' +
        '((NIL NIL "MISSING_MAILBOX" "MISSING_DOMAIN")) ((NIL NIL "MISSING_MAILBOX" "MISSING_DOMAIN")) ((NIL NIL "alice" "SYNTAX_ERROR")) NIL NIL))',
    );
  });

  test('6: an invalid Content-Type and a disposition without type', async () => {
    assert.equal(await fetch(5, 'BODYSTRUCTURE'), '* 5 FETCH (BODYSTRUCTURE ("" "" NIL NIL NIL "7bit" 3 NIL ("" ("filename" "d.txt")) NIL NIL))');
  });

  test('7: a multipart without a boundary, or with boundary=""', async () => {
    assert.equal(
      await fetch(6, 'BODYSTRUCTURE BODY.PEEK[1] BODY.PEEK[1.MIME]'),
      '* 6 FETCH (BODYSTRUCTURE (("text" "plain" ("charset" "us-ascii") NIL NIL "7bit" 0 0 NIL NIL NIL NIL) "mixed" NIL NIL NIL NIL) BODY[1] {0}\r\n BODY[1.MIME] {0}\r\n)',
    );
    assert.equal(
      await fetch(7, 'BODYSTRUCTURE BODY.PEEK[1] BODY.PEEK[1.MIME] BODY.PEEK[2] BODY.PEEK[2.MIME]'),
      '* 7 FETCH (BODYSTRUCTURE (("text" "html" ("charset" "us-ascii") NIL NIL "7bit" 1 0 NIL NIL NIL NIL)("text" "plain" ("charset" "us-ascii") NIL NIL "7bit" 1 0 NIL NIL NIL NIL) "mixed" ("boundary" "") NIL NIL NIL) ' +
        'BODY[1] {1}\r\nA BODY[1.MIME] {27}\r\nContent-Type: text/html\r\n\r\n BODY[2] {1}\r\nB BODY[2.MIME] {2}\r\n\r\n)',
    );
  });

  test('8: nesting stops at depth 100, the rest is application/octet-stream', async () => {
    const expected = `${'('.repeat(99)}("application" "octet-stream" ("boundary" "d100x") NIL NIL "7bit" 426)${' "mixed")'.repeat(99)}`;
    assert.equal(await fetch(8, 'BODY'), `* 8 FETCH (BODY ${expected})`);
  });

  test('9: message/global is a message in BODYSTRUCTURE as in its sections (RFC 9051)', async () => {
    assert.equal(
      await fetch(9, 'BODYSTRUCTURE BODY.PEEK[1.HEADER] BODY.PEEK[1.TEXT] BODY.PEEK[1.1]'),
      '* 9 FETCH (BODYSTRUCTURE (("message" "global" NIL NIL NIL "7bit" 19 (NIL "g" NIL NIL NIL NIL NIL NIL NIL NIL) ' +
        '("text" "plain" ("charset" "us-ascii") NIL NIL "7bit" 5 0 NIL NIL NIL NIL) 2 NIL NIL NIL NIL) "mixed" ("boundary" "b") NIL NIL NIL) ' +
        'BODY[1.HEADER] {14}\r\nSubject: g\r\n\r\n BODY[1.TEXT] {5}\r\ngbody BODY[1.1] {5}\r\ngbody)',
    );
  });
});
