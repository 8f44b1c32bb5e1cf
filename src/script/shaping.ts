/**
 * Script rules on structured responses, per session: `mutate`, `literals`
 * and `defer` (of `response` rules, and of a `command` rule for each of its
 * command's untagged responses), and `continuation` rules on `+` lines.
 *
 * The session hands every response it builds from values here while such
 * rules exist; without them it serializes directly and nothing here runs.
 */
import { hasTransport } from './transport.js';
import type { ScriptAction, ScriptEngine } from './engine.js';
import { applyOps, applyTextOps } from './mutate.js';
import { encodeScriptResponse, parseResponseLine, responseType, textResponseType, type ScriptResponse } from './response.js';
import type { ScriptContext, ScriptOn, ScriptRule } from './rule.js';
import type { ImapValue } from '../imap/wire/values.js';

/** What the shaper needs from its session. */
export interface ShaperHost {
  context(event: ScriptOn, data: Buffer | null): ScriptContext;
  /** A command rule gathers the command's output (delay, chunk, ...). */
  capturing(): boolean;
  endCapture(): void;
  /** Writes bytes that response rules may still act on. */
  write(data: Buffer): void;
  /** Writes bytes past the response rules. */
  writeOut(data: Buffer): void;
  /** Sends bytes as a rule's send/drop/delay/chunk/truncate/close/before/after say. */
  applyOutput(action: ScriptAction, data: Buffer): void;
  /** Most bytes `defer` may hold; beyond it held responses go out (bounded memory). */
  maxHeld(): number;
}

/** True when the rule shapes bytes on the way out, not only the response. */
export function shapesOutput(rule: ScriptRule): boolean {
  return (
    rule.send !== undefined ||
    rule.drop === true ||
    rule.before !== undefined ||
    rule.after !== undefined ||
    (rule.delay ?? 0) > 0 ||
    rule.chunk !== undefined ||
    rule.truncate !== undefined ||
    (rule.close !== undefined && rule.close !== false) ||
    // Transport faults act where the output is written (session applyOutput).
    hasTransport(rule)
  );
}

/** True when the rule acts on responses one by one (mutate, literals, defer). */
export function shapesResponses(rule: ScriptRule): boolean {
  return rule.mutate !== undefined || rule.literals === true || rule.defer !== undefined;
}

function clone(value: ImapValue): ImapValue {
  return Array.isArray(value) ? value.map(clone) : value;
}

/** What makes a session's ShaperHost on first need. */
export interface ShaperHostSource {
  scriptHost(): ShaperHost;
}

/** A deep copy of the lists of `r`: values built by the session may be shared (cached flag lists). */
function cloneResponse(r: ScriptResponse): ScriptResponse {
  if (r.kind === 'data') return { kind: 'data', values: r.values.map(clone) };
  if (r.kind === 'status') return { ...r, code: r.code ? { name: r.code.name, args: r.code.args.map(clone) } : null };
  return { ...r };
}

interface Shaped {
  response: ScriptResponse | null;
  literals: boolean;
  defer: 'tagged' | 'next' | null;
  textOps: { replace: string; with: string }[];
}

export class ResponseShaper {
  /** The running command's rule with per-response actions. */
  private command: ScriptRule | null = null;
  /** Commands started on this session: `defer: "next"` waits for a later one. */
  private seq = 0;
  private held: { tagged: Buffer[]; next: Buffer[]; nextAfter: number; bytes: number } | null = null;

  private madeHost: ShaperHost | null = null;

  /**
   * `source.scriptHost()` is called when a rule first needs the session:
   * most sessions never meet a response rule, and a host is an object of
   * closures that each idle session would keep (issue 20's budget per
   * session). The source is an object the session has anyway, not a
   * closure of its own.
   */
  constructor(
    private readonly script: ScriptEngine,
    private readonly source: ShaperHostSource,
  ) {}

  private get host(): ShaperHost {
    return (this.madeHost ??= this.source.scriptHost());
  }

  /** True while responses must come here (structured, one by one). */
  active(kind?: 'continuation'): boolean {
    if (this.command !== null) return true;
    const script = this.script;
    return script.has('response') || (kind === 'continuation' && script.has('continuation'));
  }

  /** The structure of `data` when it is one response line this parser reads (no literal), else null. */
  structureOf(data: Buffer): ScriptResponse | null {
    if (data.length > 8192 || data.indexOf('\r\n') !== data.length - 2) return null;
    // 8-bit text (a UTF-8 greeting) stays bytes: resp-text is 7-bit when serialized again.
    for (const b of data) if (b > 0x7f) return null;
    return parseResponseLine(data.toString('latin1'));
  }

  typeOfText(text: string): string | null {
    return textResponseType(text);
  }

  commandStarted(): void {
    this.seq++;
  }

  /** A command rule fired: true when it only acts per response (its output need not be gathered). */
  startCommand(rule: ScriptRule): boolean {
    if (!shapesResponses(rule)) return false;
    this.command = rule;
    return !shapesOutput(rule);
  }

