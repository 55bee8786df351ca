// The webhook delivery queue on PostgreSQL: the same rows and rules as the SQLite queue (api/webhooks/queue.ts), plus
// per-delivery claims so that every replica may deliver: a replica claims due deliveries with
// `select … for update skip locked` and a lease (claimed_by, claimed_until), confirms the claim right before sending, and
// records the attempt only while it still holds the claim. Another replica takes a delivery over only once its lease
// expired: its holder died (the delivery is then sent again, with the same webhook-id) or stalled past the lease.
import type pg from 'pg';
import { attemptOutcome, dueDeliveryOf, type AttemptResult, type DueRow, type DueDelivery, type Match, type TransactionPayload } from '../../webhooks/queue';
import { inTransaction } from './pool';
import { randomBase62 } from '../model';

const BATCH = 1000;

/** Enqueues the matches not already queued for their alert; returns how many were new. */
export async function enqueue(pool: pg.Pool, matches: Match[], now: Date): Promise<number> {
  const at = now.toISOString();
  let added = 0;
  for (let i = 0; i < matches.length; i += BATCH) {
    const part = matches.slice(i, i + BATCH);
    const { rows } = await pool.query<{ seq: number }>(`select nextval('alert_deliveries_seq') as seq from generate_series(1, $1)`, [part.length]);
    const col = <K extends keyof TransactionPayload>(k: K) => part.map((m) => m.transaction[k]);
    const seqs = rows.map((r) => r.seq);
    const ids = seqs.map((s) => `msg_${s.toString(36).padStart(9, '0')}${randomBase62(12)}`);
    const r = await pool.query(
      `insert into alert_deliveries (seq, id, alert_id, transaction_id, date_mutation, valeur_fonciere, prix_m2, type_local,
         surface_reelle_bati, nombre_pieces_principales, commune, code_postal, latitude, longitude,
         status, attempts, next_attempt_at, created_at)
       select *, 'pending', 0, $15::timestamptz, $15::timestamptz from unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[],
         $6::float8[], $7::float8[], $8::text[], $9::float8[], $10::int[], $11::text[], $12::text[], $13::float8[], $14::float8[])
       on conflict (alert_id, transaction_id) do nothing`,
      [seqs, ids, part.map((m) => m.alert_id), col('id'), col('date_mutation'), col('valeur_fonciere'), col('prix_m2'), col('type_local'),
        col('surface_reelle_bati'), col('nombre_pieces_principales'), col('commune'), col('code_postal'), col('latitude'), col('longitude'), at],
    );
    added += r.rowCount ?? 0;
  }
  return added;
}



const DUE_COLUMNS = `d.id, d.seq, d.alert_id, d.attempts, a.webhook_url, a.secret, d.transaction_id, d.date_mutation,
  d.valeur_fonciere, d.prix_m2, d.type_local, d.surface_reelle_bati, d.nombre_pieces_principales, d.commune,
  d.code_postal, d.latitude, d.longitude, d.created_at`;

/** Whether anything is due (an idle poll: one read, no lock). */
export async function anyDue(pool: pg.Pool, now: Date): Promise<boolean> {
  const { rows } = await pool.query(
    `select 1 from alert_deliveries d join alerts a on a.id = d.alert_id
     where d.status = 'pending' and d.next_attempt_at <= $1 and a.is_active
       and (d.claimed_until is null or d.claimed_until < clock_timestamp()) limit 1`,
    [now.toISOString()],
  );
  return rows.length > 0;
}

/** Due deliveries, oldest first, claimed or not, without claiming them (tests, operations). */
export async function peekDue(pool: pg.Pool, now: Date, limit: number): Promise<DueDelivery[]> {
  const { rows } = await pool.query<DueRow>(
    `select ${DUE_COLUMNS} from alert_deliveries d join alerts a on a.id = d.alert_id
     where d.status = 'pending' and d.next_attempt_at <= $1 and a.is_active
     order by d.next_attempt_at, d.seq limit $2`,
    [now.toISOString(), limit],
  );
  return rows.map(dueDeliveryOf);
}

