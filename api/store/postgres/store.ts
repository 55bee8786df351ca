// The PostgreSQL engine behind the state's interface (../types.ts): opened synchronously, connected and migrated by
// ready(), a serving replica once serve() registered its heartbeat lease. Every method waits for the connection, so a
// caller may hold the store before it is ready. Settlements (keep, refund) and request-log writes are tracked: close()
// waits for those in flight before giving the replica's lease up.
import type { Clock } from '../../clock';
import type { AttemptResult, DueDelivery, Match } from '../../webhooks/queue';
import type { CreateKeyOptions, FreeKeyOptions } from '../model';
import type { AlertValues, NewOAuthToken, OAuthClientRow, OAuthCodeRow, PropertyRow, StateStore } from '../types';
import type { LoggedRequest } from '../../routes/account/request-log';
import { anyDue, claimDue, confirmClaim, enqueue, peekDue, recordAttempt, releaseClaims } from './deliveries';
import { PgState } from './index';

export interface PgStoreOptions {
  url: string;
  clock: Clock;
  /** A replica's heartbeat lease (STATE_LEASE_MS). */
  leaseMs: number;
  poolSize?: number;
  onError?: (e: Error) => void;
  onRefunded?: (replicas: string[], charges: number) => void;
}

export class PgStore implements StateStore {
  readonly engine = 'postgresql';
  private opening: Promise<PgState> | undefined;
  private closed = false;

  constructor(private readonly opts: PgStoreOptions) {}

  /** The connected state (connects and migrates on first use). */
  private state(): Promise<PgState> {
    if (this.closed) return Promise.reject(new Error('the state is closed'));
    this.opening ??= PgState.open(this.opts.url, {
      clock: this.opts.clock,
      leaseMs: this.opts.leaseMs,
      poolSize: this.opts.poolSize,
      onError: this.opts.onError,
      onRefunded: this.opts.onRefunded,
    }).then((state) => {
      this.ownerId = state.lease.id;
      return state;
    });
    return this.opening;
  }

  private async tracked<T>(fn: (s: PgState) => Promise<T>): Promise<T> {
    const s = await this.state();
    const p = fn(s);
    void s.track(p);
    return p;
  }

  async ready(): Promise<void> {
    await this.state();
  }

  /**
   * Becomes one serving replica: registers its lease and starts the heartbeat, whose every beat (the first one
   * included) refunds the pending charges of replicas whose lease expired, reported through onRefunded.
   */
  async serve(): Promise<number> {
    const s = await this.state();
    await s.lease.beat();
    s.lease.start();
    return 0;
  }

  private ownerId: string | undefined;

  /** This replica's name on its charges and claims (known once connected). */
  get owner(): string {
    if (!this.ownerId) throw new Error('the PostgreSQL state is not ready: await ready() first');
    return this.ownerId;
  }

  async ping(): Promise<boolean> {
    if (!this.opening) return false;
    return (await this.state()).ping();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    const opening = this.opening;
    this.closed = true;
    if (opening) await (await opening).close();
  }

  readonly keys = {
    createKey: async (o: CreateKeyOptions) => (await this.state()).keys.createKey(o),
    findByKey: async (raw: string) => (await this.state()).keys.findByKey(raw),
    findById: async (id: string) => (await this.state()).keys.findById(id),
    listKeys: async () => (await this.state()).keys.listKeys(),
    resolve: async (ref: string) => (await this.state()).keys.resolve(ref),
    revoke: async (ref: string) => (await this.state()).keys.revoke(ref),
    topup: async (ref: string, credits: number) => (await this.state()).keys.topup(ref, credits),
    roll: async (ref: string, graceMs: number) => (await this.state()).keys.roll(ref, graceMs),
    issueFreeKey: async (o: FreeKeyOptions) => (await this.state()).keys.issueFreeKey(o),
  };

  readonly credits = this.creditStore();

  private creditStore() {
    // The getter below has its own `this`.
    const store = this;
    return {
      get owner(): string {
        return store.owner;
      },
      hold: async (keyId: string, cost: number, requestId: string) => (await store.state()).credits.hold(keyId, cost, requestId),
      charge: async (keyId: string, cost: number, requestId: string) => (await store.state()).credits.charge(keyId, cost, requestId),
      keep: (chargeId: number | undefined) => store.tracked((s) => s.credits.keep(chargeId)),
      refundCharge: (chargeId: number | undefined, cost?: number) => store.tracked((s) => s.credits.refundCharge(chargeId, cost)),
      refund: async (keyId: string, cost: number, requestId: string) => (await store.state()).credits.refund(keyId, cost, requestId),
      /**
       * Without `isDead`: the charges of replicas whose lease expired (the heartbeat's own check). With it: the pending
       * charges of the owners it names dead.
       */
      refundAbandoned: async (isDead?: (owner: string) => boolean) => {
        const s = await store.state();
        if (!isDead) return s.lease.settleDead();
        const { rows } = await s.pool.query<{ owner: string }>(`select distinct owner from credit_ledger where settled = 'pending' and owner is not null`);
        return s.credits.refundPendingOf(rows.map((r) => r.owner).filter(isDead));
      },
      balance: async (keyId: string) => (await store.state()).credits.balance(keyId),
    };
  }

