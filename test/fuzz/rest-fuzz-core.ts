/**
 * The REST fuzzer (issue 9): seeded random requests against a real
 * listening REST server over raw sockets, so methods, targets, headers and
 * framing can be anything. Each request is rebuilt from (seed, index) alone,
 * so a finding names everything needed to replay it.
 *
 * Checks on every answer: no 5xx except 503 LIMIT for event streams (a 500
 * SERVERERROR is an unexpected exception: a finding); every non-2xx answer is
 * exactly `{ error: { code, message } }` with a JSON content type, the status
 * the spec's table gives its code, `Allow` on 405 and `WWW-Authenticate` on
 * 401; every answer has `Cache-Control: no-store` and no CORS header; 2xx
 * answers are JSON (or an event stream); an answer arrives at all.
 *
 * Bodies carry typos on purpose (issue 19): misspelt keys of the route's
 * fields (`pasword`, `Mode`, `subscribe`), unknown keys, typos inside nested
 * objects (`xoauth2.acessToken`), misspelt rule fields and rule commands no
 * one defines (`FECTH`). A request whose body holds one, sent whole to the
 * route it was made for, must not succeed: a 2xx answer to it is a finding
 * (the key was silently dropped).
 *
 * With `limits` (issue 31) the run also sends bodies that stop: a declared
 * length larger than what is sent, a chunked body without its last chunk,
 * a body sent in pieces with pauses. A server with a short `rest.bodyTimeout`
 * must answer the stopped ones 408 TIMEOUT with the error object (and
 * nothing else: a finding otherwise); with a small `rest.maxConnections` and
 * `rest.maxBodyBytesInFlight`, 503 LIMIT answers are part of the run.
 *
 * Used by test/fuzz/rest-fuzz.test.ts (a short run in `npm test`) and
 * bench/fuzz-rest.ts (long runs with figures).
 */
import net from 'node:net';
import type { Server } from '../../src/index.js';
import { BUILTIN_ROUTES } from '../../src/rest/routes.js';
import type { Schema } from '../../src/rest/schema.js';
import { RULE_FIELDS as KNOWN_RULE_FIELDS } from '../../src/script/validate.js';
import { Prng } from '../../src/util/prng.js';

export interface Finding {
  seed: number;
  index: number;
  problem: string;
  request: string;
  response: string;
}

export interface FuzzResult {
  requests: number;
  findings: Finding[];
  statuses: Map<number, number>;
  /** Bytes sent in requests. */
  bytes: number;
  /** Requests whose body held a typo or unknown key where the server must refuse it (and was checked for that). */
  typos: number;
}

const STATUS_OF: Record<string, number> = {
  INVALID: 400, UNAUTHORIZED: 401, NONEXISTENT: 404, NOTFOUND: 404, METHOD: 405, TIMEOUT: 408, EXPIRED: 410, TOOBIG: 413, UNSUPPORTED: 415, SERVERERROR: 500,
};

class Gen {
  readonly rng: Prng;
  /** What in the body being built must make the server refuse it (an unknown key), or null. */
  refuse: string | null = null;
  constructor(seed: number) {
    this.rng = new Prng(seed);
  }
  /** Notes that the body holds something the server must refuse (the first one is kept). */
  mustRefuse(what: string): void {
    this.refuse ??= what;
  }
  chance(p: number): boolean {
    return this.rng.next() < p;
  }
  int(n: number): number {
    return this.rng.below(n);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.rng.below(items.length)]!;
  }
}

const PROTO_NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'isPrototypeOf', '__defineGetter__', 'prototype'];

/**
 * A misspelling of `name` that is none of `known`: two letters swapped, one
 * left out, one doubled, the case of one changed, or one added.
 */
function typo(g: Gen, name: string, known: readonly string[]): string {
  for (let attempt = 0; attempt < 8; attempt++) {
    const at = g.int(Math.max(1, name.length));
    let out: string;
    switch (g.int(5)) {
      case 0:
        out = name.length > 1 ? name.slice(0, at) + (name[at + 1] ?? '') + (name[at] ?? '') + name.slice(at + 2) : `${name}${name}`;
        break;
      case 1:
        out = name.slice(0, at) + name.slice(at + 1);
        break;
      case 2:
        out = name.slice(0, at) + (name[at] ?? 'x') + name.slice(at);
        break;
      case 3: {
        const c = name[at] ?? 'x';
        out = name.slice(0, at) + (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase()) + name.slice(at + 1);
        break;
      }
      default:
        out = name.slice(0, at) + g.pick(['e', 's', 'x', '_', '-']) + name.slice(at);
    }
    if (out !== '' && out !== name && !known.includes(out)) return out;
  }
  return `${name}_x`;
}

const MAILBOX_NAMES = [
  'INBOX', 'inbox', 'Archive', 'Archive/2024', 'Work/Projects/A', 'Sent', 'Trash', '&Jjo-', '&', '&-', '&AGE-', 'Ünïcode', '日本語',
  '..', '.', '/', 'a/', '/a', 'a//b', '*', '%', 'INBOX/child', 'x'.repeat(300), ' ', 'a b', '"q"', '\\', 'NIL', '{3}', '\u0000', '\r\n', 'tab\there',
  '\ud800', '\udfff', '😀', ...PROTO_NAMES, '__proto__/child',
];

const USER_NAMES = ['testuser', 'alice', 'bob', '', ' ', 'a@b', 'ü', '\u0000', 'x'.repeat(500), ...PROTO_NAMES];

const FLAGS = ['\\Seen', '\\Answered', '\\Flagged', '\\Deleted', '\\Draft', '\\Recent', '\\seen', '$Forwarded', 'keyword', '', ' ', '\\', '\\*', '(', ')', '%', '*', '"', ']', 'ü', 'a b', '\\Unknown', ...PROTO_NAMES];

const DATES = ['01-Jan-2020 00:00:00 +0000', '1-Jan-2020 00:00:00 +0000', '31-Feb-2020 10:00:00 +0100', '01-Foo-2020 00:00:00 +0000', '01-Jan-2020 25:00:00 +0000', '01-Jan-99999 00:00:00 +0000', '', 'yesterday', '2020-01-01T00:00:00Z', '01-Jan-2020 00:00:00 +9999'];