/**
 * Claims up to `limit` due deliveries for `owner` for `leaseMs`, oldest first: rows another replica is claiming at
 * the same instant are skipped (skip locked), rows it holds under a live lease are not due for this one.
 */
export async function claimDue(pool: pg.Pool, owner: string, now: Date, limit: number, leaseMs: number): Promise<DueDelivery[]> {
  const { rows } = await pool.query<DueRow>(
    `with due as (
       select d.seq from alert_deliveries d join alerts a on a.id = d.alert_id
       where d.status = 'pending' and d.next_attempt_at <= $1 and a.is_active
         and (d.claimed_until is null or d.claimed_until < clock_timestamp())
       order by d.next_attempt_at, d.seq
       limit $2
       for update of d skip locked
     )
     update alert_deliveries d set claimed_by = $3, claimed_until = clock_timestamp() + $4 * interval '1 millisecond'
     from due, alerts a where d.seq = due.seq and a.id = d.alert_id
     returning ${DUE_COLUMNS}`,
    [now.toISOString(), limit, owner, leaseMs],
  );
  return rows.sort((x, y) => x.seq - y.seq).map(dueDeliveryOf);
}

/**
 * Right before sending: true when `owner` still holds the delivery, at the attempt it claimed, with its alert active;
 * the lease is renewed for the send (the receiver's deadline is shorter than the lease).
 */
export async function confirmClaim(pool: pg.Pool, d: DueDelivery, owner: string, leaseMs: number): Promise<boolean> {
  const r = await pool.query(
    `update alert_deliveries d set claimed_until = clock_timestamp() + $4 * interval '1 millisecond'
     from alerts a
     where d.seq = $1 and d.claimed_by = $2 and d.attempts = $3 and d.status = 'pending' and d.claimed_until >= clock_timestamp()
       and a.id = d.alert_id and a.is_active`,
    [d.seq, owner, d.attempts, leaseMs],
  );
  return r.rowCount === 1;
}

/** Gives claims back (a graceful stop with deliveries not yet sent). */
export async function releaseClaims(pool: pg.Pool, owner: string): Promise<void> {
  await pool.query(`update alert_deliveries set claimed_by = null, claimed_until = null where claimed_by = $1 and status = 'pending'`, [owner]);
}

/**
 * Records one attempt of `owner`'s claimed delivery, with the SQLite queue's rules: 2xx succeeds; 410 fails it and
 * deactivates its alert; anything else is retried after the next delay, failing once they are used up.
 */
export async function recordAttempt(
  pool: pg.Pool,
  d: DueDelivery,
  owner: string,
  r: AttemptResult,
  now: Date,
  retryDelaysMs: number[],
): Promise<'succeeded' | 'failed' | 'retry' | 'lost'> {
  const { at, attempts, gone, outcome, next, error } = attemptOutcome(d, r, now, retryDelaysMs);
  return inTransaction(pool, async (c) => {
    const u = await c.query(
      `update alert_deliveries set status = $1, attempts = $2, next_attempt_at = $3, last_attempt_at = $4, response_status = $5,
         last_error = $6, claimed_by = null, claimed_until = null
       where seq = $7 and status = 'pending' and claimed_by = $8 and attempts = $9`,
      [outcome === 'retry' ? 'pending' : outcome, attempts, next, at, r.status ?? null, error, d.seq, owner, d.attempts],
    );
    if (u.rowCount !== 1) return 'lost' as const;
    if (gone) {
      await c.query(`update alerts set is_active = false, deactivated_reason = $1, updated_at = $2 where id = $3`, [
        `its webhook answered 410 Gone on ${at} (delivery ${d.id})`,
        at,
        d.alert_id,
      ]);
    }
    return outcome;
  });
}
