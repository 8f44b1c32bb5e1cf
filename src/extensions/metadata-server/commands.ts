/**
 * GETMETADATA and SETMETADATA (RFC 5464 §4.2, §4.3; options before the
 * mailbox name as the verified erratum 2785 and the ABNF say).
 */
import type { Mailbox } from '../../store/mailbox.js';
import { AUTHENTICATED, no, ok, type CommandSpec } from '../../imap/command.js';
import { InvalidName, mailboxArg } from '../../imap/commands/mailboxes.js';
import { ParseError, type ArgParser } from '../../imap/parser.js';
import { accessRefusal } from '../../imap/protocol.js';
import type { ImapSession } from '../../imap/session.js';
import { astring, atom, literal, type ImapValue } from '../../imap/wire/values.js';
import type { FieldHolder } from '../../store/fields.js';
import { entryNameProblem, fold, isPrivate, lookup, type Depth, type Entry } from './entries.js';
import type { MetadataState } from './state.js';

/** An entry name argument (astring); a malformed one makes the command BAD. */
function entryArg(args: ArgParser, root: boolean): string {
  const name = args.astring().toString('latin1');
  const problem = entryNameProblem(name, root);
  if (problem) throw new ParseError(`Invalid entry name: ${problem}`);
  return name;
}

/** An entry name in a response (printable ASCII): bare when it is an atom (as the RFC's examples), else quoted. */
export const entryValue = (name: string): ImapValue => astring(name);

/** A value in a response: quoted or a literal, literal8 when it holds NUL (RFC 5464 §5 `value = nstring / literal8`). */
const valueValue = (value: Buffer): ImapValue => (value.includes(0) ? literal(value, true) : value);

type Resolved = { holder: FieldHolder; path: string } | { refusal: ReturnType<typeof no> };

/** The entry holder a command names: the server for `""`, else an existing mailbox the user may use. */
function resolve(session: ImapSession, state: MetadataState, path: string | InvalidName, right: 'r' | 'w', command: string): Resolved {
  if (path instanceof InvalidName) return { refusal: path.no('NONEXISTENT') };
  if (path === '') return { holder: state.holder(''), path };
  if (!state.mailboxEntries) {
    return { refusal: no('This server has server entries only (METADATA-SERVER): use the mailbox name ""') };
  }
  const mailbox = session.mailboxes.get(path);
  if (!mailbox) return { refusal: no(`Mailbox doesn't exist: ${path}`, 'NONEXISTENT') };
  const refused = accessRefusal(session, 'r', mailbox, mailbox.path, command) ?? (right === 'w' ? accessRefusal(session, 'w', mailbox, mailbox.path, command) : null);
  if (refused) return { refusal: refused };
  return { holder: mailbox, path: session.mailboxes.nameOf(mailbox) };
}

/** The state of the server a session belongs to. */
const stateOf = (session: ImapSession): MetadataState => session.server.extension<MetadataState>('METADATA-SERVER')!;

export const metadataCommands: readonly CommandSpec[] = (() => {
  const getmetadata: CommandSpec = {
    name: 'GETMETADATA',
    states: AUTHENTICATED,
    run({ session, args, name }) {
      let maxSize: number | null = null;
      let depth: Depth = 0;
      if (args.peekChar() === '(') {
        const given = new Set<string>();
        args.list(
          () => {
            const option = args.atom().toUpperCase();
            if (given.has(option)) throw new ParseError(`GETMETADATA option ${option} given twice`);
            given.add(option);
            if (option === 'MAXSIZE') {
              args.sp();
              maxSize = args.number();
            } else if (option === 'DEPTH') {
              args.sp();
              const value = args.atom().toLowerCase();
              if (value === '0') depth = 0;
              else if (value === '1') depth = 1;
              else if (value === 'infinity') depth = Infinity;
              else throw new ParseError('DEPTH must be 0, 1 or infinity');
            } else {
              throw new ParseError(`Unknown GETMETADATA option ${option.slice(0, 40)} (MAXSIZE and DEPTH are known; they come before the mailbox name)`);
            }
          },
          { allowEmpty: false },
        );
        args.sp();
      }
      const path = mailboxArg(args);
      args.sp();
      const names = args.peekChar() === '(' ? args.list(() => entryArg(args, true), { allowEmpty: false }) : [entryArg(args, true)];
      args.end();

      const s = stateOf(session);
      const target = resolve(session, s, path, 'r', name);
      if ('refusal' in target) return target.refusal;
      const entries = s.read(target.holder);
      const sent = new Set<string>();
      const out: ImapValue[] = [];
      let longest = 0;
      for (const requested of names) {
        for (const entry of lookup(entries, requested, depth) as Entry[]) {
          const key = fold(entry.name);
          if (sent.has(key)) continue;
          sent.add(key);
          if (!s.limits.private && isPrivate(entry.name)) continue;
          if (maxSize !== null && entry.value.length > maxSize) {
            longest = Math.max(longest, entry.value.length);
            continue;
          }
          out.push(entryValue(entry.name), valueValue(entry.value));
        }
      }
      if (out.length > 0) session.untagged(atom('METADATA'), session.mailboxName(target.path), out);
      return longest > 0 ? ok('GETMETADATA complete', `METADATA LONGENTRIES ${longest}`) : ok('GETMETADATA complete');
    },
  };

  const setmetadata: CommandSpec = {
    name: 'SETMETADATA',
    states: AUTHENTICATED,
    run({ session, args, name }) {
      const path = mailboxArg(args);
      args.sp();
      const items = args.list(
        () => {
          const entry = entryArg(args, false);
          args.sp();
          const value = args.isAtLiteral() ? args.anyLiteral().data : args.nstring();
          return { entry, value };
        },
        { allowEmpty: false },
      );
      args.end();

      const s = stateOf(session);
      const shared = items.some((i) => !isPrivate(i.entry));
      const target = resolve(session, s, path, shared ? 'w' : 'r', name);
      if ('refusal' in target) return target.refusal;
      const limits = s.limits;
      if (!limits.private && items.some((i) => isPrivate(i.entry))) {
        return no('Private entries are not supported by this server', 'METADATA NOPRIVATE');
      }
      if (items.some((i) => i.value !== null && i.value.length > limits.maxSize)) {
        return no(`Value too large: the largest value this server accepts is ${limits.maxSize} octets`, `METADATA MAXSIZE ${limits.maxSize}`);
      }
      const entries = s.read(target.holder);
      const before = entries.size;
      for (const { entry, value } of items) {
        if (value === null) entries.delete(fold(entry));
        else entries.set(fold(entry), { name: entry, value: Buffer.from(value) });
      }
      if (entries.size > limits.maxEntries && entries.size > before) {
        return no(`Too many entries: at most ${limits.maxEntries} per mailbox (and for the server)`, 'METADATA TOOMANY');
      }
      s.write(target.holder, entries);
      const names = items.map((i) => i.entry);
      s.changed(target.path === '' ? { path: '', entries: names, origin: session.id } : { path: target.path, mailbox: target.holder as Mailbox, entries: names, origin: session.id });
      return ok('SETMETADATA complete');
    },
  };

  return [getmetadata, setmetadata];
})();
