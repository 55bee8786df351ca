// Credit accounting per key, as every state engine applies it (the ledger itself: api/store/, credits): atomic charge
// with the lazy monthly reset, charges that settle (pending → kept or refunded, pending ones of a dead process refunded
// at start-up), idempotent refunds; and the `_credits` field of responses.
import os from 'node:os';
import crypto from 'node:crypto';
import { pidIsAlive } from '../lib/files';

/** Below this many remaining credits `_credits.note` warns the caller. */
export const LOW_BALANCE_NOTE_BELOW = 20;

export type ChargeResult = { ok: true; used: number; remaining: number } | { ok: false; remaining: number };

/** A charge taken before the work: settle it with keep() or refundCharge() once the answer is decided. */
export type HoldResult = { ok: true; used: number; remaining: number; chargeId: number | undefined } | { ok: false; remaining: number };

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

/** First day of the UTC month after `d`, as 'YYYY-MM-DD'. */
export function nextResetDate(d: Date): string {
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)).toISOString().slice(0, 10);
}

export function assertCost(cost: number): number {
  if (!Number.isSafeInteger(cost) || cost < 0) throw new RangeError(`cost must be a non-negative integer, got ${cost}`);
  return cost;
}

/*
 * How balances work:
 * - Each key has two buckets: `balance`, the month's allotment, and `topup`, one-off credits bought on top.
 * - On the first use in a new UTC month, `balance` is set to the plan's allotment (unused credits do not roll over)
 *   while `topup` is kept until spent: top-ups are paid for, the monthly allotment is not.
 * - A charge spends the allotment first and the top-up only once the allotment is gone, for the same reason.
 * - The reset is lazy (applied inside the next charge or refund) so no scheduler is needed and a key idle for months
 *   resets once; each reset is still written to the ledger with the credits it added or expired.
 *
 * Every mutation is one transaction of the state's engine (api/store/), which makes "check then debit" atomic; the
 * `balance >= 0` CHECK constraints are a second guard. Credits are integers, never fractions.
 *
 * Charges settle (docs/decisions.md, Pending charges): hold() debits at once (so concurrent requests cannot overspend)
 * and writes the charge 'pending' with its request id and this process's `owner` tag; keep() or refundCharge() settles
 * it when the answer is decided. A process killed in between leaves 'pending' rows: refundAbandoned() at the next start
 * gives them back, since their client never got an answer. The request id is the one the caller sees (X-Request-Id),
 * which a client may reuse, so a refund names the ledger row of its charge, not the request id.
 */
/** The `_credits` object of analytic responses; `note` only when fewer than 20 credits remain. */
export function creditsField(used: number, remaining: number, now: Date): CreditsField {
  const field: CreditsField = { used, remaining };
  if (remaining < LOW_BALANCE_NOTE_BELOW) {
    const unit = remaining === 1 ? 'credit' : 'credits';
    field.note = `${remaining} ${unit} left; the balance resets on ${nextResetDate(now)}.`;
  }
  return field;
}

/** Who takes the charges: host, pid and a random part (pids are reused, in containers always). */
export function ownerTag(): string {
  return `${os.hostname()}/${process.pid}/${crypto.randomBytes(4).toString('hex')}`;
}

/**
 * Whether the process that wrote `owner` is gone: on this host, its pid is ours (a restarted container reuses pids) or
 * no longer exists. Charges of other hosts are left alone: only their own restart can tell.
 */
export function ownerIsDead(owner: string): boolean {
  const [host, pidText] = owner.split('/');
  const pid = Number(pidText);
  if (host !== os.hostname() || !Number.isSafeInteger(pid)) return false;
  return pid === process.pid || !pidIsAlive(pid);
}
