// Credit accounting per key: atomic charge with the lazy monthly reset, idempotent refunds, and the `_credits` field.
import type Database from 'better-sqlite3';
import { systemClock, type Clock } from './clock';
import { periodOf, PLANS, type PlanName } from './store';

export { RateLimiter, type RateDecision } from './rate-limit';

/** Below this many remaining credits `_credits.note` warns the caller. */
export const LOW_BALANCE_NOTE_BELOW = 20;

export type ChargeResult = { ok: true; used: number; remaining: number } | { ok: false; remaining: number };

export interface RefundResult {
  /** Credits given back by this call: 0 when the request was already refunded or never charged. */
  refunded: number;
  remaining: number;
}

export interface Balance {
  /** What the caller can spend now: monthly + topup. */
  remaining: number;
  monthly: number;
  topup: number;
  /** 'YYYY-MM' the monthly figure belongs to. */
  period: string;
  /** 'YYYY-MM-DD', when the monthly allotment is next restored. */
  resetsOn: string;
}

export interface CreditsField {
  used: number;
  remaining: number;
  note?: string;
}

interface BalanceRow {
  plan: PlanName;
  balance: number;
  topup: number;
  period: string;
}

/** First day of the UTC month after `d`, as 'YYYY-MM-DD'. */
export function nextResetDate(d: Date): string {
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)).toISOString().slice(0, 10);
}

function assertCost(cost: number): void {
  if (!Number.isSafeInteger(cost) || cost < 0) throw new RangeError(`cost must be a non-negative integer, got ${cost}`);
}

/**
 * How balances work (docs/DECISIONS.md, Keys/plans/credits):
 * - Each key has two buckets: `balance`, the month's allotment, and `topup`, one-off credits bought on top.
 * - On the first use in a new UTC month, `balance` is set to the plan's allotment (unused credits do not roll over)
 *   while `topup` is kept until spent: top-ups are paid for, the monthly allotment is not.
 * - A charge spends the allotment first and the top-up only once the allotment is gone, for the same reason.
 * - The reset is lazy (applied inside the next charge or refund) so no scheduler is needed and a key idle for months
 *   resets once; each reset is still written to the ledger with the credits it added or expired.
 *
 * Every mutation is one `BEGIN IMMEDIATE` transaction: better-sqlite3 runs it synchronously, so nothing else in this
 * process interleaves, and IMMEDIATE takes SQLite's write lock before reading the balance, so other processes sharing
 * the file wait (busy_timeout) instead of reading a balance about to change. That is what makes "check then debit"
 * atomic; the `balance >= 0` CHECK constraints are a second guard.
 *
 * `requestId` must identify one request uniquely (a server-generated id): refunds are matched to charges by it.
 */
export class Credits {
  private readonly selectKey: Database.Statement<[string], BalanceRow>;
  private readonly writeBalance: Database.Statement<[number, number, string, string]>;
  private readonly insertLedger: Database.Statement<[string, string, number, number, string, string | null]>;
  private readonly chargedFor: Database.Statement<[string, string], { charged: number | null; fromTopup: number | null }>;
  private readonly refundedFor: Database.Statement<[string, string], { n: number }>;
  private readonly chargeTx: Database.Transaction<(keyId: string, cost: number, requestId: string) => ChargeResult>;
  private readonly refundTx: Database.Transaction<(keyId: string, cost: number, requestId: string) => RefundResult>;

  constructor(
    db: Database.Database,
    private readonly clock: Clock = systemClock,
  ) {
    this.selectKey = db.prepare('select plan, balance, topup, period from api_keys where id = ?');
    this.writeBalance = db.prepare('update api_keys set balance = ?, topup = ?, period = ? where id = ?');
    this.insertLedger = db.prepare(
      'insert into credit_ledger (key_id, at, delta, topup_delta, reason, request_id) values (?, ?, ?, ?, ?, ?)',
    );
    this.chargedFor = db.prepare(
      `select -sum(delta) as charged, -sum(topup_delta) as fromTopup
       from credit_ledger where key_id = ? and request_id = ? and reason = 'charge'`,
    );
    this.refundedFor = db.prepare(
      `select count(*) as n from credit_ledger where key_id = ? and request_id = ? and reason = 'refund'`,
    );
    this.chargeTx = db.transaction((keyId: string, cost: number, requestId: string) => this.chargeInTx(keyId, cost, requestId));
    this.refundTx = db.transaction((keyId: string, cost: number, requestId: string) => this.refundInTx(keyId, cost, requestId));
  }

  /** Debits `cost` credits if the key has them all; otherwise debits nothing (HTTP 402, request not executed). */
  charge(keyId: string, cost: number, requestId: string): ChargeResult {
    assertCost(cost);
    return this.chargeTx.immediate(keyId, cost, requestId);
  }

  /**
   * Gives back what `requestId` was charged (at most `cost`), to the buckets it came from. A second refund of the same
   * request gives nothing, so a retrying error path cannot mint credits. A refund after a monthly reset still returns
   * the allotment part: the caller never loses credits to our failure, even across midnight on the 1st.
   */
  refund(keyId: string, cost: number, requestId: string): RefundResult {
    assertCost(cost);
    return this.refundTx.immediate(keyId, cost, requestId);
  }

  /** The effective balance, as the next charge would see it; reading does not write the pending reset. */
  balance(keyId: string): Balance | undefined {
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

  /** The `_credits` object of analytic responses; `note` only when fewer than 20 credits remain. */
  creditsField(used: number, remaining: number): CreditsField {
    const field: CreditsField = { used, remaining };
    if (remaining < LOW_BALANCE_NOTE_BELOW) {
      const unit = remaining === 1 ? 'credit' : 'credits';
      field.note = `${remaining} ${unit} left; the balance resets on ${nextResetDate(this.clock.now())}.`;
    }
    return field;
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

  private chargeInTx(keyId: string, cost: number, requestId: string): ChargeResult {
    const now = this.clock.now();
    const at = now.toISOString();
    const row = this.current(keyId, at, periodOf(now));
    const total = row.balance + row.topup;
    if (cost > total) return { ok: false, remaining: total };
    if (cost === 0) return { ok: true, used: 0, remaining: total };
    const fromMonthly = Math.min(cost, row.balance);
    const fromTopup = cost - fromMonthly;
    this.writeBalance.run(row.balance - fromMonthly, row.topup - fromTopup, row.period, keyId);
    this.insertLedger.run(keyId, at, -cost, -fromTopup, 'charge', requestId);
    return { ok: true, used: cost, remaining: total - cost };
  }

  private refundInTx(keyId: string, cost: number, requestId: string): RefundResult {
    const now = this.clock.now();
    const at = now.toISOString();
    const row = this.current(keyId, at, periodOf(now));
    const total = row.balance + row.topup;
    if (this.refundedFor.get(keyId, requestId)!.n > 0) return { refunded: 0, remaining: total };
    const { charged, fromTopup } = this.chargedFor.get(keyId, requestId)!;
    const amount = Math.min(cost, charged ?? 0);
    if (amount <= 0) return { refunded: 0, remaining: total };
    // Top-up credits were spent last, so a partial refund gives them back first.
    const toTopup = Math.min(amount, fromTopup ?? 0);
    const toMonthly = amount - toTopup;
    this.writeBalance.run(row.balance + toMonthly, row.topup + toTopup, row.period, keyId);
    this.insertLedger.run(keyId, at, amount, toTopup, 'refund', requestId);
    return { refunded: amount, remaining: total + amount };
  }
}
