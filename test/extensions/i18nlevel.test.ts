/**
 * I18NLEVEL=1 (RFC 5255 §4.3) over real sockets: the capability, and
 * SEARCH's substring keys matching under i;unicode-casemap (RFC 5051 §2:
 * titlecase each character, then NFKD) after MIME decoding, as §4.2 and
 * §4.6 ask. Each expectation follows from those two steps applied by hand
 * to the test's own strings.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Server } from '../../src/index.js';
import type { RawClient } from '../helpers/raw-client.js';
import { rawSession, startServer } from '../helpers/server.js';

const encoded = (text: string): string => `=?UTF-8?B?${Buffer.from(text, 'utf8').toString('base64')}?=`;

function message(subject: string, body: string): string {
  return (
    `From: a@example.com\r\nTo: b@example.com\r\nSubject: ${encoded(subject)}\r\nMIME-Version: 1.0\r\n` +
    `Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n${Buffer.from(body, 'utf8').toString('base64')}\r\n`
  );
}

let server: Server;
let c: RawClient;

before(async () => {
  let port: number;
  ({ server, port } = await startServer({
    plugins: 'all',
    storage: {
      INBOX: {
        messages: [
          // 1: "Grüße" with ü decomposed (u + U+0308 COMBINING DIAERESIS), as some mailers send it.
          { raw: message('Gru\u0308ße aus Köln', 'plain body') },
          // 2: full-width Latin letters; NFKD maps them to ASCII.
          { raw: message('ＲＯＯＫＥＲＹ weekly', 'nothing') },
          // 3: Greek with final sigma; titlecase maps σ and ς to Σ.
          { raw: message('ΣΊΣΥΦΟΣ', 'Ο μύθος του Σισύφου') },
          // 4: precomposed ü in the body.
          { raw: message('other', 'Schöne Grüße') },
        ],
      },
    },
  }));
  c = await rawSession(port);
  await c.command('SELECT INBOX');
});
after(async () => {
  c.close();
  await server.stop();
});

async function search(criteria: string): Promise<number[]> {
  const lines = await c.command(`SEARCH CHARSET UTF-8 ${criteria}`);
  assert.match(lines[lines.length - 1]!, /^T\d+ OK/, lines.join('\n'));
  const line = lines.find((l) => l.startsWith('* SEARCH'))!;
  return line.slice('* SEARCH'.length).trim().split(' ').filter(Boolean).map(Number);
}

/** A UTF-8 search string as a literal, since a quoted string may not carry 8-bit text. */
function lit(text: string): string {
  return `{${Buffer.byteLength(text, 'utf8')}+}\r\n${text}`;
}

test('I18NLEVEL=1 is advertised', async () => {
  const caps = (await c.command('CAPABILITY'))[0]!.split(' ');
  assert.ok(caps.includes('I18NLEVEL=1'), caps.join(' '));
});

test('canonically equivalent text matches: precomposed ü finds the decomposed one and back', async () => {
  // NFKD of "ü" (U+00FC) is "u" + U+0308, the form message 1 holds; titlecase makes both "Ü"-based.
  assert.deepEqual(await search(`SUBJECT ${lit('grüße')}`), [1]);
  assert.deepEqual(await search(`TEXT ${lit('GRÜSSE')}`), []); // ß has no one-character titlecase: it stays ß
  assert.deepEqual(await search(`TEXT ${lit('gru\u0308ße')}`), [1, 4]);
  assert.deepEqual(await search(`BODY ${lit('grüße')}`), [4]);
});

test('compatibility forms match their plain letters (NFKD), in any case', async () => {
  assert.deepEqual(await search('SUBJECT rookery'), [2]);
  assert.deepEqual(await search(`SUBJECT ${lit('ｒｏｏｋ')}`), [2]);
});

test('Greek: final and medial sigma and the accented iota match across case', async () => {
  assert.deepEqual(await search(`SUBJECT ${lit('σίσυφος')}`), [3]);
  assert.deepEqual(await search(`BODY ${lit('ΣΙΣΎΦΟΥ')}`), [3]);
  // NFKD splits ί into ι + U+0301: the unaccented letters are a substring too (RFC 4790 substring on the mapped text).
  assert.deepEqual(await search(`SUBJECT ${lit('ΣΙ')}`), [3]);
});
