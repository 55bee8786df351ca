// The credit ledger in SQLite (the rules: api/credits.ts). Every mutation is one `BEGIN IMMEDIATE` transaction:
// better-sqlite3 runs it synchronously, so nothing else in this process interleaves, and IMMEDIATE takes SQLite's write
// lock before reading the balance, so other processes sharing the file wait (busy_timeout) instead of reading a balance
// about to change. That is what makes "check then debit" atomic; the `balance >= 0` CHECK constraints are a second guard.
import type Database from 'better-sqlite3';
import type { Clock } from '../../clock';
import { assertCost, nextResetDate, ownerIsDead, ownerTag, type Balance, type ChargeResult, type HoldResult, type RefundResult } from '../../credits';
import { periodOf, PLANS, type PlanName } from '../model';
import type { CreditStore } from '../types';

interface BalanceRow {
  plan: PlanName;
  balance: number;
  topup: number;
  period: string;
}

/**
 * The ledger of api/credits.ts's rules on SQLite. The *Now methods do the work synchronously (the SQLite engine's own
 * callers and test set-ups use them); the interface's methods return their result as a promise.
 */
export class SqliteCredits implements CreditStore {
  private readonly selectKey: Database.Statement<[string], BalanceRow>;
  private readonly writeBalance: Database.Statement<[number, number, string, string]>;
  private readonly insertLedger: Database.Statement<[string, string, number, number, string, string | null]>;
  private readonly insertCharge: Database.Statement<[string, string, number, number, string, string, string | null]>;
  private readonly insertRefund: Database.Statement<[string, string, number, number, string | null, number]>;
  private readonly chargeRow: Database.Statement<[number], ChargeRow>;
  private readonly lastUnrefunded: Database.Statement<[string, string], { id: number }>;
  private readonly markSettled: Database.Statement<[string, number]>;
  private readonly pendingOwners: Database.Statement<[], { owner: string }>;
  private readonly pendingOf: Database.Statement<[string], { id: number }>;
  private readonly holdTx: Database.Transaction<(keyId: string, cost: number, requestId: string, settled: Settled) => HoldResult>;
  private readonly refundTx: Database.Transaction<(chargeId: number, cost: number) => RefundResult>;

  constructor(
    db: Database.Database,
    private readonly clock: Clock,
    /** Who takes this process's charges (tests name other processes' owners). */
    readonly owner: string = ownerTag(),
  ) {
    this.selectKey = db.prepare('select plan, balance, topup, period from api_keys where id = ?');
    this.writeBalance = db.prepare('update api_keys set balance = ?, topup = ?, period = ? where id = ?');
    this.insertLedger = db.prepare(
      'insert into credit_ledger (key_id, at, delta, topup_delta, reason, request_id) values (?, ?, ?, ?, ?, ?)',
    );
    this.insertCharge = db.prepare(
      `insert into credit_ledger (key_id, at, delta, topup_delta, reason, request_id, settled, owner) values (?, ?, ?, ?, 'charge', ?, ?, ?)`,
    );
    this.insertRefund = db.prepare(
      `insert into credit_ledger (key_id, at, delta, topup_delta, reason, request_id, charge_id) values (?, ?, ?, ?, 'refund', ?, ?)`,
    );
    this.chargeRow = db.prepare(`select key_id as keyId, -delta as charged, -topup_delta as fromTopup, request_id as requestId, settled from credit_ledger where id = ? and reason = 'charge'`);
    this.lastUnrefunded = db.prepare(
      `select id from credit_ledger where key_id = ? and request_id = ? and reason = 'charge' and settled is not 'refunded' order by id desc limit 1`,
    );
    this.markSettled = db.prepare('update credit_ledger set settled = ? where id = ?');
    this.pendingOwners = db.prepare(`select distinct owner from credit_ledger where settled = 'pending'`);
    this.pendingOf = db.prepare(`select id from credit_ledger where settled = 'pending' and owner = ?`);
    this.holdTx = db.transaction((keyId: string, cost: number, requestId: string, settled: Settled) => this.holdInTx(keyId, cost, requestId, settled));
    this.refundTx = db.transaction((chargeId: number, cost: number) => this.refundInTx(chargeId, cost));
  }

  /** Debits `cost` credits if the key has them all, settled at once; otherwise debits nothing (HTTP 402). */
  chargeNow(keyId: string, cost: number, requestId: string): ChargeResult {
    const r = this.holdTx.immediate(keyId, assertCost(cost), requestId, 'kept');
    return r.ok ? { ok: true, used: r.used, remaining: r.remaining } : r;
  }

  /** Debits `cost` credits as a pending charge of this process; settle it with keep() or refundCharge(). */
  holdNow(keyId: string, cost: number, requestId: string): HoldResult {
    return this.holdTx.immediate(keyId, assertCost(cost), requestId, 'pending');
  }

  /** The answer was delivered: the pending charge is final. */
  keepNow(chargeId: number | undefined): void {
    if (chargeId !== undefined) this.markSettled.run('kept', chargeId);
  }

  /** Gives back what charge `chargeId` took (at most `cost`), once; the charge is settled as refunded. */
  refundChargeNow(chargeId: number | undefined, cost = Number.MAX_SAFE_INTEGER): RefundResult | undefined {
    return chargeId === undefined ? undefined : this.refundTx.immediate(chargeId, assertCost(cost));
  }

