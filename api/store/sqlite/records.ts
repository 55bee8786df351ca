// Portfolio, alerts, the request log, the service's named values, jobs and the rate limit of the SQLite engine.
// Every method does its work synchronously before returning its promise (better-sqlite3 is synchronous).
import type Database from 'better-sqlite3';
import type { Clock } from '../../clock';
import { RateLimiter, type RateDecision } from '../../rate-limit';
import type { DailyUsage, LoggedRequest } from '../../routes/account/request-log';
import {
  ALERT_VALUE_COLUMNS,
  type AlertCriteria, type AlertRow, type AlertStore, type AlertValues, type JobStore, type PortfolioStore, type PropertyRow,
  type RateLimitStore, type RequestLogStore, type ServiceStateStore,
} from '../types';

const PROPERTY_COLUMNS = 'id, key_id, data, estimate, estimate_valid, estimate_computed_at, created_at, updated_at';

export class SqlitePortfolio implements PortfolioStore {
  constructor(private readonly db: Database.Database) {}

  async get(keyId: string, id: string): Promise<PropertyRow | undefined> {
    return this.db.prepare(`select ${PROPERTY_COLUMNS} from portfolio_properties where id = ? and key_id = ?`).get(id, keyId) as PropertyRow | undefined;
  }

  async list(keyId: string, limit: number, offset: number): Promise<{ total: number; rows: PropertyRow[] }> {
    const { n } = this.db.prepare('select count(*) as n from portfolio_properties where key_id = ?').get(keyId) as { n: number };
    const rows = this.db.prepare(`select ${PROPERTY_COLUMNS} from portfolio_properties where key_id = ? order by seq limit ? offset ?`).all(keyId, limit, offset) as PropertyRow[];
    return { total: n, rows };
  }

  async insert(r: Omit<PropertyRow, 'updated_at'>): Promise<void> {
    this.db
      .prepare(
        `insert into portfolio_properties (id, key_id, seq, data, estimate, estimate_valid, estimate_computed_at, created_at, updated_at)
         values (?, ?, (select coalesce(max(seq), 0) + 1 from portfolio_properties), ?, ?, ?, ?, ?, ?)`,
      )
      .run(r.id, r.key_id, r.data, r.estimate, r.estimate_valid, r.estimate_computed_at, r.created_at, r.created_at);
  }

  async save(r: Omit<PropertyRow, 'created_at'>): Promise<void> {
    this.db
      .prepare('update portfolio_properties set data = ?, estimate = ?, estimate_valid = ?, estimate_computed_at = ?, updated_at = ? where id = ? and key_id = ?')
      .run(r.data, r.estimate, r.estimate_valid, r.estimate_computed_at, r.updated_at, r.id, r.key_id);
  }

  async delete(keyId: string, id: string): Promise<boolean> {
    return this.db.prepare('delete from portfolio_properties where id = ? and key_id = ?').run(id, keyId).changes === 1;
  }
}

const ALERT_COLUMNS = `id, key_id, secret, is_active, deactivated_reason, created_at, updated_at, ${ALERT_VALUE_COLUMNS.join(', ')}`;

export class SqliteAlerts implements AlertStore {
  constructor(private readonly db: Database.Database) {}

  async get(keyId: string, id: string): Promise<AlertRow | undefined> {
    return this.db.prepare(`select ${ALERT_COLUMNS} from alerts where id = ? and key_id = ?`).get(id, keyId) as AlertRow | undefined;
  }

  async list(keyId: string, limit: number, offset: number): Promise<{ total: number; rows: AlertRow[] }> {
    const { n } = this.db.prepare('select count(*) as n from alerts where key_id = ?').get(keyId) as { n: number };
    const rows = this.db.prepare(`select ${ALERT_COLUMNS} from alerts where key_id = ? order by seq limit ? offset ?`).all(keyId, limit, offset) as AlertRow[];
    return { total: n, rows };
  }

  async countActive(keyId: string): Promise<number> {
    return this.activeOf(keyId);
  }

  private activeOf(keyId: string): number {
    return (this.db.prepare('select count(*) as n from alerts where key_id = ? and is_active = 1').get(keyId) as { n: number }).n;
  }

  /** The cap is counted inside the write transaction: two concurrent creations cannot both take the last place. */
  async insert(keyId: string, id: string, secret: string, v: AlertValues, at: string, cap: number): Promise<boolean> {
    return this.db
      .transaction(() => {
        if (this.activeOf(keyId) >= cap) return false;
        this.db
          .prepare(
            `insert into alerts (id, key_id, seq, secret, is_active, created_at, updated_at, ${ALERT_VALUE_COLUMNS.join(', ')})
             values (?, ?, (select coalesce(max(seq), 0) + 1 from alerts), ?, 1, ?, ?, ${ALERT_VALUE_COLUMNS.map(() => '?').join(', ')})`,
          )
          .run(id, keyId, secret, at, at, ...ALERT_VALUE_COLUMNS.map((c) => v[c]));
        return true;
      })
      .immediate();
  }

