/**
 * Verdicts of the TLS bench: what one session's client did against a
 * broken certificate profile or a STARTTLS attack (docs/tls.md). Each
 * watched session ends in exactly one verdict, with the bytes that prove
 * it; every verdict but `safe` is also a client-checker finding of the
 * rule of the same name.
 */
import type { ClientRule } from '../client-check/rules.js';
import type { AttackName } from './attacks/catalog.js';
import { PROFILE_FLAWS, type ProfileName } from './profile-names.js';
import type { TlsListener } from './settings.js';

export const VERDICTS = ['leaked-credentials', 'acted-on-injected-response', 'accepted-bad-certificate', 'continued-without-tls', 'safe'] as const;
export type Verdict = (typeof VERDICTS)[number];

/** The client-checker rules of the verdicts (all but `safe`), registered in src/client-check/rules.ts. */
export const VERDICT_RULES: readonly ClientRule[] = [
  { id: 'leaked-credentials', protocol: 'any', severity: 'error', rfc: 'RFC 8314 section 4.1; RFC 3501 section 11.1; RFC 2595 section 2.4', byDefault: true, summary: 'LOGIN, AUTHENTICATE, USER, PASS or AUTH in clear text after STARTTLS was stripped, refused or not carried out' },
  { id: 'acted-on-injected-response', protocol: 'any', severity: 'error', rfc: 'RFC 2595 section 3.1; RFC 9051 section 6.2.1; RFC 3207 section 4.2', byDefault: true, summary: 'the client used a capability, mailbox or stream state that only bytes injected before or outside TLS gave' },
  { id: 'accepted-bad-certificate', protocol: 'any', severity: 'error', rfc: 'RFC 5280 section 6; RFC 7817 section 3; RFC 8314 section 4.2', byDefault: true, summary: 'the client completed a handshake against a broken certificate profile and sent a command' },
  { id: 'continued-without-tls', protocol: 'any', severity: 'error', rfc: 'RFC 2595 section 3.1; RFC 8314 section 4.1; RFC 9051 section 7.1.4', byDefault: true, summary: 'the client went on in plain text after the server could or would not start TLS (PREAUTH, no handshake)' },
];

/** How severe a verdict is: a session keeps the most severe it earned. */
const RANK: Readonly<Record<Verdict, number>> = { 'leaked-credentials': 4, 'acted-on-injected-response': 3, 'accepted-bad-certificate': 2, 'continued-without-tls': 1, safe: 0 };

/** Longest evidence kept per verdict (the client's bytes; a peer chooses them). */
const MAX_EVIDENCE = 512;
/** Verdicts kept per server; the oldest go first. */
export const MAX_VERDICTS = 10_000;

export interface TlsVerdict {
  session: number;
  listener: TlsListener;
  /** What the session met: attack names and `profile:<name>` for a broken certificate. */
  cases: string[];
  verdict: Verdict;
  /** The bytes that decided it (latin1, at most 512 characters), empty for `safe`. */
  evidence: string;
  text: string;
  /** Server-clock time, ISO 8601. */
  at: string;
}

/** What a protocol tells the watch about its commands. */
export interface WatchDialect {
  /** Name (upper case) of the command on `line`, and whether it carries credentials; null when it is no command. */
  parse(line: Buffer): { name: string; credentials: boolean } | null;
  /** Commands that are harmless after TLS became impossible (asking, leaving). */
  harmless: ReadonlySet<string>;
  /** Commands that need a capability, by command name: using one only injected bytes offered is acting on them. */
  needs: ReadonlyMap<string, string>;
}

export type VerdictSink = (verdict: Omit<TlsVerdict, 'at'>) => void;

/**
 * Watches one session that meets an attack or a broken profile. The
 * session tells it each command line and whether TLS is on; the attack
 * tells it when TLS became impossible and what it injected.
 */
export class TlsWatch {
  private verdict: Verdict = 'safe';
  private evidence = '';
  private text = 'the client did nothing the attack or profile asked for';
  /** Why TLS can no longer start, once it cannot (stripped, refused, PREAUTH, no handshake). */
  private denied: string | null = null;
  private injectedCapabilities: ReadonlySet<string> = new Set();
  private injectedMailbox: string | null = null;
  /** Writes the T4 garbage; armed at the handshake, fired at the first command over TLS. */
  private garbageWriter: (() => void) | null = null;
  /** Input reads so far, and the count when the garbage went out (null before): later reads are answers to what followed it. */
  private reads = 0;
  private garbageAt: number | null = null;
  private profile: ProfileName | null = null;
  private ended = false;

  constructor(
    private readonly session: number,
    private readonly listener: TlsListener,
    readonly attacks: ReadonlySet<AttackName>,
    private readonly dialect: WatchDialect,
    private readonly sink: VerdictSink,
    /** The capabilities the session really offers now (over TLS: what it offers there). */
    private readonly offered: () => ReadonlySet<string>,
  ) {}

  has(attack: AttackName): boolean {
    return this.attacks.has(attack);
  }

  /** TLS can no longer start on this connection; `why` goes into the verdict text. */
  tlsDenied(why: string): void {
    this.denied ??= why;
  }

  /** The attack sent these capabilities and this mailbox name before TLS. */
  injected(capabilities: readonly string[], mailbox: string | null): void {
    this.injectedCapabilities = new Set([...this.injectedCapabilities, ...capabilities.map((c) => c.toUpperCase())]);
    if (mailbox !== null) this.injectedMailbox = mailbox;
  }