const MESSAGES = [
  'Subject: hi\r\n\r\nbody\r\n', 'From: a@b\r\nTo: c@d\r\nSubject: =?utf-8?B?w7w=?=\r\nContent-Type: multipart/mixed; boundary=x\r\n\r\n--x\r\nContent-Type: text/plain\r\n\r\npart\r\n--x--\r\n',
  '', '\r\n', 'no headers at all', 'Subject: ü\r\n\r\n日本語\r\n', 'Subject: x\n\nLF only\n', '\u0000\u0001\u0002', 'Content-Type: multipart/mixed\r\n\r\n--\r\n',
  'Subject: long\r\n\r\n' + 'y'.repeat(5000),
];

const NUMBERS = ['0', '-1', '1', '2', '3', '7', '1.5', '-0', '1e308', '-1e308', '1e309', '4294967295', '4294967296', '9007199254740991', '9007199254740993', '1e-7', '1' + '0'.repeat(400), '0.0000001', '12345678901234567890'];

/** A JSON text of some random value; objects may carry `__proto__` and other prototype-member keys. */
function jsonValue(g: Gen, depth = 0): string {
  const k = g.int(depth > 3 ? 5 : 8);
  switch (k) {
    case 0:
      return g.pick(['null', 'true', 'false']);
    case 1:
      return g.pick(NUMBERS);
    case 2:
    case 3:
      return JSON.stringify(g.pick([...MAILBOX_NAMES, ...FLAGS, ...USER_NAMES, ...DATES]));
    case 4:
      return JSON.stringify(g.pick(MESSAGES));
    case 5: {
      const n = g.int(4);
      return `[${Array.from({ length: n }, () => jsonValue(g, depth + 1)).join(',')}]`;
    }
    default: {
      const n = g.int(4);
      const keys = Array.from({ length: n }, () => g.pick([...PROTO_NAMES, 'a', 'path', 'name', 'raw', 'uids', 'flags', 'on', 'error', '']));
      return `{${keys.map((key) => `${JSON.stringify(key)}:${jsonValue(g, depth + 1)}`).join(',')}}`;
    }
  }
}

/** Fields a route's body knows, with a generator of a plausible value for each. */
const FIELD_VALUES: Record<string, (g: Gen) => string> = {
  path: (g) => JSON.stringify(g.pick(MAILBOX_NAMES)),
  newPath: (g) => JSON.stringify(g.pick(MAILBOX_NAMES) + (g.chance(0.5) ? String(g.int(100)) : '')),
  target: (g) => JSON.stringify(g.pick(MAILBOX_NAMES)),
  subscribed: (g) => g.pick(['true', 'false', '1', '"yes"']),
  name: (g) => JSON.stringify(g.pick(USER_NAMES) + (g.chance(0.5) ? String(g.int(50)) : '')),
  password: (g) => JSON.stringify(g.pick(['pw', '', 'x'.repeat(1000), '\u0000'])),
  xoauth2: (g) => {
    if (g.chance(0.2)) {
      // A typo inside the nested object.
      const known = ['accessToken', 'sessionTimeout'];
      const bad = typo(g, g.pick(known), known);
      g.mustRefuse(`xoauth2.${bad}`);
      return g.chance(0.5) ? `{${JSON.stringify(bad)}:"t"}` : `{"accessToken":"t",${JSON.stringify(bad)}:1000}`;
    }
    return g.pick(['null', '{"accessToken":"t"}', '{"accessToken":"t","sessionTimeout":1000}', '{"accessToken":""}', '{"sessionTimeout":-1}', '{"accessToken":"t","sessionTimeout":1e309}', '"t"']);
  },
  disconnect: (g) => g.pick(['true', 'false']),
  raw: (g) => JSON.stringify(g.chance(0.8) ? g.pick(MESSAGES) : Buffer.from(g.pick(MESSAGES)).toString('base64')),
  encoding: (g) => JSON.stringify(g.pick(['utf-8', 'base64', 'binary', 'UTF-8', ''])),
  flags: (g) => `[${Array.from({ length: g.int(4) }, () => JSON.stringify(g.pick(FLAGS))).join(',')}]`,
  internaldate: (g) => JSON.stringify(g.pick(DATES)),
  checks: (g) => g.pick(['true', 'false']),
  uids: (g) =>
    g.chance(0.2)
      ? JSON.stringify(g.pick(['keep', 'renumber', 'offset', 'shuffle', 'random']))
      : `[${Array.from({ length: g.int(5) }, () => (g.chance(0.8) ? String(1 + g.int(12)) : g.pick(NUMBERS))).join(',')}]`,
  mode: (g) => JSON.stringify(g.pick(['set', 'add', 'remove', 'toggle'])),
  uidvalidity: (g) => g.pick(['1', '2', '4294967295', '4294967296', '0', '-5', '1.5']),
  offset: (g) => g.pick(['0', '1', '100', '-1', '4294967295', '9007199254740993']),
  seed: (g) => g.pick(['0', '1', '42', '-1', '1.5']),
  data: (g) => JSON.stringify(g.pick(['* OK hi\r\n', '', 'garbage', Buffer.from('* BYE x\r\n').toString('base64')])),
  text: (g) => JSON.stringify(g.pick(['bye', '', '\r\n', 'x'.repeat(2000)])),
  reset: (g) => g.pick(['true', 'false']),
  graceful: () => 'false',
  rights: (g) => JSON.stringify(g.pick(['lrs', 'lrswipkxtea', '+w', '-x', '', 'z', '+', 'lrs lrs', 'LRS', 'cd'])),
  specialUse: (g) => `[${Array.from({ length: g.int(3) }, () => JSON.stringify(g.pick(['\\Sent', '\\Trash', '\\All', '\\Bogus', 'Sent', '']))).join(',')}]`,
  STORAGE: (g) => g.pick(NUMBERS),
  MESSAGE: (g) => g.pick(NUMBERS),
  MAILBOX: (g) => g.pick(NUMBERS),
  // POST /v1/clock/bye (issue 14): far-off times mostly, so the run's sessions live on.
  at: (g) => {
    const v = g.pick(['4102444800000', '"2100-01-01T00:00:00Z"', '"2100-01-01 00:00"', '"soon"', 'null']);
    if (['"2100-01-01 00:00"', '"soon"', 'null'].includes(v)) g.mustRefuse(`at ${v}`);
    return v;
  },
  in: (g) => {
    const v = g.pick(['3600000', '-1', '"1h"']);
    if (v !== '3600000') g.mustRefuse(`in ${v}`);
    return v;
  },
  // POST /v1/clock (issue 14): small moves, so the run's internal dates stay plausible.
  advance: (g) => {
    const v = g.pick(['0', '1', '60000', '-1', '1.5', '"soon"']);
    if (['-1', '1.5', '"soon"'].includes(v)) g.mustRefuse(`advance ${v}`);
    return v;
  },
};

