/** Commands of the everyday extensions: IDLE, NAMESPACE, UNSELECT, ENABLE, ID. */
import { ANY_STATE, AUTHENTICATED, SELECTED, bad, ok, type CommandSpec } from '../command.js';
import { atom, type ImapValue } from '../wire/values.js';

/** RFC 2177: updates go out at once until the client sends DONE. */
export const idle: CommandSpec = {
  name: 'IDLE',
  states: AUTHENTICATED,
  async run({ session, args }) {
    args.end();
    session.write(Buffer.from('+ idling\r\n'));
    session.idling = true;
    session.waiting('IDLE');
    session.flushUpdates(true);
    let line: Buffer | null;
    try {
      line = await session.readLine();
    } finally {
      session.idling = false;
    }
    if (line === null) return ok('IDLE ended by closed connection');
    if (line.toString('latin1').trim().toUpperCase() !== 'DONE') return bad('Expected DONE');
    return ok('Idle completed');
  },
};

/** RFC 2342: personal, other users' and shared namespaces of the storage option. */
export const namespace: CommandSpec = {
  name: 'NAMESPACE',
  states: AUTHENTICATED,
  run({ session, args }) {
    args.end();
    const groups: ImapValue[] = (['personal', 'user', 'shared'] as const).map((type) => {
      const list = session.server.store.namespaces.filter((ns) => ns.type === type).map((ns) => [ns.prefix, ns.separator]);
      return list.length ? list : null;
    });
    session.untagged(atom('NAMESPACE'), ...groups);
    return ok('Namespace completed');
  },
};

/** RFC 3691: leave the mailbox without expunging. */
export const unselect: CommandSpec = {
  name: 'UNSELECT',
  states: SELECTED,
  run({ session, args }) {
    args.end();
    session.unselect();
    return ok('Unselect completed');
  },
};

/** Extensions a client may ENABLE (RFC 5161), once their plugin is loaded. */
const ENABLEABLE = new Set(['CONDSTORE', 'QRESYNC', 'UTF8=ACCEPT']);

export const enable: CommandSpec = {
  name: 'ENABLE',
  states: AUTHENTICATED,
  run({ session, args }) {
    const wanted: string[] = [];
    while (!args.atEnd()) {
      wanted.push(args.atom().toUpperCase());
      if (!args.atEnd()) args.sp();
    }
    if (wanted.length === 0) return bad('ENABLE needs at least one capability');
    const caps = new Set(session.capabilities());
    const enabled: string[] = [];
    for (const cap of wanted) {
      if (ENABLEABLE.has(cap) && caps.has(cap) && !session.enabled.has(cap)) {
        session.enabled.add(cap);
        enabled.push(cap);
      }
    }
    session.untagged(atom('ENABLED'), ...enabled.map(atom));
    return ok('Enabled');
  },
};

/** RFC 2971: the server's identity; the client's is accepted and ignored. */
export const id: CommandSpec = {
  name: 'ID',
  states: ANY_STATE,
  run({ session, args }) {
    if (args.peekChar() === '(') args.list(() => args.nstring());
    else args.keyword('NIL');
    args.end();
    session.untagged(atom('ID'), ['name', 'Rookery', 'vendor', 'Rookery', 'version', '5.0.0']);
    return ok('ID completed');
  },
};
