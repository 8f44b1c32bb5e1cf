/**
 * Mailbox access keys of the INTERNAL URLAUTH mechanism (RFC 4467 §7): one
 * random 128-bit key per user and mailbox, made on the first GENURLAUTH,
 * dropped by RESETKEY, by deleting or renaming the mailbox and by reset. A
 * token is HMAC-SHA1 of the rump URL's bytes under that key, in hex (the
 * grammar asks for at least 32 hex digits; SHA-1 gives 40).
 */
import { nodeCrypto } from '../../util/node-crypto.js';

export class AccessKeys {
  /** user → mailbox path → key. Maps: both names come from users. */
  private readonly keys = new Map<string, Map<string, Buffer>>();

  private key(user: string, path: string, create: boolean): Buffer | undefined {
    let byPath = this.keys.get(user);
    if (!byPath) {
      if (!create) return undefined;
      byPath = new Map();
      this.keys.set(user, byPath);
    }
    let key = byPath.get(path);
    if (!key && create) {
      key = nodeCrypto().randomBytes(16);
      byPath.set(path, key);
    }
    return key;
  }

  /** The token for a rump URL of `user`'s mailbox, making the key when there is none. */
  sign(user: string, path: string, rump: string): string {
    return nodeCrypto().createHmac('sha1', this.key(user, path, true)!).update(rump, 'latin1').digest('hex');
  }

  /** Whether `token` (hex, any case) is the one `sign` gives; false when no key exists. */
  verify(user: string, path: string, rump: string, token: string): boolean {
    const key = this.key(user, path, false);
    if (!key || !/^[0-9A-Fa-f]{40}$/.test(token)) return false;
    const expected = nodeCrypto().createHmac('sha1', key).update(rump, 'latin1').digest();
    return nodeCrypto().timingSafeEqual(expected, Buffer.from(token, 'hex'));
  }

  /** RESETKEY: one mailbox's key, or (without a path) every key of the user. */
  reset(user: string, path?: string): void {
    if (path === undefined) this.keys.delete(user);
    else this.keys.get(user)?.delete(path);
  }

  /** A mailbox went away (or took another name): URLs into it stop working. */
  dropMailbox(path: string): void {
    for (const byPath of this.keys.values()) byPath.delete(path);
  }

  clear(): void {
    this.keys.clear();
  }
}
