// The credit ledger on PostgreSQL: the same rules as the SQLite engine (api/credits.ts: two buckets, lazy monthly reset,
// pending charges settled by keep or refund), each mutation one transaction that locks the key's row first
// (select … for update), so concurrent charges of one key on any replica are applied one after the other.
import type pg from 'pg';
import type { Clock } from '../../clock';
import { nextResetDate, type Balance, type HoldResult, type RefundResult } from '../../credits';
import { PLANS, periodOf, type PlanName } from '../../store';
import { inTransaction } from './pool';

interface BalanceRow {
  plan: PlanName;
  balance: number;
  topup: number;
  period: string;
}

type Settled = 'pending' | 'kept';

function assertCost(cost: number): number {
  if (!Number.isSafeInteger(cost) || cost < 0) throw new RangeError(`cost must be a non-negative integer, got ${cost}`);
  return cost;
}

export class PgCredits {
  constructor(
    private readonly pool: pg.Pool,
    private readonly clock: Clock,
    /** The replica's id (replicas.id): its pending charges are refunded by the others once its lease expires. */
    readonly owner: string,
  ) {}

  /** Debits `cost` credits as a pending charge of this replica if the key has them all; otherwise nothing. */
  hold(keyId: string, cost: number, requestId: string): Promise<HoldResult> {
    assertCost(cost);
    return inTransaction(this.pool, (c) => this.holdIn(c, keyId, cost, requestId, 'pending'));
  }

  /** A charge settled at once (no pending state). */
  async charge(keyId: string, cost: number, requestId: string): Promise<{ ok: true; used: number; remaining: number } | { ok: false; remaining: number }> {
    assertCost(cost);
    const r = await inTransaction(this.pool, (c) => this.holdIn(c, keyId, cost, requestId, 'kept'));
    return r.ok ? { ok: true, used: r.used, remaining: r.remaining } : r;
  }

  /**
   * The answer was delivered: the pending charge is final. Only a charge still pending: one that a live replica
   * refunded because this replica's lease had expired stays refunded (the client got that answer for free).
   */
  async keep(chargeId: number | undefined): Promise<void> {
    if (chargeId !== undefined) await this.pool.query(`update credit_ledger set settled = 'kept' where id = $1 and settled = 'pending'`, [chargeId]);
  }

  /** Gives back what charge `chargeId` took (at most `cost`), once. */
  async refundCharge(chargeId: number | undefined, cost = Number.MAX_SAFE_INTEGER): Promise<RefundResult | undefined> {
    if (chargeId === undefined) return undefined;
    assertCost(cost);
    return inTransaction(this.pool, (c) => this.refundIn(c, chargeId, cost));
  }

  /** Gives back what `requestId` was charged (its latest charge not yet refunded), at most `cost`. */
  async refund(keyId: string, cost: number, requestId: string): Promise<RefundResult> {
    assertCost(cost);
    const { rows } = await this.pool.query<{ id: number }>(
      `select id from credit_ledger where key_id = $1 and request_id = $2 and reason = 'charge' and settled is distinct from 'refunded' order by id desc limit 1`,
      [keyId, requestId],
    );
    if (rows.length) return (await this.refundCharge(rows[0].id, cost))!;
    return { refunded: 0, remaining: (await this.balance(keyId))?.remaining ?? 0 };
  }

  /** Refunds every pending charge of the replicas `owners` (dead ones); returns how many were refunded. */
  async refundPendingOf(owners: string[]): Promise<number> {
    if (!owners.length) return 0;
    const { rows } = await this.pool.query<{ id: number }>(`select id from credit_ledger where settled = 'pending' and owner = any($1) order by id`, [owners]);
    let n = 0;
    for (const { id } of rows) {
      // Still pending under the lock: a charge its replica kept meanwhile (a late heartbeat) is not refunded.
      const r = await inTransaction(this.pool, (c) => this.refundIn(c, id, Number.MAX_SAFE_INTEGER, true));
      if (r.refunded > 0) n++;
    }
    return n;
  }

