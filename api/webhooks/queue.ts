// The durable delivery queue in SQLite (table alert_deliveries, api/store.ts migration 3): one row per (alert,
// transaction), unique, so a transaction is never enqueued twice for an alert; a row is pending until a 2xx
// (succeeded), a 410 or its 4th failed attempt (failed). Rows survive restarts: nothing pending is ever lost.
import type Database from 'better-sqlite3';
import { z } from '../params';
import { randomBase62 } from '../store';

export interface TransactionPayload {
  id: string;
  date_mutation: string;
  valeur_fonciere: number;
  prix_m2: number | null;
  type_local: string;
  surface_reelle_bati: number | null;
  nombre_pieces_principales: number | null;
  commune: string | null;
  code_postal: string | null;
  latitude: number | null;
  longitude: number | null;
}

export interface Match {
  alert_id: string;
  transaction: TransactionPayload;
}

/** The body of a delivery (DECISIONS.md, Webhooks: the second transaction shape of the specification, always). */
export function payloadOf(deliveryId: string, createdAt: string, m: Match): string {
  return JSON.stringify({ event: 'new_transaction', alert_id: m.alert_id, delivery_id: deliveryId, created_at: createdAt, transaction: m.transaction });
}

/** Enqueues the matches not already queued for their alert; returns how many were new. */
export function enqueue(db: Database.Database, matches: Match[], now: Date): number {
  const at = now.toISOString();
  const insert = db.prepare(
    `insert into alert_deliveries (id, seq, alert_id, transaction_id, payload, status, attempts, next_attempt_at, created_at)
     values (?, ?, ?, ?, ?, 'pending', 0, ?, ?)
     on conflict (alert_id, transaction_id) do nothing`,
  );
  let added = 0;
  db.transaction(() => {
    // The write lock is held: the sequence is read once and counted on here.
    let seq = (db.prepare('select coalesce(max(seq), 0) as s from alert_deliveries').get() as { s: number }).s;
    for (const m of matches) {
      // Ordered by the sequence, then random: new rows append to the primary-key index instead of landing at random
      // places in it (a million-row scan enqueues several times faster).
      const id = `msg_${(seq + 1).toString(36).padStart(9, '0')}${randomBase62(12)}`;
      const changes = insert.run(id, seq + 1, m.alert_id, m.transaction.id, payloadOf(id, at, m), at, at).changes;
      seq += changes;
      added += changes;
    }
  }).immediate();
  return added;
}

export interface DueDelivery {
  id: string;
  alert_id: string;
  payload: string;
  attempts: number;
  webhook_url: string;
  secret: string;
}

/** Pending deliveries whose time has come, of active alerts, oldest first. */
export function dueDeliveries(db: Database.Database, now: Date, limit: number): DueDelivery[] {
  return db
    .prepare(
      `select d.id, d.alert_id, d.payload, d.attempts, a.webhook_url, a.secret
       from alert_deliveries d join alerts a on a.id = d.alert_id
       where d.status = 'pending' and d.next_attempt_at <= ? and a.is_active = 1
       order by d.next_attempt_at, d.seq limit ?`,
    )
    .all(now.toISOString(), limit) as DueDelivery[];
}

export interface AttemptResult {
  /** HTTP status of the answer; undefined when none came (timeout, refused address, TLS, network). */
  status?: number;
  error?: string;
}

/**
 * Records one attempt: a 2xx succeeds; 410 Gone fails the delivery and deactivates its alert; anything else is retried
 * after the next delay of `retryDelaysMs` (1, 5, 25 minutes), and fails once they are used up (3 retries).
 */
export function recordAttempt(db: Database.Database, d: DueDelivery, r: AttemptResult, now: Date, retryDelaysMs: number[]): 'succeeded' | 'failed' | 'retry' {
  const at = now.toISOString();
  const attempts = d.attempts + 1;
  const ok = r.status !== undefined && r.status >= 200 && r.status < 300;
  const gone = r.status === 410;
  const outcome = ok ? 'succeeded' : gone || attempts > retryDelaysMs.length ? 'failed' : 'retry';
  const next = outcome === 'retry' ? new Date(now.getTime() + retryDelaysMs[attempts - 1]).toISOString() : null;
  const error = ok ? null : gone ? 'the receiver answered 410 Gone: the alert was deactivated' : (r.error ?? `HTTP ${r.status}`);
  db.transaction(() => {
    db.prepare(
      `update alert_deliveries set status = ?, attempts = ?, next_attempt_at = ?, last_attempt_at = ?, response_status = ?, last_error = ?
       where id = ? and status = 'pending'`,
    ).run(outcome === 'retry' ? 'pending' : outcome, attempts, next, at, r.status ?? null, error, d.id);
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

export const deliverySchema = z
  .object({
    id: z.string().openapi({ description: 'The delivery id: the webhook-id header and delivery_id of the payload.' }),
    transaction_id: z.string(),
    status: z.enum(['pending', 'succeeded', 'failed']),
    attempts: z.number().int(),
    response_status: z.number().int().nullable().openapi({ description: 'HTTP status of the last answer; null when none came.' }),
    last_error: z.string().nullable(),
    next_attempt_at: z.string().nullable().openapi({ description: 'ISO 8601 UTC; null once succeeded or failed.' }),
    last_attempt_at: z.string().nullable(),
    created_at: z.string(),
  })
  .openapi('AlertDelivery');

export function listDeliveries(db: Database.Database, alertId: string, limit: number, offset: number): { total: number; items: Array<z.output<typeof deliverySchema>> } {
  const { n } = db.prepare('select count(*) as n from alert_deliveries where alert_id = ?').get(alertId) as { n: number };
  const items = db
    .prepare(
      `select id, transaction_id, status, attempts, response_status, last_error, next_attempt_at, last_attempt_at, created_at
       from alert_deliveries where alert_id = ? order by seq desc limit ? offset ?`,
    )
    .all(alertId, limit, offset) as Array<z.output<typeof deliverySchema>>;
  return { total: n, items };
}
