/** IDLE (RFC 2177): updates go out at once until the client sends DONE. */
import { AUTHENTICATED, bad, ok, type CommandResult, type CommandSpec } from '../../imap/command.js';
import type { ImapSession } from '../../imap/session.js';
import type { Extension } from '../extension.js';
import { always } from '../shared.js';

export const idleCommand: CommandSpec = {
  name: 'IDLE',
  states: AUTHENTICATED,
  // Not async itself: a suspended async function keeps its arguments (the parsed command and its
  // bytes) for as long as the client idles, and idle sessions are many (issue 20's budget per session).
  run({ session, args }) {
    args.end();
    return idleUntilDone(session);
  },
};

async function idleUntilDone(session: ImapSession): Promise<CommandResult> {
  session.continueRequest('idling');
  session.idling = true;
  session.waiting('IDLE');
  session.flushUpdates(true);
  // What extensions owe the client (NOTIFY) goes out while it idles (RFC 5465 §4).
  session.wakeUnsolicited();
  let line: Buffer | null;
  try {
    line = await session.readLine();
  } finally {
    session.idling = false;
  }
  if (line === null) return ok('IDLE ended by closed connection');
  if (line.toString('latin1').trim().toUpperCase() !== 'DONE') return bad('Expected DONE');
  return ok('Idle completed');
}

export const extension: Extension = { name: 'IDLE', capabilities: always('IDLE'), commands: [idleCommand], produces: ['idling'] };
