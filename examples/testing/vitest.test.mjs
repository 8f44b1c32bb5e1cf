// A vitest file using rookery/testing: run it with `npx vitest run vitest.test.mjs`.
import { expect, test } from 'vitest';
import { ImapFlow } from 'imapflow';
import { useRookery } from 'rookery/testing';

// One call: a server on free ports before the tests, a reset before each, a stop after.
const rookery = useRookery({ plugins: 'all', rest: {} });

test('a message added through the control API is fetched with imapflow', async () => {
  rookery.control.addMessage('INBOX', { raw: 'Subject: Welcome\r\n\r\nHello from Rookery\r\n' });
  const client = new ImapFlow(rookery.imapflow());
  await client.connect();
  await client.mailboxOpen('INBOX');
  const message = await client.fetchOne('*', { envelope: true });
  expect(message.envelope.subject).toBe('Welcome');
  await client.messageFlagsAdd('1', ['\\Seen']);
  await client.logout();
  // What the client did is visible on the server side.
  expect(rookery.control.listMessages('INBOX')[0].flags).toEqual(['\\Seen']);
});

test('each test starts from the options again (the reset hook)', async () => {
  expect(rookery.control.listMessages('INBOX').length).toBe(0);
  // The REST API is on a free port too.
  const response = await fetch(`${rookery.restUrl}/mailboxes/INBOX`);
  expect((await response.json()).messages).toBe(0);
});

test('a new message shows up in an IDLE session', async () => {
  const client = new ImapFlow(rookery.imapflow());
  await client.connect();
  await client.mailboxOpen('INBOX');
  const idling = client.idle();
  while (!client.idling) await new Promise((resolve) => setTimeout(resolve, 10));
  const seen = new Promise((resolve) => client.on('exists', resolve));
  rookery.control.addMessage('INBOX', { raw: 'Subject: Live\r\n\r\nnew mail\r\n' });
  const update = await seen;
  expect(update.count).toBe(1);
  await client.logout();
  await idling;
});
