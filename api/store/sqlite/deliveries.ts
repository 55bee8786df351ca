// The durable delivery queue in SQLite (table alert_deliveries, migrations 0003 and 0004) and its deliveries log.
// A row holds the transaction's payload fields in typed columns, fixed at enqueueing; the JSON body is rebuilt from them
// at each attempt, the same bytes every time (a million-row scan writes a third of the bytes, enqueues ~3× faster).
import crypto from 'node:crypto';
import type Database from 'better-sqlite3';
import { attemptOutcome, dueDeliveryOf, type AttemptResult, type DueRow, type DeliveryItem, type DueDelivery, type Match } from '../../webhooks/queue';
import type { DeliveryStore } from '../types';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const ID_RANDOM_CHARS = 12;

/** `n` × 12 random base-62 characters from one buffer of random bytes (one randomBytes call per row was ~1 µs each). */
function randomSuffixes(n: number): () => string {
  let buf = Buffer.alloc(0);
  let at = 0;
  return () => {
    let out = '';
    while (out.length < ID_RANDOM_CHARS) {
      if (at >= buf.length) {
        buf = crypto.randomBytes(Math.max(64, Math.min(n, 65_536) * ID_RANDOM_CHARS * 2));
        at = 0;
      }
      const b = buf[at++];
      // 248 = 4 × 62: rejecting bytes above it keeps every character equally likely (no modulo bias).
      if (b < 248) out += BASE62[b % 62];
    }
    return out;
  };
}

const BATCH = 64;
const COLUMNS = 14;

/**
 * Enqueues the matches not already queued for their alert; returns how many were new. Many rows per statement (one
 * statement call per row was most of the time of a million-row scan); matches ordered by alert insert fastest.
 */
function enqueue(db: Database.Database, matches: Match[], now: Date): number {
  const at = now.toISOString();
  const statement = (rows: number) =>
    db.prepare(
      `insert into alert_deliveries (seq, id, alert_id, transaction_id, date_mutation, valeur_fonciere, prix_m2, type_local,
         surface_reelle_bati, nombre_pieces_principales, commune, code_postal, latitude, longitude,
         status, attempts, next_attempt_at, created_at)
       values ${Array.from({ length: rows }, () => `(${'?, '.repeat(COLUMNS)}'pending', 0, $at, $at)`).join(', ')}
       on conflict (alert_id, transaction_id) do nothing`,
    );
  const batch = matches.length >= BATCH ? statement(BATCH) : undefined;
  const one = statement(1);
  const suffix = randomSuffixes(matches.length);
  const params: unknown[] = [];
  let added = 0;
  // The (alert, transaction) index takes rows in scattered places: with SQLite's default 2 MB page cache, a large
  // batch spills and re-reads its pages; a bigger cache for the batch only (restored after).
  const cacheSize = db.pragma('cache_size', { simple: true }) as number;
  if (matches.length > 10_000) db.pragma('cache_size = -262144');
  try {
    db.transaction(() => {
      // The write lock is held: the sequence is read once and counted on here. A row skipped as already queued leaves
      // a gap in seq, which only orders the queue.
      let seq = (db.prepare('select coalesce(max(seq), 0) as s from alert_deliveries').get() as { s: number }).s;
      for (let i = 0; i < matches.length; i++) {
        const m = matches[i];
        const t = m.transaction;
        seq++;
        // Ordered by the sequence (unique), then random: the id is unique by construction and sorts like the queue.
        const id = `msg_${seq.toString(36).padStart(9, '0')}${suffix()}`;
        params.push(seq, id, m.alert_id, t.id, t.date_mutation, t.valeur_fonciere, t.prix_m2, t.type_local, t.surface_reelle_bati,
          t.nombre_pieces_principales, t.commune, t.code_postal, t.latitude, t.longitude);
        const rows = params.length / COLUMNS;
        if (rows === BATCH && batch) {
          added += batch.run(params, { at }).changes;
          params.length = 0;
        }
      }
      for (let r = 0; r < params.length; r += COLUMNS) added += one.run(params.slice(r, r + COLUMNS), { at }).changes;
    }).immediate();
  } finally {
    db.pragma(`cache_size = ${cacheSize}`);
  }
  return added;
}

/** Pending deliveries whose time has come, of active alerts, oldest first, with their body rebuilt from the row. */
function dueDeliveries(db: Database.Database, now: Date, limit: number): DueDelivery[] {
  const rows = db
    .prepare(
      `select d.id, d.seq, d.alert_id, d.attempts, a.webhook_url, a.secret, d.transaction_id, d.date_mutation,
         d.valeur_fonciere, d.prix_m2, d.type_local, d.surface_reelle_bati, d.nombre_pieces_principales, d.commune,
         d.code_postal, d.latitude, d.longitude, d.created_at
       from alert_deliveries d join alerts a on a.id = d.alert_id
       where d.status = 'pending' and d.next_attempt_at <= ? and a.is_active = 1
       order by d.next_attempt_at, d.seq limit ?`,
    )
    .all(now.toISOString(), limit) as DueRow[];
  return rows.map(dueDeliveryOf);
}

/**
 * Records one attempt: a 2xx succeeds; 410 Gone fails the delivery and deactivates its alert; anything else is retried
 * after the next delay of `retryDelaysMs` (1, 5, 25 minutes), and fails once they are used up (3 retries).
 */