const RULE_FIELDS: Record<string, (g: Gen) => string> = {
  on: (g) => JSON.stringify(g.pick(['command', 'greeting', 'input', 'response', 'quiet', 'continuation', 'bogus'])),
  command: (g) => {
    const command = g.pick(['NOOP', 'LOGIN', 'FETCH', 'UID FETCH', '', 'fetch', 'uid store', 'AUTHENTICATE PLAIN', 'IDLE', 'FECTH', 'UID FECTH', 'NOOOP', 'XYZZY', 'UID XYZZY']);
    // Names no server defines: a rule with one would never match.
    if (['', 'FECTH', 'UID FECTH', 'NOOOP', 'XYZZY', 'UID XYZZY'].includes(command)) g.mustRefuse(`command ${JSON.stringify(command)}`);
    // A list of names (issue 30): every one must be a command, and the list not empty.
    if (g.chance(0.2)) {
      const list = g.pick([[command, 'STORE'], [command], ['fetch', 'uid copy', command], []]);
      if (list.length === 0) g.mustRefuse('command []');
      return JSON.stringify(list);
    }
    return JSON.stringify(command);
  },
  uid: (g) => refusedIf(g, 'uid', g.pick(['true', 'false', '1', '"yes"', 'null']), ['1', '"yes"', 'null']),
  times: (g) => g.pick(['1', '2', '0', '-1', '1.5', '1e309']),
  send: (g) => JSON.stringify(g.pick(['$TAG NO nope\r\n', '* OK x\r\n', ''])),
  match: (g) => JSON.stringify(g.pick(['NOOP', '(', '[a-', '.*', '(a+)+$'])),
  chance: (g) => g.pick(['0', '0.5', '1', '2', '-0.1']),
  chunk: (g) => g.pick(['1', '0', '5']),
  chunkDelay: (g) => g.pick(['0', '"tick"', '-1', '"later"']),
  quietFor: (g) => g.pick(['10', '0']),
  close: (g) => g.pick(['true', 'false', '"reset"', '"no"']),
  drop: (g) => g.pick(['true', 'false']),
  run: (g) => g.pick(['true', 'false']),
  delay: (g) => g.pick(['0', '5', '-1']),
  hideCapabilities: (g) => {
    const value = g.pick(['["MOVE"]', '["LITERAL+","IDLE"]', '[]', '["MO VE"]', '"MOVE"', '[1]']);
    if (['["MO VE"]', '"MOVE"', '[1]'].includes(value)) g.mustRefuse(`hideCapabilities ${value}`);
    return value;
  },
  // Transport faults (issue 14).
  bandwidth: (g) => refusedIf(g, 'bandwidth', g.pick(['0', '100000', '5000', '-1', '1.5']), ['-1', '1.5']),
  stall: (g) => refusedIf(g, 'stall', g.pick(['true', 'false', '10', '0', '"forever"']), ['0', '"forever"']),
  halfClose: (g) => g.pick(['true', 'false']),
  slowClose: (g) => refusedIf(g, 'slowClose', g.pick(['0', '10', '-1']), ['-1']),
  tlsFailure: (g) => refusedIf(g, 'tlsFailure', g.pick(['true', 'false', '"yes"']), ['"yes"']),
  stripStartTls: (g) => refusedIf(g, 'stripStartTls', g.pick(['true', 'false', '1']), ['1']),
  state: (g) => {
    const state = g.pick(['Authenticated', 'Selected', 'Not Authenticated', 'x', 'Authenticted', 'selected']);
    if (['x', 'Authenticted', 'selected'].includes(state)) g.mustRefuse(`state ${JSON.stringify(state)}`);
    return JSON.stringify(state);
  },
  // The rule language of issue 14 part 1.
  untagged: (g) => {
    const type = g.pick(['EXISTS', 'FETCH', 'OK', '*', 'fetch', 'LIST', '', 'TWO WORDS', '{3}']);
    if (['', 'TWO WORDS', '{3}'].includes(type)) g.mustRefuse(`untagged ${JSON.stringify(type)}`);
    return JSON.stringify(type);
  },
  description: (g) => JSON.stringify(g.pick(['defect: x', '', 'x'.repeat(2000), '\u0000'])),
  mutate: (g) => {
    const ops = [
      '{"set":"UID","value":99}',
      '{"set":"BODYSTRUCTURE","at":[7],"value":-1}',
      '{"set":"ENVELOPE","value":[null,"x",{"atom":"y"},{"literal":"z"},{"quoted":"w"}]}',
      '{"add":"EXISTS","value":-2}',
      '{"drop":"text"}',
      '{"drop":"FLAGS","at":[0]}',
      '{"order":["BODY[*","UID"]}',
      '{"literal":"ENVELOPE","at":[1]}',
      '{"quoted":"BODY[]"}',
      '{"unescaped":"ENVELOPE"}',
      '{"unquote":"*"}',
      '{"suffix":"BODY[*","text":"\\r\\n"}',
      '{"replace":"(UID) (\\\\d+)","with":"$1 0"}',
    ];
    const broken = ['{"set":"UID"}', '{"set":"UID","drop":"X","value":1}', '{"replace":"(","with":""}', '{"order":[]}', '{"drop":"X","at":[-1]}', '{"set":"UID","value":{"raw":1}}', '{"bogus":1}', '1', '"UID"'];
    if (g.chance(0.2)) {
      const bad = g.pick(broken);
      g.mustRefuse(`mutate op ${bad}`);
      return `[${bad}]`;
    }
    return `[${Array.from({ length: g.int(4) }, () => g.pick(ops)).join(',')}]`;
  },
  literals: (g) => g.pick(['true', 'false']),
  defer: (g) => {
    const value = g.pick(['"tagged"', '"next"', '"later"', 'true']);
    if (value === '"later"' || value === 'true') g.mustRefuse(`defer ${value}`);
    return value;
  },
  seedScope: (g) => {
    const value = g.pick(['"server"', '"session"', '"rule"', '"sesion"', '1']);
    if (value === '"sesion"' || value === '1') g.mustRefuse(`seedScope ${value}`);
    return value;
  },
};

