import { setOwn } from '../options/problems.js';
import type { Storage, StorageSeed, UserStorage } from '../options/types.js';
import type { StoreChange } from './changes.js';
import type { Mailbox } from './mailbox.js';
import { snapshotStore } from './snapshot.js';
import { Store } from './store.js';

/** A user without an entry in `storage.users` starts with INBOX in a `""` personal namespace. */
const EMPTY_TREE: StorageSeed = { namespaces: [{ prefix: '', type: 'personal', separator: '/', extra: {} }], mailboxes: [] };

/** The Other Users namespace when the shared storage declares none of type `user` (RFC 2342 §5's example name). */
const DEFAULT_OTHER_USERS = { prefix: 'Other Users/', separator: '/' };

/**
 * Per-user mailboxes (`userMailboxes`): a Map from user to a tree of the
 * kind the store has always had (a Store, reused unchanged), next to the
 * shared tree (the server's own Store, which also holds the users and the
 * shared namespaces). One tree for everyone is the mode without this class.
 *
 * Trees are made on first use from the user's seed, so a reset only drops
 * them. Every change of a user's tree is relayed on the shared store's feed
 * with the user on it, so sessions, extensions and events follow all trees
 * through the one feed they already read.
 */
export class UserTrees {
  private readonly trees = new Map<string, Store>();
  /** Owner of every mailbox of a user's tree (a mailbox of the shared tree has none). */
  private owners = new WeakMap<Mailbox, string>();
  /** Where other users' trees show: `<prefix><user><separator><their path>`. */
  readonly otherUsers: { prefix: string; separator: string; base: string };

  constructor(
    /** The shared tree: shared namespaces, server-wide fields and the users. */
    readonly shared: Store,
    private readonly seeds: ReadonlyMap<string, StorageSeed>,
  ) {
    const declared = shared.namespaces.find((ns) => ns.type === 'user');
    const { prefix, separator } = declared ?? DEFAULT_OTHER_USERS;
    // As the storage option joins a namespace prefix and its folders.
    this.otherUsers = { prefix, separator, base: prefix === '' || prefix.endsWith(separator) ? prefix : prefix + separator };
    // A deleted user's mail goes with them: added again, they start from their seed.
    shared.onChange((change) => {
      if (change.kind === 'user' && change.type === 'delete') this.drop(change.name);
    });
  }

  /** True when `name` is a user now. */
  hasUser(name: string): boolean {
    return this.shared.users.has(name);
  }

  /** The user's own tree, made from their seed on first use. */
  tree(user: string): Store {
    let tree = this.trees.get(user);
    if (tree) return tree;
    // The shared budget: every tree's mail counts against the one server-wide limit.
    tree = new Store(this.seeds.get(user) ?? EMPTY_TREE, new Map(), this.shared.budget, this.shared.seedLoadListeners);
    this.trees.set(user, tree);
    for (const m of tree.list()) this.owners.set(m, user);
    tree.onChange((change) => this.forward(change, user));
    return tree;
  }

  private forward(change: StoreChange, user: string): void {
    // The shared store announces the one reset; a user's tree never resets by itself.
    if (change.kind === 'reset') return;
    if (change.kind === 'mailbox' && change.type === 'create' && change.mailbox) this.owners.set(change.mailbox, user);
    change.user = user;
    this.shared.relay(change);
  }

  /** Forgets a user's tree and gives its mail's share of the budget back. */
  private drop(user: string): void {
    this.trees.get(user)?.release();
    this.trees.delete(user);
  }

  /** The user whose own tree holds the mailbox; null for the shared tree. */
  ownerOf(mailbox: Mailbox): string | null {
    return this.owners.get(mailbox) ?? null;
  }

  /** The user a change is about (null: the shared tree). */
  userOf(change: StoreChange): string | null {
    switch (change.kind) {
      case 'append':
      case 'expunge':
      case 'flags':
      case 'uidvalidity':
        return this.ownerOf(change.mailbox);
      case 'mailbox':
        return change.user ?? (change.mailbox ? this.ownerOf(change.mailbox) : null);
      default:
        return null;
    }
  }

  /** The tree a mailbox lives in. */
  treeOf(mailbox: Mailbox): Store {
    const owner = this.ownerOf(mailbox);
    return owner === null ? this.shared : this.tree(owner);
  }

  /** Every mailbox of every tree (the shared namespaces first): for whole-server counts. */
  everyMailbox(): Mailbox[] {
    // The shared store's own INBOX (and personal namespace) belongs to no one and is left out.
    const out = this.shared.list().filter((m) => {
      const ns = this.shared.namespaceOf(m.path);
      return ns.type === 'shared' && ns.prefix !== '';
    });
    for (const name of this.shared.users.keys()) out.push(...this.tree(name).list());
    return out;
  }

  /** Forgets every user's tree: the next use makes it again from the seed. Before the shared store's reset. */
  reset(): void {
    for (const tree of this.trees.values()) tree.release();
    this.trees.clear();
    this.owners = new WeakMap();
  }

  /** `{ users: { name: tree }, shared }`: the storage option's per-user form, byte for byte. */
  snapshot(): UserStorage {
    const users: Record<string, Storage> = {};
    for (const name of this.shared.users.keys()) setOwn(users, name, snapshotStore(this.tree(name)));
    const shared = snapshotStore(this.shared);
    // The shared store keeps an INBOX of its own, which nobody sees.
    delete shared.INBOX;
    return { users, shared };
  }
}