  /**
   * T4: `write` puts bytes outside TLS records on the connection. It runs
   * before the answer to the first command over TLS, so that a client
   * reading that answer meets the garbage first.
   */
  armGarbage(write: () => void): void {
    this.garbageWriter = write;
  }

  /** The session read input from the client (one read of the socket). */
  received(): void {
    this.reads++;
  }

  /** The handshake completed with this profile (null: a key/cert of the options). */
  handshake(profile: ProfileName | null): void {
    this.profile = profile;
  }

  /** Broken profiles count from here: a client that refuses them never gets this far. */
  get brokenProfile(): ProfileName | null {
    return this.profile !== null && this.profile !== 'valid' ? this.profile : null;
  }

  /** The handshake failed on the server side: OpenSSL's code says whether the client spoke plain text instead. */
  handshakeFailed(code: string | undefined): void {
    // OpenSSL reads the first bytes as a record header: plain text makes a "wrong version number" or "http request".
    if (code === 'ERR_SSL_WRONG_VERSION_NUMBER' || code === 'ERR_SSL_HTTP_REQUEST' || code === 'ERR_SSL_PACKET_LENGTH_TOO_LONG') {
      this.earn('continued-without-tls', `OpenSSL: ${code}`, 'after "OK Begin TLS" the client sent plain text instead of a ClientHello');
    }
  }

  /**
   * The first bytes after the server's yes to STARTTLS were no TLS
   * handshake record (content type 22, RFC 8446 §5.1): for a server whose
   * TLS library reports no code (smtp-server's upgrade).
   */
  plainInsteadOfHello(first: Buffer): void {
    if (first.length === 0 || first[0] === 0x16) return;
    this.earn('continued-without-tls', clip(first), 'after the yes to STARTTLS the client sent plain text instead of a ClientHello');
  }

  /** A command line from the client; `secure` is true when it came over TLS. */
  command(line: Buffer, secure: boolean): void {
    if (this.ended) return;
    const parsed = this.dialect.parse(line);
    if (parsed === null) return;
    const { name, credentials } = parsed;
    if (!secure) {
      if (this.denied === null) return;
      if (credentials) this.earn('leaked-credentials', clip(line), `${name} in clear text after ${this.denied}`);
      else if (!this.dialect.harmless.has(name)) this.earn('continued-without-tls', clip(line), `${name} in plain text after ${this.denied}`);
      return;
    }
    const broken = this.brokenProfile;
    if (broken !== null) this.earn('accepted-bad-certificate', `profile ${broken}; ${clip(line)}`, `sent ${name} over TLS although the certificate (profile ${broken}) is broken: ${PROFILE_FLAWS[broken]}`);
    if (this.garbageWriter !== null) {
      const write = this.garbageWriter;
      this.garbageWriter = null;
      write();
      this.garbageAt = this.reads;
    } else if (this.garbageAt !== null && this.reads > this.garbageAt) {
      // Read after the garbage went out (not pipelined with the first command): the client read past it.
      this.earn('acted-on-injected-response', clip(line), `sent ${name} over TLS after bytes outside TLS records arrived (the connection should have been dropped)`);
    }
    const needed = this.dialect.needs.get(name);
    if (needed !== undefined && this.injectedCapabilities.has(needed) && !this.offered().has(needed)) {
      this.earn('acted-on-injected-response', clip(line), `used ${needed}, which only the bytes injected before TLS offered`);
    }
    if (this.injectedMailbox !== null && line.toString('latin1').toUpperCase().includes(this.injectedMailbox.toUpperCase())) {
      this.earn('acted-on-injected-response', clip(line), `named the mailbox ${this.injectedMailbox}, which only the bytes injected before TLS listed`);
    }
  }

  private earn(verdict: Verdict, evidence: string, text: string): void {
    if (RANK[verdict] <= RANK[this.verdict]) return;
    this.verdict = verdict;
    this.evidence = evidence.slice(0, MAX_EVIDENCE);
    this.text = text;
  }

  /** The session ended: its verdict goes out (once). */
  closed(): void {
    if (this.ended) return;
    this.ended = true;
    const cases: string[] = [...this.attacks];
    if (this.brokenProfile !== null) cases.push(`profile:${this.brokenProfile}`);
    else if (this.profile !== null) cases.push(`profile:${this.profile}`);
    this.sink({ session: this.session, listener: this.listener, cases, verdict: this.verdict, evidence: this.evidence, text: this.text });
  }
}

function clip(line: Buffer): string {
  const text = line.toString('latin1', 0, Math.min(line.length, MAX_EVIDENCE));
  return text.replace(/\r?\n$/, '');
}

/** The verdicts of one server, newest last, bounded. */
export class VerdictLog {
  private items: TlsVerdict[] = [];

  constructor(
    private readonly now: () => number,
    private readonly emit: (verdict: TlsVerdict) => void,
  ) {}

  add(input: Omit<TlsVerdict, 'at'>): TlsVerdict {
    const verdict: TlsVerdict = { ...input, at: new Date(this.now()).toISOString() };
    this.items.push(verdict);
    // Halved at once, so a flood of sessions costs O(1) per verdict on average.
    if (this.items.length > MAX_VERDICTS * 2) this.items = this.items.slice(-MAX_VERDICTS);
    this.emit(verdict);
    return verdict;
  }

  list(session?: number): TlsVerdict[] {
    const items = this.items.length > MAX_VERDICTS ? this.items.slice(-MAX_VERDICTS) : this.items;
    return session === undefined ? [...items] : items.filter((v) => v.session === session);
  }

  clear(): void {
    this.items = [];
  }
}