  async balance(keyId: string): Promise<Balance | undefined> {
    const { rows } = await this.pool.query<BalanceRow>('select plan, balance, topup, period from api_keys where id = $1', [keyId]);
    const row = rows[0];
    if (!row) return undefined;
    const now = this.clock.now();
    const period = periodOf(now);
    const resetDue = period > row.period;
    const monthly = resetDue ? PLANS[row.plan].monthly : row.balance;
    return { remaining: monthly + row.topup, monthly, topup: row.topup, period: resetDue ? period : row.period, resetsOn: nextResetDate(now) };
  }

  /** The key's row, locked for this transaction, with the monthly reset applied if the month has changed. */
  private async current(c: pg.PoolClient, keyId: string, at: string, period: string): Promise<BalanceRow> {
    const { rows } = await c.query<BalanceRow>('select plan, balance, topup, period from api_keys where id = $1 for update', [keyId]);
    const row = rows[0];
    if (!row) throw new Error(`unknown key id ${keyId}`);
    // `>` rather than `!==`: a clock skewed backwards on another host must not reset the month a second time.
    if (period > row.period) {
      const allotment = PLANS[row.plan].monthly;
      await c.query('update api_keys set balance = $1, period = $2 where id = $3', [allotment, period, keyId]);
      await c.query(`insert into credit_ledger (key_id, at, delta, topup_delta, reason) values ($1, $2, $3, 0, 'reset')`, [keyId, at, allotment - row.balance]);
      return { ...row, balance: allotment, period };
    }
    return row;
  }

  private async holdIn(c: pg.PoolClient, keyId: string, cost: number, requestId: string, settled: Settled): Promise<HoldResult> {
    const now = this.clock.now();
    const at = now.toISOString();
    const row = await this.current(c, keyId, at, periodOf(now));
    const total = row.balance + row.topup;
    if (cost > total) return { ok: false, remaining: total };
    if (cost === 0) return { ok: true, used: 0, remaining: total, chargeId: undefined };
    const fromMonthly = Math.min(cost, row.balance);
    const fromTopup = cost - fromMonthly;
    await c.query('update api_keys set balance = balance - $1, topup = topup - $2 where id = $3', [fromMonthly, fromTopup, keyId]);
    const { rows } = await c.query<{ id: number }>(
      `insert into credit_ledger (key_id, at, delta, topup_delta, reason, request_id, settled, owner)
       values ($1, $2, $3, $4, 'charge', $5, $6, $7) returning id`,
      [keyId, at, -cost, -fromTopup, requestId, settled, settled === 'pending' ? this.owner : null],
    );
    return { ok: true, used: cost, remaining: total - cost, chargeId: rows[0].id };
  }

  private async refundIn(c: pg.PoolClient, chargeId: number, cost: number, onlyPending = false): Promise<RefundResult> {
    // The key first, then the charge: the same lock order as a hold, so a refund and a hold never deadlock.
    const { rows: keys } = await c.query<{ key_id: string }>(`select key_id from credit_ledger where id = $1 and reason = 'charge'`, [chargeId]);
    if (!keys.length) throw new Error(`no charge has ledger id ${chargeId}`);
    const now = this.clock.now();
    const at = now.toISOString();
    const row = await this.current(c, keys[0].key_id, at, periodOf(now));
    const { rows } = await c.query<{ key_id: string; charged: number; from_topup: number; request_id: string | null; settled: string | null }>(
      `select key_id, -delta as charged, -topup_delta as from_topup, request_id, settled from credit_ledger where id = $1 for update`,
      [chargeId],
    );
    const charge = rows[0];
    const total = row.balance + row.topup;
    if (charge.settled === 'refunded' || (onlyPending && charge.settled !== 'pending')) return { refunded: 0, remaining: total };
    const amount = Math.min(cost, charge.charged);
    // Top-up credits were spent last, so a partial refund gives them back first.
    const toTopup = Math.min(amount, charge.from_topup);
    const toMonthly = amount - toTopup;
    await c.query('update api_keys set balance = balance + $1, topup = topup + $2 where id = $3', [toMonthly, toTopup, charge.key_id]);
    await c.query(
      `insert into credit_ledger (key_id, at, delta, topup_delta, reason, request_id, charge_id) values ($1, $2, $3, $4, 'refund', $5, $6)`,
      [charge.key_id, at, amount, toTopup, charge.request_id, chargeId],
    );
    await c.query(`update credit_ledger set settled = 'refunded' where id = $1`, [chargeId]);
    return { refunded: amount, remaining: total + amount };
  }
}
