// API keys in SQLite: only their SHA-256 hash is stored.
import type Database from 'better-sqlite3';
import type { Clock } from '../../clock';
import {
  AmbiguousKeyError, DISPLAY_PREFIX_CHARS, KEY_PREFIX, RevokedKeyError, UnknownKeyError, dayOf, hashKey, keyRecordOf, newKey, newRoll, checkFreeKeyOptions,
  type CreateKeyOptions, type FreeKeyOptions, type FreeKeyResult, type KeyRecord, type KeyRow, type RolledKey,
} from '../model';
import type { KeyStore } from '../types';

/**
 * The async methods do their work before their first `await` (they have none): better-sqlite3 is synchronous, so a
 * call has written or read the database by the time it returns its promise. The *Now methods are the same operations
 * for the SQLite engine's own callers (the other sub-stores, test set-ups), not part of the interface.
 */
export class SqliteKeys implements KeyStore {
  private readonly byHash: Database.Statement<[string, string, string], KeyRow>;

  constructor(
    private readonly db: Database.Database,
    private readonly clock: Clock,
  ) {
    // Every API request looks its key up: prepared once, not per call. The current secret, else a rolled one still in
    // its grace period: each side one probe of a unique index.
    this.byHash = db.prepare(
      `select * from api_keys where key_hash = ?
       union all
       select * from api_keys where previous_hash = ? and previous_expires_at > ?
       limit 1`,
    );
  }

  /** Inserts a new key and its 'create' ledger row; inside the caller's transaction. */
  private insertKey(opts: CreateKeyOptions): { id: string; key: string } {
    const k = newKey(opts, this.clock.now());
    this.db
      .prepare(
        `insert into api_keys (id, key_hash, prefix, label, plan, is_active, balance, topup, period, created_at)
         values (?, ?, ?, ?, ?, 1, ?, 0, ?, ?)`,
      )
      .run(k.id, k.hash, k.prefix, k.label, k.plan, k.balance, k.period, k.at);
    this.db.prepare(`insert into credit_ledger (key_id, at, delta, topup_delta, reason) values (?, ?, ?, 0, 'create')`).run(k.id, k.at, k.balance);
    return { id: k.id, key: k.key };
  }

  createKeyNow(opts: CreateKeyOptions): { id: string; key: string } {
    return this.db.transaction(() => this.insertKey(opts))();
  }

  issueFreeKeyNow(opts: FreeKeyOptions): FreeKeyResult {
    checkFreeKeyOptions(opts);
    const day = dayOf(this.clock.now());
    return this.db
      .transaction((): FreeKeyResult => {
        this.db.prepare('delete from free_key_grants where day < ?').run(day);
        const row = this.db.prepare('select issued from free_key_grants where day = ? and address = ?').get(day, opts.address) as { issued: number } | undefined;
        const issued = row?.issued ?? 0;
        if (issued >= opts.perDay) return { ok: false, issued };
        this.db
          .prepare('insert into free_key_grants (day, address, issued) values (?, ?, 1) on conflict (day, address) do update set issued = issued + 1')
          .run(day, opts.address);
        return { ok: true, ...this.insertKey({ plan: 'Free', label: opts.label }) };
      })
      .immediate();
  }

  rollNow(ref: string, graceMs: number): RolledKey {
    const now = this.clock.now();
    const r = newRoll(graceMs, now);
    const rec = this.resolveNow(ref);
    if (!rec.isActive) throw new RevokedKeyError(rec.id);
    // The set expressions read the row as it was: the current secret becomes the previous one.
    const changed = this.db
      .prepare(
        `update api_keys set key_hash = ?, prefix = ?,
           previous_hash = case when ? is null then null else key_hash end,
           previous_prefix = case when ? is null then null else prefix end,
           previous_expires_at = ?
         where id = ? and is_active = 1`,
      )
      .run(r.hash, r.prefix, r.previousExpiresAt, r.previousExpiresAt, r.previousExpiresAt, rec.id).changes;
    if (changed !== 1) throw new RevokedKeyError(rec.id);
    return { key: this.findByIdNow(rec.id)!, secret: r.secret };
  }

  findByKeyNow(rawKey: string): KeyRecord | undefined {
    const hash = hashKey(rawKey);
    const row = this.byHash.get(hash, hash, this.clock.now().toISOString());
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
    const at = this.clock.now().toISOString();
    this.db
      .transaction(() => {
        this.db.prepare('update api_keys set is_active = 0, revoked_at = ? where id = ? and is_active = 1').run(at, rec.id);
        // Its alerts stop with it: no one could manage them any more.
        this.db.prepare(`update alerts set is_active = 0, deactivated_reason = 'key_revoked', updated_at = ? where key_id = ? and is_active = 1`).run(at, rec.id);
      })
      .immediate();
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

  async roll(ref: string, graceMs: number) {
    return this.rollNow(ref, graceMs);
  }

  async issueFreeKey(opts: FreeKeyOptions) {
    return this.issueFreeKeyNow(opts);
  }

  async topup(ref: string, credits: number) {
    return this.topupNow(ref, credits);
  }
}
