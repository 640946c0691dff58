// Who may have a webhook body read, and for how long: a bounded table of slots shared fairly per source address.

/** The bounds of webhook reading; every one is a `vc reconcile` flag (docs/security.md). */
export interface WebhookLimits {
  /** Bodies read at once over all senders. */
  maxPending: number;
  /** Bodies one source address may have read at once. */
  perAddress: number;
  /** Milliseconds a sender has to send its request line and headers. */
  headersTimeoutMs: number;
  /** Milliseconds a body has, from its headers to its last byte. */
  bodyTimeoutMs: number;
  /** Average bytes per second a body must keep up once `rateGraceMs` have passed. */
  minBytesPerSecond: number;
  /** Milliseconds before the minimum rate applies (a push of a few KiB arrives well within it). */
  rateGraceMs: number;
}

export const DEFAULT_WEBHOOK_LIMITS: WebhookLimits = {
  maxPending: 16,
  perAddress: 4,
  headersTimeoutMs: 10_000,
  bodyTimeoutMs: 10_000,
  minBytesPerSecond: 1024,
  rateGraceMs: 1_000,
};

/** One body being read. */
export interface Slot {
  readonly address: string;
  readonly since: number;
  /** Bytes received so far. */
  bytes: number;
}

export type Admission = { admitted: Slot; evicted?: Slot } | { refused: "address" | "full" };

/** Why a slot must be given up, or undefined while it keeps within the limits. */
export type Overdue = "body deadline passed" | "body slower than the minimum rate";

/**
 * The table of slots. Admission is max-min fair per source address: an address holding `perAddress` slots is refused;
 * when every slot is taken, a newcomer takes the oldest slot of the address holding the most, if that address holds
 * at least two more than the newcomer's; otherwise the slot of the slowest sender (slowest()). So no address, and no
 * set of addresses, can hold every slot against a sender that delivers its body.
 */
export class WebhookSlots {
  readonly #slots = new Set<Slot>();

  constructor(
    readonly limits: WebhookLimits,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.#slots.size;
  }

  held(address: string): number {
    let n = 0;
    for (const s of this.#slots) if (s.address === address) n++;
    return n;
  }

  admit(address: string): Admission {
    const mine = this.held(address);
    if (mine >= this.limits.perAddress) return { refused: "address" };
    let evicted: Slot | undefined;
    if (this.#slots.size >= this.limits.maxPending) {
      const counts = new Map<string, number>();
      for (const s of this.#slots) counts.set(s.address, (counts.get(s.address) ?? 0) + 1);
      let heaviest: string | undefined;
      for (const [a, n] of counts) if (heaviest === undefined || n > counts.get(heaviest)!) heaviest = a;
      if (heaviest !== undefined && counts.get(heaviest)! >= mine + 2) {
        for (const s of this.#slots) if (s.address === heaviest && (!evicted || s.since < evicted.since)) evicted = s;
      } else evicted = this.slowest();
      if (!evicted) return { refused: "full" };
      this.#slots.delete(evicted);
    }
    const admitted: Slot = { address, since: this.now(), bytes: 0 };
    this.#slots.add(admitted);
    return { admitted, evicted };
  }

  /**
   * The slot a newcomer takes when no address holds more than its share: of those past the grace period the one with
   * the lowest average rate, else the oldest. A genuine push sends its body at once and is read within moments, so it
   * is never the slowest and seldom the oldest: no set of senders, from however many addresses, keeps one out.
   */
  private slowest(): Slot | undefined {
    const now = this.now();
    let pick: Slot | undefined;
    let pickRate = Number.POSITIVE_INFINITY;
    for (const s of this.#slots) {
      const elapsed = now - s.since;
      if (elapsed < this.limits.rateGraceMs) continue;
      const rate = (s.bytes * 1000) / Math.max(1, elapsed);
      if (rate < pickRate || (rate === pickRate && pick !== undefined && s.since < pick.since)) {
        pick = s;
        pickRate = rate;
      }
    }
    if (pick) return pick;
    for (const s of this.#slots) if (!pick || s.since < pick.since) pick = s;
    return pick;
  }

  release(slot: Slot): void {
    this.#slots.delete(slot);
  }

  /** Whether a slot is still in the table (not released nor evicted). */
  holds(slot: Slot): boolean {
    return this.#slots.has(slot);
  }

  /** The slots past their deadline or below the minimum rate, with why; they stay in the table until released. */
  overdue(): Array<{ slot: Slot; reason: Overdue }> {
    const now = this.now();
    const out: Array<{ slot: Slot; reason: Overdue }> = [];
    for (const slot of this.#slots) {
      const elapsed = now - slot.since;
      if (elapsed >= this.limits.bodyTimeoutMs) out.push({ slot, reason: "body deadline passed" });
      else if (elapsed >= this.limits.rateGraceMs && slot.bytes * 1000 < this.limits.minBytesPerSecond * elapsed)
        out.push({ slot, reason: "body slower than the minimum rate" });
    }
    return out;
  }
}
