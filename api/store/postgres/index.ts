// The state on PostgreSQL (DATABASE_URL): keys, credits, the rate limit, portfolio, alerts, the delivery queue, the
// request log and the replicas' leases in one database shared by every API replica. Opened synchronously (a pool that
// connects on demand); ready() migrates and registers this process's heartbeat lease.
import type pg from 'pg';
import type { Clock } from '../../clock';
import type { StateStore } from '../types';
import { PgCredits } from './credits';
import { PgDeliveries } from './deliveries';
import { PgJobs } from './jobs';
import { PgKeys } from './keys';
import { migrate, openPool } from './pool';
import { PgRateLimiter } from './rate-limit';
import { PgAlerts, PgLeases, PgPortfolio, PgRequestLog, PgServiceState } from './records';
import { ReplicaLease } from './replicas';

export interface PgStateOptions {
  clock: Clock;
  /** The heartbeat lease (STATE_LEASE_MS). */
  leaseMs: number;
  /** Connections of this process (DATABASE_POOL_SIZE). */
  poolSize?: number;
  onError?: (e: Error) => void;
  onRefunded?: (replicas: string[], charges: number) => void;
}

export class PgState implements StateStore {
  readonly engine = 'postgresql';
  readonly pool: pg.Pool;
  readonly keys: PgKeys;
  readonly credits: PgCredits;
  readonly rateLimit: PgRateLimiter;
  readonly portfolio: PgPortfolio;
  readonly alerts: PgAlerts;
  readonly deliveries: PgDeliveries;
  readonly leases: PgLeases;
  readonly requestLog: PgRequestLog;
  readonly serviceState: PgServiceState;
  readonly jobs: PgJobs;
  /** This process as a replica: its id owns its pending charges; its heartbeat keeps them from the others. */
  readonly lease: ReplicaLease;
  /** Settlements and request-log writes in flight: close() waits for them. */
  private readonly settling = new Set<Promise<unknown>>();
  private readying: Promise<void> | undefined;
  private closed = false;

  constructor(
    url: string,
    private readonly opts: PgStateOptions,
  ) {
    this.pool = openPool(url, { max: opts.poolSize, onError: opts.onError });
    const track = <T>(p: Promise<T>): Promise<T> => {
      this.settling.add(p);
      void p.then(() => this.settling.delete(p), () => this.settling.delete(p));
      return p;
    };
    this.lease = new ReplicaLease(this.pool, () => this.credits, { leaseMs: opts.leaseMs, onError: opts.onError, onRefunded: opts.onRefunded });
    this.keys = new PgKeys(this.pool, opts.clock);
    this.credits = new PgCredits(this.pool, opts.clock, this.lease.id, track, () => this.lease.deadOwners());
    this.rateLimit = new PgRateLimiter(this.pool, opts.clock);
    this.portfolio = new PgPortfolio(this.pool);
    this.alerts = new PgAlerts(this.pool);
    this.deliveries = new PgDeliveries(this.pool);
    this.leases = new PgLeases(this.pool);
    this.requestLog = new PgRequestLog(this.pool, track);
    this.serviceState = new PgServiceState(this.pool);
    this.jobs = new PgJobs(this.pool);
  }

  /** Migrates (once per process), registers this replica's lease and starts its heartbeat. */
  ready(): Promise<void> {
    this.readying ??= (async () => {
      await migrate(this.pool);
      await this.lease.beat();
      this.lease.start();
    })();
    return this.readying;
  }

  /** Whether the database answers within `timeoutMs` (GET /health). */
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
    if (this.closed) return;
    this.closed = true;
    while (this.settling.size) await Promise.allSettled([...this.settling]);
    if (this.readying) await this.lease.stop().catch((e: Error) => this.opts.onError?.(e));
    await this.pool.end();
  }
}
