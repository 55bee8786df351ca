// API keys on PostgreSQL: the same records and rules as the SQLite engine (api/store/sqlite/keys.ts).
import type pg from 'pg';
import type { Clock } from '../../clock';
import type { KeyStore } from '../types';
import {
  AmbiguousKeyError, DISPLAY_PREFIX_CHARS, KEY_PREFIX, RevokedKeyError, UnknownKeyError, dayOf, hashKey, keyRecordOf, newKey, newRoll, checkFreeKeyOptions,
  type CreateKeyOptions, type FreeKeyOptions, type FreeKeyResult, type KeyRecord, type KeyRow, type RolledKey,
} from '../model';
import { inTransaction } from './pool';

const KEY_COLUMNS = 'id, prefix, label, plan, is_active, balance, topup, period, created_at, revoked_at, previous_prefix, previous_expires_at';

export class PgKeys implements KeyStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly clock: Clock,
  ) {}

  /** Inserts a new key and its 'create' ledger row, on the caller's transaction. */
  private async insertKey(c: pg.PoolClient, opts: CreateKeyOptions): Promise<{ id: string; key: string }> {
    const k = newKey(opts, this.clock.now());
    await c.query(
      `insert into api_keys (id, key_hash, prefix, label, plan, is_active, balance, topup, period, created_at)
       values ($1, $2, $3, $4, $5, true, $6, 0, $7, $8)`,
      [k.id, k.hash, k.prefix, k.label, k.plan, k.balance, k.period, k.at],
    );
    await c.query(`insert into credit_ledger (key_id, at, delta, topup_delta, reason) values ($1, $2, $3, 0, 'create')`, [k.id, k.at, k.balance]);
    return { id: k.id, key: k.key };
  }

  async createKey(opts: CreateKeyOptions): Promise<{ id: string; key: string }> {
    return inTransaction(this.pool, (c) => this.insertKey(c, opts));
  }

  async issueFreeKey(opts: FreeKeyOptions): Promise<FreeKeyResult> {
    checkFreeKeyOptions(opts);
    const day = dayOf(this.clock.now());
    return inTransaction(this.pool, async (c): Promise<FreeKeyResult> => {
      await c.query('delete from free_key_grants where day < $1', [day]);
      // Counted under the row's lock: concurrent issues for one address (any replica) wait for each other.
      const { rows } = await c.query<{ issued: number }>(
        `insert into free_key_grants as g (day, address, issued) values ($1, $2, 1)
         on conflict (day, address) do update set issued = g.issued + 1 where g.issued < $3
         returning issued`,
        [day, opts.address, opts.perDay],
      );
      if (!rows.length) {
        const { rows: now } = await c.query<{ issued: number }>('select issued from free_key_grants where day = $1 and address = $2', [day, opts.address]);
        return { ok: false, issued: now[0]?.issued ?? opts.perDay };
      }
      return { ok: true, ...(await this.insertKey(c, { plan: 'Free', label: opts.label })) };
    });
  }

  async roll(ref: string, graceMs: number): Promise<RolledKey> {
    const r = newRoll(graceMs, this.clock.now());
    const rec = await this.resolve(ref);
    if (!rec.isActive) throw new RevokedKeyError(rec.id);
    // The set expressions read the row as it was: the current secret becomes the previous one.
    const { rowCount } = await this.pool.query(
      `update api_keys set key_hash = $1, prefix = $2,
         previous_hash = case when $3::timestamptz is null then null else key_hash end,
         previous_prefix = case when $3::timestamptz is null then null else prefix end,
         previous_expires_at = $3
       where id = $4 and is_active`,
      [r.hash, r.prefix, r.previousExpiresAt, rec.id],
    );
    if (rowCount !== 1) throw new RevokedKeyError(rec.id);
    return { key: (await this.findById(rec.id))!, secret: r.secret };
  }

  async findByKey(rawKey: string): Promise<KeyRecord | undefined> {
    // The current secret, else a rolled one still in its grace period: each side one probe of a unique index.
    const { rows } = await this.pool.query<KeyRow>(
      `select ${KEY_COLUMNS} from api_keys where key_hash = $1
       union all
       select ${KEY_COLUMNS} from api_keys where previous_hash = $1 and previous_expires_at > $2
       limit 1`,
      [hashKey(rawKey), this.clock.now().toISOString()],
    );
    return rows[0] && keyRecordOf(rows[0]);
  }

  async findById(id: string): Promise<KeyRecord | undefined> {
    const { rows } = await this.pool.query<KeyRow>(`select ${KEY_COLUMNS} from api_keys where id = $1`, [id]);
    return rows[0] && keyRecordOf(rows[0]);
  }

  async listKeys(): Promise<KeyRecord[]> {
    const { rows } = await this.pool.query<KeyRow>(`select ${KEY_COLUMNS} from api_keys order by created_at, id`);
    return rows.map(keyRecordOf);
  }

  async resolve(ref: string): Promise<KeyRecord> {
    const byId = await this.findById(ref);
    if (byId) return byId;
    if (ref.length > DISPLAY_PREFIX_CHARS && ref.startsWith(KEY_PREFIX)) {
      const byKey = await this.findByKey(ref);
      if (byKey) return byKey;
    }
    const { rows } = await this.pool.query<KeyRow>(`select ${KEY_COLUMNS} from api_keys where prefix = $1 order by created_at`, [ref]);
    if (rows.length > 1) throw new AmbiguousKeyError(ref, rows.map((r) => r.id));
    if (rows.length === 0) throw new UnknownKeyError(ref);
    return keyRecordOf(rows[0]);
  }

  async revoke(idOrPrefix: string): Promise<{ key: KeyRecord; alreadyRevoked: boolean }> {
    const rec = await this.resolve(idOrPrefix);
    if (!rec.isActive) return { key: rec, alreadyRevoked: true };
    const at = this.clock.now().toISOString();
    await inTransaction(this.pool, async (c) => {
      await c.query('update api_keys set is_active = false, revoked_at = $1 where id = $2 and is_active', [at, rec.id]);
      // Its alerts stop with it: no one could manage them any more.
      await c.query(`update alerts set is_active = false, deactivated_reason = 'key_revoked', updated_at = $1 where key_id = $2 and is_active`, [at, rec.id]);
    });
    return { key: (await this.findById(rec.id))!, alreadyRevoked: false };
  }

  async topup(idOrPrefix: string, credits: number): Promise<KeyRecord> {
    if (!Number.isSafeInteger(credits) || credits <= 0) throw new RangeError(`credits must be a positive integer, got ${credits}`);
    const rec = await this.resolve(idOrPrefix);
    const at = this.clock.now().toISOString();
    await inTransaction(this.pool, async (c) => {
      await c.query('update api_keys set topup = topup + $1 where id = $2', [credits, rec.id]);
      await c.query(`insert into credit_ledger (key_id, at, delta, topup_delta, reason) values ($1, $2, $3, $4, 'topup')`, [rec.id, at, credits, credits]);
    });
    return (await this.findById(rec.id))!;
  }
}