  /**
   * Gives back what `requestId` was charged (at most `cost`), to the buckets it came from: its latest charge not yet
   * refunded, so a second refund of the same request gives nothing and a retrying error path cannot mint credits. A
   * refund after a monthly reset still returns the allotment part: the caller never loses credits to our failure,
   * even across midnight on the 1st.
   */
  refundNow(keyId: string, cost: number, requestId: string): RefundResult {
    assertCost(cost);
    const charge = this.lastUnrefunded.get(keyId, requestId);
    return charge ? this.refundTx.immediate(charge.id, cost) : { refunded: 0, remaining: this.balanceNow(keyId)?.remaining ?? 0 };
  }

  /**
   * Refunds the pending charges of every process `isDead` says is gone (at start-up: their clients never got an
   * answer). Returns how many charges were refunded.
   */
  refundAbandonedNow(isDead: (owner: string) => boolean = (o) => o !== this.owner && ownerIsDead(o)): number {
    let n = 0;
    for (const { owner } of this.pendingOwners.all()) {
      if (!isDead(owner)) continue;
      for (const { id } of this.pendingOf.all(owner)) n += this.refundTx.immediate(id, Number.MAX_SAFE_INTEGER).refunded > 0 ? 1 : 0;
    }
    return n;
  }

  /** The effective balance, as the next charge would see it; reading does not write the pending reset. */
  balanceNow(keyId: string): Balance | undefined {
    const row = this.selectKey.get(keyId);
    if (!row) return undefined;
    const now = this.clock.now();
    const period = periodOf(now);
    const resetDue = period > row.period;
    const monthly = resetDue ? PLANS[row.plan].monthly : row.balance;
    return {
      remaining: monthly + row.topup,
      monthly,
      topup: row.topup,
      period: resetDue ? period : row.period,
      resetsOn: nextResetDate(now),
    };
  }

  async hold(keyId: string, cost: number, requestId: string): Promise<HoldResult> {
    return this.holdNow(keyId, cost, requestId);
  }

  async charge(keyId: string, cost: number, requestId: string): Promise<ChargeResult> {
    return this.chargeNow(keyId, cost, requestId);
  }

  async keep(chargeId: number | undefined): Promise<void> {
    this.keepNow(chargeId);
  }

  async refundCharge(chargeId: number | undefined, cost?: number): Promise<RefundResult | undefined> {
    return this.refundChargeNow(chargeId, cost);
  }

  async refund(keyId: string, cost: number, requestId: string): Promise<RefundResult> {
    return this.refundNow(keyId, cost, requestId);
  }

  async refundAbandoned(isDead?: (owner: string) => boolean): Promise<number> {
    return this.refundAbandonedNow(isDead);
  }

  async balance(keyId: string): Promise<Balance | undefined> {
    return this.balanceNow(keyId);
  }

  /** Reads the key inside the caller's transaction, applying the monthly reset if the month has changed. */
  private current(keyId: string, at: string, period: string): BalanceRow {
    const row = this.selectKey.get(keyId);
    if (!row) throw new Error(`unknown key id ${keyId}`);
    // `>` rather than `!==`: a clock skewed backwards on another host must not reset the month a second time.
    if (period > row.period) {
      const allotment = PLANS[row.plan].monthly;
      this.writeBalance.run(allotment, row.topup, period, keyId);
      this.insertLedger.run(keyId, at, allotment - row.balance, 0, 'reset', null);
      return { ...row, balance: allotment, period };
    }
    return row;
  }

  private holdInTx(keyId: string, cost: number, requestId: string, settled: Settled): HoldResult {
    const now = this.clock.now();
    const at = now.toISOString();
    const row = this.current(keyId, at, periodOf(now));
    const total = row.balance + row.topup;
    if (cost > total) return { ok: false, remaining: total };
    if (cost === 0) return { ok: true, used: 0, remaining: total, chargeId: undefined };
    const fromMonthly = Math.min(cost, row.balance);
    const fromTopup = cost - fromMonthly;
    this.writeBalance.run(row.balance - fromMonthly, row.topup - fromTopup, row.period, keyId);
    const { lastInsertRowid } = this.insertCharge.run(keyId, at, -cost, -fromTopup, requestId, settled, settled === 'pending' ? this.owner : null);
    return { ok: true, used: cost, remaining: total - cost, chargeId: Number(lastInsertRowid) };
  }

  private refundInTx(chargeId: number, cost: number): RefundResult {
    const charge = this.chargeRow.get(chargeId);
    if (!charge) throw new Error(`no charge has ledger id ${chargeId}`);
    const now = this.clock.now();
    const at = now.toISOString();
    const row = this.current(charge.keyId, at, periodOf(now));
    const total = row.balance + row.topup;
    if (charge.settled === 'refunded') return { refunded: 0, remaining: total };
    const amount = Math.min(cost, charge.charged);
    // Top-up credits were spent last, so a partial refund gives them back first.
    const toTopup = Math.min(amount, charge.fromTopup);
    const toMonthly = amount - toTopup;
    this.writeBalance.run(row.balance + toMonthly, row.topup + toTopup, row.period, charge.keyId);
    this.insertRefund.run(charge.keyId, at, amount, toTopup, charge.requestId, chargeId);
    this.markSettled.run('refunded', chargeId);
    return { refunded: amount, remaining: total + amount };
  }
}

type Settled = 'pending' | 'kept';

interface ChargeRow {
  keyId: string;
  charged: number;
  fromTopup: number;
  requestId: string | null;
  settled: string | null;
}