/** `value`, marking the body as one the server must refuse when it is one of `bad`. */
function refusedIf(g: Gen, field: string, value: string, bad: readonly string[]): string {
  if (bad.includes(value)) g.mustRefuse(`${field} ${value}`);
  return value;
}

/**
 * An object of `names` with plausible values, sometimes with a name misspelt
 * or an unknown key added. `known` is every key the object may have; `strict`
 * says the server refuses other keys (then the body is marked).
 */
function objectText(g: Gen, fields: Record<string, (g: Gen) => string>, names: readonly string[], known: readonly string[], strict: boolean): string {
  const parts: string[] = [];
  for (const name of names) {
    if (g.chance(0.15)) continue;
    let key = name;
    if (g.chance(0.03)) {
      key = typo(g, name, known);
      if (strict) g.mustRefuse(key);
    }
    const value = Object.hasOwn(fields, name) && !g.chance(0.06) ? fields[name]!(g) : jsonValue(g);
    parts.push(`${JSON.stringify(key)}:${value}`);
  }
  if (g.chance(0.1)) {
    const key = g.pick([...PROTO_NAMES, 'extra', 'path', 'raw', 'name', 'mod', 'pasword', 'subscribe', 'gracefull', 'comand']);
    if (strict && !known.includes(key)) g.mustRefuse(key);
    parts.push(`${JSON.stringify(key)}:${jsonValue(g)}`);
  }
  return `{${parts.join(',')}}`;
}

function ruleText(g: Gen): string {
  // Rules that would make IMAP misbehave are fine: the test clears them before its IMAP check.
  return objectText(g, RULE_FIELDS, Object.keys(RULE_FIELDS), KNOWN_RULE_FIELDS, true);
}

/** A body for a route: plausible most of the time, mutated or broken otherwise. */
function bodyFor(g: Gen, fields: readonly string[], isRules: boolean, map: boolean, strict: boolean): string {
  const roll = g.int(40);
  if (roll === 0) return '';
  if (roll === 1) return jsonValue(g);
  if (roll === 2) return g.pick(['{', '{"a":', '[1,2', '{"a":1,}', 'NaN', "{'a':1}", '{"a":1}{"b":2}', '\ufeff{}', '{"a":"\\x"}', '{"a":"\\ud800"}', '// c\n{}', 'null', '"str"', '123', '[]', ' ']);
  if (roll === 3) {
    // Deep nesting.
    const depth = g.pick([50, 1000, 5000, 20000]);
    return g.chance(0.5) ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
  }
  if (roll === 4) return `{${Array.from({ length: 200 }, (_, i) => `"k${i}":${i}`).join(',')}}`;
  if (isRules) return g.chance(0.3) ? `[${Array.from({ length: 1 + g.int(3) }, () => ruleText(g)).join(',')}]` : ruleText(g);
  if (map && fields.length === 0) {
    // A map of free names to string or null (metadata entries).
    const names = ['/private/comment', '/shared/comment', '/shared/vendor/x', '/private/__proto__', '/shared/constructor', '__proto__', 'comment', '/shared/', '/shared/a/', '/PRIVATE/Comment', ''];
    const entries = Array.from({ length: 1 + g.int(3) }, () => `${JSON.stringify(g.pick(names))}:${g.pick(['"v"', 'null', '""', '1', '{}', '"x"'])}`);
    return `{${entries.join(',')}}`;
  }
  return objectText(g, FIELD_VALUES, fields, fields, strict);
}

