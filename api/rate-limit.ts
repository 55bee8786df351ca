// Per-key request rate limit over a sliding 60-second window (60 requests a minute, 120 on Enterprise), kept in memory.
import { systemClock, type Clock } from './clock';

export const RATE_WINDOW_MS = 60_000;

export interface RateDecision {
  allowed: boolean;
  limit: number;
  /** Requests still allowed in the current window, after this one. */
  remaining: number;
  /** Whole seconds until a request would be allowed again; 0 when allowed. Feeds the Retry-After header. */
  retryAfterSeconds: number;
}

/**
 * A sliding log rather than fixed buckets: a fixed minute would let a client send twice the limit across a boundary.
 * The log holds at most `limit` timestamps per key (refused hits are not logged), so memory stays small.
 * State is per process: with several API processes each enforces the limit on its own share of the traffic.
 */
export class RateLimiter {
  private readonly hits = new Map<string, number[]>();
  private calls = 0;

  constructor(
    private readonly clock: Clock = systemClock,
    private readonly windowMs = RATE_WINDOW_MS,
  ) {}

  hit(keyId: string, limit: number): RateDecision {
    const now = this.clock.now().getTime();
    if (++this.calls % 10_000 === 0) this.sweep(now);
    let log = this.hits.get(keyId);
    if (!log) this.hits.set(keyId, (log = []));
    while (log.length > 0 && log[0] <= now - this.windowMs) log.shift();
    if (log.length >= limit) {
      // Not logging the refused hit: a client that keeps retrying too early must not push its own release further away.
      const waitMs = log[log.length - limit] + this.windowMs - now;
      return { allowed: false, limit, remaining: 0, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) };
    }
    log.push(now);
    return { allowed: true, limit, remaining: limit - log.length, retryAfterSeconds: 0 };
  }

  /** Drops keys idle for a whole window, so keys seen once do not accumulate forever. */
  private sweep(now: number): void {
    for (const [key, log] of this.hits) {
      if (log.length === 0 || log[log.length - 1] <= now - this.windowMs) this.hits.delete(key);
    }
  }
}
