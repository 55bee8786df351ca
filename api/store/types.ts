// The state of the API behind one interface, whatever engine holds it (docs/state.md): every method returns a Promise,
// so an engine over the network implements it as well as the embedded SQLite file does. Callers outside api/store/
// see these types only, never a database handle or SQL.
import type { Balance, ChargeResult, HoldResult, RefundResult } from '../credits';
import type { RateDecision } from '../rate-limit';
import type { DailyUsage, LoggedRequest } from '../routes/account/request-log';
import type { AttemptResult, DeliveryItem, DueDelivery, Match } from '../webhooks/queue';
import type { CreateKeyOptions, KeyRecord } from './model';

/** API keys: only their SHA-256 hash is stored; a key is shown in clear once, when created. */
export interface KeyStore {
  /** Creates a key and its 'create' ledger row in one transaction; returns the key in clear. */
  createKey(opts: CreateKeyOptions): Promise<{ id: string; key: string }>;
  /** The key's record whether active or revoked; undefined if unknown. */
  findByKey(rawKey: string): Promise<KeyRecord | undefined>;
  findById(id: string): Promise<KeyRecord | undefined>;
  /** Every key, oldest first. */
  listKeys(): Promise<KeyRecord[]>;
  /** By id, by display prefix (when unambiguous: AmbiguousKeyError otherwise) or by the full key; UnknownKeyError. */
  resolve(ref: string): Promise<KeyRecord>;
  /** Deactivates a key for good; revoking twice is harmless (alreadyRevoked). */
  revoke(ref: string): Promise<{ key: KeyRecord; alreadyRevoked: boolean }>;
  /** Adds one-off credits (they survive monthly resets), with their ledger row, in one transaction. */
  topup(ref: string, credits: number): Promise<KeyRecord>;
}

/**
 * The credit ledger (api/credits.ts explains the rules): integer credits, each mutation one transaction, a charge
 * pending until kept or refunded, refunds idempotent per charge.
 */
export interface CreditStore {
  /** Who takes this process's charges (its pending ones are refunded once it is known dead). */
  readonly owner: string;
  /** Debits `cost` as a pending charge if the key has it all; otherwise debits nothing. */
  hold(keyId: string, cost: number, requestId: string): Promise<HoldResult>;
  /** Debits `cost`, settled at once. */
  charge(keyId: string, cost: number, requestId: string): Promise<ChargeResult>;
  /** The answer was delivered: the pending charge is final. */
  keep(chargeId: number | undefined): Promise<void>;
  /** Gives back what the charge took (at most `cost`), once; undefined for no charge. */
  refundCharge(chargeId: number | undefined, cost?: number): Promise<RefundResult | undefined>;
  /** Gives back what `requestId`'s latest unrefunded charge took (at most `cost`). */
  refund(keyId: string, cost: number, requestId: string): Promise<RefundResult>;
  /**
   * Refunds the pending charges of the processes `isDead` says are gone (their clients never got an answer); returns
   * how many. The default tells dead processes as the engine can (on SQLite: processes of this host that no longer run).
   */
  refundAbandoned(isDead?: (owner: string) => boolean): Promise<number>;
  /** The effective balance, as the next charge would see it (the monthly reset applied, not written). */
  balance(keyId: string): Promise<Balance | undefined>;
}

/** The per-key sliding window of requests (60 s). */
export interface RateLimitStore {
  /** Counts a request of the key unless it is over `limit` in the window. */
  hit(keyId: string, limit: number): Promise<RateDecision>;
}

/** A portfolio property as stored: `data` and `estimate` are JSON texts, flags 0/1, times ISO 8601 UTC. */
export interface PropertyRow {
  id: string;
  key_id: string;
  data: string;
  estimate: string | null;
  estimate_valid: number;
  estimate_computed_at: string | null;
  created_at: string;
  updated_at: string;
}

/** Every method is scoped to one key: another key's property is never found. */
export interface PortfolioStore {
  get(keyId: string, id: string): Promise<PropertyRow | undefined>;
  /** The key's properties in creation order, and their total. */
  list(keyId: string, limit: number, offset: number): Promise<{ total: number; rows: PropertyRow[] }>;
  insert(row: Omit<PropertyRow, 'updated_at'>): Promise<void>;
  save(row: Omit<PropertyRow, 'created_at'>): Promise<void>;
  delete(keyId: string, id: string): Promise<boolean>;
}

export const ALERT_VALUE_COLUMNS = ['label', 'webhook_url', 'code_postal', 'commune', 'code_departement', 'type_local', 'prix_min', 'prix_max', 'surface_min', 'surface_max'] as const;
export type AlertValues = Record<(typeof ALERT_VALUE_COLUMNS)[number], string | number | null>;
/** The criteria of an active alert, as the scan reads them. */
export type AlertCriteria = Omit<AlertValues, 'label' | 'webhook_url'> & { id: string };

/** An alert as stored (it holds the signing secret: never returned by the API after creation). */
export interface AlertRow extends AlertValues {
  id: string;
  key_id: string;
  secret: string;
  is_active: number;
  deactivated_reason: string | null;
  created_at: string;
  updated_at: string;
}

