// The replicas' heartbeat lease. Each API replica registers a row in `replicas` and renews its lease every third of
// its duration; every beat it also looks for replicas whose lease expired (killed, frozen, cut off) and refunds their
// pending charges, whose clients never got an answer, then deletes their row. Times are the database server's, the one
// clock all replicas share.
import crypto from 'node:crypto';
import os from 'node:os';
import type pg from 'pg';
import type { PgCredits } from './credits';

export interface ReplicaLeaseOptions {
  /** How long a replica is deemed alive after its last heartbeat (STATE_LEASE_MS, default 30 s). */
  leaseMs: number;
  onError?: (e: Error) => void;
  /** Refunds made for dead replicas (for the log). */
  onRefunded?: (replicas: string[], charges: number) => void;
}

/** host/pid/random: unique across restarts and hosts (pids are reused, in containers always). */
export function replicaId(): string {
  return `${os.hostname()}/${process.pid}/${crypto.randomBytes(4).toString('hex')}`;
}

export class ReplicaLease {
  readonly id = replicaId();
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;

  constructor(
    private readonly pool: pg.Pool,
    private readonly credits: () => PgCredits,
    private readonly opts: ReplicaLeaseOptions,
  ) {}

  /** Registers this replica (or renews its lease) and settles the charges of dead ones. */
  async beat(): Promise<void> {
    this.beating ??= (async () => {
      await this.pool.query(
        `insert into replicas (id, host, pid, expires_at) values ($1, $2, $3, clock_timestamp() + $4 * interval '1 millisecond')
         on conflict (id) do update set heartbeat_at = clock_timestamp(), expires_at = excluded.expires_at`,
        [this.id, os.hostname(), process.pid, this.opts.leaseMs],
      );
      await this.settleDead();
    })().finally(() => (this.beating = undefined));
    return this.beating;
  }

  /**
   * Refunds the pending charges of every replica whose lease expired, then forgets it. Charges whose owner has no row
   * at all (a replica already forgotten, or one of a SQLite-era ledger) are refunded too once no live replica owns them.
   */
  async settleDead(): Promise<number> {
    const { rows } = await this.pool.query<{ owner: string }>(
      `select distinct l.owner from credit_ledger l
       where l.settled = 'pending' and l.owner <> $1
         and not exists (select 1 from replicas r where r.id = l.owner and r.expires_at >= clock_timestamp())`,
      [this.id],
    );
    const dead = rows.map((r) => r.owner);
    const n = await this.credits().refundPendingOf(dead);
    if (dead.length) this.opts.onRefunded?.(dead, n);
    // Forgotten once settled (a replica that was only frozen registers again at its next beat).
    await this.pool.query(
      `delete from replicas r where r.expires_at < clock_timestamp()
         and not exists (select 1 from credit_ledger l where l.settled = 'pending' and l.owner = r.id)`,
    );
    return n;
  }

  start(): void {
    const every = Math.max(50, Math.floor(this.opts.leaseMs / 3));
    this.timer = setInterval(() => void this.beat().catch((e: Error) => this.opts.onError?.(e)), every);
    this.timer.unref();
  }

  /** A graceful stop: the row goes, after the caller settled its own charges. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.beating?.catch(() => undefined);
    await this.pool.query('delete from replicas where id = $1', [this.id]);
  }
}