  endCommand(): void {
    this.command = null;
  }

  close(): void {
    this.command = null;
    this.held = null;
  }

  /** Response text (CRLF-terminated lines): each line that parses goes as a structured response. */
  respondText(text: string): void {
    for (const line of text.split(/(?<=\r\n)/)) {
      if (line.length === 0) continue;
      const parsed = parseResponseLine(line);
      if (parsed) this.respond(parsed);
      else this.host.write(Buffer.from(line, 'latin1'));
    }
  }

  /** Sends one response through the rules. */
  respond(r: ScriptResponse): void {
    this.releaseNext();
    const script = this.script;
    let shaped: Shaped = { response: r, literals: false, defer: null, textOps: [] };
    const type = responseType(r);
    const untagged = r.kind === 'data' || (r.kind === 'status' && r.tag === null);
    const cmd = this.command;
    if (cmd && untagged && type !== null && (cmd.untagged === undefined || cmd.untagged === '*' || cmd.untagged.toUpperCase() === type)) {
      shaped = this.apply(cmd, shaped, () => this.host.context('response', encodeScriptResponse(r)));
    }
    if (r.kind === 'continuation' && script.has('continuation')) {
      const bytes = this.bytes(shaped);
      const action = bytes && script.fire({ ...this.host.context('continuation', bytes), response: r });
      if (action) {
        // A `+` must not overtake the command output a rule still holds.
        if (this.host.capturing()) this.host.endCapture();
        shaped = this.apply(action.rule, shaped, () => this.host.context('continuation', bytes));
        const out = this.bytes(shaped) ?? Buffer.alloc(0);
        if (shapesOutput(action.rule)) this.host.applyOutput(action, out);
        else this.host.writeOut(out);
        return;
      }
    }
    if (!this.host.capturing() && script.has('response') && shaped.response) {
      const bytes = this.bytes(shaped)!;
      const ctx = this.host.context('response', bytes);
      ctx.untagged = responseType(shaped.response);
      ctx.response = shaped.response;
      // Rules that only change the response compose (two defects on one response); a rule that shapes output ends the chain.
      for (const action of script.fireAll(ctx, (rule) => shapesResponses(rule) && !shapesOutput(rule))) {
        if (!shaped.response) break;
        shaped = this.apply(action.rule, shaped, () => ctx);
        if (shapesOutput(action.rule)) {
          this.host.applyOutput(action, this.bytes(shaped) ?? Buffer.alloc(0));
          this.afterSent(r);
          return;
        }
      }
    }
    const out = this.bytes(shaped);
    if (out && shaped.defer) this.hold(shaped.defer, out);
    else if (out) this.host.writeOut(out);
    this.afterSent(r);
  }

  /** A rule's mutate, literals and defer on the response. */
  private apply(rule: ScriptRule, shaped: Shaped, ctx: () => ScriptContext): Shaped {
    let response = shaped.response;
    const textOps = [...shaped.textOps];
    if (response && rule.mutate !== undefined) {
      response = cloneResponse(response);
      if (typeof rule.mutate === 'function') {
        const out = rule.mutate(response, ctx());
        if (out === null) response = null;
        else if (out !== undefined) response = out;
      } else {
        textOps.push(...applyOps(response, rule.mutate));
      }
    }
    return {
      response,
      literals: shaped.literals || rule.literals === true,
      defer: rule.defer ?? shaped.defer,
      textOps,
    };
  }

  private bytes(shaped: Shaped): Buffer | null {
    if (!shaped.response) return null;
    return applyTextOps(encodeScriptResponse(shaped.response, shaped.literals), shaped.textOps);
  }

  /** After a tagged response: what `defer: "tagged"` held goes out. */
  private afterSent(r: ScriptResponse): void {
    if (r.kind !== 'status' || r.tag === null || !this.held || this.held.tagged.length === 0) return;
    const out = this.held.tagged;
    this.held.tagged = [];
    this.held.bytes = this.held.next.reduce((n, b) => n + b.length, 0);
    for (const data of out) this.host.writeOut(data);
  }

  private hold(kind: 'tagged' | 'next', data: Buffer): void {
    const held = (this.held ??= { tagged: [], next: [], nextAfter: this.seq, bytes: 0 });
    if (kind === 'next') {
      if (held.next.length === 0) held.nextAfter = this.seq;
      held.next.push(data);
    } else {
      held.tagged.push(data);
    }
    held.bytes += data.length;
    if (held.bytes > this.host.maxHeld()) {
      // A client that never sends another command cannot make the server hold without bound.
      this.held = null;
      for (const d of [...held.tagged, ...held.next]) this.host.writeOut(d);
    }
  }

  /** Before any output of a later command: what `defer: "next"` held goes out. */
  releaseNext(): void {
    const held = this.held;
    if (!held || held.next.length === 0 || this.seq <= held.nextAfter) return;
    const out = held.next;
    held.next = [];
    held.bytes = held.tagged.reduce((n, b) => n + b.length, 0);
    for (const data of out) this.host.writeOut(data);
  }
}
