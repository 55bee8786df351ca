// What the state's engines share about keys and plans: the plans, the key format and its hash, the key record, what a
// roll and a free key return.
import crypto from 'node:crypto';

/** Monthly credit allotment and requests per minute of each plan. */
export const PLANS = {
  Free: { monthly: 100, rpm: 60 },
  Indie: { monthly: 2_000, rpm: 60 },
  Agent: { monthly: 10_000, rpm: 60 },
  Scale: { monthly: 50_000, rpm: 60 },
  Enterprise: { monthly: 250_000, rpm: 120 },
} as const satisfies Record<string, { monthly: number; rpm: number }>;

export type PlanName = keyof typeof PLANS;
export const PLAN_NAMES = Object.keys(PLANS) as PlanName[];

export function isPlanName(s: string): s is PlanName {
  return Object.hasOwn(PLANS, s);
}

export const KEY_PREFIX = 'fk_live_';
export const KEY_RANDOM_CHARS = 32;
/**
 * Characters of the key kept in clear for display. Every key starts with the 8 characters `fk_live_`, so 8 alone would
 * tell keys apart by nothing: 4 random characters more identify a key in a list while revealing ~24 of its ~190 bits.
 */
export const DISPLAY_PREFIX_CHARS = KEY_PREFIX.length + 4;

/** A new secret: `fk_live_` and 32 base62 characters (~190 bits). */
export function newSecret(): string {
  return KEY_PREFIX + randomBase62(KEY_RANDOM_CHARS);
}

export function hashKey(rawKey: string): string {
  return crypto.createHash('sha256').update(rawKey, 'utf8').digest('hex');
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export function randomBase62(n: number): string {
  let out = '';
  while (out.length < n) {
    for (const b of crypto.randomBytes(n * 2)) {
      // 248 = 4 × 62: rejecting bytes above it keeps every character equally likely (no modulo bias).
      if (b < 248) out += BASE62[b % 62];
      if (out.length === n) break;
    }
  }
  return out;
}

/** 'YYYY-MM' of the UTC month containing `d`: the unit of the monthly reset. */
export function periodOf(d: Date): string {
  return d.toISOString().slice(0, 7);
}

/** The longest grace period of a rolled secret: 7 days. */
export const MAX_ROLL_GRACE_MS = 7 * 86_400_000;

/** Rolling or otherwise changing a revoked key: a revoked key stays revoked. */
export class RevokedKeyError extends Error {
  constructor(id: string) {
    super(`the key ${id} is revoked`);
  }
}

export class UnknownKeyError extends Error {
  constructor(ref: string) {
    super(`no API key matches "${ref}"`);
  }
}

export class AmbiguousKeyError extends Error {
  constructor(ref: string, ids: string[]) {
    super(`"${ref}" matches several keys (${ids.join(', ')}); use the key id`);
  }
}

export interface KeyRecord {
  id: string;
  prefix: string;
  label: string;
  plan: PlanName;
  isActive: boolean;
  /**
   * Monthly allotment left, as last written. A key not used since the month changed still shows last month's figure:
   * the reset is applied lazily at the next charge (the credits store's balance() gives the effective value).
   */
  balance: number;
  /** One-off top-up credits left; they survive monthly resets. */
  topup: number;
  /** 'YYYY-MM' of the last reset. */
  period: string;
  createdAt: string;
  revokedAt: string | null;
  /**
   * The secret a roll replaced, while it may still be used: its display prefix and when it stops (ISO). Set by a roll
   * with a grace period; the record may still hold it a while after it expired (compare with the clock).
   */
  previousSecret: { prefix: string; expiresAt: string } | null;
}

/** A new secret of an existing key (roll), in clear: shown once. */
export interface RolledKey {
  key: KeyRecord;
  secret: string;
}

/** A Free-plan key issued to a visitor, or the refusal once the address had its keys of the day. */
export type FreeKeyResult = { ok: true; id: string; key: string } | { ok: false; issued: number };

export interface FreeKeyOptions {
  /** The client's address as counted (api/routes/account/keys.ts normalizes it). */
  address: string;
  /** Free keys an address may receive per UTC day. */
  perDay: number;
  label?: string;
}

export interface CreateKeyOptions {
  plan: PlanName;
  label?: string;
  /** Credits for the current month instead of the plan's allotment; the next monthly reset applies the allotment. */
  balance?: number;
}

/** What a new key's row holds, its options checked (RangeError otherwise): both engines insert exactly this. */
export interface NewKey {
  id: string;
  key: string;
  hash: string;
  prefix: string;
  label: string;
  plan: PlanName;
  balance: number;
  period: string;
  at: string;
}

export function newKey(opts: CreateKeyOptions, now: Date): NewKey {
  if (!isPlanName(opts.plan)) throw new RangeError(`unknown plan "${String(opts.plan)}" (plans: ${PLAN_NAMES.join(', ')})`);
  const balance = opts.balance ?? PLANS[opts.plan].monthly;
  if (!Number.isSafeInteger(balance) || balance < 0) throw new RangeError(`balance must be a non-negative integer, got ${balance}`);
  const key = newSecret();
  return {
    id: `key_${randomBase62(16)}`,
    key,
    hash: hashKey(key),
    prefix: key.slice(0, DISPLAY_PREFIX_CHARS),
    label: opts.label ?? '',
    plan: opts.plan,
    balance,
    period: periodOf(now),
    at: now.toISOString(),
  };
}

/** A roll's new secret and when the replaced one stops (null: at once), the grace checked (RangeError otherwise). */
export function newRoll(graceMs: number, now: Date): { secret: string; hash: string; prefix: string; previousExpiresAt: string | null } {
  if (!Number.isSafeInteger(graceMs) || graceMs < 0 || graceMs > MAX_ROLL_GRACE_MS) {
    throw new RangeError(`the grace period must be an integer from 0 to ${MAX_ROLL_GRACE_MS} ms (7 days), got ${graceMs}`);
  }
  const secret = newSecret();
  return { secret, hash: hashKey(secret), prefix: secret.slice(0, DISPLAY_PREFIX_CHARS), previousExpiresAt: graceMs > 0 ? new Date(now.getTime() + graceMs).toISOString() : null };
}

export function checkFreeKeyOptions(opts: FreeKeyOptions): void {
  if (!Number.isSafeInteger(opts.perDay) || opts.perDay < 1) throw new RangeError(`free keys per address and day must be a positive integer, got ${opts.perDay}`);
  if (!opts.address) throw new RangeError('a free key needs the client address it is counted against');
}

/** The UTC day (YYYY-MM-DD) free keys are counted in. */
export const dayOf = (d: Date): string => d.toISOString().slice(0, 10);

/** An api_keys row as either engine returns it (SQLite has no boolean: is_active is 0 or 1 there). */
export interface KeyRow {
  id: string;
  prefix: string;
  label: string;
  plan: PlanName;
  is_active: boolean | number;
  balance: number;
  topup: number;
  period: string;
  created_at: string;
  revoked_at: string | null;
  previous_prefix: string | null;
  previous_expires_at: string | null;
}

export function keyRecordOf(r: KeyRow): KeyRecord {
  return {
    id: r.id,
    prefix: r.prefix,
    label: r.label,
    plan: r.plan,
    isActive: r.is_active === true || r.is_active === 1,
    balance: r.balance,
    topup: r.topup,
    period: r.period,
    createdAt: r.created_at,
    revokedAt: r.revoked_at,
    previousSecret: r.previous_prefix && r.previous_expires_at ? { prefix: r.previous_prefix, expiresAt: r.previous_expires_at } : null,
  };
}
