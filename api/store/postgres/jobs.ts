// Jobs run once for the whole service rather than once per replica (the alert scan of a new serving build, the daily
// scan): the first replica to claim a job's name runs it; another takes over only when it is unfinished and the
// claim's lease expired (its replica died mid-job). Server time, as for the replicas' leases.
import type pg from 'pg';

export class PgJobs {
  constructor(private readonly pool: pg.Pool) {}

  /** True when this replica (`owner`) now holds the job: it was never claimed, or its holder's lease ran out unfinished. */
  async claim(name: string, owner: string, leaseMs: number): Promise<boolean> {
    const { rows } = await this.pool.query<{ owner: string }>(
      `insert into service_jobs as j (name, owner, started_at, expires_at)
         values ($1, $2, clock_timestamp(), clock_timestamp() + $3 * interval '1 millisecond')
       on conflict (name) do update set owner = excluded.owner, started_at = excluded.started_at, expires_at = excluded.expires_at
         where j.finished_at is null and (j.expires_at < clock_timestamp() or j.owner = excluded.owner)
       returning owner`,
      [name, owner, leaseMs],
    );
    return rows.length === 1;
  }

  /** Extends the claim of a job still running. */
  async renew(name: string, owner: string, leaseMs: number): Promise<boolean> {
    const r = await this.pool.query(
      `update service_jobs set expires_at = clock_timestamp() + $3 * interval '1 millisecond' where name = $1 and owner = $2 and finished_at is null`,
      [name, owner, leaseMs],
    );
    return r.rowCount === 1;
  }

  async finish(name: string, owner: string): Promise<void> {
    await this.pool.query('update service_jobs set finished_at = clock_timestamp() where name = $1 and owner = $2', [name, owner]);
  }
}
