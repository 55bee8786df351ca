// The API's own state (docs/state.md): keys, the credit ledger, the rate limit, portfolio, alerts, the webhook queue and
// its deliveries log, leases and the request log, behind one asynchronous interface (./types.ts). Every SQL statement
// on the state is in this folder; its callers use StateStore and the shapes of ./model.ts only.
import path from 'node:path';
import { dataDir } from '../../lib/config';
import { systemClock, type Clock } from '../clock';
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
}

/** The SQLite file of a data folder. */
export function stateFileOf(dataRoot: string = dataDir()): string {
  return path.join(dataRoot, 'api.sqlite');
}

/**
 * Opens the state and brings its schema up to date. The embedded engine is SQLite, in the data folder; the engine is
 * chosen here, so that an engine over the network takes its place without its callers changing.
 */
export function openStore(opts: OpenStateOptions = {}): StateStore {
  return new SqliteState(opts.file ?? stateFileOf(opts.dataRoot), opts.clock ?? systemClock);
}
