// Portfolio, alerts, the request log and the service's own state on PostgreSQL. Rows come back in the SQLite engine's
// shape (flags as 0/1, JSON as its text, timestamps as ISO strings), so one mapping serves both engines.
import type pg from 'pg';
import type { LoggedRequest } from '../../routes/account/request-log';
import { ALERT_VALUE_COLUMNS, type AlertRow, type AlertValues, type PropertyRow } from '../types';
import { inTransaction } from './pool';

const PROPERTY_COLUMNS = `id, key_id, data::text as data, estimate::text as estimate, estimate_valid::int as estimate_valid,
  estimate_computed_at, created_at, updated_at`;

export class PgPortfolio {
  constructor(private readonly pool: pg.Pool) {}

  async get(keyId: string, id: string): Promise<PropertyRow | undefined> {
    const { rows } = await this.pool.query<PropertyRow>(`select ${PROPERTY_COLUMNS} from portfolio_properties where id = $1 and key_id = $2`, [id, keyId]);
    return rows[0];
  }

  async list(keyId: string, limit: number, offset: number): Promise<{ total: number; rows: PropertyRow[] }> {
    const [{ rows: n }, { rows }] = await Promise.all([
      this.pool.query<{ n: number }>('select count(*)::int as n from portfolio_properties where key_id = $1', [keyId]),
      this.pool.query<PropertyRow>(`select ${PROPERTY_COLUMNS} from portfolio_properties where key_id = $1 order by seq limit $2 offset $3`, [keyId, limit, offset]),
    ]);
    return { total: n[0].n, rows };
  }

  async insert(r: Omit<PropertyRow, 'updated_at'>): Promise<void> {
    await this.pool.query(
      `insert into portfolio_properties (id, key_id, data, estimate, estimate_valid, estimate_computed_at, created_at, updated_at)
       values ($1, $2, $3, $4, $5::int::boolean, $6, $7, $7)`,
      [r.id, r.key_id, r.data, r.estimate, r.estimate_valid, r.estimate_computed_at, r.created_at],
    );
  }

  async save(r: Omit<PropertyRow, 'created_at'>): Promise<void> {
    await this.pool.query(
      `update portfolio_properties set data = $1, estimate = $2, estimate_valid = $3::int::boolean, estimate_computed_at = $4, updated_at = $5
       where id = $6 and key_id = $7`,
      [r.data, r.estimate, r.estimate_valid, r.estimate_computed_at, r.updated_at, r.id, r.key_id],
    );
  }

  async delete(keyId: string, id: string): Promise<boolean> {
    const r = await this.pool.query('delete from portfolio_properties where id = $1 and key_id = $2', [id, keyId]);
    return r.rowCount === 1;
  }
}

const ALERT_COLUMNS = `id, key_id, secret, is_active::int as is_active, deactivated_reason, created_at, updated_at, ${ALERT_VALUE_COLUMNS.join(', ')}`;

export class PgAlerts {
  constructor(private readonly pool: pg.Pool) {}

  async get(keyId: string, id: string): Promise<AlertRow | undefined> {
    const { rows } = await this.pool.query<AlertRow>(`select ${ALERT_COLUMNS} from alerts where id = $1 and key_id = $2`, [id, keyId]);
    return rows[0];
  }

  async list(keyId: string, limit: number, offset: number): Promise<{ total: number; rows: AlertRow[] }> {
    const [{ rows: n }, { rows }] = await Promise.all([
      this.pool.query<{ n: number }>('select count(*)::int as n from alerts where key_id = $1', [keyId]),
      this.pool.query<AlertRow>(`select ${ALERT_COLUMNS} from alerts where key_id = $1 order by seq limit $2 offset $3`, [keyId, limit, offset]),
    ]);
    return { total: n[0].n, rows };
  }

  async countActive(keyId: string): Promise<number> {
    const { rows } = await this.pool.query<{ n: number }>('select count(*)::int as n from alerts where key_id = $1 and is_active', [keyId]);
    return rows[0].n;
  }

  /**
   * Inserts an alert unless the key already has `cap` active ones (false then). The key's row is locked first, so two
   * replicas creating the key's last allowed alert at the same time are counted one after the other.
   */
  async insert(keyId: string, id: string, secret: string, v: AlertValues, at: string, cap: number): Promise<boolean> {
    return inTransaction(this.pool, async (c) => {
      await c.query('select 1 from api_keys where id = $1 for update', [keyId]);
      const { rows } = await c.query<{ n: number }>('select count(*)::int as n from alerts where key_id = $1 and is_active', [keyId]);
      if (rows[0].n >= cap) return false;
      await c.query(
        `insert into alerts (id, key_id, secret, is_active, created_at, updated_at, ${ALERT_VALUE_COLUMNS.join(', ')})
         values ($1, $2, $3, true, $4, $4, ${ALERT_VALUE_COLUMNS.map((_, i) => `$${i + 5}`).join(', ')})`,
        [id, keyId, secret, at, ...ALERT_VALUE_COLUMNS.map((k) => v[k])],
      );
      return true;
    });
  }

