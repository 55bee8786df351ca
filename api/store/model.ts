// What the state's engines share about keys and plans: the plans, the key format and its hash, the key record.
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
}

export interface CreateKeyOptions {
  plan: PlanName;
  label?: string;
  /** Credits for the current month instead of the plan's allotment; the next monthly reset applies the allotment. */
  balance?: number;
}

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
  };
}
