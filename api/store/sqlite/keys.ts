// API keys in SQLite: only their SHA-256 hash is stored.
import type Database from 'better-sqlite3';
import type { Clock } from '../../clock';
import {
  AmbiguousKeyError, DISPLAY_PREFIX_CHARS, KEY_PREFIX, KEY_RANDOM_CHARS, PLAN_NAMES, PLANS, UnknownKeyError, hashKey, isPlanName, periodOf, randomBase62,
  keyRecordOf, type CreateKeyOptions, type KeyRecord, type KeyRow,
} from '../model';
import type { KeyStore } from '../types';

/**
 * The async methods do their work before their first `await` (they have none): better-sqlite3 is synchronous, so a
 * call has written or read the database by the time it returns its promise. The *Now methods are the same operations
 * for the SQLite engine's own callers (the other sub-stores, test set-ups), not part of the interface.
 */
export class SqliteKeys implements KeyStore {
  private readonly byHash: Database.Statement<[string], KeyRow>;

  constructor(
    private readonly db: Database.Database,
    private readonly clock: Clock,
  ) {
    // Every API request looks its key up: prepared once, not per call.
    this.byHash = db.prepare('select * from api_keys where key_hash = ?');
  }

  createKeyNow(opts: CreateKeyOptions): { id: string; key: string } {
    if (!isPlanName(opts.plan)) throw new RangeError(`unknown plan "${String(opts.plan)}" (plans: ${PLAN_NAMES.join(', ')})`);
    const balance = opts.balance ?? PLANS[opts.plan].monthly;
    if (!Number.isSafeInteger(balance) || balance < 0) throw new RangeError(`balance must be a non-negative integer, got ${balance}`);
    const key = KEY_PREFIX + randomBase62(KEY_RANDOM_CHARS);
    const id = `key_${randomBase62(16)}`;
    const now = this.clock.now();
    const at = now.toISOString();
    this.db.transaction(() => {
      this.db
        .prepare(
          `insert into api_keys (id, key_hash, prefix, label, plan, is_active, balance, topup, period, created_at)
           values (?, ?, ?, ?, ?, 1, ?, 0, ?, ?)`,
        )
        .run(id, hashKey(key), key.slice(0, DISPLAY_PREFIX_CHARS), opts.label ?? '', opts.plan, balance, periodOf(now), at);
      this.db.prepare(`insert into credit_ledger (key_id, at, delta, topup_delta, reason) values (?, ?, ?, 0, 'create')`).run(id, at, balance);
    })();
    return { id, key };
  }

  findByKeyNow(rawKey: string): KeyRecord | undefined {
    const row = this.byHash.get(hashKey(rawKey));
    return row && keyRecordOf(row);
  }

  findByIdNow(id: string): KeyRecord | undefined {
    const row = this.db.prepare('select * from api_keys where id = ?').get(id) as KeyRow | undefined;
    return row && keyRecordOf(row);
  }

  resolveNow(ref: string): KeyRecord {
    const byId = this.findByIdNow(ref);
    if (byId) return byId;
    if (ref.length > DISPLAY_PREFIX_CHARS && ref.startsWith(KEY_PREFIX)) {
      const byKey = this.findByKeyNow(ref);
      if (byKey) return byKey;
    }
    const rows = this.db.prepare('select * from api_keys where prefix = ? order by created_at').all(ref) as KeyRow[];
    if (rows.length > 1) throw new AmbiguousKeyError(ref, rows.map((r) => r.id));
    if (rows.length === 0) throw new UnknownKeyError(ref);
    return keyRecordOf(rows[0]);
  }

  revokeNow(ref: string): { key: KeyRecord; alreadyRevoked: boolean } {
    const rec = this.resolveNow(ref);
    if (!rec.isActive) return { key: rec, alreadyRevoked: true };
    this.db.prepare('update api_keys set is_active = 0, revoked_at = ? where id = ? and is_active = 1').run(this.clock.now().toISOString(), rec.id);
    return { key: this.findByIdNow(rec.id)!, alreadyRevoked: false };
  }

  topupNow(ref: string, credits: number): KeyRecord {
    if (!Number.isSafeInteger(credits) || credits <= 0) throw new RangeError(`credits must be a positive integer, got ${credits}`);
    const rec = this.resolveNow(ref);
    const at = this.clock.now().toISOString();
    this.db
      .transaction(() => {
        this.db.prepare('update api_keys set topup = topup + ? where id = ?').run(credits, rec.id);
        this.db.prepare(`insert into credit_ledger (key_id, at, delta, topup_delta, reason) values (?, ?, ?, ?, 'topup')`).run(rec.id, at, credits, credits);
      })
      .immediate();
    return this.findByIdNow(rec.id)!;
  }

  async createKey(opts: CreateKeyOptions) {
    return this.createKeyNow(opts);
  }

  async findByKey(rawKey: string) {
    return this.findByKeyNow(rawKey);
  }

  async findById(id: string) {
    return this.findByIdNow(id);
  }

  async listKeys() {
    return (this.db.prepare('select * from api_keys order by created_at, id').all() as KeyRow[]).map(keyRecordOf);
  }

  async resolve(ref: string) {
    return this.resolveNow(ref);
  }

  async revoke(ref: string) {
    return this.revokeNow(ref);
  }

  async topup(ref: string, credits: number) {
    return this.topupNow(ref, credits);
  }
}
