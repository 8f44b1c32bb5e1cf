/**
 * Four state-tracking clients (test/helpers/strict-client.ts) and the
 * control API as a fifth actor change one server at the same time for a
 * few seconds: APPEND, STORE with new keywords, EXPUNGE, COPY and MOVE
 * (into the selected mailbox too), SELECT, NOOP, IDLE, LOGOUT. Every response
 * is checked against each client's model of its mailbox, every command
 * against what it must have caused, and at the end every model against
 * the store. The test asserts zero mismatches.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Server } from '../../src/index.js';
import { Prng } from '../../src/util/prng.js';
import { StrictClient, type Mismatch, type Result } from '../helpers/strict-client.js';
import { mail, startServer } from '../helpers/server.js';

const RUN_MS = 3000;
/** The kinds of action a run must have done (each actor's `counts`). */
const ACTION_KINDS = ['APPEND', 'STORE', 'STORE new keyword', 'EXPUNGE', 'COPY', 'MOVE', 'COPY into itself', 'MOVE into itself', 'SELECT', 'NOOP', 'IDLE', 'LOGOUT'];
const SESSIONS = 4;
const MAILBOXES = ['INBOX', 'Other'];

class Actor {
  client!: StrictClient;
  readonly r: Prng;
  keywordN = 0;
  readonly counts: Record<string, number> = {};

  constructor(
    readonly name: string,
    seed: number,
    private readonly port: number,
    private readonly mismatches: Mismatch[],
    /** True when the server's mailbox has ever carried the keyword (its keyword list only grows). */
    private readonly keywordExists: (mailbox: string, keyword: string) => boolean,
  ) {
    this.r = new Prng(seed);
  }

  pick<T>(items: readonly T[]): T {
    return items[this.r.below(items.length)]!;
  }

  private count(what: string): void {
    this.counts[what] = (this.counts[what] ?? 0) + 1;
  }

  async start(): Promise<void> {
    this.client = await StrictClient.connect(this.port, this.name, (m) => this.mismatches.push(m));
    this.expectOk('LOGIN', await this.client.command('LOGIN testuser testpass'));
    await this.select(this.pick(MAILBOXES));
  }

  expectOk(what: string, r: Result): boolean {
    if (r.tagged.type === 'OK') return true;
    this.client.mismatch(what, `answered ${r.tagged.response.text}`);
    return false;
  }

  async select(mailbox: string): Promise<void> {
    const r = await this.client.command(`SELECT ${mailbox}`);
    this.expectOk(`SELECT ${mailbox}`, r);
    const exists = r.untagged.filter((u) => u.type === 'EXISTS');
    if (exists.length !== 1) this.client.mismatch(`SELECT ${mailbox}`, `${exists.length} EXISTS responses`);
    await this.client.sync();
  }

  /** Some UIDs the model knows (possibly expunged meanwhile by others). */
  someUids(max: number): number[] {
    const known = (this.client.model?.messages ?? []).map((m) => m.uid).filter((u): u is number => u !== null);
    const out = new Set<number>();
    const n = 1 + this.r.below(max);
    for (let i = 0; i < n && known.length; i++) out.add(this.pick(known));
    return [...out].sort((a, b) => a - b);
  }

