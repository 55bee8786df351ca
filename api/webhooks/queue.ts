// The durable delivery queue's shapes: what a scan enqueues (a match), what the worker sends (a due delivery and its
// body) and what the deliveries log shows. The queue itself is in the state (api/store/, deliveries): one row per
// (alert, transaction), unique, so a transaction is never enqueued twice for an alert; a row is pending until a 2xx
// (succeeded), a 410 or its 4th failed attempt (failed). Rows survive restarts: nothing pending is ever lost.
import { z } from '../params';

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

/** The body of a delivery (the second transaction shape of the specification, always). */
export function payloadOf(deliveryId: string, createdAt: string, m: Match): string {
  return JSON.stringify({ event: 'new_transaction', alert_id: m.alert_id, delivery_id: deliveryId, created_at: createdAt, transaction: m.transaction });
}

export interface DueDelivery {
  id: string;
  seq: number;
  alert_id: string;
  payload: string;
  attempts: number;
  webhook_url: string;
  secret: string;
}

/** A due delivery as the state's engines read it: the row's typed payload fields and its alert's URL and secret. */
export type DueRow = Omit<DueDelivery, 'payload'> & Omit<TransactionPayload, 'id'> & { transaction_id: string; created_at: string };

/** A due delivery with its body rebuilt from the row, in the payload's field order: the same body at every attempt. */
export function dueDeliveryOf(r: DueRow): DueDelivery {
  return {
    id: r.id,
    seq: r.seq,
    alert_id: r.alert_id,
    attempts: r.attempts,
    webhook_url: r.webhook_url,
    secret: r.secret,
    payload: payloadOf(r.id, r.created_at, {
      alert_id: r.alert_id,
      transaction: {
        id: r.transaction_id,
        date_mutation: r.date_mutation,
        valeur_fonciere: r.valeur_fonciere,
        prix_m2: r.prix_m2,
        type_local: r.type_local,
        surface_reelle_bati: r.surface_reelle_bati,
        nombre_pieces_principales: r.nombre_pieces_principales,
        commune: r.commune,
        code_postal: r.code_postal,
        latitude: r.latitude,
        longitude: r.longitude,
      },
    }),
  };
}

/**
 * What one attempt makes of a delivery: a 2xx succeeds; 410 Gone fails it (and deactivates its alert); anything else is
 * retried after the next delay of `retryDelaysMs`, and fails once they are used up. Both state engines record this.
 */
export function attemptOutcome(d: DueDelivery, r: AttemptResult, now: Date, retryDelaysMs: number[]) {
  const attempts = d.attempts + 1;
  const ok = r.status !== undefined && r.status >= 200 && r.status < 300;
  const gone = r.status === 410;
  const outcome: 'succeeded' | 'failed' | 'retry' = ok ? 'succeeded' : gone || attempts > retryDelaysMs.length ? 'failed' : 'retry';
  const next = outcome === 'retry' ? new Date(now.getTime() + retryDelaysMs[attempts - 1]).toISOString() : null;
  const error = ok ? null : gone ? 'the receiver answered 410 Gone: the alert was deactivated' : (r.error ?? `HTTP ${r.status}`);
  return { at: now.toISOString(), attempts, gone, outcome, next, error };
}

export interface AttemptResult {
  /** HTTP status of the answer; undefined when none came (timeout, refused address, TLS, network). */
  status?: number;
  error?: string;
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

export type DeliveryItem = z.output<typeof deliverySchema>;
