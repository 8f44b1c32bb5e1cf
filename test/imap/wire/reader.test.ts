import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  CommandReader,
  LiteralSegment,
  type LiteralInfo,
  type LiteralVerdict,
  type ReaderMode,
  type ReaderOptions,
  type RejectInfo,
  type Segment,
} from '../../../src/imap/wire/reader.js';

type Shown = string | { lit: string; binary: boolean };

type Event =
  | { kind: 'command'; segments: Shown[] }
  | { kind: 'line'; line: string }
  | { kind: 'reject'; info: RejectInfo }
  | { kind: 'check'; info: LiteralInfo }
  | { kind: 'cont' };

const show = (segments: Segment[]): Shown[] =>
  segments.map((s) => (s instanceof LiteralSegment ? { lit: s.data.toString('latin1'), binary: s.binary } : s.toString('latin1')));

interface HarnessOptions extends ReaderOptions {
  verdict?: (info: LiteralInfo) => LiteralVerdict;
  /** Call next() from inside the hooks (default true). */
  auto?: boolean;
  /** Mode to continue in after each command, by command text. */
  modeAfter?: (text: string) => ReaderMode;
}

function harness(options: HarnessOptions = {}) {
  const events: Event[] = [];
  const auto = options.auto ?? true;
  const reader: CommandReader = new CommandReader(
    {
      onCommand(segments) {
        const shown = show(segments);
        events.push({ kind: 'command', segments: shown });
        if (auto) reader.next(options.modeAfter?.(shown.map((s) => (typeof s === 'string' ? s : '')).join('')) ?? 'command');
      },
      onLine(line) {
        events.push({ kind: 'line', line: line.toString('latin1') });
        if (auto) reader.next('command');
      },
      onReject(info) {
        events.push({ kind: 'reject', info });
      },
      sendContinuation() {
        events.push({ kind: 'cont' });
      },
      checkLiteral(info) {
        events.push({ kind: 'check', info });
        return options.verdict?.(info) ?? { ok: true };
      },
    },
    options,
  );
  return { reader, events };
}

function feed(reader: CommandReader, input: Buffer, split: 'whole' | 'bytes' | number[]): void {
  if (split === 'whole') {
    reader.push(input);
  } else if (split === 'bytes') {
    for (let i = 0; i < input.length; i++) reader.push(input.subarray(i, i + 1));
  } else {
    let at = 0;
    for (const cut of split) {
      reader.push(input.subarray(at, cut));
      at = cut;
    }
    reader.push(input.subarray(at));
  }
}

/** A small deterministic PRNG. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randomCuts(length: number, rnd: () => number): number[] {
  const cuts: number[] = [];
  let at = 0;
  while (at < length) {
    at += 1 + Math.floor(rnd() * 7);
    if (at < length) cuts.push(at);
  }
  return cuts;
}

/** Runs `input` whole, byte by byte and in random splits; all must give the same events. */
function run(input: string | Buffer, options: HarnessOptions = {}): Event[] {
  const bytes = typeof input === 'string' ? Buffer.from(input, 'latin1') : input;
  const whole = harness(options);
  feed(whole.reader, bytes, 'whole');
  const single = harness(options);
  feed(single.reader, bytes, 'bytes');
  assert.deepEqual(single.events, whole.events, 'byte-at-a-time differs from whole input');
  const rnd = prng(bytes.length);
  for (let round = 0; round < 5; round++) {
    const split = harness(options);
    feed(split.reader, bytes, randomCuts(bytes.length, rnd));
    assert.deepEqual(split.events, whole.events, 'random split differs from whole input');
  }
  return whole.events;
}

const commands = (events: Event[]): Shown[][] =>
  events.flatMap((e) => (e.kind === 'command' ? [e.segments] : []));