  /** Updates an alert; a reactivation is refused (false) when the key is at `cap` active alerts. */
  async update(keyId: string, id: string, v: AlertValues, isActive: boolean, reactivating: boolean, at: string, cap: number): Promise<boolean> {
    return inTransaction(this.pool, async (c) => {
      await c.query('select 1 from api_keys where id = $1 for update', [keyId]);
      if (reactivating) {
        const { rows } = await c.query<{ n: number }>('select count(*)::int as n from alerts where key_id = $1 and is_active', [keyId]);
        if (rows[0].n >= cap) return false;
      }
      const n = ALERT_VALUE_COLUMNS.length;
      await c.query(
        `update alerts set ${ALERT_VALUE_COLUMNS.map((k, i) => `${k} = $${i + 1}`).join(', ')}, is_active = $${n + 1},
           deactivated_reason = case when $${n + 2} then null else deactivated_reason end, updated_at = $${n + 3}
         where id = $${n + 4} and key_id = $${n + 5}`,
        [...ALERT_VALUE_COLUMNS.map((k) => v[k]), isActive, reactivating, at, id, keyId],
      );
      return true;
    });
  }

  async delete(keyId: string, id: string): Promise<boolean> {
    const r = await this.pool.query('delete from alerts where id = $1 and key_id = $2', [id, keyId]);
    return r.rowCount === 1;
  }

  /** The active alerts' criteria, for the scan. */
  async active(): Promise<Array<Omit<AlertValues, 'label' | 'webhook_url'> & { id: string }>> {
    const { rows } = await this.pool.query(
      'select id, code_postal, commune, code_departement, type_local, prix_min, prix_max, surface_min, surface_max from alerts where is_active',
    );
    return rows;
  }

  async isActive(id: string): Promise<boolean> {
    const { rows } = await this.pool.query<{ is_active: boolean }>('select is_active from alerts where id = $1', [id]);
    return rows[0]?.is_active === true;
  }

  async deliveries(alertId: string, limit: number, offset: number) {
    const [{ rows: n }, { rows }] = await Promise.all([
      this.pool.query<{ n: number }>('select count(*)::int as n from alert_deliveries where alert_id = $1', [alertId]),
      this.pool.query<{ id: string; transaction_id: string; status: 'pending' | 'succeeded' | 'failed'; attempts: number; response_status: number | null; last_error: string | null; next_attempt_at: string | null; last_attempt_at: string | null; created_at: string }>(
        `select id, transaction_id, status, attempts, response_status, last_error, next_attempt_at, last_attempt_at, created_at
         from alert_deliveries where alert_id = $1 order by seq desc limit $2 offset $3`,
        [alertId, limit, offset],
      ),
    ]);
    return { total: n[0].n, items: rows };
  }
}

export class PgRequestLog {
  constructor(private readonly pool: pg.Pool) {}

  async record(keyId: string, r: LoggedRequest): Promise<void> {
    await this.pool.query(
      'insert into request_log (key_id, at, request_id, endpoint, transport, status, credits) values ($1, $2, $3, $4, $5, $6, $7)',
      [keyId, r.at, r.request_id, r.endpoint, r.transport, r.status, r.credits],
    );
  }

  async prune(before: string): Promise<void> {
    await this.pool.query('delete from request_log where at < $1', [before]);
  }

  async recent(keyId: string, limit: number): Promise<LoggedRequest[]> {
    const { rows } = await this.pool.query<LoggedRequest>(
      'select request_id, at, endpoint, transport, status, credits from request_log where key_id = $1 order by at desc, id desc limit $2',
      [keyId, limit],
    );
    return rows;
  }

  /** Requests and credits per UTC day (the session is in UTC) and endpoint since `since` (ISO). */
  async daily(keyId: string, since: string): Promise<Array<{ date: string; endpoint: string; requests: number; credits: number }>> {
    const { rows } = await this.pool.query(
      `select to_char(at, 'YYYY-MM-DD') as date, endpoint, count(*)::int as requests, sum(credits)::bigint as credits
       from request_log where key_id = $1 and at >= $2 group by 1, 2 order by 1, 2`,
      [keyId, since],
    );
    return rows;
  }
}

export class PgServiceState {
  constructor(private readonly pool: pg.Pool) {}

  async get(name: string): Promise<string | undefined> {
    const { rows } = await this.pool.query<{ value: string }>('select value from service_state where name = $1', [name]);
    return rows[0]?.value;
  }

  /** Sets `name` unless it already holds a greater value (a watermark only moves forward). */
  async setForward(name: string, value: string): Promise<void> {
    await this.pool.query(
      `insert into service_state (name, value) values ($1, $2)
       on conflict (name) do update set value = excluded.value where excluded.value collate "C" > service_state.value collate "C"`,
      [name, value],
    );
  }
}
