// Charges that settle: pending until kept or refunded, pending charges of a dead process refunded
// at start-up and only those, and the migration of a ledger written before charges had a state.
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { FixedClock } from '../../../api/clock';
import { ownerIsDead } from '../../../api/credits';
import { SqliteState } from '../../../api/store/sqlite';
import { SqliteCredits } from '../../../api/store/sqlite/credits';
import { migrationFiles } from '../../../api/store/sqlite/migrate';
import { tempDir } from '../../helpers/samples';

const opened: SqliteState[] = [];
afterEach(() => opened.splice(0).forEach((s) => void s.close()));

function open(file = path.join(tempDir('foncier-credits-'), 'api.sqlite')) {
  const clock = new FixedClock('2026-11-20T10:00:00Z');
  const store = new SqliteState(file, clock);
  opened.push(store);
  return { store, credits: store.credits, file };
}

const states = (store: SqliteState, keyId: string) =>
  store.db.prepare(`select settled from credit_ledger where key_id = ? and reason = 'charge' order by id`).pluck().all(keyId);

describe('pending charges', () => {
  it('debit at once, and settle as kept or refunded exactly once', () => {
    const { store, credits } = open();
    const { id } = store.keys.createKeyNow({ plan: 'Free', balance: 20 });
    const a = credits.holdNow(id, 5, 'same-id');
    const b = credits.holdNow(id, 5, 'same-id');
    expect(a).toMatchObject({ ok: true, used: 5, remaining: 15 });
    expect(b).toMatchObject({ ok: true, remaining: 10 });
    expect(credits.holdNow(id, 11, 'too-much')).toEqual({ ok: false, remaining: 10 });
    expect(states(store, id)).toEqual(['pending', 'pending']);
    credits.keepNow(a.ok ? a.chargeId : undefined);
    const chargeB = b.ok ? b.chargeId : undefined;
    expect(credits.refundChargeNow(chargeB)).toEqual({ refunded: 5, remaining: 15 });
    expect(credits.refundChargeNow(chargeB)).toEqual({ refunded: 0, remaining: 15 });
    expect(states(store, id)).toEqual(['kept', 'refunded']);
    // A zero-cost call writes no charge and has nothing to settle.
    const free = credits.holdNow(id, 0, 'free');
    expect(free).toEqual({ ok: true, used: 0, remaining: 15, chargeId: undefined });
    expect(credits.refundChargeNow(undefined)).toBeUndefined();
  });

  it('refunds at start-up the pending charges of dead processes, not those of live ones or of this process', () => {
    const { store, credits, file } = open();
    const { id } = store.keys.createKeyNow({ plan: 'Free', balance: 30 });
    credits.holdNow(id, 4, 'mine');
    // Two other processes wrote to the same file: one died, one still runs.
    const dead = new SqliteCredits(store.db, store.clock, 'other-host/1/dead');
    const alive = new SqliteCredits(store.db, store.clock, 'other-host/2/alive');
    dead.holdNow(id, 6, 'lost');
    const kept = dead.holdNow(id, 7, 'answered');
    dead.keepNow(kept.ok ? kept.chargeId : undefined);
    alive.holdNow(id, 3, 'in-flight');
    expect(credits.balanceNow(id)!.remaining).toBe(10);
    const restarted = open(file).credits;
    expect(restarted.refundAbandonedNow((owner) => owner === dead.owner)).toBe(1);
    expect(restarted.balanceNow(id)!.remaining).toBe(16);
    expect(states(store, id)).toEqual(['pending', 'refunded', 'kept', 'pending']);
    expect(restarted.refundAbandonedNow((owner) => owner === dead.owner)).toBe(0);
  });

  it('tells a dead owner from a live one by host and pid', () => {
    const host = os.hostname();
    expect(ownerIsDead(`${host}/${process.pid}/abcd`)).toBe(true); // our own pid: a restarted container
    expect(ownerIsDead(`${host}/${process.ppid}/abcd`)).toBe(false);
    expect(ownerIsDead(`${host}/2147483646/abcd`)).toBe(true);
    expect(ownerIsDead(`another-host-${host}/2147483646/abcd`)).toBe(false);
    expect(ownerIsDead('garbage')).toBe(false);
    // The default rule never refunds this process's own charges.
    const { store, credits } = open();
    const { id } = store.keys.createKeyNow({ plan: 'Free', balance: 10 });
    credits.holdNow(id, 2, 'mine');
    expect(credits.refundAbandonedNow()).toBe(0);
  });

  it('migrates a ledger of schema 1: old charges settled, old refunds tied to their charge', () => {
    const file = path.join(tempDir('foncier-credits-'), 'api.sqlite');
    const v1 = new Database(file);
    v1.exec(migrationFiles()[0].sql);
    v1.pragma('user_version = 1');
    v1.prepare(`insert into api_keys (id, key_hash, prefix, plan, balance, period, created_at) values ('key_a', 'h', 'p', 'Free', 90, '2026-11', 'x')`).run();
    const ins = v1.prepare(`insert into credit_ledger (key_id, at, delta, reason, request_id) values ('key_a', 'x', ?, ?, ?)`);
    ins.run(100, 'create', null);
    ins.run(-5, 'charge', 'r1');
    ins.run(-5, 'charge', 'r2');
    ins.run(5, 'refund', 'r2');
    ins.run(-5, 'charge', 'r3');
    v1.close();
    const { store, credits } = open(file);
    expect(states(store, 'key_a')).toEqual(['kept', 'refunded', 'kept']);
    const refund = store.db.prepare(`select charge_id from credit_ledger where reason = 'refund'`).pluck().get();
    expect(refund).toBe(store.db.prepare(`select id from credit_ledger where request_id = 'r2' and reason = 'charge'`).pluck().get());
    expect(credits.refundNow('key_a', 5, 'r2')).toEqual({ refunded: 0, remaining: 90 });
    expect(credits.refundNow('key_a', 5, 'r3')).toEqual({ refunded: 5, remaining: 95 });
  });
});