/** Percent-encodes the UTF-8 bytes of `s` (a lone surrogate becomes U+FFFD, where encodeURIComponent throws). */
function enc(s: string): string {
  let out = '';
  for (const b of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(b);
    out += /[A-Za-z0-9\-_.!~*'()]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

function segmentValue(g: Gen, param: string): string {
  if (g.chance(0.08)) return g.pick(['%', '%zz', '%E0%A4%A', '%C0%AF', '%00', '%2e%2e', '%2E', '..', '.', '%FF%FE', 'a%2Fb', '%25', '%ED%A0%80']);
  switch (param) {
    case 'path':
      return enc(g.pick(MAILBOX_NAMES)).replace(/%2F/g, g.chance(0.1) ? '/' : '%2F');
    case 'name':
      return enc(g.pick(USER_NAMES));
    case 'identifier':
      return enc(g.pick(['anyone', 'testuser', '-testuser', 'alice', '', '-', 'anyone@x', ...PROTO_NAMES]));
    case 'session':
    case 'uid':
    case 'id':
      return g.pick(['1', '2', '3', '0', '-1', '1.5', 'abc', '999999999999999', '9999999999999999999999', '1e3', '01', ' 1', '0x10']);
    default:
      return enc(g.pick(MAILBOX_NAMES));
  }
}

const QUERIES = ['', '', '', '?raw=true', '?raw=false', '?raw=yes', '?uids=1,2,3', '?uids=', '?uids=a', '?uids=0', '?uids=1,,2', '?uids=99999999999', '?types=mailbox', '?types=', '?types=bogus', '?types=__proto__', '?%zz=1', '?a=%', '?uids=1&uids=2', '#frag', '?user=testuser', '?user=alice', '?user=', '?user=nobody', '?user=__proto__', '?user=a&user=b', '?raw=true&user=testuser', '?x=' + 'y'.repeat(3000),
  // GET /v1/client/findings
  '?session=1', '?since=0', '?session=1&since=3', '?session=0', '?since=-1', '?since=x', '?session=1e3'];

/**
 * GET /v1/events/wait's query grammar (types, match `field=value,...`, since,
 * timeout, and the state conditions mailbox/messages and session/idling),
 * valid and not. Every one bounds the wait (a long poll without a
 * timeout would hold the request for 30 s): `timeout` is small, or the query
 * is refused before the wait starts.
 */
const WAIT_QUERIES = [
  '?timeout=0', '?timeout=5', '?types=mailbox&timeout=1', '?types=mailbox,expunge&match=path=INBOX&timeout=2',
  '?types=session&match=type=waiting,session.user=testuser&timeout=1', '?match=messages.uid=1,messages.flags=%5CSeen&timeout=0',
  '?types=flags&match=path=a,b=c&timeout=0', '?since=0&timeout=0', '?since=1&timeout=1', '?since=999999999&timeout=0',
  '?match=__proto__=1&timeout=0', '?match=constructor.name=Object&timeout=0', '?types=reset&match=path=x&timeout=0',
  '?types=mailbox&match=pth=INBOX', '?match=nofield', '?match==x', '?match=a..b=1', '?match=%zz', '?timeout=abc', '?timeout=-1',
  '?timeout=300001', '?timeout=1&timeout=2', '?timeout=1e3', '?since=x', '?since=1&since=2', '?tmeout=5', '?types=', '?types=bogus',
  '?types=__proto__', '?types=mailbox&types=&timeout=0', '?timeout=' + '9'.repeat(40), '?match=' + 'a='.repeat(2000) + '&timeout=0',
  // State conditions: mailbox with messages, session with idling.
  '?mailbox=INBOX&messages=0&timeout=0', '?mailbox=INBOX&messages=5&timeout=1', '?mailbox=__proto__&messages=1&timeout=0',
  '?mailbox=%E2%82%AC&messages=1&timeout=0', '?mailbox=INBOX', '?messages=1', '?mailbox=INBOX&messages=-1', '?mailbox=INBOX&messages=1&types=mailbox',
  '?session=1&timeout=1', '?session=1&idling=false&timeout=0', '?session=0', '?session=1&idling=yes', '?idling=true', '?session=1&mailbox=INBOX&messages=1',
];

/** GET /v1/sessions/{n}/transcript: its `format` query, valid and not (the Accept header is rolled beside it). */
const TRANSCRIPT_QUERIES = ['?format=text', '?format=json', '?format=', '?format=xml', '?format=TEXT', '?format=text&format=json', '?format=%00'];
const ACCEPTS = ['text/plain', 'application/json', '*/*', 'text/*', 'text/plain;q=0.1, application/json', 'application/json;q=0, text/plain;q=0.5', 'text/plain;q=abc', ';;,,', 'text/html'];

const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'TRACE', 'get', 'FOO', 'CONNECT', 'M-SEARCH', 'PROPFIND'];

const CONTENT_TYPES = ['application/json', 'application/json', 'application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json, text/plain', 'application/jsonp', '', ' application/json ', 'application/problem+json'];

const HOSTS = ['localhost', '127.0.0.1', 'localhost', '127.0.0.1', '[::1]', 'evil.example', 'localhost:80@evil.example', '[::1]evil', 'localhost:x', '', 'LOCALHOST:1', '127.0.0.1:65536', 'a.localhost'];

export interface BuiltRequest {
  bytes: Buffer;
  /** One line describing it, for findings. */
  describe: string;
  /** An event stream may answer: read its head only. */
  stream: boolean;
  /**
   * Set when the body holds a typo or an unknown key the route must refuse
   * and the request reaches that route whole: any 2xx answer is a finding.
   */
  refuse?: string;
  /** The body stops before its end (limits runs): the answer must be this status. */
  expect?: number;
  /** Pieces to send after `bytes`, each after a pause of `pause` ms (a slow body). */
  later?: { pause: number; pieces: Buffer[] };
}

/** What the fuzzer needs to know of a route. */
export interface FuzzRoute {
  method: string;
  path: string;
  /** Body fields the route declares. */
  fields: string[];
  /** The body is a map of free names (metadata entries). */
  map: boolean;
  /** The server refuses a body key the route does not declare (a route without body schema takes no keys). */
  strict: boolean;
  stream: boolean;
}

function fuzzRoute(method: string, path: string, body: Schema | undefined, stream: boolean): FuzzRoute {
  return {
    method: method.toUpperCase(),
    path,
    fields: Object.keys(body?.properties ?? {}),
    map: typeof body?.additionalProperties === 'object' || (body?.type === 'object' && !body.properties && body.additionalProperties !== false),
    // Script rules (a ref to ScriptRule) are checked by the rule validator, which refuses unknown fields too.
    strict: body === undefined || body.additionalProperties === false || path === '/v1/script/rules',
    stream,
  };
}

/** The built-in routes (without plugins). */
export const BUILTIN_FUZZ_ROUTES: readonly FuzzRoute[] = BUILTIN_ROUTES.map((r) => fuzzRoute(r.method, r.path, r.body, r.stream === true));

/** Every route of a running server, from its OpenAPI document: plugin routes included. */
export function routesFromOpenApi(doc: { paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: Schema }> }; responses: Record<string, { content?: Record<string, unknown> }> }>> }): FuzzRoute[] {
  const out: FuzzRoute[] = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const stream = Object.values(op.responses).some((r) => r.content !== undefined && Object.hasOwn(r.content, 'text/event-stream'));
      out.push(fuzzRoute(method, path, op.requestBody?.content['application/json']?.schema, stream));
    }
  }
  return out;
}