describe('CommandReader framing', () => {
  it('frames plain commands, CRLF and bare LF', () => {
    const events = run('A1 NOOP\r\nA2 CAPABILITY\nA3 LOGOUT\r\n');
    assert.deepEqual(events, [
      { kind: 'command', segments: ['A1 NOOP'] },
      { kind: 'command', segments: ['A2 CAPABILITY'] },
      { kind: 'command', segments: ['A3 LOGOUT'] },
    ]);
  });

  it('delivers an empty line as an empty command', () => {
    assert.deepEqual(commands(run('\r\nA1 NOOP\r\n')), [[''], ['A1 NOOP']]);
  });

  it('embeds synchronizing literals and asks for continuation after the verdict', () => {
    const events = run('A1 LOGIN {3}\r\nbob {4}\r\np\r\nw\r\n');
    assert.deepEqual(events, [
      {
        kind: 'check',
        info: { tag: 'A1', command: 'LOGIN', size: 3, sync: true, binary: false, index: 0, commandBytes: 9 },
      },
      { kind: 'cont' },
      {
        kind: 'check',
        info: { tag: 'A1', command: 'LOGIN', size: 4, sync: true, binary: false, index: 1, commandBytes: 13 },
      },
      { kind: 'cont' },
      {
        kind: 'command',
        segments: ['A1 LOGIN ', { lit: 'bob', binary: false }, ' ', { lit: 'p\r\nw', binary: false }, ''],
      },
    ]);
  });

  it('does not send a continuation before the marker line is complete', () => {
    const { reader, events } = harness();
    reader.push(Buffer.from('A1 LOGIN {3}\r'));
    assert.equal(events.length, 0);
    reader.push(Buffer.from('\n'));
    assert.deepEqual(
      events.map((e) => e.kind),
      ['check', 'cont'],
    );
  });

  it('takes non-synchronizing literals and literal8 without continuation', () => {
    const data = Buffer.from('A1 APPEND INBOX {5+}\r\nab\0\r\n ~{3}\r\n\0\xff\n~{2+}\r\n\r\n\r\n', 'latin1');
    const events = run(data);
    assert.deepEqual(
      events.map((e) => e.kind),
      ['check', 'check', 'cont', 'check', 'command'],
    );
    assert.deepEqual(commands(events), [
      [
        'A1 APPEND INBOX ',
        { lit: 'ab\0\r\n', binary: false },
        ' ',
        { lit: '\0\xff\n', binary: true },
        '',
        { lit: '\r\n', binary: true },
        '',
      ],
    ]);
    const checks = events.flatMap((e) => (e.kind === 'check' ? [e.info] : []));
    assert.deepEqual(
      checks.map((c) => [c.sync, c.binary]),
      [
        [false, false],
        [true, true],
        [false, true],
      ],
    );
  });

  it('handles zero-length literals', () => {
    const events = run('A1 LOGIN {0}\r\n {0+}\r\n\r\n');
    assert.deepEqual(commands(events), [['A1 LOGIN ', { lit: '', binary: false }, ' ', { lit: '', binary: false }, '']]);
    assert.equal(events.filter((e) => e.kind === 'cont').length, 1);
  });

  it('names UID commands in literal info', () => {
    const events = run('x7 uid search charset {5}\r\nUTF-8 ALL\r\n');
    const check = events[0];
    assert.ok(check?.kind === 'check');
    assert.equal(check.info.tag, 'x7');
    assert.equal(check.info.command, 'UID SEARCH');
  });

  it('treats braces that are not a literal marker as text', () => {
    assert.deepEqual(commands(run('A1 X {abc}\r\nA2 Y {}\r\nA3 Z {1}x\r\n')), [
      ['A1 X {abc}'],
      ['A2 Y {}'],
      ['A3 Z {1}x'],
    ]);
  });

  it('survives random inputs split anywhere', () => {
    const rnd = prng(42);
    const pieces: string[] = [];
    for (let i = 0; i < 200; i++) {
      const kind = Math.floor(rnd() * 4);
      const data = Array.from({ length: Math.floor(rnd() * 12) }, () => String.fromCharCode(Math.floor(rnd() * 256))).join('');
      if (kind === 0) pieces.push(`T${i} NOOP\r\n`);
      else if (kind === 1) pieces.push(`T${i} LOGIN {${data.length}}\r\n${data} x\r\n`);
      else if (kind === 2) pieces.push(`T${i} APPEND B ~{${data.length}+}\r\n${data}\n`);
      else pieces.push(`T${i} A {${data.length}+}\r\n${data} {0}\r\n\r\n`);
    }
    const events = run(pieces.join(''));
    assert.equal(commands(events).length, 200);
  });
});

