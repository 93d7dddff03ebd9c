// Ledger accounts this process has seen committed. Accounts are never deleted, so a settlement
// can skip creating them (one statement fewer per purchase) once they are known; a bounded
// set, forgetting the oldest first, keeps memory flat however many groups the issuer has.
export class KnownAccounts {
  private readonly ids = new Set<string>();

  constructor(private readonly max = 100_000) {}

  has(id: string): boolean {
    return this.ids.has(id);
  }

  /** Call only after the transaction that created or locked the account has committed. */
  add(id: string): void {
    if (this.ids.has(id)) return;
    if (this.ids.size >= this.max) this.ids.delete(this.ids.values().next().value!);
    this.ids.add(id);
  }

  delete(id: string): void {
    this.ids.delete(id);
  }
}