/** The request number `index` of a run with `seed` over `routes`; never POST /v1/shutdown. */
export function buildRequest(seed: number, index: number, allRoutes: readonly FuzzRoute[] = BUILTIN_FUZZ_ROUTES, token?: string, limits = false): BuiltRequest {
  const g = new Gen((seed * 1_000_003 + index * 7919) >>> 0);
  const routes = allRoutes.filter((r) => r.path !== '/v1/shutdown');
  let route = g.pick(routes);
  // A reset undoes whatever state the run built up; keep it rare so state can pile up.
  if (route.path === '/v1/reset' && g.chance(0.7)) route = g.pick(routes.filter((r) => r.path !== '/v1/reset'));
  let method = g.chance(0.88) ? route.method : g.pick(METHODS);
  let path: string;
  const ownPath = !g.chance(0.06);
  if (!ownPath) {
    path = g.pick(['/', '/v1', '/v1/', '/v2/users', '//v1/users', '/v1/users/', '/v1/mailboxes/INBOX/messages/1/extra', '*', '/v1/script/rules/x/y', '/V1/USERS', '/v1/users/a/b', '/' + 'a/'.repeat(2000), 'http://localhost/v1/users', 'http://evil.example/v1/users', '/v1/openapi.json/', '/v1/%2e%2e/users', '/dashboard/dashboard.js', '/dashboard/', '/dashboard/../v1/users', '/dashboard/%2e%2e/package.json', '/?token=x', '/dashboard/dashboard.css?x=1']);
  } else {
    path = route.path.replace(/\{(\w+)\}/g, (_m, p: string) => segmentValue(g, p));
  }
  const transcript = route.path.endsWith('/transcript') && ownPath;
  path += route.path === '/v1/events/wait' && ownPath ? g.pick(WAIT_QUERIES) : transcript && g.chance(0.6) ? g.pick(TRANSCRIPT_QUERIES) : g.pick(QUERIES);
  if (/shutdown/i.test(path) && method !== 'GET') method = 'GET';
  const isRules = route.path === '/v1/script/rules';
  g.refuse = null;
  let body = g.chance(method === 'GET' || method === 'DELETE' ? 0.15 : 0.9) ? bodyFor(g, route.fields, isRules, route.map, route.strict) : '';
  let refuse = g.refuse as string | null;
  if (g.chance(0.03)) {
    body = 'x'.repeat(70_000);
    refuse = null;
  }
  // The oracle holds only for the route the body was made for.
  if (method !== route.method || !ownPath || /shutdown/i.test(path)) refuse = null;
  const headers: string[] = [];
  const hostRoll = g.chance(0.08);
  if (!hostRoll || g.chance(0.5)) headers.push(`Host: ${hostRoll ? g.pick(HOSTS) : g.pick(HOSTS.slice(0, 4))}`);
  if (hostRoll && g.chance(0.2)) headers.push('Host: localhost');
  if (g.chance(body !== '' || method === 'POST' ? 0.95 : 0.1)) {
    headers.push(`Content-Type: ${g.chance(0.85) ? 'application/json' : g.pick(CONTENT_TYPES)}`);
  }
  if (transcript && g.chance(0.5)) headers.push(`Accept: ${g.pick(ACCEPTS)}`);
  if (token !== undefined && g.chance(0.9)) {
    headers.push(`Authorization: ${g.pick([`Bearer ${token}`, `Bearer ${token}`, `bearer  ${token}`, `Bearer ${token}x`, `Bearer ${token.slice(1)}`, `Basic ${token}`])}`);
  } else if (g.chance(0.05)) headers.push(`Authorization: ${g.pick(['Bearer x', 'Bearer', 'Basic dXNlcjpwYXNz', ''])}`);
  if (g.chance(0.05)) headers.push(`Origin: ${g.pick(['http://evil.example', 'null'])}`);
  if (g.chance(0.03)) headers.push(`X-Big: ${'h'.repeat(g.pick([100, 8000, 17000]))}`);
  // (A Transfer-Encoding ending in chunked without a chunked body would leave the request unfinished: not sent.)
  if (g.chance(0.03)) headers.push(g.pick(['Expect: 100-continue', 'Upgrade: websocket', 'Content-Encoding: gzip', 'Transfer-Encoding: identity', 'Transfer-Encoding: chunked, gzip']));
  const bodyBytes = Buffer.from(body, 'utf8');
  let framed: Buffer = bodyBytes;
  const framing = g.int(40);
  let expect: number | undefined;
  let later: BuiltRequest['later'];
  // Bodies that stop or crawl (limits runs only: the server's body timeout must be short).
  const stall = limits && bodyBytes.length > 1 && g.chance(0.04) ? g.int(3) : -1;
  if (stall === 0) {
    // Declares more than it sends, then waits: the rest never comes.
    headers.push(`Content-Length: ${bodyBytes.length + 1 + g.int(1000)}`);
    expect = 408;
    refuse = null;
  } else if (stall === 1) {
    // Chunked without its last chunk.
    framed = Buffer.concat([Buffer.from(`${bodyBytes.length.toString(16)}\r\n`), bodyBytes, Buffer.from('\r\n')]);
    headers.push('Transfer-Encoding: chunked');
    expect = 408;
    refuse = null;
  } else if (stall === 2) {
    // Whole, but in three pieces with pauses shorter than the body timeout: answered as if sent at once.
    headers.push(`Content-Length: ${bodyBytes.length}`);
    const a = Math.floor(bodyBytes.length / 3);
    const b = Math.floor((2 * bodyBytes.length) / 3);
    framed = bodyBytes.subarray(0, a);
    later = { pause: 60, pieces: [bodyBytes.subarray(a, b), bodyBytes.subarray(b)] };
  } else if (bodyBytes.length > 0 && framing === 0) {
    // Chunked, in a few pieces.
    const parts: Buffer[] = [];
    for (let at = 0; at < bodyBytes.length; ) {
      const n = Math.min(bodyBytes.length - at, 1 + g.int(64));
      parts.push(Buffer.from(`${n.toString(16)}\r\n`), bodyBytes.subarray(at, at + n), Buffer.from('\r\n'));
      at += n;
    }
    parts.push(Buffer.from('0\r\n\r\n'));
    framed = Buffer.concat(parts);
    headers.push('Transfer-Encoding: chunked');
  } else if (bodyBytes.length > 0 && framing === 1) {
    framed = Buffer.concat([Buffer.from('zz\r\n'), bodyBytes, Buffer.from('\r\n0\r\n\r\n')]);
    headers.push('Transfer-Encoding: chunked');
  } else if (framing === 2) {
    headers.push(`Content-Length: ${bodyBytes.length}`, `Content-Length: ${bodyBytes.length}`);
  } else if (framing === 3 && bodyBytes.length > 0) {
    // Declares less than it sends: the rest would be a next request, but the connection closes.
    headers.push(`Content-Length: ${g.int(bodyBytes.length)}`);
    refuse = null;
  } else if (bodyBytes.length > 0 || g.chance(0.3)) {
    headers.push(`Content-Length: ${bodyBytes.length}`);
  }
  headers.push('Connection: close');
  const head = `${method} ${path} HTTP/1.1\r\n${headers.join('\r\n')}\r\n\r\n`;
  const shown = body.length > 120 ? `${JSON.stringify(body.slice(0, 120))}... (${body.length} chars)` : JSON.stringify(body);
  return {
    bytes: Buffer.concat([Buffer.from(head, 'latin1'), framed]),
    describe: `${method} ${path.length > 120 ? path.slice(0, 120) + '...' : path} [${headers.filter((h) => !h.startsWith('X-Big')).join('; ')}] body=${shown}${stall >= 0 ? ` stall=${['short', 'unfinished chunked', 'slow'][stall]}` : ''}`,
    stream: route.stream,
    ...(refuse !== null ? { refuse } : {}),
    ...(expect !== undefined ? { expect } : {}),
    ...(later !== undefined ? { later } : {}),
  };
}

