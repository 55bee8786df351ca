// The API's own state (docs/state.md): keys, the credit ledger, the rate limit, portfolio, alerts, the webhook queue and
// its deliveries log, leases and the request log, behind one asynchronous interface (./types.ts). Every SQL statement
// on the state is in this folder; its callers use StateStore and the shapes of ./model.ts only.
import path from 'node:path';
import { dataDir } from '../../lib/config';
import { systemClock, type Clock } from '../clock';
import { stateConfigFromEnv } from './postgres';
import { PgStore } from './postgres/store';
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
  /**
   * postgres://… : the state on PostgreSQL, shared by several API replicas. Default: DATABASE_URL; an empty string
   * forces the SQLite file.
   */
  databaseUrl?: string;
  /** A replica's heartbeat lease on PostgreSQL (default: STATE_LEASE_MS). */
  leaseMs?: number;
  /** Connections per process on PostgreSQL (default: DATABASE_POOL_SIZE). */
  poolSize?: number;
  /** Errors of background work (heartbeats, settlements in flight) on PostgreSQL. */
  onError?: (e: Error) => void;
  /** Charges refunded for replicas found dead (PostgreSQL). */
  onRefunded?: (replicas: string[], charges: number) => void;
  env?: NodeJS.ProcessEnv;
}

/** The SQLite file of a data folder. */
export function stateFileOf(dataRoot: string = dataDir()): string {
  return path.join(dataRoot, 'api.sqlite');
}

/**
 * Opens the state: PostgreSQL when a database URL is given (or DATABASE_URL is set), else the SQLite file of the data
 * folder. The only place that chooses the engine; callers await ready() before use (SQLite is ready at once, migrated
 * when opened; PostgreSQL connects and migrates then).
 */
export function openStore(opts: OpenStateOptions = {}): StateStore {
  const clock = opts.clock ?? systemClock;
  const env = stateConfigFromEnv(opts.env);
  const url = opts.databaseUrl ?? env.databaseUrl;
  if (url) {
    return new PgStore({ url, clock, leaseMs: opts.leaseMs ?? env.leaseMs, poolSize: opts.poolSize ?? env.poolSize, onError: opts.onError, onRefunded: opts.onRefunded });
  }
  return new SqliteState(opts.file ?? stateFileOf(opts.dataRoot), clock);
}
