/**
 * The request header fields the REST router reads (Host, Authorization,
 * Content-Length, Content-Type, Transfer-Encoding), over raw sockets here
 * so the names can be spelled any way: field names
 * are case-insensitive (RFC 9110 §5.1), so is a media type's type/subtype
 * (§8.3.1), a request with more than one Host field is 400 (RFC 9112 §3.2),
 * and a field whose name merely has the same length as one of these is
 * none of them.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startRest, type Rest } from './helpers.js';

interface Answer {
  status: number;
  body: string;
}

/** Sends `data` with `Connection: close` already in it and reads the answer until the server closes. */
function exchange(port: number, data: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => socket.destroy(new Error('no answer within 5 s')), 5000);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('utf8');
      const m = /^HTTP\/1\.1 (\d{3}) /.exec(text);
      if (!m) return reject(new Error(`no HTTP answer: ${JSON.stringify(text)}`));
      resolve({ status: Number(m[1]), body: text.slice(text.indexOf('\r\n\r\n') + 4) });
    });
    socket.write(data);
  });
}

const message = JSON.stringify({ raw: 'From: a@example.com\r\nSubject: header fields\r\n\r\nhello\r\n' });

describe('REST request header fields', () => {
  let r: Rest;
  let withToken: Rest;
  before(async () => {
    r = await startRest();
    withToken = await startRest({ rest: { port: 0, token: 't0k' } });
  });
  after(async () => {
    await r.server.stop();
    await withToken.server.stop();
  });

  const count = (): number => r.server.control.getMailbox('INBOX').messages;

  test('field names in any case: Host, Content-Type and Content-Length', async () => {
    const before = count();
    for (const [host, type, length] of [
      ['host', 'content-type', 'content-length'],
      ['HOST', 'CONTENT-TYPE', 'CONTENT-LENGTH'],
      ['hOsT', 'Content-type', 'content-Length'],
    ]) {
      const answer = await exchange(
        r.restPort,
        `POST /v1/mailboxes/INBOX/messages HTTP/1.1\r\n${host}: localhost\r\n${type}: application/json\r\n${length}: ${Buffer.byteLength(message)}\r\nConnection: close\r\n\r\n${message}`,
      );
      assert.equal(answer.status, 201, `${host}/${type}/${length}: ${answer.body}`);
      assert.equal(typeof JSON.parse(answer.body).uid, 'number');
    }
    assert.equal(count(), before + 3);
  });

  test('a chunked body, the field named in capitals', async () => {
    const before = count();
    const half = Math.floor(message.length / 2);
    const chunk = (s: string): string => `${Buffer.byteLength(s).toString(16)}\r\n${s}\r\n`;
    const answer = await exchange(
      r.restPort,
      `POST /v1/mailboxes/INBOX/messages HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTRANSFER-ENCODING: chunked\r\nConnection: close\r\n\r\n${chunk(message.slice(0, half))}${chunk(message.slice(half))}0\r\n\r\n`,
    );
    assert.equal(answer.status, 201, answer.body);
    assert.equal(count(), before + 1);
  });

  test('the media type is case-insensitive and may carry parameters; any other type is 415', async () => {
    const post = (type: string | null): Promise<Answer> =>
      exchange(
        r.restPort,
        `POST /v1/mailboxes/INBOX/messages HTTP/1.1\r\nHost: localhost\r\n${type === null ? '' : `Content-Type: ${type}\r\n`}Content-Length: ${Buffer.byteLength(message)}\r\nConnection: close\r\n\r\n${message}`,
      );
    for (const type of ['application/json', 'Application/JSON', 'application/json; charset=utf-8', 'APPLICATION/JSON;charset=UTF-8']) {
      const answer = await post(type);
      assert.equal(answer.status, 201, `${type}: ${answer.body}`);
    }
    for (const type of [null, 'text/plain', 'application/jsonx', 'application/x-www-form-urlencoded']) {
      const answer = await post(type);
      assert.equal(answer.status, 415, `${type}: ${answer.body}`);
      assert.equal(JSON.parse(answer.body).error.code, 'UNSUPPORTED');
    }
  });

  test('Authorization in any case; a field of the same length with another name is not it', async () => {
    const get = (field: string): Promise<Answer> =>
      exchange(withToken.restPort, `GET /v1/health HTTP/1.1\r\nHost: localhost\r\n${field}\r\nConnection: close\r\n\r\n`);
    for (const field of ['Authorization: Bearer t0k', 'authorization: Bearer t0k', 'AUTHORIZATION: bearer t0k']) {
      const answer = await get(field);
      assert.equal(answer.status, 200, `${field}: ${answer.body}`);
    }
    // 13 characters like "authorization", and 4 like "host": neither stands in for them.
    for (const field of ['X-Authorizati: Bearer t0k', 'Authorizatio1: Bearer t0k', 'X-Api-Token-1: Bearer t0k']) {
      const answer = await get(field);
      assert.equal(answer.status, 401, `${field}: ${answer.body}`);
      assert.equal(JSON.parse(answer.body).error.code, 'UNAUTHORIZED');
    }
    const hostLike = await exchange(r.restPort, `GET /v1/health HTTP/1.1\r\nHoss: localhost\r\nConnection: close\r\n\r\n`);
    assert.equal(hostLike.status, 400, hostLike.body);
    assert.match(JSON.parse(hostLike.body).error.message, /Missing Host/);
  });

  test('two Host fields, spelled differently, are 400', async () => {
    const answer = await exchange(r.restPort, `GET /v1/health HTTP/1.1\r\nHost: localhost\r\nHOST: localhost\r\nConnection: close\r\n\r\n`);
    assert.equal(answer.status, 400, answer.body);
    assert.match(JSON.parse(answer.body).error.message, /more than one Host/i);
  });
});