  readonly rateLimit = {
    hit: async (keyId: string, limit: number) => (await this.state()).rateLimiter.hit(keyId, limit),
  };

  readonly portfolio = {
    get: async (keyId: string, id: string) => (await this.state()).portfolio.get(keyId, id),
    list: async (keyId: string, limit: number, offset: number) => (await this.state()).portfolio.list(keyId, limit, offset),
    insert: async (row: Omit<PropertyRow, 'updated_at'>) => (await this.state()).portfolio.insert(row),
    save: async (row: Omit<PropertyRow, 'created_at'>) => (await this.state()).portfolio.save(row),
    delete: async (keyId: string, id: string) => (await this.state()).portfolio.delete(keyId, id),
  };

  readonly alerts = {
    get: async (keyId: string, id: string) => (await this.state()).alerts.get(keyId, id),
    list: async (keyId: string, limit: number, offset: number) => (await this.state()).alerts.list(keyId, limit, offset),
    countActive: async (keyId: string) => (await this.state()).alerts.countActive(keyId),
    insert: async (keyId: string, id: string, secret: string, v: AlertValues, at: string, cap: number) => (await this.state()).alerts.insert(keyId, id, secret, v, at, cap),
    update: async (keyId: string, id: string, v: AlertValues, isActive: boolean, reactivating: boolean, at: string, cap: number) =>
      (await this.state()).alerts.update(keyId, id, v, isActive, reactivating, at, cap),
    delete: async (keyId: string, id: string) => (await this.state()).alerts.delete(keyId, id),
    active: async () => (await this.state()).alerts.active(),
    isActive: async (id: string) => (await this.state()).alerts.isActive(id),
  };

  readonly deliveries = {
    enqueue: async (matches: Match[], now: Date) => enqueue((await this.state()).pool, matches, now),
    // Any replica's live claim excludes a delivery, whoever asks.
    anyDue: async (now: Date) => anyDue((await this.state()).pool, now),
    claim: async (owner: string, now: Date, limit: number, leaseMs: number) => claimDue((await this.state()).pool, owner, now, limit, leaseMs),
    confirm: async (d: DueDelivery, owner: string, leaseMs: number) => confirmClaim((await this.state()).pool, d, owner, leaseMs),
    recordAttempt: async (d: DueDelivery, owner: string, r: AttemptResult, now: Date, retryDelaysMs: number[]) =>
      recordAttempt((await this.state()).pool, d, owner, r, now, retryDelaysMs),
    release: async (owner: string) => releaseClaims((await this.state()).pool, owner),
    due: async (now: Date, limit: number) => peekDue((await this.state()).pool, now, limit),
    list: async (alertId: string, limit: number, offset: number) => (await this.state()).alerts.deliveries(alertId, limit, offset),
    countByStatus: async () => {
      const { rows } = await (await this.state()).pool.query<{ status: 'pending' | 'succeeded' | 'failed'; n: string }>(
        'select status, count(*) as n from alert_deliveries group by status',
      );
      const out = { pending: 0, succeeded: 0, failed: 0 };
      for (const r of rows) out[r.status] = Number(r.n);
      return out;
    },
  };

  readonly jobs = {
    claim: async (name: string, owner: string, leaseMs: number) => (await this.state()).jobs.claim(name, owner, leaseMs),
    finish: async (name: string, owner: string) => (await this.state()).jobs.finish(name, owner),
  };

  readonly requestLog = {
    record: (keyId: string, r: LoggedRequest) => this.tracked((s) => s.requestLog.record(keyId, r)),
    prune: async (before: string) => (await this.state()).requestLog.prune(before),
    recent: async (keyId: string, limit: number) => (await this.state()).requestLog.recent(keyId, limit) as Promise<LoggedRequest[]>,
    daily: async (keyId: string, since: string) => (await this.state()).requestLog.daily(keyId, since),
  };

  readonly serviceState = {
    get: async (name: string) => (await this.state()).serviceState.get(name),
    setForward: async (name: string, value: string) => (await this.state()).serviceState.setForward(name, value),
  };

  readonly oauth = {
    registerClient: async (row: OAuthClientRow) => (await this.state()).oauth.registerClient(row),
    getClient: async (clientId: string) => (await this.state()).oauth.getClient(clientId),
    approve: async (code: Omit<OAuthCodeRow, 'used_at'>, at: string) => (await this.state()).oauth.approve(code, at),
    findCode: async (codeHash: string) => (await this.state()).oauth.findCode(codeHash),
    useCode: async (codeHash: string, at: string) => (await this.state()).oauth.useCode(codeHash, at),
    issue: async (tokens: NewOAuthToken[]) => (await this.state()).oauth.issue(tokens),
    rotate: async (tokenHash: string, clientId: string, at: string, next: NewOAuthToken[]) => (await this.state()).oauth.rotate(tokenHash, clientId, at, next),
    findToken: async (tokenHash: string) => (await this.state()).oauth.findToken(tokenHash),
    revokeToken: async (tokenHash: string, clientId: string) => (await this.state()).oauth.revokeToken(tokenHash, clientId),
    grants: async (keyId: string) => (await this.state()).oauth.grants(keyId),
    revokeGrant: async (keyId: string, clientId: string) => (await this.state()).oauth.revokeGrant(keyId, clientId),
    prune: async (before: string) => (await this.state()).oauth.prune(before),
  };
}
