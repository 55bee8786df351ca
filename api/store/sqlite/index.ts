// The SQLite engine of the state: one file (api.sqlite in the data folder) that several API processes and the keys CLI
// share, in WAL mode, its schema brought up to date by the versioned migrations (./migrations) when opened.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Clock } from '../../clock';
import type { StateStore } from '../types';
import { SqliteCredits } from './credits';
import { SqliteDeliveries } from './deliveries';
import { SqliteKeys } from './keys';
import { migrate } from './migrate';
import { SqliteOAuth } from './oauth';
import { MemoryRateLimit, SqliteAlerts, SqliteJobs, SqlitePortfolio, SqliteRequestLog, SqliteServiceState } from './records';

export class SqliteState implements StateStore {
  readonly engine = 'sqlite';
  /** The connection: for this engine's own modules and tests of the engine, never for the state's callers. */
  readonly db: Database.Database;
  readonly keys: SqliteKeys;
  readonly credits: SqliteCredits;
  readonly rateLimit: MemoryRateLimit;
  readonly portfolio: SqlitePortfolio;
  readonly alerts: SqliteAlerts;
  readonly deliveries: SqliteDeliveries;
  readonly jobs = new SqliteJobs();
  readonly requestLog: SqliteRequestLog;
  readonly serviceState: SqliteServiceState;
  readonly oauth: SqliteOAuth;

  constructor(
    readonly file: string,
    readonly clock: Clock,
  ) {
    if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
    this.db = new Database(file);
    // Several API processes and the keys CLI share the file: wait for a lock rather than fail with SQLITE_BUSY.
    this.db.pragma('busy_timeout = 5000');
    this.db.pragma('journal_mode = WAL');
    // NORMAL is durable across application crashes in WAL mode; only a power loss may drop the last commits.
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('foreign_keys = ON');
    migrate(this.db, file);
    this.keys = new SqliteKeys(this.db, clock);
    this.credits = new SqliteCredits(this.db, clock);
    this.rateLimit = new MemoryRateLimit(clock);
    this.portfolio = new SqlitePortfolio(this.db);
    this.alerts = new SqliteAlerts(this.db);
    this.deliveries = new SqliteDeliveries(this.db);
    this.requestLog = new SqliteRequestLog(this.db);
    this.serviceState = new SqliteServiceState(this.db);
    this.oauth = new SqliteOAuth(this.db);
  }

  async ready(): Promise<void> {}

  /** A process that starts serving refunds the charges that processes of this host left pending when they died. */
  async serve(): Promise<number> {
    return this.credits.refundAbandoned();
  }

  async ping(): Promise<boolean> {
    return this.db.open;
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
