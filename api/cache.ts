// In-memory response cache with per-entry lifetimes. Keys include the serving database file, so the first request
// after a new import misses: an import invalidates everything at once without a flush.
export interface CacheHit<T> {
  value: T;
  /** Whole seconds the entry still lives. */
  ttlSeconds: number;
}

/**
 * A Map keeps insertion order, which makes it a cheap LRU: a hit re-inserts its entry, eviction drops the first key.
 * Per process, like the rate limiter: each API process warms its own cache.
 */
export class ResponseCache<T = unknown> {
  private readonly entries = new Map<string, { value: T; expiresAt: number }>();

  constructor(
    private readonly now: () => number,
    readonly maxEntries = 10_000,
  ) {}

  get(key: string): CacheHit<T> | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    const left = e.expiresAt - this.now();
    if (left <= 0) {
      this.entries.delete(key);
      return undefined;
    }
    this.entries.delete(key);
    this.entries.set(key, e);
    return { value: e.value, ttlSeconds: Math.ceil(left / 1000) };
  }

  set(key: string, value: T, ttlSeconds: number): void {
    this.entries.delete(key);
    this.entries.set(key, { value, expiresAt: this.now() + ttlSeconds * 1000 });
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }

  clear(): void {
    this.entries.clear();
  }
}

/** A stable key for a parsed request: object keys sorted, undefined dropped. */
export function cacheKey(parts: unknown): string {
  return JSON.stringify(parts, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v,
  );
}
