// The state on PostgreSQL, selected by DATABASE_URL: keys, credits, the rate limit, portfolio, alerts, the delivery
// queue, the request log and the replicas' leases in one database shared by every API replica.
import type pg from 'pg';
import type { Clock } from '../../clock';
import { PgCredits } from './credits';
import { PgJobs } from './jobs';
import { PgKeys } from './keys';
import { PgOAuth } from './oauth';
import { migrate, openPool } from './pool';
import { PgRateLimiter } from './rate-limit';
import { PgAlerts, PgPortfolio, PgRequestLog, PgServiceState } from './records';
import { ReplicaLease } from './replicas';
import { env, parseEnv } from '../../../lib/env';

export interface StateConfig {
  /** postgres://… (DATABASE_URL); undefined: the SQLite file of the data folder. */
  databaseUrl?: string;
  /** A replica's heartbeat lease (STATE_LEASE_MS, default 30 s): its pending charges are refunded this long after it died. */
  leaseMs: number;
  /** Connections per replica (DATABASE_POOL_SIZE, default 10). */
  poolSize: number;
}

/** The state's environment variables, read here only. */
export function stateConfigFromEnv(source: NodeJS.ProcessEnv = process.env): StateConfig {
  const e = source === process.env ? env() : parseEnv(source);
  return { databaseUrl: e.DATABASE_URL, leaseMs: e.STATE_LEASE_MS, poolSize: e.DATABASE_POOL_SIZE };
}

export interface PgStateOptions {
  clock: Clock;
  leaseMs: number;
  poolSize?: number;
  onError?: (e: Error) => void;
  onRefunded?: (replicas: string[], charges: number) => void;
}

export class PgState {
  readonly engine = 'postgresql';
  readonly keys: PgKeys;
  readonly credits: PgCredits;
  readonly rateLimiter: PgRateLimiter;
  readonly portfolio: PgPortfolio;
  readonly alerts: PgAlerts;
  readonly requestLog: PgRequestLog;
  readonly serviceState: PgServiceState;
  readonly jobs: PgJobs;
  readonly oauth: PgOAuth;
  readonly lease: ReplicaLease;
  /** Settlements (keep, refund) started and not yet finished: a graceful stop waits for them. */
  private readonly settling = new Set<Promise<unknown>>();

  private constructor(
    readonly pool: pg.Pool,
    readonly opts: PgStateOptions,
  ) {
    this.lease = new ReplicaLease(pool, () => this.credits, { leaseMs: opts.leaseMs, onError: opts.onError, onRefunded: opts.onRefunded });
    this.keys = new PgKeys(pool, opts.clock);
    this.credits = new PgCredits(pool, opts.clock, this.lease.id);
    this.rateLimiter = new PgRateLimiter(pool, opts.clock);
    this.portfolio = new PgPortfolio(pool);
    this.alerts = new PgAlerts(pool);
    this.requestLog = new PgRequestLog(pool);
    this.serviceState = new PgServiceState(pool);
    this.jobs = new PgJobs(pool);
    this.oauth = new PgOAuth(pool);
  }

  /** Connects, migrates, and (for a serving replica) registers its lease and starts its heartbeat. */
  static async open(url: string, opts: PgStateOptions & { replica?: boolean }): Promise<PgState> {
    const pool = openPool(url, { max: opts.poolSize, onError: opts.onError });
    try {
      await migrate(pool);
      const state = new PgState(pool, opts);
      if (opts.replica) {
        await state.lease.beat();
        state.lease.start();
      }
      return state;
    } catch (e) {
      await pool.end().catch(() => undefined);
      throw e;
    }
  }

  /** Remembers a settlement until it ends (errors go to onError); the returned promise never rejects. */
  track(p: Promise<unknown>): Promise<unknown> {
    const t: Promise<unknown> = p.catch((e: Error) => this.opts.onError?.(e)).finally(() => this.settling.delete(t));
    this.settling.add(t);
    return t;
  }

  /** Whether the database answers (GET /health). */
  async ping(timeoutMs = 2_000): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        this.pool.query('select 1').then(() => true),
        new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs))),
      ]);
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Waits for the settlements in flight, gives the lease up, closes the pool. */
  async close(): Promise<void> {
    while (this.settling.size) await Promise.all([...this.settling]);
    await this.lease.stop().catch((e: Error) => this.opts.onError?.(e));
    await this.pool.end();
  }
}
