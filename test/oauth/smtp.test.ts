/**
 * SMTP AUTH XOAUTH2 asks the same token check as IMAP and POP3
 * (src/auth/tokens.ts): nodemailer sends with a token the token service
 * issued, and is refused (535) once the token is revoked.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import nodemailer from 'nodemailer';
import { createServer } from '../../src/index.js';

test('nodemailer sends over SMTP with an issued token; a revoked one gets 535', { timeout: 20_000 }, async () => {
  const server = createServer({ port: 0, smtp: { port: 0, auth: true } });
  const { smtp } = await server.start();
  try {
    const t = server.control.oauth.issue('testuser');
    const send = (accessToken: string) =>
      nodemailer
        .createTransport({ host: '127.0.0.1', port: smtp!.port, ignoreTLS: true, auth: { type: 'OAuth2', user: 'testuser', accessToken } })
        .sendMail({ from: 'alice@example.com', to: 'testuser@example.com', subject: 'Token mail', text: 'x' });
    await send(t.access_token);
    assert.equal(server.control.listMessages('INBOX').length, 1);
    server.control.oauth.revokeGrant(t.grant);
    await assert.rejects(send(t.access_token), (err: { responseCode?: number }) => err.responseCode === 535);
    const rejected = await server.waitFor('oauth', { type: 'rejected' }, { since: 0, timeout: 1000 });
    assert.match(String(rejected.data.reason), /revoked/);
  } finally {
    await server.stop();
  }
});
