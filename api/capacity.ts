// The at-capacity gate: at most `limit` requests do database work at once (specification, Limits: 15); one more waits
// for a slot up to a short bounded time (CAPACITY_WAIT_MS) in arrival order, and is refused with 503 at_capacity only
// when none frees in time. Under a burst the wait turns refusals into a few milliseconds of latency; under overload
// from clients that ignore Retry-After, each of them is refused at most once per wait instead of spinning on
// refusals, which would take the event loop from the requests being answered (docs/decisions.md, Capacity).
export class Capacity {
  /** Requests holding a slot now (tests set it to fill the service). */
  queries = 0;
  private readonly waiting: Array<(granted: boolean) => void> = [];

  constructor(
    private readonly limit: () => number,
    private readonly waitMs: () => number,
  ) {}

  /** Requests waiting for a slot now. */
  get waiters(): number {
    return this.waiting.length;
  }

  /** Takes a slot: at once when one is free, else after waiting for one; false when none freed within the wait. */
  acquire(): boolean | Promise<boolean> {
    if (this.queries < this.limit() && !this.waiting.length) {
      this.queries++;
      return true;
    }
    const wait = this.waitMs();
    if (wait <= 0) return false;
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        const i = this.waiting.indexOf(grant);
        if (i >= 0) this.waiting.splice(i, 1);
        resolve(false);
      }, wait);
      const grant = (granted: boolean) => {
        clearTimeout(timer);
        resolve(granted);
      };
      this.waiting.push(grant);
    });
  }

  /** Gives a slot back: to the longest waiter when there is one (the count unchanged), else to the pool. */
  release(): void {
    const next = this.waiting.shift();
    if (next && this.queries <= this.limit()) next(true);
    else {
      this.queries--;
      // A slot freed while requests wait for one (the limit was lowered, or tests emptied the pool): hand it over.
      while (this.waiting.length && this.queries < this.limit()) {
        this.queries++;
        this.waiting.shift()!(true);
      }
    }
  }
}
