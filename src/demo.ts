import type { ServerOptions } from './options/types.js';

/** The demo configuration of `npm start`: a few users, mailboxes and messages, every plugin. */
export function demoOptions(): ServerOptions {
  const message = (from: string, subject: string, body: string, date: string): string =>
    `From: ${from}\r\nTo: Test User <testuser@example.com>\r\nSubject: ${subject}\r\nDate: ${date}\r\nMessage-ID: <${subject.replace(/\W+/g, '.')}@example.com>\r\n\r\n${body}\r\n`;
  return {
    plugins: 'all',
    users: {
      testuser: { password: 'testpass', xoauth2: { accessToken: 'testtoken' } },
      alice: { password: 'alicepass' },
    },
    storage: {
      INBOX: {
        messages: [
          { raw: message('Alice <alice@example.com>', 'Welcome to Rookery', 'Hello from the demo store.', 'Mon, 2 Nov 2026 10:00:00 +0000'), flags: ['\\Seen'], internaldate: '02-Nov-2026 10:00:00 +0000' },
          { raw: message('Bob <bob@example.com>', 'Meeting tomorrow', 'Shall we meet at ten?', 'Tue, 3 Nov 2026 09:30:00 +0100'), internaldate: '03-Nov-2026 09:30:00 +0100' },
        ],
      },
      '': {
        separator: '/',
        folders: {
          Drafts: { 'special-use': '\\Drafts' },
          Sent: { 'special-use': '\\Sent' },
          Trash: { 'special-use': '\\Trash' },
          Projects: { folders: { Rookery: {} } },
        },
      },
    },
  };
}
