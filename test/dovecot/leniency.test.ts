/**
 * The dovecot preset's leniency against the real Dovecot: commands outside
 * RFC 3501's grammar that Dovecot 2.3 nevertheless takes (8-bit octets in
 * quoted strings without UTF8=ACCEPT, any character escaped by a
 * backslash, runs of spaces between arguments, inside list parentheses and
 * at the end of the line, a sequence set that ends in a comma), and some it refuses all the same (8-bit atoms,
 * extra spaces around the tag and command name, 8-bit mailbox names), are
 * sent byte for byte to Rookery with `preset: 'dovecot'` and to a
 * throwaway Dovecot over the same messages: both must answer with the same
 * status and the same SEARCH/FETCH data. The default (strict) server must
 * refuse the lenient ones with BAD.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RawClient } from '../helpers/raw-client.js';
import { startServer } from '../helpers/server.js';
import { findDovecot, startDovecot } from './dovecot.js';

const MESSAGES = [
  'From: a@b\r\nSubject: =?UTF-8?Q?Gr=C3=BC=C3=9Fe?= aus Wien\r\n\r\nhallo\r\n',
  'From: a@b\r\nSubject: Grüße\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nGrüße body\r\n',
  'From: a@b\r\nSubject: =?ISO-8859-1?Q?Gr=FC=DFe?=\r\n\r\nx\r\n',
  'From: a@b\r\nSubject: plain\r\n\r\nnothing\r\n',
].map((s) => Buffer.from(s, 'utf8'));

/** [command (UTF-8, `\xff` a raw 0xFF byte), lenient: beyond RFC 3501's grammar]. */
const COMMANDS: [string, boolean][] = [
  ['UID SEARCH CHARSET UTF-8 SUBJECT "Grüße"', true],
  ['SEARCH SUBJECT "Grüße"', true],
  ['SEARCH CHARSET UTF-8 BODY "Grüße"', true],
  ['SEARCH CHARSET US-ASCII SUBJECT "Grüße"', true],
  ['SEARCH HEADER "Subject" "Grüße"', true],
  ['SEARCH TEXT "Grüße"', true],
  ['SEARCH SUBJECT "a\\b"', true],
  ['SEARCH CHARSET UTF-8 SUBJECT "Gr\\üße"', true],
  ['SEARCH SUBJECT "\\G\\r\\ü\\ß\\e"', true],
  ['NOOP  ', true],
  ['FETCH 1 (FLAGS) ', true],
  ['FETCH 1  FLAGS', true],
  ['FETCH  1 FLAGS', true],
  ['FETCH 1 (FLAGS  UID)', true],
  ['FETCH 1 ( FLAGS)', true],
  ['FETCH 1 (FLAGS )', true],
  ['FETCH 1 (UID  FLAGS BODY.PEEK[HEADER.FIELDS ( SUBJECT  FROM )])', true],
  ['SEARCH UID 1:* ', true],
  ['SEARCH  ALL', true],
  ['SEARCH ALL  SEEN', true],
  ['SEARCH OR  SEEN  UNSEEN', true],
  ['SEARCH ( SEEN  UNSEEN )', true],
  ['SEARCH CHARSET  UTF-8  ALL', true],
  ['STATUS INBOX ( MESSAGES  UIDNEXT )', true],
  ['STORE 1 +FLAGS.SILENT (\\Seen )', true],
  ['STORE 1  +FLAGS.SILENT ( \\Seen  \\Flagged )', true],
  ['LIST "" "Grü*"', true],
  ['FETCH 1, FLAGS', true],
  ['SEARCH 1,2,', true],
  ['UID FETCH 1, FLAGS', true],
  ['SEARCH UID 1,', true],
  ['SEARCH 1,,2', false],
  ['SEARCH ,1', false],
  // Refused by both.
  ['SEARCH CHARSET UTF-8 SUBJECT Grüße', false],
  ['STORE 1 +FLAGS (Grüße)', false],
  ['UID  FETCH 1 FLAGS', false],
  [' NOOP', false],
  ['SEARCH SUBJECT "a\\', false],
  ['SEARCH SUBJECT "Gr\\xff"', false],
  ['SEARCH ()', false],
  ['CREATE "Grüße"', false],
  ['STATUS "Grüße" (MESSAGES)', false],
];

async function load(port: number, user: string, password: string): Promise<RawClient> {
  const c = await RawClient.connect(port);
  await c.line();
  c.write(`L1 LOGIN ${user} ${password}\r\n`);
  await c.until('L1');
  let n = 0;
  for (const m of MESSAGES) {
    const tag = `A${++n}`;
    c.write(`${tag} APPEND INBOX {${m.length}}\r\n`);
    await c.line();
    c.write(Buffer.concat([m, Buffer.from('\r\n')]));
    await c.until(tag);
  }
  c.write('S1 SELECT INBOX\r\n');
  await c.until('S1');
  return c;
}

const bytes = (command: string): Buffer => {
  const parts = command.split('\\xff');
  return Buffer.concat(parts.flatMap((p, i) => (i === 0 ? [Buffer.from(p)] : [Buffer.from([0xff]), Buffer.from(p)])));
};
const status = (lines: string[]): string => lines.at(-1)!.split(' ')[1]!;
/**
 * SEARCH and FETCH data; STATUS without its mailbox name's quoting (Dovecot sends an atom), FLAGS in one
 * order (Dovecot lists system flags in its own order; a flag list is a set).
 */
const data = (lines: string[]): string[] =>
  lines
    .filter((l) => /^\* (SEARCH|\d+ FETCH|STATUS)\b/.test(l))
    .map((l) => l.replace(/^\* STATUS "INBOX"/, '* STATUS INBOX').replace(/FLAGS \(([^)]*)\)/g, (_, f: string) => `FLAGS (${f.split(' ').sort().join(' ')})`));

test('the dovecot preset takes what Dovecot 2.3 takes beyond the grammar, and refuses what it refuses; the default server is strict', { timeout: 60_000 }, async (t) => {
  if (findDovecot() === null) {
    t.skip('dovecot not installed (Debian: apt-get install dovecot-imapd)');
    return;
  }
  const dovecot = (await startDovecot())!;
  const lenient = await startServer({ preset: 'dovecot' });
  const strict = await startServer({});
  try {
    const [rook, dove, plain] = await Promise.all([load(lenient.port, 'testuser', 'testpass'), load(dovecot.port, 'u', 'pass'), load(strict.port, 'testuser', 'testpass')]);
    let n = 0;
    for (const [command, beyond] of COMMANDS) {
      const tag = `C${++n}`;
      const line = Buffer.concat([Buffer.from(`${tag} `), bytes(command), Buffer.from('\r\n')]);
      for (const c of [rook, dove, plain]) c.write(line);
      const [mine, theirs, strictly] = await Promise.all([rook.until(tag), dove.until(tag), plain.until(tag)]);
      assert.equal(status(mine), status(theirs), `${command}: ${mine.join(' | ')} / Dovecot: ${theirs.join(' | ')}`);
      assert.deepEqual(data(mine), data(theirs), command);
      if (beyond) {
        assert.equal(status(theirs), 'OK', command);
        assert.equal(status(strictly), 'BAD', `strict: ${command}`);
      } else assert.notEqual(status(theirs), 'OK', command);
    }
    for (const c of [rook, dove, plain]) c.close();
  } finally {
    await lenient.server.stop();
    await strict.server.stop();
    await dovecot.stop();
  }
});