describe('CommandReader literal refusal', () => {
  const refuseBig = (info: LiteralInfo): LiteralVerdict =>
    info.size > 10 ? { ok: false, response: 'NO', code: 'TOOBIG', text: 'Too big' } : { ok: true };

  it('refuses a synchronizing literal and reads on', () => {
    const events = run('A1 APPEND INBOX {100}\r\nA2 NOOP\r\n', { verdict: refuseBig });
    assert.deepEqual(events, [
      {
        kind: 'check',
        info: { tag: 'A1', command: 'APPEND', size: 100, sync: true, binary: false, index: 0, commandBytes: 16 },
      },
      {
        kind: 'reject',
        info: { tag: 'A1', command: 'APPEND', response: 'NO', code: 'TOOBIG', text: 'Too big', fatal: false },
      },
      { kind: 'command', segments: ['A2 NOOP'] },
    ]);
  });

  it('refuses a later literal of a command and drops the command', () => {
    const events = run('A1 LOGIN {3}\r\nbob {50}\r\nA2 NOOP\r\n', { verdict: refuseBig });
    assert.deepEqual(
      events.map((e) => e.kind),
      ['check', 'cont', 'check', 'reject', 'command'],
    );
    assert.deepEqual(commands(events), [['A2 NOOP']]);
  });

  it('skips the bytes of a refused non-synchronizing literal and the rest of its command', () => {
    const junk = 'A9 LOGOUT\r\nA8 LOGOUT\r\n'; // 22 bytes that must not be read as commands
    const input = `A1 APPEND INBOX {${junk.length}+}\r\n${junk} {3+}\r\nabc {2}\r\nA2 NOOP\r\n`;
    const events = run(input, { verdict: refuseBig });
    assert.deepEqual(events, [
      {
        kind: 'check',
        info: { tag: 'A1', command: 'APPEND', size: 22, sync: false, binary: false, index: 0, commandBytes: 16 },
      },
      {
        kind: 'reject',
        info: { tag: 'A1', command: 'APPEND', response: 'NO', code: 'TOOBIG', text: 'Too big', fatal: false },
      },
      { kind: 'command', segments: ['A2 NOOP'] },
    ]);
  });

  it('does not buffer the bytes of a refused non-synchronizing literal', () => {
    const { reader, events } = harness({ verdict: refuseBig });
    reader.push(Buffer.from('A1 APPEND INBOX {10000000+}\r\n'));
    const chunk = Buffer.alloc(1 << 20, 0x41);
    for (let i = 0; i < 9; i++) reader.push(chunk);
    assert.equal(reader.bufferedBytes, 0);
    assert.equal(reader.inProgress, true);
    reader.push(Buffer.alloc(10000000 - 9 * (1 << 20), 0x42));
    reader.push(Buffer.from('\r\nA2 NOOP\r\n'));
    assert.deepEqual(
      events.map((e) => e.kind),
      ['check', 'reject', 'command'],
    );
  });

  it('rejects literal sizes that cannot be numbers', () => {
    const events = run('A1 LOGIN {99999999999999999999}\r\nA2 X {9007199254740992}\r\nA3 NOOP\r\n');
    assert.deepEqual(events, [
      {
        kind: 'reject',
        info: { tag: 'A1', command: 'LOGIN', response: 'BAD', text: 'Literal size too large', fatal: false },
      },
      { kind: 'reject', info: { tag: 'A2', command: 'X', response: 'BAD', text: 'Literal size too large', fatal: false } },
      { kind: 'command', segments: ['A3 NOOP'] },
    ]);
    const fatal = run('A1 LOGIN {99999999999999999999+}\r\n');
    assert.deepEqual(fatal, [
      {
        kind: 'reject',
        info: { tag: 'A1', command: 'LOGIN', response: 'BAD', text: 'Literal size too large', fatal: true },
      },
    ]);
  });

  it('limits the number of literals per command', () => {
    const events = run('A1 X {1+}\r\na {1+}\r\nb {1+}\r\nc\r\nA2 NOOP\r\n', { maxLiterals: 2 });
    assert.deepEqual(
      events.map((e) => e.kind),
      ['check', 'check', 'reject', 'command'],
    );
    const reject = events[2];
    assert.ok(reject?.kind === 'reject');
    assert.equal(reject.info.text, 'Too many literals in command');
    assert.deepEqual(commands(events), [['A2 NOOP']]);
  });

  it('limits the size of a whole command', () => {
    const events = run('A1 X {10}\r\n0123456789 {10}\r\nA2 NOOP\r\n', { maxCommandBytes: 25 });
    assert.deepEqual(
      events.map((e) => e.kind),
      ['check', 'cont', 'reject', 'command'],
    );
    const reject = events[2];
    assert.ok(reject?.kind === 'reject');
    assert.deepEqual(reject.info, {
      tag: 'A1',
      command: 'X',
      response: 'NO',
      code: 'TOOBIG',
      text: 'Command too large',
      fatal: false,
    });
  });

  it('can be destroyed from onReject', () => {
    const events: string[] = [];
    const reader: CommandReader = new CommandReader({
      hooks: {
        onCommand: () => events.push('command'),
        onLine: () => events.push('line'),
        onReject: () => {
          events.push('reject');
          reader.destroy();
        },
        sendContinuation: () => events.push('cont'),
      },
      maxLineLength: 10,
    });
    reader.push(Buffer.from('A1 XXXXXXXXXXXXXXXXXXXXXX\r\nA2 NOOP\r\n'));
    reader.push(Buffer.from('A3 NOOP\r\n'));
    assert.deepEqual(events, ['reject']);
  });
});