interface Answer {
  status: number;
  headers: Map<string, string[]>;
  body: string;
}

function parseAnswer(data: Buffer, method: string): Answer | string {
  // Interim answers (100 Continue) come first.
  while (/^HTTP\/1\.1 1\d\d /.test(data.subarray(0, 13).toString('latin1'))) {
    const at = data.indexOf('\r\n\r\n');
    if (at < 0) return 'truncated interim answer';
    data = data.subarray(at + 4);
  }
  const end = data.indexOf('\r\n\r\n');
  if (end < 0) return 'no complete header section';
  const [statusLine, ...lines] = data.subarray(0, end).toString('latin1').split('\r\n');
  const m = /^HTTP\/1\.1 (\d{3}) /.exec(statusLine!);
  if (!m) return `bad status line ${JSON.stringify(statusLine)}`;
  const headers = new Map<string, string[]>();
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon <= 0) return `bad header line ${JSON.stringify(line)}`;
    const name = line.slice(0, colon).toLowerCase();
    headers.set(name, [...(headers.get(name) ?? []), line.slice(colon + 1).trim()]);
  }
  let body = data.subarray(end + 4);
  const length = headers.get('content-length')?.[0];
  if (method === 'HEAD' || (headers.get('content-type')?.[0] ?? '').startsWith('text/event-stream')) {
    body = Buffer.alloc(0);
  } else if (length !== undefined) {
    if (body.length < Number(length)) return `body shorter than Content-Length ${length}`;
    body = body.subarray(0, Number(length));
  } else if (headers.get('transfer-encoding')?.[0] === 'chunked') {
    const out: Buffer[] = [];
    let at = 0;
    for (;;) {
      const eol = body.indexOf('\r\n', at);
      if (eol < 0) return 'truncated chunked body';
      const size = parseInt(body.subarray(at, eol).toString('latin1'), 16);
      if (Number.isNaN(size)) return 'bad chunk';
      if (size === 0) break;
      out.push(body.subarray(eol + 2, eol + 2 + size));
      at = eol + 2 + size + 2;
    }
    body = Buffer.concat(out);
  }
  return { status: Number(m[1]), headers, body: body.toString('utf8') };
}

/** Problems with one answer, by the spec's rules. */
export function checkAnswer(a: Answer, method: string): string[] {
  const problems: string[] = [];
  const type = a.headers.get('content-type')?.[0] ?? '';
  const isStream = a.status === 200 && type.startsWith('text/event-stream');
  if (a.headers.get('cache-control')?.[0] !== 'no-store') problems.push('no Cache-Control: no-store');
  for (const name of a.headers.keys()) if (name.startsWith('access-control-')) problems.push(`CORS header ${name}`);
  if (a.status >= 500 && !(a.status === 503)) problems.push(`status ${a.status}`);
  if (isStream) return problems;
  // A transcript asked for as text (Accept or ?format=text) is the one text/plain answer.
  if (a.status === 200 && /^text\/plain(;|$)/.test(type) && a.body.startsWith('# Rookery transcript')) return problems;
  // The dashboard's files (GET or HEAD of `/` and `/dashboard/<file>`): not JSON, but always under the page's strict CSP.
  const csp = a.headers.get('content-security-policy')?.[0];
  if (a.status === 200 && csp !== undefined) {
    if (!/^(text\/html|text\/javascript|text\/css|image\/svg\+xml)(;|$)/.test(type)) problems.push(`dashboard file of type ${JSON.stringify(type)}`);
    if (!csp.includes("default-src 'none'") || /unsafe-/.test(csp)) problems.push(`dashboard file with a weak CSP: ${csp}`);
    if (a.headers.get('x-content-type-options')?.[0] !== 'nosniff') problems.push('dashboard file without nosniff');
    return problems;
  }
  if (!/^application\/json(;|$)/.test(type)) problems.push(`content type ${JSON.stringify(type)}`);
  if (method === 'HEAD') return problems;
  let json: unknown;
  try {
    json = JSON.parse(a.body);
  } catch {
    problems.push('body is not JSON');
    return problems;
  }
  if (a.status >= 200 && a.status < 300) return problems;
  const e = json as { error?: { code?: unknown; message?: unknown } };
  const shapeOk =
    typeof json === 'object' && json !== null && !Array.isArray(json) && Object.keys(json).length === 1 &&
    typeof e.error === 'object' && e.error !== null && Object.keys(e.error).sort().join() === 'code,message' &&
    typeof e.error.code === 'string' && typeof e.error.message === 'string';
  if (!shapeOk) {
    problems.push('not the error object shape');
    return problems;
  }
  const code = e.error!.code as string;
  const expected = a.status === 503 && code === 'LIMIT' ? 503 : Object.hasOwn(STATUS_OF, code) ? STATUS_OF[code] : 409;
  if (a.status !== expected) problems.push(`status ${a.status} for code ${code} (expected ${expected})`);
  if (code === 'SERVERERROR') problems.push(`SERVERERROR: ${e.error!.message as string}`);
  if (a.status === 405 && !a.headers.has('allow')) problems.push('405 without Allow');
  if (a.status === 401 && a.headers.get('www-authenticate')?.[0] !== 'Bearer') problems.push('401 without WWW-Authenticate: Bearer');
  return problems;
}

