/**
 * The arguments of NOTIFY (RFC 5465 §8): `NOTIFY NONE` or `NOTIFY SET
 * [STATUS] event-group *(SP event-group)`, and the rules on which events go
 * together (§5, §6.1). Syntax errors and broken rules are BAD (ParseError);
 * events the server does not support are collected for `NO [BADEVENT]`.
 *
 * §5 words its pairing rules (MessageNew with MessageExpunge; FlagChange and
 * AnnotationChange with both) without naming a filter, but the RFC's own
 * examples watch other mailboxes with MessageNew alone (§3.1 `(subtree Lists
 * MessageNew)`, `(mailboxes misc MessageNew)`): the rules keep sequence
 * numbers meaningful, which matters only where EXISTS and EXPUNGE are sent,
 * the selected mailbox. So they hold for `selected` and `selected-delayed`,
 * as in Dovecot; another mailbox may watch any message event alone. The
 * ABNF's note that MessageNew's fetch-att list goes only with those two
 * filters is kept (BAD elsewhere, as in Dovecot).
 */
import type { ArgParser, FetchOptions } from '../../imap/parser.js';
import { ParseError } from '../../imap/parser.js';
import type { FetchAttribute } from '../../imap/syntax.js';

export type EventName =
  | 'MessageNew'
  | 'MessageExpunge'
  | 'FlagChange'
  | 'AnnotationChange'
  | 'MailboxName'
  | 'SubscriptionChange'
  | 'MailboxMetadataChange'
  | 'ServerMetadataChange';

/** The events of RFC 5465 by upper-case name, in the RFC's order. */
const KNOWN = new Map<string, EventName>(
  (
    [
      'MessageNew',
      'MessageExpunge',
      'FlagChange',
      'AnnotationChange',
      'MailboxName',
      'SubscriptionChange',
      'MailboxMetadataChange',
      'ServerMetadataChange',
    ] as const
  ).map((name) => [name.toUpperCase(), name]),
);

/** Events about messages: the only ones `selected` and `selected-delayed` take (§6.1). */
export const MESSAGE_EVENTS: ReadonlySet<EventName> = new Set(['MessageNew', 'MessageExpunge', 'FlagChange', 'AnnotationChange']);

export type Filter =
  | { kind: 'selected' | 'selected-delayed' | 'inboxes' | 'personal' | 'subscribed' }
  | { kind: 'subtree' | 'mailboxes'; names: string[] };

export interface EventGroup {
  filter: Filter;
  /** Empty for `NONE`. */
  events: ReadonlySet<EventName>;
  /** MessageNew's FETCH attributes, or null. */
  fetch: FetchAttribute[] | null;
}

export type NotifyRequest =
  | { kind: 'none' }
  | {
      kind: 'set';
      status: boolean;
      groups: EventGroup[];
      /** Event names given that are not in `supported` (atoms as sent), for `NO [BADEVENT]`. */
      unsupported: string[];
    };

/**
 * Reads the arguments after `NOTIFY SP`. `supported` is the set of events
 * this server delivers; `fetchOptions` are FETCH's (the items extensions add).
 */
export function parseNotify(args: ArgParser, supported: ReadonlySet<EventName>, fetchOptions: FetchOptions): NotifyRequest {
  if (args.tryKeyword('NONE')) {
    args.end();
    return { kind: 'none' };
  }
  args.keyword('SET');
  args.sp();
  const status = args.tryKeyword('STATUS');
  if (status) args.sp();
  const groups: EventGroup[] = [];
  const unsupported: string[] = [];
  for (;;) {
    groups.push(eventGroup(args, supported, unsupported, fetchOptions));
    if (args.atEnd()) break;
    args.sp();
  }
  const selectedGroups = groups.filter((g) => g.filter.kind === 'selected' || g.filter.kind === 'selected-delayed');
  if (selectedGroups.length > 1) throw new ParseError('Only one of selected and selected-delayed may be given (RFC 5465 section 6.1)');
  return { kind: 'set', status, groups, unsupported };
}

function eventGroup(args: ArgParser, supported: ReadonlySet<EventName>, unsupported: string[], fetchOptions: FetchOptions): EventGroup {
  args.char('(');
  const filter = filterMailboxes(args);
  args.sp();
  const events = new Set<EventName>();
  let fetch: FetchAttribute[] | null = null;
  if (!args.tryKeyword('NONE')) {
    args.char('(', 'Expected ( or NONE');
    for (;;) {
      const name = args.atom();
      const known = KNOWN.get(name.toUpperCase());
      let spaced = false;
      if (known === 'MessageNew' && args.trySp()) {
        // `MessageNew (fetch-att ...)`: a list right after it is its FETCH attributes.
        if (args.peekChar() === '(') {
          fetch = args.list(() => args.fetchAttribute(fetchOptions), { allowEmpty: false });
        } else spaced = true;
      }
      if (known) {
        events.add(known);
        if (!supported.has(known) && !unsupported.includes(known)) unsupported.push(known);
      } else if (!unsupported.includes(name)) unsupported.push(name.slice(0, 64));
      if (spaced) continue;
      if (args.tryChar(')')) break;
      args.sp();
    }
  }
  args.char(')');
  const selected = filter.kind === 'selected' || filter.kind === 'selected-delayed';
  if (!selected) {
    if (fetch !== null) throw new ParseError(`MessageNew takes FETCH attributes only with selected or selected-delayed (RFC 5465 section 8), not with ${filter.kind}`);
    return { filter, events, fetch };
  }
  for (const e of events) {
    if (!MESSAGE_EVENTS.has(e)) throw new ParseError(`${e} cannot be given with ${filter.kind} (RFC 5465 section 6.1)`);
  }
  if ((events.has('FlagChange') || events.has('AnnotationChange')) && !(events.has('MessageNew') && events.has('MessageExpunge'))) {
    throw new ParseError(`FlagChange and AnnotationChange need MessageNew and MessageExpunge with ${filter.kind} (RFC 5465 section 5)`);
  }
  if (events.has('MessageNew') !== events.has('MessageExpunge')) {
    throw new ParseError(`MessageNew and MessageExpunge go together with ${filter.kind} (RFC 5465 section 5)`);
  }
  return { filter, events, fetch };
}

function filterMailboxes(args: ArgParser): Filter {
  const word = args.atom().toLowerCase();
  switch (word) {
    case 'selected':
    case 'selected-delayed':
    case 'inboxes':
    case 'personal':
    case 'subscribed':
      return { kind: word };
    case 'subtree':
    case 'mailboxes': {
      args.sp();
      // No wildcard expansion (§6.6): `*` and `%` are name characters here.
      const one = (): string => args.mailbox({ validate: false });
      const names = args.peekChar() === '(' ? args.list(one, { allowEmpty: false }) : [one()];
      return { kind: word, names };
    }
    default:
      throw new ParseError(`Unknown mailbox filter ${word.slice(0, 40)}`);
  }
}
