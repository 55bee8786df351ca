// The per-key rate limit shared by every replica: the sliding 60-second window kept in PostgreSQL (rate_windows, the
// rate_hit() function of the migrations), one statement per request. Same decisions as the in-memory limiter.
import type pg from 'pg';
import type { Clock } from '../../clock';
import { RATE_WINDOW_MS, type RateDecision } from '../../rate-limit';

export class PgRateLimiter {
  constructor(
    private readonly pool: pg.Pool,
    private readonly clock: Clock,
    private readonly windowMs = RATE_WINDOW_MS,
  ) {}

  async hit(keyId: string, limit: number): Promise<RateDecision> {
    const now = this.clock.now().getTime();
    const { rows } = await this.pool.query<{ allowed: boolean; remaining: number; retry_after_ms: number }>(
      'select allowed, remaining, retry_after_ms from rate_hit($1, $2, $3, $4)',
      [keyId, now, this.windowMs, limit],
    );
    const r = rows[0];
    return r.allowed
      ? { allowed: true, limit, remaining: r.remaining, retryAfterSeconds: 0 }
      : { allowed: false, limit, remaining: 0, retryAfterSeconds: Math.max(1, Math.ceil(r.retry_after_ms / 1000)) };
  }
}
