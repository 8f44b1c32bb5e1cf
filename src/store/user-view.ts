import { ServiceError } from '../errors.js';
import type { SeedNamespace } from '../options/types.js';
import type { Origin } from './changes.js';
import type { Mailbox } from './mailbox.js';
import type { Store } from './store.js';
import type { UserTrees } from './user-trees.js';
import type { MailboxView } from './view.js';

/** Where a name leads: the tree, the path there, and whose tree it is (null: the shared tree). */
interface Target {
  tree: Store;
  inner: string;
  owner: string | null;
}

/**
 * One user's names with `userMailboxes` (RFC 2342): their own tree as the
 * personal namespace, every other user's tree under the Other Users
 * namespace (`Other Users/bob/Archive`) and the shared tree's shared
 * namespaces as they are. Other users' mailboxes show only when the server
 * controls access (`foreign`: an extension such as ACL answers the access
 * point); which of them a user may see is then the access point's answer,
 * as for every other mailbox.
 */
export class UserView implements MailboxView {
  private cachedFor: Store | null = null;
  private cachedNamespaces: SeedNamespace[] = [];
  private readonly otherNamespace: SeedNamespace;

  constructor(
    readonly user: string,
    private readonly trees: UserTrees,
    private readonly foreign: () => boolean,
  ) {
    const { prefix, separator } = trees.otherUsers;
    this.otherNamespace = { prefix, type: 'user', separator, extra: {} };
  }

  private get own(): Store {
    return this.trees.tree(this.user);
  }

  get namespaces(): readonly SeedNamespace[] {
    const own = this.own;
    if (this.cachedFor !== own) {
      this.cachedFor = own;
      this.cachedNamespaces = [
        ...own.namespaces.filter((ns) => ns.type === 'personal'),
        this.otherNamespace,
        ...this.trees.shared.namespaces.filter((ns) => ns.type === 'shared'),
      ];
    }
    return this.cachedNamespaces;
  }

  /** The tree and path a name leads to; null for a name under Other Users that names no other user. */
  private target(path: string): Target | null {
    const { base, separator } = this.trees.otherUsers;
    if (path.startsWith(base)) {
      const rest = path.slice(base.length);
      const at = rest.indexOf(separator);
      const owner = at < 0 ? rest : rest.slice(0, at);
      if (owner === this.user || !this.trees.hasUser(owner) || !this.foreign()) return null;
      const tree = this.trees.tree(owner);
      return { tree, inner: at < 0 ? '' : tree.normalizePath(rest.slice(at + separator.length)), owner };
    }
    const shared = this.trees.shared;
    const ns = shared.namespaceOf(path);
    if (ns.type === 'shared' && ns.prefix !== '') return { tree: shared, inner: path, owner: null };
    const own = this.own;
    return { tree: own, inner: own.normalizePath(path), owner: this.user };
  }

  /** The name of `inner` of `owner`'s tree as this user sees it. */
  private outer(owner: string | null, inner: string): string {
    if (owner === null || owner === this.user) return inner;
    return this.trees.otherUsers.base + owner + this.trees.otherUsers.separator + inner;
  }

  normalizePath(path: string): string {
    const t = this.target(path);
    return t === null || t.inner === '' ? path : this.outer(t.owner, t.inner);
  }

  namespaceOf(path: string): SeedNamespace {
    if (path.startsWith(this.trees.otherUsers.base)) return this.otherNamespace;
    const t = this.target(path);
    return (t?.tree ?? this.own).namespaceOf(t?.inner ?? path);
  }

  delimiterFor(path: string): string {
    return this.namespaceOf(path).separator;
  }

  parentOf(path: string): string | null {
    const t = this.target(path);
    if (t === null) return null;
    if (t.owner === null || t.owner === this.user) return t.tree.parentOf(t.inner);
    if (t.inner === '') return null;
    // The level named after the owner is the parent of the top of their tree.
    const up = t.tree.parentOf(t.inner);
    return up === null ? this.trees.otherUsers.base + t.owner : this.outer(t.owner, up);
  }

  has(path: string): boolean {
    return this.get(path) !== undefined;
  }

  get(path: string): Mailbox | undefined {
    const t = this.target(path);
    if (t === null || t.inner === '') return undefined;
    return t.tree.get(t.inner);
  }

  require(path: string): Mailbox {
    const mailbox = this.get(path);
    if (!mailbox) throw new ServiceError('NONEXISTENT', `Mailbox ${JSON.stringify(path)} does not exist`);
    return mailbox;
  }

  list(): Mailbox[] {
    const out = [...this.own.list()];
    for (const m of this.trees.shared.list()) {
      const ns = this.trees.shared.namespaceOf(m.path);
      if (ns.type === 'shared' && ns.prefix !== '') out.push(m);
    }
    if (this.foreign()) {
      for (const name of this.trees.shared.users.keys()) if (name !== this.user) out.push(...this.trees.tree(name).list());
    }
    const named = out.map((m) => ({ m, name: this.nameOf(m) }));
    named.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return named.map((n) => n.m);
  }

  hasChildren(mailbox: Mailbox): boolean {
    return this.trees.treeOf(mailbox).hasChildren(mailbox);
  }

  nameOf(mailbox: Mailbox): string {
    return this.outer(this.trees.ownerOf(mailbox), mailbox.path);
  }

  ownerAt(path: string): string | null {
    return this.target(path)?.owner ?? null;
  }

  nameAt(owner: string | null, path: string): string | null {
    if (owner !== null && owner !== this.user && !this.foreign()) return null;
    return this.outer(owner, path);
  }

  // Subscriptions are the user's own, also to names in other trees (RFC 3501 §6.3.6: any name).
  isSubscribed(path: string): boolean {
    return this.own.isSubscribed(this.normalizePath(path));
  }

  subscribedNames(): string[] {
    return this.own.subscribedNames();
  }

  subscribe(path: string, origin: Origin, options: { mustExist?: boolean } = {}): boolean {
    if (options.mustExist) this.require(path);
    return this.own.subscribe(this.normalizePath(path), origin);
  }

  unsubscribe(path: string, origin: Origin): boolean {
    return this.own.unsubscribe(this.normalizePath(path), origin);
  }

  private writable(path: string): Target {
    const t = this.target(path);
    if (t === null || t.inner === '') {
      throw new ServiceError('CANNOT', `${JSON.stringify(path)} is not a mailbox name: names under ${JSON.stringify(this.trees.otherUsers.base)} start with another user's name`);
    }
    return t;
  }

  createMailbox(path: string, origin: Origin, options: { subscribed?: boolean; specialUse?: string[] } = {}): Mailbox {
    const t = this.writable(path);
    if (t.tree === this.own) return t.tree.createMailbox(t.inner, origin, options);
    const created = t.tree.createMailbox(t.inner, origin, options.specialUse ? { specialUse: options.specialUse } : {});
    if (options.subscribed) this.own.subscribe(this.outer(t.owner, created.path), origin);
    return created;
  }

  deleteMailbox(path: string, origin: Origin): void {
    const t = this.writable(path);
    t.tree.deleteMailbox(t.inner, origin);
  }

  renameMailbox(path: string, newPath: string, origin: Origin): Mailbox {
    const from = this.writable(path);
    const to = this.writable(newPath);
    if (from.tree !== to.tree) {
      throw new ServiceError('CANNOT', `Cannot rename ${JSON.stringify(path)} into another user's or the shared tree`);
    }
    return from.tree.renameMailbox(from.inner, to.inner, origin);
  }
}