  async update(keyId: string, id: string, v: AlertValues, isActive: boolean, reactivating: boolean, at: string, cap: number): Promise<boolean> {
    return this.db
      .transaction(() => {
        if (reactivating && this.activeOf(keyId) >= cap) return false;
        this.db
          .prepare(
            `update alerts set ${ALERT_VALUE_COLUMNS.map((c) => `${c} = ?`).join(', ')}, is_active = ?,
               deactivated_reason = case when ? then null else deactivated_reason end, updated_at = ?
             where id = ? and key_id = ?`,
          )
          .run(...ALERT_VALUE_COLUMNS.map((c) => v[c]), isActive ? 1 : 0, reactivating ? 1 : 0, at, id, keyId);
        return true;
      })
      .immediate();
  }

  /** Its deliveries go with it (on delete cascade). */
  async delete(keyId: string, id: string): Promise<boolean> {
    return this.db.prepare('delete from alerts where id = ? and key_id = ?').run(id, keyId).changes === 1;
  }

  async active(): Promise<AlertCriteria[]> {
    return this.db
      .prepare('select id, code_postal, commune, code_departement, type_local, prix_min, prix_max, surface_min, surface_max from alerts where is_active = 1')
      .all() as AlertCriteria[];
  }

  async isActive(id: string): Promise<boolean> {
    return (this.db.prepare('select is_active from alerts where id = ?').get(id) as { is_active: number } | undefined)?.is_active === 1;
  }
}

export class SqliteRequestLog implements RequestLogStore {
  private readonly insert: Database.Statement<[string, string, string, string, string, number, number]>;
  private readonly recentOf: Database.Statement<[string, number], LoggedRequest>;
  private readonly dailyOf: Database.Statement<[string, string], DailyUsage>;

  constructor(private readonly db: Database.Database) {
    this.insert = db.prepare('insert into request_log (key_id, at, request_id, endpoint, transport, status, credits) values (?, ?, ?, ?, ?, ?, ?)');
    this.recentOf = db.prepare('select request_id, at, endpoint, transport, status, credits from request_log where key_id = ? order by at desc, id desc limit ?');
    this.dailyOf = db.prepare(
      `select substr(at, 1, 10) as date, endpoint, count(*) as requests, sum(credits) as credits
       from request_log where key_id = ? and at >= ? group by date, endpoint order by date, endpoint`,
    );
  }

  async record(keyId: string, r: LoggedRequest): Promise<void> {
    this.insert.run(keyId, r.at, r.request_id, r.endpoint, r.transport, r.status, r.credits);
  }

  async prune(before: string): Promise<void> {
    this.db.prepare('delete from request_log where at < ?').run(before);
  }

  async recent(keyId: string, limit: number): Promise<LoggedRequest[]> {
    return this.recentOf.all(keyId, limit);
  }

  async daily(keyId: string, since: string): Promise<DailyUsage[]> {
    return this.dailyOf.all(keyId, since);
  }
}

export class SqliteServiceState implements ServiceStateStore {
  constructor(private readonly db: Database.Database) {}

  async get(name: string): Promise<string | undefined> {
    return (this.db.prepare('select value from service_state where name = ?').get(name) as { value: string } | undefined)?.value;
  }

  async setForward(name: string, value: string): Promise<void> {
    this.db
      .prepare(
        `insert into service_state (name, value) values (?, ?)
         on conflict (name) do update set value = excluded.value where excluded.value > service_state.value`,
      )
      .run(name, value);
  }
}

/** On SQLite every process runs the service's jobs itself: what they enqueue is deduplicated by the queue. */
export class SqliteJobs implements JobStore {
  async claim(): Promise<boolean> {
    return true;
  }

  async finish(): Promise<void> {}
}

/**
 * The rate limit of one process, in its memory (api/rate-limit.ts): with SQLite the state is one machine's, and a
 * write per request would take the file's write lock for nothing durable.
 */
export class MemoryRateLimit implements RateLimitStore {
  private readonly limiter: RateLimiter;

  constructor(clock: Clock) {
    this.limiter = new RateLimiter(clock);
  }

  async hit(keyId: string, limit: number): Promise<RateDecision> {
    return this.limiter.hit(keyId, limit);
  }
}