/** Sends one request on its own connection; resolves with the raw answer bytes (head only for event streams). */
function exchange(port: number, req: BuiltRequest, timeoutMs: number): Promise<{ data: Buffer; timedOut: boolean }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (timedOut: boolean): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ data: Buffer.concat(chunks), timedOut });
    };
    const timer = setTimeout(() => finish(true), timeoutMs);
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      if (req.stream) {
        // The head of an event stream is all there is to read (after any 100 Continue).
        const text = Buffer.concat(chunks).toString('latin1').replace(/^(?:HTTP\/1\.1 1\d\d [^\r]*\r\n(?:[^\r]+\r\n)*\r\n)+/, '');
        const end = text.indexOf('\r\n\r\n');
        if (end >= 0 && /text\/event-stream/i.test(text.slice(0, end))) finish(false);
      }
    });
    socket.on('error', () => finish(false));
    socket.on('close', () => finish(false));
    socket.write(req.bytes);
    if (req.later) {
      const { pause, pieces } = req.later;
      pieces.forEach((piece, i) => setTimeout(() => !done && socket.write(piece), pause * (i + 1)));
    }
  });
}

export interface FuzzOptions {
  port: number;
  seed: number;
  /** Number of requests, from index `start` (default 0). */
  requests: number;
  start?: number;
  concurrency?: number;
  timeoutMs?: number;
  /** Routes to aim at (default: the built-in ones); `routesFromOpenApi` gives a running server's. */
  routes?: readonly FuzzRoute[];
  /** The server's REST token: most requests send it (some with a wrong or mangled one). */
  token?: string;
  /** Called after each answer (progress). */
  onAnswer?: (index: number, status: number) => void;
  /** Also send bodies that stop or crawl (the server needs a short rest.bodyTimeout); 503 LIMIT may answer any request. */
  limits?: boolean;
}

/** Runs requests [start, start + requests) of `seed` against the REST port. */
export async function fuzzRest(options: FuzzOptions): Promise<FuzzResult> {
  const { port, seed, requests } = options;
  const start = options.start ?? 0;
  const concurrency = options.concurrency ?? 8;
  const timeoutMs = options.timeoutMs ?? 5000;
  const findings: Finding[] = [];
  const statuses = new Map<number, number>();
  let next = start;
  let bytes = 0;
  let typos = 0;
  const worker = async (): Promise<void> => {
    while (next < start + requests) {
      const index = next++;
      const req = buildRequest(seed, index, options.routes, options.token, options.limits ?? false);
      bytes += req.bytes.length;
      const { data, timedOut } = await exchange(port, req, timeoutMs);
      const method = req.describe.slice(0, req.describe.indexOf(' '));
      const report = (problem: string): void => {
        findings.push({ seed, index, problem, request: req.describe, response: data.subarray(0, 400).toString('latin1') });
      };
      if (timedOut) {
        report(data.length === 0 ? `no answer within ${timeoutMs} ms` : `answer not complete within ${timeoutMs} ms`);
        continue;
      }
      const answer = parseAnswer(data, method);
      if (typeof answer === 'string') {
        report(`unreadable answer: ${answer}`);
        continue;
      }
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      options.onAnswer?.(index, answer.status);
      for (const problem of checkAnswer(answer, method)) report(problem);
      // A stopped body may meet an earlier refusal (401, 404, 415, 413, 503 LIMIT) before any byte of it is read; never a success.
      if (req.expect !== undefined && answer.status !== req.expect && (answer.status < 400 || answer.status === 408)) {
        report(`a body that stopped was answered ${answer.status}, expected ${req.expect}`);
      }
      if (req.refuse !== undefined) {
        typos++;
        if (answer.status >= 200 && answer.status < 300) report(`accepted a body the route must refuse (${req.refuse}): status ${answer.status}`);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { requests, findings, statuses, bytes, typos };
}

/**
 * The store after a run: every mailbox lists its messages in ascending UID
 * order below UIDNEXT with the count MailboxInfo gives, and a snapshot
 * rebuilds the same mailboxes in a new server. Returns the problems found.
 */
export function storeProblems(server: Server, rebuild: (storage: unknown) => Server): string[] {
  const problems: string[] = [];
  const boxes = server.control.listMailboxes();
  for (const box of boxes) {
    if (!box.selectable) continue;
    const messages = server.control.listMessages(box.path);
    if (messages.length !== box.messages) problems.push(`${box.path}: ${messages.length} messages listed, MailboxInfo says ${box.messages}`);
    if (box.uidnext > MAX_UID + 1) problems.push(`${box.path}: uidnext ${box.uidnext} beyond 2^32`);
    let last = 0;
    for (const m of messages) {
      if (m.uid > MAX_UID) problems.push(`${box.path}: uid ${m.uid} is not a 32-bit UID`);
      if (m.uid <= last) problems.push(`${box.path}: uid ${m.uid} after ${last}`);
      if (m.uid >= box.uidnext) problems.push(`${box.path}: uid ${m.uid} >= uidnext ${box.uidnext}`);
      last = m.uid;
    }
  }
  const snapshot = server.control.snapshot();
  let copy: Server;
  try {
    copy = rebuild(JSON.parse(JSON.stringify(snapshot)));
  } catch (err) {
    problems.push(`a snapshot does not load: ${(err as Error).message.slice(0, 300)}`);
    return problems;
  }
  const before = boxes.map((b) => `${b.path} ${b.messages} ${b.uidvalidity} ${b.uidnext}`);
  const after = copy.control.listMailboxes().map((b) => `${b.path} ${b.messages} ${b.uidvalidity} ${b.uidnext}`);
  if (before.join('\n') !== after.join('\n')) {
    const missing = before.filter((b) => !after.includes(b));
    const extra = after.filter((b) => !before.includes(b));
    problems.push(`snapshot does not rebuild the store: missing ${JSON.stringify(missing.slice(0, 5))}, extra ${JSON.stringify(extra.slice(0, 5))}`);
  }
  if (Object.getOwnPropertyNames(Object.prototype).some((k) => !OBJECT_PROTOTYPE_KEYS.has(k))) problems.push('Object.prototype was polluted');
  return problems;
}

const MAX_UID = 0xffffffff;
const OBJECT_PROTOTYPE_KEYS = new Set(Object.getOwnPropertyNames(Object.prototype));
