// The state of the API behind one interface, whatever engine holds it (docs/state.md): every method returns a Promise,
// so an engine over the network implements it as well as the embedded SQLite file does. Callers outside api/store/
// see these types only, never a database handle or SQL.
import type { Balance, ChargeResult, HoldResult, RefundResult } from '../credits';
import type { RateDecision } from '../rate-limit';
import type { DailyUsage, LoggedRequest } from '../routes/account/request-log';
import type { AttemptResult, DeliveryItem, DueDelivery, Match } from '../webhooks/queue';
import type { CreateKeyOptions, FreeKeyOptions, FreeKeyResult, KeyRecord, RolledKey } from './model';

/** API keys: only their SHA-256 hash is stored; a key is shown in clear once, when created. */
export interface KeyStore {
  /** Creates a key and its 'create' ledger row in one transaction; returns the key in clear. */
  createKey(opts: CreateKeyOptions): Promise<{ id: string; key: string }>;
  /**
   * The key's record whether active or revoked, by its current secret, or by the secret a roll replaced until that
   * one's grace period ends (undefined after it, as for an unknown key): one indexed lookup per secret column.
   */
  findByKey(rawKey: string): Promise<KeyRecord | undefined>;
  findById(id: string): Promise<KeyRecord | undefined>;
  /** Every key, oldest first. */
  listKeys(): Promise<KeyRecord[]>;
  /** By id, by display prefix (when unambiguous: AmbiguousKeyError otherwise) or by the full key; UnknownKeyError. */
  resolve(ref: string): Promise<KeyRecord>;
  /**
   * Deactivates a key for good, and its active alerts with it (deactivated_reason 'key_revoked': their deliveries are
   * no longer due), in one transaction; revoking twice is harmless (alreadyRevoked).
   */
  revoke(ref: string): Promise<{ key: KeyRecord; alreadyRevoked: boolean }>;
  /**
   * Gives an active key a new secret (returned in clear, once); the key keeps its id, plan, credits and everything
   * under it. The secret it replaces keeps working for `graceMs` (0: stops at once; at most 7 days, RangeError past
   * it); a previous secret still in its grace period stops at once. RevokedKeyError for a revoked key.
   */
  roll(ref: string, graceMs: number): Promise<RolledKey>;
  /**
   * Creates a Free-plan key for a visitor unless `address` already received `perDay` of them this UTC day: the count
   * and the key are written in one transaction, so concurrent requests (any process, any replica) cannot exceed it.
   */
  issueFreeKey(opts: FreeKeyOptions): Promise<FreeKeyResult>;
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
 * a 410 or its last retry (failed). The delivery worker of every process takes due deliveries by claims: a claimed
 * delivery is attempted by its claimant only, until the claim's lease runs out (its process died). On SQLite one
 * process at a time holds the claims (a lease over the whole queue); on PostgreSQL each delivery is claimed apart, so
 * every replica delivers.
 */
export interface DeliveryStore {
  /** Enqueues the matches not already queued for their alert, in one transaction; returns how many were new. */
  enqueue(matches: Match[], now: Date): Promise<number>;
  /** Whether a delivery is due at `now` that `owner` could claim (an idle poll: one read, no write). */
  anyDue(now: Date, owner: string): Promise<boolean>;
  /**
   * Claims for `owner`, for `leaseMs`, up to `limit` pending deliveries due at `now` of active alerts, oldest first,
   * their body rebuilt byte for byte; never one `owner` already holds, nor one another live claimant holds.
   */
  claim(owner: string, now: Date, limit: number, leaseMs: number): Promise<DueDelivery[]>;
  /** Right before a send: true while `owner`'s claim holds (same attempt, alert still active), renewed for `leaseMs`. */
  confirm(d: DueDelivery, owner: string, leaseMs: number): Promise<boolean>;
  /**
   * Records one attempt of `owner`'s claimed delivery (and deactivates its alert on a 410) in one transaction:
   * succeeded, failed, or retried after the next of `retryDelaysMs`; 'lost' when the claim had passed to another.
   */
  recordAttempt(d: DueDelivery, owner: string, r: AttemptResult, now: Date, retryDelaysMs: number[]): Promise<'succeeded' | 'failed' | 'retry' | 'lost'>;
  /** Gives `owner`'s unsent claims back (a graceful stop). */
  release(owner: string): Promise<void>;
  /** Pending deliveries due at `now`, of active alerts, oldest first, without claiming them (tests, operations). */
  due(now: Date, limit: number): Promise<DueDelivery[]>;
  /** The deliveries log of an alert, newest first, and its total. */
  list(alertId: string, limit: number, offset: number): Promise<{ total: number; items: DeliveryItem[] }>;
  /** How many deliveries are in each status (operations, benchmarks). */
  countByStatus(): Promise<Record<'pending' | 'succeeded' | 'failed', number>>;
}

/**
 * Jobs that run once for the whole service rather than once per process (the alert scan of a new serving build, the
 * daily scan). On SQLite every process runs them (the queue dedups what they enqueue); on PostgreSQL the first replica
 * to claim a job runs it, another only when its holder's lease ran out unfinished.
 */
export interface JobStore {
  claim(name: string, owner: string, leaseMs: number): Promise<boolean>;
  finish(name: string, owner: string): Promise<void>;
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

/** A registered OAuth client (RFC 7591): its registration as answered, JSON text (api/oauth/). */
export interface OAuthClientRow {
  client_id: string;
  metadata: string;
  created_at: string;
}

/** A key holder's consent to a client: the scopes approved (space-separated), kept until revoked. */
export interface OAuthGrantRow {
  key_id: string;
  client_id: string;
  scopes: string;
  created_at: string;
  updated_at: string;
}

/** An authorization code, stored by its hash; `family` names what the approval starts (its tokens). */
export interface OAuthCodeRow {
  code_hash: string;
  family: string;
  key_id: string;
  client_id: string;
  redirect_uri: string;
  code_challenge: string;
  scopes: string;
  resource: string;
  expires_at: string;
  used_at: string | null;
}

/** An access or refresh token, stored by its hash. */
export interface OAuthTokenRow {
  token_hash: string;
  family: string;
  kind: 'access' | 'refresh';
  key_id: string;
  client_id: string;
  scopes: string;
  resource: string;
  expires_at: string;
  created_at: string;
  rotated_at: string | null;
}

export type NewOAuthToken = Omit<OAuthTokenRow, 'rotated_at'>;

/**
 * Remote MCP authorization (api/oauth/): clients, consents, codes and tokens. Codes and tokens are looked up by their
 * hash only. Whoever revokes a consent revokes its codes and tokens in the same transaction.
 */
export interface OAuthStore {
  registerClient(row: OAuthClientRow): Promise<void>;
  getClient(clientId: string): Promise<OAuthClientRow | undefined>;
  /** Records (or renews) the key's consent to the client and stores the approval's code, in one transaction. */
  approve(code: Omit<OAuthCodeRow, 'used_at'>, at: string): Promise<void>;
  /** A code as stored, used or not (the PKCE check reads its challenge before the exchange). */
  findCode(codeHash: string): Promise<OAuthCodeRow | undefined>;
  /**
   * Uses a code once: marks it used and returns it; a second use gets `reused` and deletes every token issued from it
   * (its family), in one transaction; undefined when unknown.
   */
  useCode(codeHash: string, at: string): Promise<{ code: OAuthCodeRow; reused: boolean } | undefined>;
  /** Stores tokens, while the consent they come from still exists (false, nothing stored, otherwise). */
  issue(tokens: NewOAuthToken[]): Promise<boolean>;
  /**
   * Refresh-token rotation, in one transaction: the client's refresh token, unexpired at `at` and not yet rotated, is
   * marked rotated and `next` (same family) stored; `reused` (and the family's tokens deleted) when it had been rotated
   * already; undefined when unknown, expired or another client's.
   */
  rotate(tokenHash: string, clientId: string, at: string, next: NewOAuthToken[]): Promise<{ old: OAuthTokenRow; reused: boolean } | undefined>;
  /** A token as stored (the caller checks its kind, expiry and audience). */
  findToken(tokenHash: string): Promise<OAuthTokenRow | undefined>;
  /** Deletes the client's token and, for a refresh token, its whole family; false when none matched. */
  revokeToken(tokenHash: string, clientId: string): Promise<boolean>;
  /** The key's consents with their client's registration, oldest first. */
  grants(keyId: string): Promise<Array<OAuthGrantRow & { metadata: string }>>;
  /** Deletes the key's consent to the client with its codes and tokens, in one transaction; false when there was none. */
  revokeGrant(keyId: string, clientId: string): Promise<boolean>;
  /** Deletes the codes and tokens expired before `before` (ISO): none of them can be used any more. */
  prune(before: string): Promise<void>;
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
  readonly jobs: JobStore;
  readonly requestLog: RequestLogStore;
  readonly serviceState: ServiceStateStore;
  readonly oauth: OAuthStore;
  /**
   * Resolves once the state is usable (connected, migrated): an engine may open synchronously and connect later. The
   * server awaits it before serving; the SQLite engine is ready once constructed.
   */
  ready(): Promise<void>;
  /**
   * Makes this process one of the serving processes, once ready: on SQLite, refunds the pending charges of this
   * host's processes that no longer run; on PostgreSQL, registers the replica's heartbeat lease, whose beats refund the
   * pending charges of replicas whose lease expired. Returns the charges refunded now (PostgreSQL reports its refunds
   * through the onRefunded option instead, and returns 0).
   */
  serve(): Promise<number>;
  /** Whether the state answers (GET /health). */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}
