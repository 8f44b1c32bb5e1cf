/**
 * A server's TLS bench: its certificate authority, the TLS of each
 * listener, the STARTTLS attacks sessions meet and the verdicts they end
 * in. The server holds one; listeners ask it through `server.tlsFor()`.
 */
import type { TLSSocket } from 'node:tls';
import type { ResolvedOptions } from '../options/types.js';
import { combinationProblem, isAttack, type AttackName } from './attacks/catalog.js';
import { SMTP_ATTACKS } from './attacks/smtp-attack.js';
import { ListenerTls } from './listener-tls.js';
import { CertificateAuthority } from './profiles.js';
import type { TlsListener } from './settings.js';
import { TlsWatch, VerdictLog, type TlsVerdict, type WatchDialect } from './verdicts.js';
import { ServiceError } from '../errors.js';

export class ServerTls {
  private madeAuthority: CertificateAuthority | null = null;
  readonly verdicts: VerdictLog;
  private readonly listeners = new Map<TlsListener, ListenerTls>();
  /** Attacks the next sessions of each listener meet, from `attackNext` (the control API, REST), oldest first. */
  private readonly queued = new Map<TlsListener, AttackName[][]>();

  constructor(
    private readonly options: ResolvedOptions,
    now: () => number,
    onVerdict: (verdict: TlsVerdict) => void,
  ) {
    this.verdicts = new VerdictLog(now, onVerdict);
  }

  /** The CA and the certificates of the profiles, made when first asked for. */
  get authority(): CertificateAuthority {
    this.madeAuthority ??= new CertificateAuthority(this.options.tls.freshCa);
    return this.madeAuthority;
  }

  /** The TLS of `listener` (made on first use). */
  listener(listener: TlsListener): ListenerTls {
    let made = this.listeners.get(listener);
    if (made === undefined) {
      const settings = this.options.tls.listeners.get(listener)!;
      made = new ListenerTls(listener, settings, () => this.authority, { key: this.options.tls.key, cert: this.options.tls.cert });
      this.listeners.set(listener, made);
    }
    return made;
  }

  /** A client certificate for `user`, signed by this server's CA (SASL EXTERNAL logs that user in). */
  clientCertificate(user: string, days?: number): { key: string; cert: string; ca: string } {
    if (typeof user !== 'string' || user === '' || user.length > 256 || /[\0\r\n]/.test(user)) throw new ServiceError('INVALID', 'user: expected a user name (1 to 256 characters, no NUL, CR or LF)');
    if (days !== undefined && !(Number.isSafeInteger(days) && days >= 1 && days <= 36500)) throw new ServiceError('INVALID', 'days: expected an integer from 1 to 36500');
    return { ...this.authority.clientCertificate(user, days), ca: this.authority.caPem };
  }

  /** The next session of `listener` to open meets `attacks` instead of the `attacks` option's. */
  attackNext(attacks: readonly string[], listener: TlsListener = 'imap'): void {
    if (listener !== 'imap' && listener !== 'pop3' && listener !== 'smtp') throw new ServiceError('INVALID', 'listener: expected imap, pop3 or smtp');
    const names: AttackName[] = [];
    for (const a of attacks) {
      if (!isAttack(a)) throw new ServiceError('INVALID', `attack: no attack named ${JSON.stringify(a)}`);
      if (listener === 'smtp' && !SMTP_ATTACKS.has(a)) throw new ServiceError('INVALID', `attack: ${a} has no SMTP equivalent (SMTP has no PREAUTH)`);
      names.push(a);
    }
    const problem = combinationProblem(names);
    if (problem) throw new ServiceError('INVALID', problem);
    let queue = this.queued.get(listener);
    if (queue === undefined) this.queued.set(listener, (queue = []));
    if (queue.length >= 1000) throw new ServiceError('CANNOT', 'too many queued attacks (1000); open sessions first');
    queue.push(names);
  }

  /**
   * A watch for a new session of `listener`, or null when the session meets
   * no attack and no broken profile can be served (no cost then).
   */
  watch(session: number, listener: TlsListener, dialect: WatchDialect, offered: () => ReadonlySet<string>, plainText: boolean, ruled?: readonly string[]): TlsWatch | null {
    // STARTTLS attacks meet plain-text sessions only: a script rule's choice (validated with the rule), then the queue, then the option.
    // The option is for every listener; SMTP plays the attacks it has an equivalent for (not PREAUTH).
    const chosen = !plainText ? [] : (ruled?.filter(isAttack) ?? this.queued.get(listener)?.shift() ?? this.options.attacks);
    const attacks = listener === 'smtp' ? chosen.filter((a) => SMTP_ATTACKS.has(a)) : chosen;
    const settings = this.options.tls.listeners.get(listener)!;
    const profiles = [settings.profile, ...settings.certificates.values()];
    if (attacks.length === 0 && !profiles.some((p) => p !== null && p !== 'valid')) return null;
    return new TlsWatch(session, listener, new Set(attacks), dialect, (v) => this.verdicts.add(v), offered);
  }

  /** Tells `watch` which profile `socket` was served, once its handshake is done, and how a failed one failed. */
  follow(watch: TlsWatch, listener: TlsListener, socket: TLSSocket): void {
    const l = this.listener(listener);
    let done = false;
    socket.once('secure', () => {
      done = true;
      watch.handshake(l.servedTo(socket)?.profile ?? null);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => {
      if (!done) watch.handshakeFailed(err.code);
    });
  }
}
