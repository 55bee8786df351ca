// The API's own state in SQLite: keys (only their SHA-256 hash), plans, credit balances and the credit ledger.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { dataDir } from '../lib/config';
import { systemClock, type Clock } from './clock';

/** Monthly credit allotment and requests per minute of each plan. */
export const PLANS = {
  Free: { monthly: 100, rpm: 60 },
  Indie: { monthly: 2_000, rpm: 60 },
  Agent: { monthly: 10_000, rpm: 60 },
  Scale: { monthly: 50_000, rpm: 60 },
  Enterprise: { monthly: 250_000, rpm: 120 },
} as const satisfies Record<string, { monthly: number; rpm: number }>;

export type PlanName = keyof typeof PLANS;
export const PLAN_NAMES = Object.keys(PLANS) as PlanName[];

export function isPlanName(s: string): s is PlanName {
  return Object.hasOwn(PLANS, s);
}

export const KEY_PREFIX = 'fk_live_';
const KEY_RANDOM_CHARS = 32;
/**
 * Characters of the key kept in clear for display. Every key starts with the 8 characters `fk_live_`, so 8 alone would
 * tell keys apart by nothing: 4 random characters more identify a key in a list while revealing ~24 of its ~190 bits.
 */
export const DISPLAY_PREFIX_CHARS = KEY_PREFIX.length + 4;

export function defaultDbFile(): string {
  return path.join(dataDir(), 'api.sqlite');
}

