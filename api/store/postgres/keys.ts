// API keys on PostgreSQL: the same records and rules as the SQLite engine (api/store/sqlite/keys.ts).
import type pg from 'pg';
import type { Clock } from '../../clock';
import {
  AmbiguousKeyError, DISPLAY_PREFIX_CHARS, KEY_PREFIX, PLAN_NAMES, PLANS, UnknownKeyError, hashKey, isPlanName, periodOf, randomBase62,
  keyRecordOf, type CreateKeyOptions, type KeyRecord, type KeyRow,
} from '../model';
import { inTransaction } from './pool';

const KEY_COLUMNS = 'id, prefix, label, plan, is_active, balance, topup, period, created_at, revoked_at';

export class PgKeys {
  constructor(
    private readonly pool: pg.Pool,
    private readonly clock: Clock,
  ) {}

  async createKey(opts: CreateKeyOptions): Promise<{ id: string; key: string }> {
    if (!isPlanName(opts.plan)) throw new RangeError(`unknown plan "${String(opts.plan)}" (plans: ${PLAN_NAMES.join(', ')})`);
    const balance = opts.balance ?? PLANS[opts.plan].monthly;
    if (!Number.isSafeInteger(balance) || balance < 0) throw new RangeError(`balance must be a non-negative integer, got ${balance}`);
    const key = KEY_PREFIX + randomBase62(32);
    const id = `key_${randomBase62(16)}`;
    const now = this.clock.now();
    const at = now.toISOString();
    await inTransaction(this.pool, async (c) => {
      await c.query(
        `insert into api_keys (id, key_hash, prefix, label, plan, is_active, balance, topup, period, created_at)
         values ($1, $2, $3, $4, $5, true, $6, 0, $7, $8)`,
        [id, hashKey(key), key.slice(0, DISPLAY_PREFIX_CHARS), opts.label ?? '', opts.plan, balance, periodOf(now), at],
      );
      await c.query(`insert into credit_ledger (key_id, at, delta, topup_delta, reason) values ($1, $2, $3, 0, 'create')`, [id, at, balance]);
    });
    return { id, key };
  }

  async findByKey(rawKey: string): Promise<KeyRecord | undefined> {
    const { rows } = await this.pool.query<KeyRow>(`select ${KEY_COLUMNS} from api_keys where key_hash = $1`, [hashKey(rawKey)]);
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
    await this.pool.query('update api_keys set is_active = false, revoked_at = $1 where id = $2 and is_active', [this.clock.now().toISOString(), rec.id]);
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
