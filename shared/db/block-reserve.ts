/**
 * Items drawn ahead in blocks (ids from a sequence, stored keys), so most takers need no round
 * trip: concurrent takers share one draw, and the next draw starts in the background once fewer
 * than `low` are left. Items still held at exit are never handed out.
 */
export class BlockReserve<T> {
  private readonly items: T[] = [];
  private refilling: Promise<void> | null = null;

  constructor(
    private readonly drawBlock: () => Promise<readonly T[]>,
    private readonly low: number,
  ) {}

  /** The next `count` items, in the order drawn. */
  async take(count = 1): Promise<T[]> {
    while (this.items.length < count) await this.refill();
    const taken = this.items.splice(0, count);
    if (this.items.length < this.low) void this.refill().catch(() => undefined); // a taker retries it
    return taken;
  }

  /** Drops the held items that `unwanted` selects, so they are never handed out. */
  discard(unwanted: (item: T) => boolean): void {
    for (let i = this.items.length - 1; i >= 0; i--) if (unwanted(this.items[i]!)) this.items.splice(i, 1);
  }

  private refill(): Promise<void> {
    this.refilling ??= this.drawBlock()
      .then((block) => void this.items.push(...block))
      .finally(() => (this.refilling = null));
    return this.refilling;
  }
}