export function hashKey(rawKey: string): string {
  return crypto.createHash('sha256').update(rawKey, 'utf8').digest('hex');
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export function randomBase62(n: number): string {
  let out = '';
  while (out.length < n) {
    for (const b of crypto.randomBytes(n * 2)) {
      // 248 = 4 × 62: rejecting bytes above it keeps every character equally likely (no modulo bias).
      if (b < 248) out += BASE62[b % 62];
      if (out.length === n) break;
    }
  }
  return out;
}

/** 'YYYY-MM' of the UTC month containing `d`: the unit of the monthly reset. */
export function periodOf(d: Date): string {
  return d.toISOString().slice(0, 7);
}

export class UnknownKeyError extends Error {
  constructor(ref: string) {
    super(`no API key matches "${ref}"`);
  }
}

export class AmbiguousKeyError extends Error {
  constructor(ref: string, ids: string[]) {
    super(`"${ref}" matches several keys (${ids.join(', ')}); use the key id`);
  }
}

export interface KeyRecord {
  id: string;
  prefix: string;
  label: string;
  plan: PlanName;
  isActive: boolean;
  /**
   * Monthly allotment left, as last written. A key not used since the month changed still shows last month's figure:
   * the reset is applied lazily at the next charge (Credits.balance gives the effective value).
   */
  balance: number;
  /** One-off top-up credits left; they survive monthly resets. */
  topup: number;
  /** 'YYYY-MM' of the last reset. */
  period: string;
  createdAt: string;
  revokedAt: string | null;
}

interface KeyRow {
  id: string;
  prefix: string;
  label: string;
  plan: PlanName;
  is_active: number;
  balance: number;
  topup: number;
  period: string;
  created_at: string;
  revoked_at: string | null;
}

function toRecord(r: KeyRow): KeyRecord {
  return {
    id: r.id,
    prefix: r.prefix,
    label: r.label,
    plan: r.plan,
    isActive: r.is_active === 1,
    balance: r.balance,
    topup: r.topup,
    period: r.period,
    createdAt: r.created_at,
    revokedAt: r.revoked_at,
  };
}

// Append-only: a database opened by this code has `user_version` = number of migrations applied.
export const MIGRATIONS: string[] = [
  `
  create table api_keys (
    id text primary key,
    key_hash text not null unique,
    prefix text not null,
    label text not null default '',
    plan text not null check (plan in ('Free', 'Indie', 'Agent', 'Scale', 'Enterprise')),
    is_active integer not null default 1 check (is_active in (0, 1)),
    balance integer not null check (balance >= 0),
    topup integer not null default 0 check (topup >= 0),
    period text not null,
    created_at text not null,
    revoked_at text
  ) strict;
  create index api_keys_prefix on api_keys(prefix);

  -- Every movement of credits; for each key, sum(delta) equals balance + topup, and sum(topup_delta) equals topup.
  create table credit_ledger (
    id integer primary key autoincrement,
    key_id text not null references api_keys(id),
    at text not null,
    delta integer not null,
    topup_delta integer not null default 0,
    reason text not null check (reason in ('create', 'charge', 'refund', 'reset', 'topup')),
    request_id text
  ) strict;
  create index credit_ledger_key_request on credit_ledger(key_id, request_id);
  -- Makes refunds idempotent even if two processes race to refund the same request.
  create unique index credit_ledger_one_refund on credit_ledger(key_id, request_id) where reason = 'refund';
  `,
  // Charges settle (docs/decisions.md, Pending charges): a charge is written 'pending' with the request id the caller
  // sees and the process that took it, then 'kept' or 'refunded' once the answer is decided; a process that dies leaves
  // 'pending' rows that the next start refunds. Client request ids may repeat, so a refund names the charge it undoes
  // (charge_id) and the one-refund rule moves from (key, request id) to the charge.
  `
  alter table credit_ledger add column settled text check (settled in ('pending', 'kept', 'refunded'));
  alter table credit_ledger add column charge_id integer references credit_ledger(id);
  alter table credit_ledger add column owner text;
  update credit_ledger set settled = case
      when exists (select 1 from credit_ledger r where r.reason = 'refund' and r.key_id = credit_ledger.key_id and r.request_id = credit_ledger.request_id)
      then 'refunded' else 'kept' end
    where reason = 'charge';
  update credit_ledger set charge_id = (
      select c.id from credit_ledger c where c.reason = 'charge' and c.key_id = credit_ledger.key_id and c.request_id = credit_ledger.request_id order by c.id limit 1)
    where reason = 'refund';
  drop index credit_ledger_one_refund;
  create unique index credit_ledger_one_refund on credit_ledger(charge_id) where reason = 'refund';
  create index credit_ledger_pending on credit_ledger(owner) where settled = 'pending';
  `,
  // Portfolio and alerts (docs/decisions.md, Portfolio and alerts; Webhooks): per-key properties with their cached
  // estimate, alerts, the durable delivery queue ((alert, transaction) unique), the scan watermark and worker leases.
  `
  create table portfolio_properties (
    id text primary key,
    key_id text not null references api_keys(id),
    seq integer not null,
    data text not null,
    estimate text,
    estimate_valid integer not null default 0 check (estimate_valid in (0, 1)),
    estimate_computed_at text,
    created_at text not null,
    updated_at text not null
  ) strict;
  create unique index portfolio_key_seq on portfolio_properties(key_id, seq);

  create table alerts (
    id text primary key,
    key_id text not null references api_keys(id),
    seq integer not null,
    label text,
    webhook_url text not null,
    secret text not null,
    code_postal text, commune text, code_departement text, type_local text,
    prix_min real, prix_max real, surface_min real, surface_max real,
    is_active integer not null default 1 check (is_active in (0, 1)),
    deactivated_reason text,
    created_at text not null,
    updated_at text not null
  ) strict;
  create unique index alerts_key_seq on alerts(key_id, seq);
  create index alerts_active on alerts(is_active);

  create table alert_deliveries (
    id text primary key,
    seq integer not null unique,
    alert_id text not null references alerts(id) on delete cascade,
    transaction_id text not null,
    payload text not null,
    status text not null check (status in ('pending', 'succeeded', 'failed')),
    attempts integer not null default 0,
    next_attempt_at text,
    last_attempt_at text,
    response_status integer,
    last_error text,
    created_at text not null,
    unique (alert_id, transaction_id)
  ) strict;
  create index alert_deliveries_due on alert_deliveries(next_attempt_at) where status = 'pending';

  create table service_state (name text primary key, value text not null) strict;
  create table leases (name text primary key, owner text not null, expires_at integer not null) strict;
  `,
  // Deliveries at scale (docs/performance.md, Alerts): a scan may enqueue a million rows, so a row keeps the
  // transaction's payload fields in typed columns instead of its JSON body (≈ 400 bytes), which is rebuilt at delivery
  // time from them, byte for byte the same (api/webhooks/queue.ts). seq becomes the rowid (new rows append to the table
  // b-tree) and the id loses its index: it is built from seq (unique by construction) and nothing looks rows up by it.
  `
  create table alert_deliveries_new (
    seq integer primary key,
    id text not null,
    alert_id text not null references alerts(id) on delete cascade,
    transaction_id text not null,
    date_mutation text,
    valeur_fonciere real,
    prix_m2 real,
    type_local text,
    surface_reelle_bati real,
    nombre_pieces_principales integer,
    commune text,
    code_postal text,
    latitude real,
    longitude real,
    status text not null check (status in ('pending', 'succeeded', 'failed')),
    attempts integer not null default 0,
    next_attempt_at text,
    last_attempt_at text,
    response_status integer,
    last_error text,
    created_at text not null,
    unique (alert_id, transaction_id)
  ) strict;
  insert into alert_deliveries_new
    select seq, id, alert_id, transaction_id,
      payload ->> '$.transaction.date_mutation', payload ->> '$.transaction.valeur_fonciere',
      payload ->> '$.transaction.prix_m2', payload ->> '$.transaction.type_local',
      payload ->> '$.transaction.surface_reelle_bati', payload ->> '$.transaction.nombre_pieces_principales',
      payload ->> '$.transaction.commune', payload ->> '$.transaction.code_postal',
      payload ->> '$.transaction.latitude', payload ->> '$.transaction.longitude',
      status, attempts, next_attempt_at, last_attempt_at, response_status, last_error, created_at
    from alert_deliveries;
  drop table alert_deliveries;
  alter table alert_deliveries_new rename to alert_deliveries;
  create index alert_deliveries_due on alert_deliveries(next_attempt_at) where status = 'pending';
  `,
];

export interface CreateKeyOptions {
  plan: PlanName;
  label?: string;
  /** Credits for the current month instead of the plan's allotment; the next monthly reset applies the allotment. */
  balance?: number;
}

export class Store {
  readonly db: Database.Database;
  private readonly byHash: Database.Statement<[string], KeyRow>;

  constructor(
    readonly file: string = defaultDbFile(),
    readonly clock: Clock = systemClock,
  ) {
    if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
    this.db = new Database(file);
    // Several API processes and the keys CLI share the file: wait for a lock rather than fail with SQLITE_BUSY.
    this.db.pragma('busy_timeout = 5000');
    this.db.pragma('journal_mode = WAL');
    // NORMAL is durable across application crashes in WAL mode; only a power loss may drop the last commits.
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('foreign_keys = ON');
    this.migrate();
    // Every API request looks its key up: prepared once, not per call.
    this.byHash = this.db.prepare('select * from api_keys where key_hash = ?');
  }

  private migrate(): void {
    // IMMEDIATE takes the write lock before reading user_version, so two processes opening a new file cannot both migrate.
    this.db
      .transaction(() => {
        const version = this.db.pragma('user_version', { simple: true }) as number;
        if (version > MIGRATIONS.length) {
          throw new Error(`${this.file} has schema version ${version}, newer than this code (${MIGRATIONS.length})`);
        }
        for (let v = version; v < MIGRATIONS.length; v++) this.db.exec(MIGRATIONS[v]);
        if (version < MIGRATIONS.length) this.db.pragma(`user_version = ${MIGRATIONS.length}`);
      })
      .immediate();
  }

  /** Creates a key and returns it in clear, the only time it is ever available: only its hash is stored. */
  createKey(opts: CreateKeyOptions): { id: string; key: string } {
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
      this.db
        .prepare(`insert into credit_ledger (key_id, at, delta, topup_delta, reason) values (?, ?, ?, 0, 'create')`)
        .run(id, at, balance);
    })();
    return { id, key };
  }

  /** The key's record whether active or revoked (the caller tells unknown_key from inactive_key); undefined if unknown. */
  findByKey(rawKey: string): KeyRecord | undefined {
    const row = this.byHash.get(hashKey(rawKey));
    return row && toRecord(row);
  }

  findById(id: string): KeyRecord | undefined {
    const row = this.db.prepare('select * from api_keys where id = ?').get(id) as KeyRow | undefined;
    return row && toRecord(row);
  }

  listKeys(): KeyRecord[] {
    return (this.db.prepare('select * from api_keys order by created_at, id').all() as KeyRow[]).map(toRecord);
  }

  /** Finds a key by id, by display prefix (when unambiguous) or by the full key itself (handy for a leaked key). */
  resolve(ref: string): KeyRecord {
    const byId = this.findById(ref);
    if (byId) return byId;
    if (ref.length > DISPLAY_PREFIX_CHARS && ref.startsWith(KEY_PREFIX)) {
      const byKey = this.findByKey(ref);
      if (byKey) return byKey;
    }
    const rows = this.db.prepare('select * from api_keys where prefix = ? order by created_at').all(ref) as KeyRow[];
    if (rows.length > 1) throw new AmbiguousKeyError(ref, rows.map((r) => r.id));
    if (rows.length === 0) throw new UnknownKeyError(ref);
    return toRecord(rows[0]);
  }

  /** Deactivates a key for good (rotation = create a new key, then revoke the old one). Revoking twice is harmless. */
  revoke(idOrPrefix: string): { key: KeyRecord; alreadyRevoked: boolean } {
    const rec = this.resolve(idOrPrefix);
    if (!rec.isActive) return { key: rec, alreadyRevoked: true };
    this.db
      .prepare('update api_keys set is_active = 0, revoked_at = ? where id = ? and is_active = 1')
      .run(this.clock.now().toISOString(), rec.id);
    return { key: this.findById(rec.id)!, alreadyRevoked: false };
  }

  /** Adds one-off credits, which survive monthly resets and are spent after the month's allotment. */
  topup(idOrPrefix: string, credits: number): KeyRecord {
    if (!Number.isSafeInteger(credits) || credits <= 0) throw new RangeError(`credits must be a positive integer, got ${credits}`);
    const rec = this.resolve(idOrPrefix);
    const at = this.clock.now().toISOString();
    this.db
      .transaction(() => {
        this.db.prepare('update api_keys set topup = topup + ? where id = ?').run(credits, rec.id);
        this.db
          .prepare(`insert into credit_ledger (key_id, at, delta, topup_delta, reason) values (?, ?, ?, ?, 'topup')`)
          .run(rec.id, at, credits, credits);
      })
      .immediate();
    return this.findById(rec.id)!;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