describe('CommandReader line limits', () => {
  it('rejects a long line, discards it and recovers', () => {
    const events = run(`A1 LOGIN ${'x'.repeat(100)}\r\nA2 NOOP\r\n`, { maxLineLength: 20 });
    assert.deepEqual(events, [
      {
        kind: 'reject',
        info: { tag: 'A1', command: 'LOGIN', response: 'BAD', text: 'Command line too long', fatal: false },
      },
      { kind: 'command', segments: ['A2 NOOP'] },
    ]);
  });

  it('accepts a line of exactly the maximum length', () => {
    const line = `A1 ${'x'.repeat(17)}`; // 20 bytes
    assert.deepEqual(commands(run(`${line}\r\n${line}\n`, { maxLineLength: 20 })), [[line], [line]]);
    const events = run(`${line}y\r\nA2 NOOP\r\n`, { maxLineLength: 20 });
    assert.deepEqual(
      events.map((e) => e.kind),
      ['reject', 'command'],
    );
  });

  it('applies the limit to each line of a command, not to literals', () => {
    const events = run(`A1 LOGIN {30}\r\n${'y'.repeat(30)} ${'z'.repeat(15)}\r\n`, { maxLineLength: 20 });
    assert.deepEqual(commands(events), [['A1 LOGIN ', { lit: 'y'.repeat(30), binary: false }, ` ${'z'.repeat(15)}`]]);
    const long = run(`A1 LOGIN {3}\r\nabc ${'z'.repeat(30)}\r\nA2 NOOP\r\n`, { maxLineLength: 20 });
    assert.deepEqual(
      long.map((e) => e.kind),
      ['check', 'cont', 'reject', 'command'],
    );
    const reject = long[2];
    assert.ok(reject?.kind === 'reject');
    assert.equal(reject.info.tag, 'A1');
  });

  it('skips a non-synchronizing literal announced by a line that was too long', () => {
    const events = run(`A1 APPEND ${'x'.repeat(50)} {12+}\r\nA9 LOGOUT\r\n\r\nA2 NOOP\r\n`, { maxLineLength: 20 });
    assert.deepEqual(
      events.map((e) => e.kind),
      ['reject', 'command'],
    );
    assert.deepEqual(commands(events), [['A2 NOOP']]);
  });

  it('names the tag and command of an overlong line only when they are whole, however it is split (fuzz finding)', () => {
    // The reader used to take them from the bytes at hand when the line overflowed, so the
    // chunking decided them, and a BAD could carry a prefix of a tag: a tag never sent.
    const reject = (input: string) => {
      const events = run(input, { maxLineLength: 20 });
      assert.equal(events[0]?.kind, 'reject');
      return events[0]!.kind === 'reject' ? [events[0]!.info.tag, events[0]!.info.command] : [];
    };
    assert.deepEqual(reject(`${'T'.repeat(60)} NOOP\r\n`), [null, null]);
    assert.deepEqual(reject(`A1 ${'X'.repeat(60)}\r\n`), ['A1', null]);
    assert.deepEqual(reject(`A1 UID FETCH ${'9'.repeat(60)}\r\n`), ['A1', 'UID FETCH']);
    assert.deepEqual(reject(`A1 UID ${'F'.repeat(60)}\r\n`), ['A1', 'UID']);
    assert.deepEqual(reject(`A1 NOOP ${'x'.repeat(60)}\r\n`), ['A1', 'NOOP']);
  });

  it('gives no tag for garbage', () => {
    const events = run(`(((${'x'.repeat(50)}\r\n`, { maxLineLength: 20 });
    const reject = events[0];
    assert.ok(reject?.kind === 'reject');
    assert.equal(reject.info.tag, null);
    assert.equal(reject.info.command, null);
  });
});