/** Alerts of a key (scoped like the portfolio), and what the scan and the worker read of all of them. */
export interface AlertStore {
  get(keyId: string, id: string): Promise<AlertRow | undefined>;
  list(keyId: string, limit: number, offset: number): Promise<{ total: number; rows: AlertRow[] }>;
  countActive(keyId: string): Promise<number>;
  /** Inserts an active alert unless the key already has `cap` active ones (false then), counted in the same transaction. */
  insert(keyId: string, id: string, secret: string, v: AlertValues, at: string, cap: number): Promise<boolean>;
  /** Updates an alert; a reactivation is refused (false) when the key already has `cap` active ones. */
  update(keyId: string, id: string, v: AlertValues, isActive: boolean, reactivating: boolean, at: string, cap: number): Promise<boolean>;
  /** Deletes the alert and its deliveries. */
  delete(keyId: string, id: string): Promise<boolean>;
  /** Every active alert's criteria (the scan). */
  active(): Promise<AlertCriteria[]>;
  isActive(id: string): Promise<boolean>;
}

/**
 * The durable webhook queue and its deliveries log: one row per (alert, transaction), pending until a 2xx (succeeded),
 * a 410 or its last retry (failed).
 */
export interface DeliveryStore {
  /** Enqueues the matches not already queued for their alert, in one transaction; returns how many were new. */
  enqueue(matches: Match[], now: Date): Promise<number>;
  /** Pending deliveries due at `now`, of active alerts, oldest first, their body rebuilt byte for byte. */
  due(now: Date, limit: number): Promise<DueDelivery[]>;
  /**
   * Records one attempt of a pending delivery (and deactivates its alert on a 410) in one transaction: succeeded,
   * failed, or retried after the next of `retryDelaysMs`.
   */
  recordAttempt(d: DueDelivery, r: AttemptResult, now: Date, retryDelaysMs: number[]): Promise<'succeeded' | 'failed' | 'retry'>;
  /** The deliveries log of an alert, newest first, and its total. */
  list(alertId: string, limit: number, offset: number): Promise<{ total: number; items: DeliveryItem[] }>;
  /** How many deliveries are in each status (operations, benchmarks). */
  countByStatus(): Promise<Record<'pending' | 'succeeded' | 'failed', number>>;
  /** Per-delivery claims, when the engine is shared by several processes that all deliver. */
  readonly claims?: DeliveryClaims;
}

/**
 * Deliveries claimed one by one, so that several processes deliver at once (an engine shared by replicas offers it;
 * without it one process at a time delivers, under a lease). A claim lasts `leaseMs`; another process takes a
 * delivery over only once its claim expired.
 */
export interface DeliveryClaims {
  /** Whether any delivery is due and unclaimed (an idle poll: a read, no lock). */
  anyDue(now: Date): Promise<boolean>;
  /** Claims up to `limit` due deliveries for `owner`, oldest first, skipping those another process is claiming. */
  claim(owner: string, now: Date, limit: number, leaseMs: number): Promise<DueDelivery[]>;
  /** Right before sending: true while `owner` still holds it at the attempt it claimed (its alert active); renews it. */
  confirm(d: DueDelivery, owner: string, leaseMs: number): Promise<boolean>;
  /** Records the attempt if `owner` still holds the claim ('lost' otherwise), with recordAttempt's rules. */
  record(d: DueDelivery, owner: string, r: AttemptResult, now: Date, retryDelaysMs: number[]): Promise<'succeeded' | 'failed' | 'retry' | 'lost'>;
  /** Gives back the claims of deliveries not yet sent (a graceful stop). */
  release(owner: string): Promise<void>;
}

/**
 * Jobs run once for the whole service, not once per process (the alert scan of a build, the daily scan): the first
 * process to claim a name runs it; another takes it over only when it is unfinished and its claim expired.
 */
export interface JobStore {
  claim(name: string, owner: string, leaseMs: number): Promise<boolean>;
  finish(name: string, owner: string): Promise<void>;
}

/** Named leases held by one process at a time (the delivery worker), times in epoch milliseconds. */
export interface LeaseStore {
  /** Takes the lease, or renews it when `owner` holds it; true when `owner` holds it until `expiresAt`. */
  acquire(name: string, owner: string, expiresAt: number, now: number): Promise<boolean>;
  release(name: string, owner: string): Promise<void>;
}

/** The key holder's request log (31 days). */
export interface RequestLogStore {
  record(keyId: string, r: LoggedRequest): Promise<void>;
  /** Deletes the rows before `before` (ISO). */
  prune(before: string): Promise<void>;
  /** The key's latest requests, newest first. */
  recent(keyId: string, limit: number): Promise<LoggedRequest[]>;
  /** Requests and credits per UTC day and endpoint since `since` (ISO). */
  daily(keyId: string, since: string): Promise<DailyUsage[]>;
}

/** Small named values of the service (the alert scan's watermark). */
export interface ServiceStateStore {
  get(name: string): Promise<string | undefined>;
  /** Sets `name` unless it already holds a greater value (a watermark only moves forward). */
  setForward(name: string, value: string): Promise<void>;
}

export interface StateStore {
  /** The engine's name, as GET /health reports it. */
  readonly engine: string;
  readonly keys: KeyStore;
  readonly credits: CreditStore;
  readonly rateLimit: RateLimitStore;
  readonly portfolio: PortfolioStore;
  readonly alerts: AlertStore;
  readonly deliveries: DeliveryStore;
  readonly leases: LeaseStore;
  readonly requestLog: RequestLogStore;
  readonly serviceState: ServiceStateStore;
  /** Once-per-service jobs, when several processes share the state and each would otherwise run them. */
  readonly jobs?: JobStore;
  /**
   * Resolves once the state is usable (connected, migrated): an engine may open synchronously and connect later. The
   * server awaits it before serving; the SQLite engine is ready once constructed.
   */
  ready(): Promise<void>;
  /** Whether the state answers (GET /health). */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}
