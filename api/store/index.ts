// The API's own state (docs/state.md): keys, the credit ledger, the rate limit, portfolio, alerts, the webhook queue and
// its deliveries log, leases and the request log, behind one asynchronous interface (./types.ts). Every SQL statement
// on the state is in this folder; its callers use StateStore and the shapes of ./model.ts only.
import path from 'node:path';
import { dataDir } from '../../lib/config';
import { systemClock, type Clock } from '../clock';
import { PgState } from './postgres';
import { SqliteState } from './sqlite';
import type { StateStore } from './types';

export * from './model';
export * from './types';

export interface OpenStateOptions {
  /** The data folder whose api.sqlite holds the state (default: DATA_DIR). */
  dataRoot?: string;
  /** A SQLite file elsewhere (the keys CLI's --db, tests). */
  file?: string;
  clock?: Clock;
  /** postgres://…: the state in PostgreSQL, shared by several API replicas, instead of the SQLite file. */
  databaseUrl?: string;
  /** PostgreSQL: a replica's heartbeat lease (default 30 s); its pending charges are refunded this long after it died. */
  leaseMs?: number;
  /** PostgreSQL: connections of this process (default 10). */
  poolSize?: number;
  /** PostgreSQL: a connection error, a failed heartbeat. */
  onError?: (e: Error) => void;
  /** PostgreSQL: charges refunded for replicas whose lease expired. */
  onRefunded?: (replicas: string[], charges: number) => void;
}

/** The state's environment variables (DATABASE_URL, STATE_LEASE_MS, DATABASE_POOL_SIZE), read here only. */
export function stateConfigFromEnv(env: NodeJS.ProcessEnv = process.env): Pick<OpenStateOptions, 'databaseUrl' | 'leaseMs' | 'poolSize'> {
  const int = (name: string, fallback: number, min: number) => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isSafeInteger(n) || n < min) throw new Error(`${name} must be an integer of at least ${min}, got "${raw}"`);
    return n;
  };
  const url = env.DATABASE_URL?.trim() || undefined;
  if (url && !/^postgres(ql)?:\/\//.test(url)) throw new Error('DATABASE_URL must be a postgres:// (or postgresql://) URL');
  return { databaseUrl: url, leaseMs: int('STATE_LEASE_MS', 30_000, 100), poolSize: int('DATABASE_POOL_SIZE', 10, 1) };
}

/** The SQLite file of a data folder. */
export function stateFileOf(dataRoot: string = dataDir()): string {
  return path.join(dataRoot, 'api.sqlite');
}

/**
 * Opens the state: PostgreSQL when `databaseUrl` is given (await ready() before use: it migrates and registers this
 * process's lease), else the SQLite file of the data folder (migrated when opened). The engine is chosen here only.
 */
export function openStore(opts: OpenStateOptions = {}): StateStore {
  const clock = opts.clock ?? systemClock;
  if (opts.databaseUrl) {
    return new PgState(opts.databaseUrl, { clock, leaseMs: opts.leaseMs ?? 30_000, poolSize: opts.poolSize, onError: opts.onError, onRefunded: opts.onRefunded });
  }
  return new SqliteState(opts.file ?? stateFileOf(opts.dataRoot), clock);
}