  async step(): Promise<void> {
    const c = this.client;
    const model = c.model!;
    const k = this.r.below(100);
    if (k < 14) {
      // APPEND, half the time into the selected mailbox, sometimes with a new keyword.
      const target = this.r.below(2) ? model.mailbox : this.pick(MAILBOXES);
      const flags = this.r.below(3) === 0 ? `(${this.name}k${this.keywordN++})` : this.r.below(2) ? '(\\Seen)' : '()';
      const r = await c.command(`APPEND ${target} ${flags}`, Buffer.from(mail(`${this.name}-${this.keywordN}`)));
      this.count('APPEND');
      if (!this.expectOk('APPEND', r)) return;
      const uid = Number(/APPENDUID \d+ (\d+)/.exec(r.tagged.code ?? '')?.[1]);
      if (!uid) c.mismatch('APPEND', `no APPENDUID: ${r.tagged.response.text}`);
      if (target === model.mailbox && r.existsGrowth < 1) c.mismatch(`APPEND ${target}`, 'no EXISTS for a message appended to the selected mailbox (RFC 3501 §6.3.11)');
      return;
    }
    if (k < 36) {
      // STORE: flags and keywords, by UID or sequence number, sometimes silent.
      const uids = this.someUids(3);
      if (!uids.length) return;
      const newKeyword = this.r.below(3) === 0;
      const flag = newKeyword ? `${this.name}k${this.keywordN++}` : this.pick(['\\Seen', '\\Flagged', '\\Deleted', '\\Answered', 'shared1', 'shared2']);
      const op = this.pick(['+FLAGS', '-FLAGS', '+FLAGS', 'FLAGS']);
      const silent = this.r.below(5) === 0;
      const item = `${op}${silent ? '.SILENT' : ''}`;
      const r = await c.command(`UID STORE ${uids.join(',')} ${item} (${flag})`);
      this.count(newKeyword ? 'STORE new keyword' : 'STORE');
      if (!this.expectOk(`UID STORE ${item}`, r)) return;
      if (silent) {
        // The server says nothing about our own silent change: apply it to the model.
        for (const m of model.messages) {
          if (m.uid === null || !uids.includes(m.uid)) continue;
          if (op === '+FLAGS') m.flags.add(flag);
          else if (op === '-FLAGS') m.flags.delete(flag);
          else m.flags = new Set([flag]);
        }
        // A STORE whose messages were all expunged meanwhile (by the control actor) creates no keyword:
        // then there is nothing to announce.
        const created = this.keywordExists(model.mailbox, flag);
        if (op !== '-FLAGS' && !flag.startsWith('\\') && created && !model.flags.has(flag) && r.untagged.every((u) => u.type !== 'FLAGS')) {
          c.mismatch(`UID STORE ${item} (${flag})`, 'new keyword not announced with FLAGS (RFC 3501 §7.2.6)');
        }
      } else {
        for (const f of r.untagged.filter((u) => u.type === 'FETCH')) {
          const m = model.messages[f.number! - 1];
          if (!m || m.uid === null || !uids.includes(m.uid)) continue;
          const has = m.flags.has(flag);
          if (op === '-FLAGS' ? has : !has) c.mismatch(`UID STORE ${item} (${flag})`, `FETCH shows ${[...m.flags].join(' ')}`);
        }
      }
      return;
    }
    if (k < 44) {
      const r = await c.command('EXPUNGE');
      this.count('EXPUNGE');
      if (!this.expectOk('EXPUNGE', r)) return;
      const left = model.messages.filter((m) => m.flags.has('\\Deleted'));
      if (left.length) c.mismatch('EXPUNGE', `${left.length} messages with \\Deleted left after EXPUNGE: UIDs ${left.map((m) => m.uid).join(',')}`);
      return;
    }
    if (k < 60) {
      // COPY or MOVE, into the selected mailbox itself half the time.
      const uids = this.someUids(3);
      if (!uids.length) return;
      const move = this.r.below(2) === 0;
      const target = this.r.below(2) ? model.mailbox : this.pick(MAILBOXES);
      const self = target === model.mailbox;
      const cmd = `UID ${move ? 'MOVE' : 'COPY'} ${uids.join(',')} ${target}`;
      const r = await c.command(cmd);
      this.count(`${move ? 'MOVE' : 'COPY'}${self ? ' into itself' : ''}`);
      if (!this.expectOk(cmd, r)) return;
      const code = move ? r.untagged.find((u) => u.type === 'OK' && /^COPYUID /i.test(u.code ?? ''))?.code : r.tagged.code;
      if (/ OK No messages to /.test(r.tagged.response.text)) return;
      const m = /^COPYUID \d+ (\S+) (\S+)/i.exec(code ?? '');
      if (!m) return c.mismatch(cmd, `no COPYUID: ${r.tagged.response.text}`);
      const moved = expand(m[1]!);
      const created = expand(m[2]!);
      if (moved.length !== created.length) c.mismatch(cmd, `COPYUID maps ${moved.length} UIDs to ${created.length}`);
      if (moved.some((u) => !uids.includes(u))) c.mismatch(cmd, `COPYUID names UIDs not asked for: ${m[1]}`);
      if (self && r.existsGrowth < created.length) c.mismatch(cmd, `${created.length} messages into the selected mailbox but EXISTS grew by ${r.existsGrowth}`);
      if (move && r.expunged < moved.length) c.mismatch(cmd, `${moved.length} messages moved but ${r.expunged} EXPUNGE responses`);
      return;
    }
    if (k < 68) {
      await this.select(this.pick(MAILBOXES));
      this.count('SELECT');
      return;
    }
    if (k < 80) {
      const r = await c.command('NOOP');
      this.count('NOOP');
      this.expectOk('NOOP', r);
      return;
    }
    if (k < 84) {
      // Updates arrive while the client waits; they are checked like the others.
      await c.idle(5 + this.r.below(20));
      this.count('IDLE');
      return;
    }
    if (k < 96) {
      await c.sync();
      this.count('UID FETCH');
      return;
    }
    await c.logout();
    this.count('LOGOUT');
    await this.start();
  }

  /** After the run: the model is the store. */
  async finish(server: Server): Promise<void> {
    const c = this.client;
    await c.command('NOOP');
    await c.sync();
    const model = c.model;
    if (!model) return c.mismatch('(end)', 'no mailbox selected');
    const store = server.control.listMessages(model.mailbox).map((m) => `${m.uid}:${[...m.flags].sort().join(',')}`);
    const seen = model.messages.map((m) => `${m.uid}:${[...m.flags].sort().join(',')}`);
    if (store.join(' ') !== seen.join(' ')) c.mismatch('(end)', `model of ${model.mailbox} differs from the store:\n  model ${seen.join(' ')}\n  store ${store.join(' ')}`);
    const keywords = new Set(server.control.listMessages(model.mailbox).flatMap((m) => m.flags.filter((f) => !f.startsWith('\\'))));
    for (const kw of keywords) if (!model.flags.has(kw)) c.mismatch('(end)', `keyword ${kw} in the mailbox but never in FLAGS`);
    await c.logout();
  }
}

