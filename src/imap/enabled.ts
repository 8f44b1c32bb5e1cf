/**
 * What a session has ENABLEd (RFC 5161): a set that tells its owner when
 * it changes, so what the owner worked out from it (the session's rules,
 * src/imap/protocol.ts) is dropped then and never checked against the set
 * per use. The rules are asked for on every message of a FETCH and on
 * every change that reaches an idling session; a check that reads the set
 * each time was one more object to fetch from memory per session in the
 * fan-out to 10,000 of them (issue 37).
 */
export class EnabledCapabilities extends Set<string> {
  constructor(private readonly owner: { enabledChanged(): void }) {
    // No iterable: Set's constructor would call add() before `owner` is set.
    super();
  }

  override add(capability: string): this {
    if (!super.has(capability)) {
      super.add(capability);
      this.owner.enabledChanged();
    }
    return this;
  }

  override delete(capability: string): boolean {
    if (!super.delete(capability)) return false;
    this.owner.enabledChanged();
    return true;
  }

  override clear(): void {
    if (this.size === 0) return;
    super.clear();
    this.owner.enabledChanged();
  }
}