function recordAttempt(db: Database.Database, d: DueDelivery, r: AttemptResult, now: Date, retryDelaysMs: number[]): 'succeeded' | 'failed' | 'retry' {
  const { at, attempts, gone, outcome, next, error } = attemptOutcome(d, r, now, retryDelaysMs);
  db.transaction(() => {
    db.prepare(
      `update alert_deliveries set status = ?, attempts = ?, next_attempt_at = ?, last_attempt_at = ?, response_status = ?, last_error = ?
       where seq = ? and status = 'pending'`,
    ).run(outcome === 'retry' ? 'pending' : outcome, attempts, next, at, r.status ?? null, error, d.seq);
    if (gone) {
      db.prepare(`update alerts set is_active = 0, deactivated_reason = ?, updated_at = ? where id = ?`).run(
        `its webhook answered 410 Gone on ${at} (delivery ${d.id})`,
        at,
        d.alert_id,
      );
    }
  }).immediate();
  return outcome;
}

function listDeliveries(db: Database.Database, alertId: string, limit: number, offset: number): { total: number; items: DeliveryItem[] } {
  const { n } = db.prepare('select count(*) as n from alert_deliveries where alert_id = ?').get(alertId) as { n: number };
  const items = db
    .prepare(
      `select id, transaction_id, status, attempts, response_status, last_error, next_attempt_at, last_attempt_at, created_at
       from alert_deliveries where alert_id = ? order by seq desc limit ? offset ?`,
    )
    .all(alertId, limit, offset) as DeliveryItem[];
  return { total: n, items };
}

/** The lease over the whole queue: the worker of one process at a time claims deliveries. */
const QUEUE_LEASE = 'alert-deliveries';

/**
 * On SQLite (one machine), one process at a time delivers: claiming takes or renews a lease over the whole queue
 * (table `leases`, wall-clock milliseconds), taken over by another process once it expires. What the lease holder has
 * claimed and not yet recorded is kept in its memory, so that it is not claimed twice meanwhile.
 */
export class SqliteDeliveries implements DeliveryStore {
  /** The deliveries each owner of this process claimed and has not recorded or given back. */
  private readonly held = new Map<string, Set<string>>();

  constructor(
    private readonly db: Database.Database,
    /** Wall time of the lease (epoch ms). */
    private readonly wallNow: () => number = Date.now,
  ) {}

  async enqueue(matches: Match[], now: Date): Promise<number> {
    return enqueue(this.db, matches, now);
  }

  async anyDue(now: Date, owner: string): Promise<boolean> {
    const lease = this.db.prepare('select owner, expires_at from leases where name = ?').get(QUEUE_LEASE) as { owner: string; expires_at: number } | undefined;
    if (lease && lease.owner !== owner && lease.expires_at >= this.wallNow()) return false;
    const held = this.held.get(owner) ?? new Set<string>();
    return dueDeliveries(this.db, now, held.size + 1).some((d) => !held.has(d.id));
  }

  async claim(owner: string, now: Date, limit: number, leaseMs: number): Promise<DueDelivery[]> {
    if (!this.holdLease(owner, leaseMs)) return [];
    const held = this.heldBy(owner);
    const due = dueDeliveries(this.db, now, limit + held.size)
      .filter((d) => !held.has(d.id))
      .slice(0, limit);
    for (const d of due) held.add(d.id);
    return due;
  }

  async confirm(d: DueDelivery, owner: string, leaseMs: number): Promise<boolean> {
    const ok =
      this.heldBy(owner).has(d.id) &&
      this.holdLease(owner, leaseMs) &&
      (this.db.prepare('select is_active from alerts where id = ?').get(d.alert_id) as { is_active: number } | undefined)?.is_active === 1;
    if (!ok) this.heldBy(owner).delete(d.id);
    return ok;
  }

  async recordAttempt(d: DueDelivery, owner: string, r: AttemptResult, now: Date, retryDelaysMs: number[]): Promise<'succeeded' | 'failed' | 'retry' | 'lost'> {
    this.heldBy(owner).delete(d.id);
    return recordAttempt(this.db, d, r, now, retryDelaysMs);
  }

  async release(owner: string): Promise<void> {
    this.held.delete(owner);
    this.db.prepare('delete from leases where name = ? and owner = ?').run(QUEUE_LEASE, owner);
  }

  async due(now: Date, limit: number): Promise<DueDelivery[]> {
    return dueDeliveries(this.db, now, limit);
  }

  /** Takes or renews the queue's lease: true when `owner` holds it for `leaseMs` more. */
  private holdLease(owner: string, leaseMs: number): boolean {
    const now = this.wallNow();
    const r = this.db
      .prepare(
        `insert into leases (name, owner, expires_at) values (?, ?, ?)
         on conflict (name) do update set owner = excluded.owner, expires_at = excluded.expires_at
         where leases.owner = excluded.owner or leases.expires_at < ?`,
      )
      .run(QUEUE_LEASE, owner, now + leaseMs, now);
    if (r.changes !== 1) this.held.delete(owner);
    return r.changes === 1;
  }

  private heldBy(owner: string): Set<string> {
    let s = this.held.get(owner);
    if (!s) this.held.set(owner, (s = new Set()));
    return s;
  }

  async list(alertId: string, limit: number, offset: number): Promise<{ total: number; items: DeliveryItem[] }> {
    return listDeliveries(this.db, alertId, limit, offset);
  }

  async countByStatus(): Promise<Record<'pending' | 'succeeded' | 'failed', number>> {
    const counts = { pending: 0, succeeded: 0, failed: 0 };
    for (const r of this.db.prepare('select status, count(*) as n from alert_deliveries group by status').all() as Array<{ status: keyof typeof counts; n: number }>) counts[r.status] = r.n;
    return counts;
  }
}