describe('CommandReader flow control and line mode', () => {
  it('pauses after each command and buffers input meanwhile', () => {
    const { reader, events } = harness({ auto: false });
    reader.push(Buffer.from('A1 NOOP\r\nA2 NOOP\r\nA3 NO'));
    assert.equal(events.length, 1);
    assert.equal(reader.isPaused, true);
    assert.equal(reader.bufferedBytes, 14);
    reader.push(Buffer.from('OP\r\n'));
    assert.equal(events.length, 1);
    assert.equal(reader.bufferedBytes, 18);
    reader.next('command');
    assert.equal(events.length, 2);
    reader.next('command');
    assert.equal(events.length, 3);
    assert.equal(reader.bufferedBytes, 0);
    reader.next('command');
    assert.equal(reader.isPaused, false);
    assert.deepEqual(commands(events), [['A1 NOOP'], ['A2 NOOP'], ['A3 NOOP']]);
  });

  it('does not ask for a continuation while paused', () => {
    const { reader, events } = harness({ auto: false });
    reader.push(Buffer.from('A1 NOOP\r\nA2 LOGIN {3}\r\n'));
    assert.deepEqual(
      events.map((e) => e.kind),
      ['command'],
    );
    reader.next();
    assert.deepEqual(
      events.map((e) => e.kind),
      ['command', 'check', 'cont'],
    );
  });

  it('reads raw lines in line mode (IDLE DONE, SASL data)', () => {
    const events = run('A1 IDLE\r\nDONE\r\nA2 AUTHENTICATE PLAIN\r\n{5}\nA3 NOOP\r\n', {
      modeAfter: (text) => (text.includes('IDLE') || text.includes('AUTHENTICATE') ? 'line' : 'command'),
    });
    assert.deepEqual(events, [
      { kind: 'command', segments: ['A1 IDLE'] },
      { kind: 'line', line: 'DONE' },
      { kind: 'command', segments: ['A2 AUTHENTICATE PLAIN'] },
      { kind: 'line', line: '{5}' },
      { kind: 'command', segments: ['A3 NOOP'] },
    ]);
  });

  it('rejects a long line in line mode and keeps reading lines', () => {
    const { reader, events } = harness({ auto: false, maxLineLength: 8 });
    reader.next('line');
    reader.push(Buffer.from(`${'a'.repeat(30)}\r\nshort\r\n`));
    assert.deepEqual(events, [
      { kind: 'reject', info: { tag: null, command: null, response: 'BAD', text: 'Line too long', fatal: false } },
      { kind: 'line', line: 'short' },
    ]);
  });

  it('accepts the hooks as first argument or inside the config', () => {
    const got: string[] = [];
    const hooks = {
      onCommand: (s: Segment[]) => got.push(show(s).join('')),
      onLine: () => undefined,
      onReject: () => undefined,
      sendContinuation: () => undefined,
    };
    new CommandReader(hooks, { maxLineLength: 100 }).push(Buffer.from('A NOOP\r\n'));
    new CommandReader({ hooks, paused: true }).push(Buffer.from('B NOOP\r\n'));
    assert.deepEqual(got, ['A NOOP']);
  });

  it('frames a 200 KB line fed a byte at a time and a 4 MB literal fed in 1 KB pieces', () => {
    const { reader, events } = harness({ maxLineLength: 1 << 20 });
    reader.push(Buffer.from('A1 X '));
    for (let i = 0; i < 200_000; i++) reader.push(Buffer.from('y'));
    reader.push(Buffer.from(' {4000000}\r\n'));
    const chunk = Buffer.alloc(1000, 0x7a);
    for (let i = 0; i < 4000; i++) reader.push(chunk);
    reader.push(Buffer.from('\r\n'));
    const cmd = commands(events)[0]!;
    assert.equal((cmd[0] as string).length, 200_006);
    assert.equal((cmd[1] as { lit: string }).lit.length, 4_000_000);
  });
});