/** `3,5:7` → [3,5,6,7]. */
function expand(set: string): number[] {
  const out: number[] = [];
  for (const part of set.split(',')) {
    const [a, b] = part.split(':').map(Number) as [number, number | undefined];
    const hi = b ?? a;
    for (let i = Math.min(a, hi); i <= Math.max(a, hi); i++) out.push(i);
  }
  return out;
}

test('four strict clients and the control API change one server at once: zero mismatches', async () => {
  const { server, port } = await startServer({
    plugins: 'all',
    storage: {
      INBOX: {
        messages: Array.from({ length: 12 }, (_, i) => ({ raw: mail(`in${i}`), flags: i % 3 ? [] : ['\\Seen', 'shared1'] })),
      },
      '': { folders: { Other: { messages: Array.from({ length: 6 }, (_, i) => mail(`other${i}`)) } } },
    },
  });
  const mismatches: Mismatch[] = [];
  const actors = Array.from({ length: SESSIONS }, (_, i) => new Actor(`s${i + 1}`, 1000 + i, port, mismatches, (mailbox, keyword) => server.store.get(mailbox)?.keywords.has(keyword) ?? false));
  const control = new Prng(77);
  const controlCounts: Record<string, number> = {};
  try {
    await Promise.all(actors.map((a) => a.start()));
    const end = Date.now() + RUN_MS;
    let running = true;
    // The fifth actor: control-API changes while the sessions run.
    const controlActor = (async () => {
      let n = 0;
      while (running) {
        await new Promise((resolve) => setTimeout(resolve, 1 + control.below(5)));
        const mailbox = MAILBOXES[control.below(2)]!;
        const messages = server.control.listMessages(mailbox);
        const k = control.below(3);
        if (k === 0 || messages.length < 3) {
          server.control.addMessage(mailbox, { raw: mail(`ctl${n}`), flags: control.below(2) ? [`ck${n++}`] : [] });
          controlCounts.addMessage = (controlCounts.addMessage ?? 0) + 1;
        } else if (k === 1) {
          const uid = messages[control.below(messages.length)]!.uid;
          const flag = control.below(3) === 0 ? `ck${n++}` : ['\\Seen', '\\Deleted', '\\Flagged', 'shared2'][control.below(4)]!;
          server.control.setFlags(mailbox, { uids: [uid], flags: [flag], mode: (['add', 'remove', 'add'] as const)[control.below(3)]! });
          controlCounts.setFlags = (controlCounts.setFlags ?? 0) + 1;
        } else {
          server.control.expungeMessages(mailbox, { uids: [messages[control.below(messages.length)]!.uid] });
          controlCounts.expunge = (controlCounts.expunge ?? 0) + 1;
        }
      }
    })();
    // On a slow or busy machine a run of RUN_MS may not reach every kind of action: it goes on
    // (at most three times as long) until the run has done every kind checked below.
    const allKindsDone = (): boolean => ACTION_KINDS.every((kind) => actors.some((a) => (a.counts[kind] ?? 0) > 0));
    await Promise.all(
      actors.map(async (a) => {
        while (Date.now() < end || (!allKindsDone() && Date.now() < end + 3 * RUN_MS)) await a.step();
      }),
    );
    running = false;
    await controlActor;
    for (const a of actors) await a.finish(server);
  } finally {
    for (const a of actors) a.client?.close();
    await server.stop();
  }
  // One line per kind of mismatch (numbers blanked), with how often and a first example.
  const kinds = new Map<string, { count: number; example: string }>();
  for (const m of mismatches) {
    const key = `${m.command.replace(/[\d,:]+/g, 'N')}: ${m.problem.replace(/\d+/g, 'N').slice(0, 100)}`;
    const seen = kinds.get(key);
    if (seen) seen.count++;
    else kinds.set(key, { count: 1, example: `${m.session} ${m.command}: ${m.problem}` });
  }
  assert.deepEqual([...kinds.values()].map((k) => `x${k.count} ${k.example}`), []);
  // The run did what it says: every kind of action happened, by every actor.
  const total: Record<string, number> = {};
  for (const a of actors) for (const [k, v] of Object.entries(a.counts)) total[k] = (total[k] ?? 0) + v;
  for (const kind of ACTION_KINDS) {
    assert.ok((total[kind] ?? 0) > 0, `no ${kind} in the run: ${JSON.stringify(total)}`);
  }
  for (const kind of ['addMessage', 'setFlags', 'expunge']) assert.ok((controlCounts[kind] ?? 0) > 0, `control actor never did ${kind}`);
  for (const a of actors) assert.ok(a.client.commands > 0);
});
