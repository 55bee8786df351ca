// The PostgreSQL connection pool of the state (node-postgres), its type conversions and the versioned migrations.
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';

const MIGRATIONS_DIR = path.join(path.dirname(new URL(import.meta.url).pathname), 'migrations');

/** The migrations in order: `NNNN_name.sql`, version NNNN, the same versions as the SQLite engine's. */
export function migrationFiles(dir = MIGRATIONS_DIR): Array<{ version: number; name: string; sql: string }> {
  return fs
    .readdirSync(dir)
    .filter((f) => /^\d{4}_.+\.sql$/.test(f))
    .sort()
    .map((f, i) => {
      const version = Number(f.slice(0, 4));
      if (version !== i + 1) throw new Error(`migration ${f}: expected version ${i + 1}`);
      return { version, name: f, sql: fs.readFileSync(path.join(dir, f), 'utf8') };
    });
}

const TIMESTAMPTZ_RE = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})(\.\d+)?([+-]\d{2})(?::?(\d{2}))?(?::?\d{2})?$/;

/**
 * A timestamptz as PostgreSQL prints it (`2026-11-28 23:12:51.12+00`) → the ISO 8601 UTC string the application wrote
 * (`2026-11-28T23:12:51.120Z`): the values come from Date.toISOString(), so the round trip is exact to the millisecond.
 */
export function isoOfTimestamptz(text: string): string {
  const m = TIMESTAMPTZ_RE.exec(text);
  if (!m) throw new Error(`unexpected timestamptz ${text}`);
  const [, day, time, frac = '', hh, mm = '00'] = m;
  return new Date(`${day}T${time}${frac.slice(0, 4)}${hh}:${mm}`).toISOString();
}

/** bigint columns (credits, ledger ids) as numbers; a value past 2^53 would be a bug, not a balance. */
export function numberOfInt8(text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new RangeError(`bigint ${text} is not a safe integer`);
  return n;
}

const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === pg.types.builtins.INT8) return numberOfInt8;
    if (oid === pg.types.builtins.TIMESTAMPTZ) return isoOfTimestamptz;
    return pg.types.getTypeParser(oid, format);
  },
} as pg.CustomTypesConfig;

export interface PoolOptions {
  /** Connections of this process (default 10): each replica has its own pool. */
  max?: number;
  /** Tags the connections in pg_stat_activity. */
  applicationName?: string;
  onError?: (e: Error) => void;
}

export function openPool(url: string, opts: PoolOptions = {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.max ?? 10,
    types,
    application_name: opts.applicationName ?? 'foncier-api',
    // A request never waits long for a connection: past it, the call fails (503) rather than piling up.
    connectionTimeoutMillis: 10_000,
    options: '-c TimeZone=UTC',
  });
  // An idle connection the server closes (restart, failover) must not crash the process: the pool replaces it.
  pool.on('error', (e) => opts.onError?.(e));
  return pool;
}

/** Runs `fn` in one transaction on one connection: committed when it resolves, rolled back when it throws. */
export async function inTransaction<T>(pool: pg.Pool, fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  const c = await pool.connect();
  try {
    await c.query('begin');
    const out = await fn(c);
    await c.query('commit');
    return out;
  } catch (e) {
    await c.query('rollback').catch(() => undefined);
    throw e;
  } finally {
    c.release();
  }
}

/** Any key of pg_advisory_xact_lock: replicas starting together migrate one after the other. */
const MIGRATION_LOCK = 0x666f6e63; // "fonc"

/** Applies the migrations not yet applied, in one transaction (DDL is transactional: a failure leaves nothing); returns the schema version. */
export async function migrate(pool: pg.Pool, files = migrationFiles()): Promise<number> {
  return inTransaction(pool, async (c) => {
    await c.query('select pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await c.query(`create table if not exists schema_migrations (version integer primary key, name text not null, applied_at timestamptz not null default now())`);
    const { rows } = await c.query<{ v: number | null }>('select max(version) as v from schema_migrations');
    const current = rows[0].v ?? 0;
    if (current > files.length) throw new Error(`the state database has schema version ${current}, newer than this code (${files.length})`);
    for (const f of files.slice(current)) {
      await c.query(f.sql);
      await c.query('insert into schema_migrations (version, name) values ($1, $2)', [f.version, f.name]);
    }
    return files.length;
  });
}
