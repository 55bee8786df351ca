// The StateStore contract (docs/state.md), run against every engine: what a caller may rely on whichever engine holds
// the state. SQLite on a temporary file; PostgreSQL on a throwaway server (test/helpers/postgres.ts), one fresh
// database per test. Each family of methods: keys, credits (pending and settled charges, refunds, exactness under
// concurrency, the monthly reset), the rate limit, portfolio and alerts (scoped per key), the delivery queue, the
// request log and the service's named values.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../../api/clock';
import { openStore, RevokedKeyError, UnknownKeyError, type AlertValues, type NewOAuthToken, type OAuthCodeRow, type OpenStateOptions, type StateStore } from '../../../api/store';
import type { Match } from '../../../api/webhooks/queue';
import { startPostgres, type TestPostgres } from '../../helpers/postgres';

interface Engine {
  name: string;
  /** Whether a job claimed by one process is refused to the others (an engine shared by several processes). */
  jobsOncePerService: boolean;
  setup?(): Promise<void>;
  teardown?(): Promise<void>;
  /** A state over an empty database, migrated and ready. */
  open(clock: FixedClock): Promise<StateStore>;
}

/** The options naming a PostgreSQL database; the engine is chosen by openStore from what it is given. */
type EngineOptions = OpenStateOptions & { databaseUrl?: string };
const open = openStore as (opts: EngineOptions) => StateStore;

const dirs: string[] = [];
let pgServer: TestPostgres | undefined;
let pgDatabases = 0;

export const ENGINES: Engine[] = [
  {
    name: 'sqlite',
    jobsOncePerService: false,
    async open(clock) {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'foncier-contract-'));
      dirs.push(dir);
      const state = open({ file: path.join(dir, 'api.sqlite'), clock });
      await state.ready();
      return state;
    },
    async teardown() {
      for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
    },
  },
  {
    name: 'postgres',
    jobsOncePerService: true,
    async setup() {
      pgServer = await startPostgres();
    },
    async open(clock) {
      const url = await pgServer!.database(`contract_${++pgDatabases}`);
      // A temporary file too: an openStore that ignored databaseUrl would open it rather than the data folder's.
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'foncier-contract-'));
      dirs.push(dir);
      const state = open({ databaseUrl: url, file: path.join(dir, 'api.sqlite'), clock });
      if (state.engine !== 'postgresql') {
        await state.close();
        throw new Error(`openStore({ databaseUrl }) opened ${state.engine}, not PostgreSQL`);
      }
      await state.ready();
      return state;
    },
    async teardown() {
      await pgServer?.stop();
      for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
    },
  },
];

const match = (alertId: string, txId: string, prix = 250_000): Match => ({
  alert_id: alertId,
  transaction: {
    id: txId,
    date_mutation: '2026-03-02',
    valeur_fonciere: prix,
    prix_m2: 4_310.34,
    type_local: 'Appartement',
    surface_reelle_bati: 58,
    nombre_pieces_principales: 3,
    commune: 'Lyon 3e Arrondissement',
    code_postal: '69003',
    latitude: 45.7597,
    longitude: 4.8422,
  },
});

const alertValues = (label: string): AlertValues => ({
  label,
  webhook_url: 'https://hooks.example.org/foncier',
  code_postal: '69003',
  commune: null,
  code_departement: null,
  type_local: 'Appartement',
  prix_min: 100_000,
  prix_max: null,
  surface_min: null,
  surface_max: 80.5,
});

/** Two keys: portfolio, alerts and deliveries belong to a key. */
async function twoKeys(s: StateStore): Promise<[string, string]> {
  return [(await s.keys.createKey({ plan: 'Indie' })).id, (await s.keys.createKey({ plan: 'Indie' })).id];
}

describe.each(ENGINES)('StateStore on $name', (engine) => {
  const opened: StateStore[] = [];
  let clock: FixedClock;
  let state: StateStore;

  beforeAll(async () => {
    await engine.setup?.();
  }, 60_000);
  afterAll(async () => {
    await engine.teardown?.();
  });
  afterEach(async () => {
    for (const s of opened.splice(0)) await s.close();
  });

  async function fresh(start = '2026-11-20T10:00:00.000Z'): Promise<StateStore> {
    clock = new FixedClock(start);
    state = await engine.open(clock);
    opened.push(state);
    return state;
  }

  describe('keys', () => {
    it('create a key shown once, found by the key, by id, by prefix; never by a wrong key', async () => {
      const s = await fresh();
      const { id, key } = await s.keys.createKey({ plan: 'Indie', label: 'Acme' });
      expect(key).toMatch(/^fk_live_[0-9A-Za-z]{32}$/);
      const rec = await s.keys.findByKey(key);
      expect(rec).toMatchObject({ id, label: 'Acme', plan: 'Indie', isActive: true, balance: 2_000, topup: 0, period: '2026-11', revokedAt: null });
      expect(rec!.createdAt).toBe('2026-11-20T10:00:00.000Z');
      expect(key.startsWith(rec!.prefix)).toBe(true);
      expect(await s.keys.findById(id)).toEqual(rec);
      expect(await s.keys.findByKey(`${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`)).toBeUndefined();
      expect((await s.keys.resolve(id)).id).toBe(id);
      expect((await s.keys.resolve(rec!.prefix)).id).toBe(id);
      expect((await s.keys.resolve(key)).id).toBe(id);
      await expect(s.keys.resolve('key_unknown')).rejects.toThrow(/no API key matches/);
    });

    it('list oldest first; revoke once (twice is harmless); top up survives as one-off credits', async () => {
      const s = await fresh();
      const a = await s.keys.createKey({ plan: 'Free' });
      clock.advance(1_000);
      const b = await s.keys.createKey({ plan: 'Scale', balance: 7 });
      expect((await s.keys.listKeys()).map((k) => k.id)).toEqual([a.id, b.id]);
      expect((await s.keys.findById(b.id))!.balance).toBe(7);

      const first = await s.keys.revoke(a.id);
      expect(first.alreadyRevoked).toBe(false);
      expect(first.key.isActive).toBe(false);
      expect(first.key.revokedAt).toBe(clock.now().toISOString());
      expect((await s.keys.revoke(a.id)).alreadyRevoked).toBe(true);
      expect((await s.keys.findByKey(a.key))!.isActive).toBe(false);

      const topped = await s.keys.topup(b.id, 500);
      expect(topped.topup).toBe(500);
      expect((await s.credits.balance(b.id))!.remaining).toBe(507);
    });

    it('roll a key: a new secret, the same key; the old secret works through its grace period, then not at all', async () => {
      const s = await fresh();
      const { id, key: first } = await s.keys.createKey({ plan: 'Scale', label: 'ops', balance: 321 });
      await s.keys.topup(id, 9);
      const before = (await s.keys.findById(id))!;

      const hour = 3_600_000;
      const rolled = await s.keys.roll(id, hour);
      expect(rolled.secret).toMatch(/^fk_live_[0-9A-Za-z]{32}$/);
      expect(rolled.secret).not.toBe(first);
      const expires = new Date(clock.now().getTime() + hour).toISOString();
      expect(rolled.key).toEqual({ ...before, prefix: rolled.secret.slice(0, 12), previousSecret: { prefix: first.slice(0, 12), expiresAt: expires } });
      expect(await s.keys.findByKey(rolled.secret)).toEqual(rolled.key);
      // The old secret finds the same record until its expiry, exclusive.
      expect(await s.keys.findByKey(first)).toEqual(rolled.key);
      clock.advance(hour - 1);
      expect((await s.keys.findByKey(first))?.id).toBe(id);
      clock.advance(1);
      expect(await s.keys.findByKey(first)).toBeUndefined();
      expect((await s.keys.findByKey(rolled.secret))?.id).toBe(id);
      expect((await s.credits.balance(id))!.remaining).toBe(330);
      expect((await s.keys.resolve(rolled.secret.slice(0, 12))).id).toBe(id);

      // Without a grace period the replaced secret stops at once, and a previous one still in its grace period too.
      const second = rolled.secret;
      const third = (await s.keys.roll(id, 7 * 24 * hour)).secret;
      expect((await s.keys.findByKey(second))?.id).toBe(id);
      const fourth = await s.keys.roll(id, 0);
      expect(fourth.key.previousSecret).toBeNull();
      for (const old of [first, second, third]) expect(await s.keys.findByKey(old)).toBeUndefined();
      expect((await s.keys.findByKey(fourth.secret))?.id).toBe(id);
      expect((await s.keys.listKeys()).map((k) => k.id)).toEqual([id]);
    });

    it('refuse a roll of a revoked key or past 7 days of grace; a revoked key is revoked under its old secret too', async () => {
      const s = await fresh();
      const { id, key } = await s.keys.createKey({ plan: 'Indie' });
      await expect(s.keys.roll(id, 7 * 86_400_000 + 1)).rejects.toThrow(RangeError);
      await expect(s.keys.roll(id, -1)).rejects.toThrow(RangeError);
      expect((await s.keys.findByKey(key))?.prefix).toBe(key.slice(0, 12));
      const { secret } = await s.keys.roll(id, 60_000);
      const other = (await s.keys.createKey({ plan: 'Scale' })).id;
      for (const [owner, alert] of [[id, 'alert_a'], [other, 'alert_b']]) expect(await s.alerts.insert(owner, alert, 'whsec', alertValues(alert), clock.now().toISOString(), 20)).toBe(true);
      await s.keys.revoke(id);
      for (const k of [key, secret]) expect(await s.keys.findByKey(k)).toMatchObject({ id, isActive: false });
      // Its alerts stop with it; another key's go on.
      expect(await s.alerts.get(id, 'alert_a')).toMatchObject({ is_active: 0, deactivated_reason: 'key_revoked' });
      expect((await s.alerts.active()).map((a) => a.id)).toEqual(['alert_b']);
      await expect(s.keys.roll(id, 0)).rejects.toThrow(RevokedKeyError);
      await expect(s.keys.roll('key_unknown', 0)).rejects.toThrow(UnknownKeyError);
    });

    it('issue Free keys to an address up to its daily limit, counted per UTC day and address, exact under concurrency', async () => {
      const s = await fresh('2026-11-20T23:59:00.000Z');
      const a = await s.keys.issueFreeKey({ address: '203.0.113.7', perDay: 2, label: 'visitor' });
      if (!a.ok) throw new Error('refused');
      expect(await s.keys.findByKey(a.key)).toMatchObject({ id: a.id, plan: 'Free', label: 'visitor', isActive: true, balance: 100 });
      expect((await s.credits.balance(a.id))!.remaining).toBe(100);
      expect((await s.keys.issueFreeKey({ address: '203.0.113.7', perDay: 2 })).ok).toBe(true);
      expect(await s.keys.issueFreeKey({ address: '203.0.113.7', perDay: 2 })).toEqual({ ok: false, issued: 2 });
      // A higher limit lets the same address have more; another address counts apart.
      expect((await s.keys.issueFreeKey({ address: '203.0.113.7', perDay: 3 })).ok).toBe(true);
      expect((await s.keys.issueFreeKey({ address: '2001:db8::/64', perDay: 1 })).ok).toBe(true);
      expect((await s.keys.issueFreeKey({ address: '2001:db8::/64', perDay: 1 })).ok).toBe(false);
      // The next UTC day starts a new count.
      clock.advance(60_000);
      const burst = await Promise.all(Array.from({ length: 12 }, () => s.keys.issueFreeKey({ address: '203.0.113.7', perDay: 5 })));
      expect(burst.filter((r) => r.ok)).toHaveLength(5);
      expect(burst.filter((r) => !r.ok).every((r) => !r.ok && r.issued === 5)).toBe(true);
      // Every key issued is a Free key of its own: 3 the first day, 1 for the other address, 5 the second day.
      const keys = await s.keys.listKeys();
      expect(keys).toHaveLength(9);
      expect(new Set(keys.map((k) => k.plan))).toEqual(new Set(['Free']));
      await expect(s.keys.issueFreeKey({ address: '203.0.113.7', perDay: 0 })).rejects.toThrow(RangeError);
    });
  });

  describe('credits', () => {
    it('hold is pending until kept or refunded; a refund gives back exactly what was taken, once', async () => {
      const s = await fresh();
      const { id } = await s.keys.createKey({ plan: 'Free' });
      const held = await s.credits.hold(id, 7, 'req-1');
      expect(held).toMatchObject({ ok: true, used: 7, remaining: 93 });
      if (!held.ok) throw new Error('unreachable');
      await s.credits.keep(held.chargeId);
      expect((await s.credits.balance(id))!.remaining).toBe(93);

      const h2 = await s.credits.hold(id, 10, 'req-2');
      if (!h2.ok) throw new Error('unreachable');
      expect(await s.credits.refundCharge(h2.chargeId)).toEqual({ refunded: 10, remaining: 93 });
      expect(await s.credits.refundCharge(h2.chargeId)).toMatchObject({ refunded: 0, remaining: 93 });
      expect(await s.credits.refundCharge(undefined)).toBeUndefined();

      // A refund by request id: at most `cost`, once.
      const c = await s.credits.charge(id, 5, 'req-3');
      expect(c).toEqual({ ok: true, used: 5, remaining: 88 });
      expect(await s.credits.refund(id, 3, 'req-3')).toEqual({ refunded: 3, remaining: 91 });
      expect((await s.credits.refund(id, 3, 'req-3')).refunded).toBe(0);
      expect((await s.credits.balance(id))!.remaining).toBe(91);
    });

    it('refuse a charge the key cannot pay in full, and debit nothing then', async () => {
      const s = await fresh();
      const { id } = await s.keys.createKey({ plan: 'Free', balance: 4 });
      expect(await s.credits.hold(id, 5, 'r')).toEqual({ ok: false, remaining: 4 });
      expect(await s.credits.charge(id, 5, 'r')).toEqual({ ok: false, remaining: 4 });
      expect((await s.credits.balance(id))!.remaining).toBe(4);
      expect(await s.credits.charge(id, 4, 'r2')).toEqual({ ok: true, used: 4, remaining: 0 });
      await expect(s.credits.charge(id, 1.5, 'r3')).rejects.toThrow();
    });

    it('spend top-up credits after the monthly allotment; the allotment resets at the month, top-ups stay', async () => {
      const s = await fresh('2026-11-30T23:59:00.000Z');
      const { id } = await s.keys.createKey({ plan: 'Free', balance: 3 });
      await s.keys.topup(id, 10);
      expect(await s.credits.charge(id, 5, 'a')).toEqual({ ok: true, used: 5, remaining: 8 });
      expect(await s.credits.balance(id)).toMatchObject({ remaining: 8, monthly: 0, topup: 8, period: '2026-11', resetsOn: '2026-12-01' });
      clock.set('2026-12-01T00:00:01.000Z');
      expect(await s.credits.balance(id)).toMatchObject({ remaining: 108, monthly: 100, topup: 8, period: '2026-12', resetsOn: '2027-01-01' });
      expect(await s.credits.charge(id, 1, 'b')).toEqual({ ok: true, used: 1, remaining: 107 });
    });

    it('stay exact under 150 concurrent holds of one key: accepted × cost = spent, never below zero', async () => {
      const s = await fresh();
      const { id } = await s.keys.createKey({ plan: 'Free', balance: 120 });
      // One key's holds queue on its row lock (PostgreSQL) or the file's write lock (SQLite): 150 keep a loaded machine
      // within the pool's connection timeout, and more than half of them are refused for want of credits.
      const results = await Promise.all(Array.from({ length: 150 }, (_, i) => s.credits.hold(id, 1 + (i % 3), `c-${i}`)));
      let spent = 0;
      for (const [i, r] of results.entries()) {
        if (r.ok) {
          spent += 1 + (i % 3);
          await s.credits.keep(r.chargeId);
        } else expect(r.remaining).toBeLessThan(1 + (i % 3));
      }
      const left = (await s.credits.balance(id))!.remaining;
      expect(left).toBe(120 - spent);
      expect(left).toBeGreaterThanOrEqual(0);
      expect(left).toBeLessThan(3);
      expect(results.filter((r) => !r.ok).length).toBeGreaterThan(0);
    });

    it('refund the pending charges of a process known dead, not the kept ones nor a live one', async () => {
      const s = await fresh();
      const { id } = await s.keys.createKey({ plan: 'Free' });
      const kept = await s.credits.hold(id, 10, 'kept');
      if (!kept.ok) throw new Error('unreachable');
      await s.credits.keep(kept.chargeId);
      expect((await s.credits.hold(id, 20, 'pending')).ok).toBe(true);
      expect((await s.credits.balance(id))!.remaining).toBe(70);
      // This process is alive: nothing of its own is refunded.
      expect(await s.credits.refundAbandoned(() => false)).toBe(0);
      expect(await s.credits.refundAbandoned((owner) => owner === s.credits.owner)).toBe(1);
      expect((await s.credits.balance(id))!.remaining).toBe(90);
      expect(await s.credits.refundAbandoned((owner) => owner === s.credits.owner)).toBe(0);
    });
  });

  describe('rate limit', () => {
    it('admit `limit` requests of a key per 60 s window, other keys apart, then again once the window moved', async () => {
      const s = await fresh();
      const [A, B] = await twoKeys(s);
      const a = await Promise.all(Array.from({ length: 7 }, () => s.rateLimit.hit(A, 5)));
      expect(a.filter((d) => d.allowed)).toHaveLength(5);
      expect(a.filter((d) => !d.allowed)).toHaveLength(2);
      expect(a.every((d) => d.limit === 5)).toBe(true);
      expect((await s.rateLimit.hit(B, 5)).allowed).toBe(true);
      clock.advance(61_000);
      expect((await s.rateLimit.hit(A, 5)).allowed).toBe(true);
    });
  });

  describe('portfolio', () => {
    it('keep each key to its own properties, in creation order, JSON byte for byte', async () => {
      const s = await fresh();
      const [A, B] = await twoKeys(s);
      const at = clock.now().toISOString();
      const data = '{"adresse":"3 rue de la République","surface":58.5,"pieces":3}';
      for (let i = 1; i <= 3; i++) {
        await s.portfolio.insert({ id: `prop_a${i}`, key_id: A, data, estimate: null, estimate_valid: 0, estimate_computed_at: null, created_at: at });
      }
      await s.portfolio.insert({ id: 'prop_b1', key_id: B, data, estimate: null, estimate_valid: 0, estimate_computed_at: null, created_at: at });
      const page = await s.portfolio.list(A, 2, 1);
      expect(page.total).toBe(3);
      expect(page.rows.map((r) => r.id)).toEqual(['prop_a2', 'prop_a3']);
      expect(page.rows[0]).toMatchObject({ key_id: A, data, estimate_valid: 0, created_at: at, updated_at: at });
      expect(await s.portfolio.get(B, 'prop_a1')).toBeUndefined();
      expect(await s.portfolio.delete(B, 'prop_a1')).toBe(false);

      const later = '2026-11-21T08:00:00.000Z';
      await s.portfolio.save({ id: 'prop_a1', key_id: A, data, estimate: '{"prix":251000}', estimate_valid: 1, estimate_computed_at: later, updated_at: later });
      expect(await s.portfolio.get(A, 'prop_a1')).toMatchObject({ estimate: '{"prix":251000}', estimate_valid: 1, estimate_computed_at: later, updated_at: later, created_at: at });
      expect(await s.portfolio.delete(A, 'prop_a1')).toBe(true);
      expect((await s.portfolio.list(A, 10, 0)).total).toBe(2);
      expect((await s.portfolio.list(B, 10, 0)).total).toBe(1);
    });
  });

  describe('alerts', () => {
    it('cap the active alerts of a key, exactly under concurrent creations; scoped per key', async () => {
      const s = await fresh();
      const [A, B] = await twoKeys(s);
      const at = clock.now().toISOString();
      const created = await Promise.all(Array.from({ length: 8 }, (_, i) => s.alerts.insert(A, `alert_${i}`, `whsec_${i}`, alertValues(`a${i}`), at, 5)));
      expect(created.filter(Boolean)).toHaveLength(5);
      expect(await s.alerts.countActive(A)).toBe(5);
      expect(await s.alerts.insert(B, 'alert_b', 'whsec_b', alertValues('b'), at, 5)).toBe(true);
      const mine = await s.alerts.list(A, 10, 0);
      expect(mine.total).toBe(5);
      const one = mine.rows[0];
      expect(one).toMatchObject({ key_id: A, is_active: 1, deactivated_reason: null, created_at: at, ...alertValues(one.label as string) });
      expect(await s.alerts.get(B, one.id)).toBeUndefined();
      expect(await s.alerts.delete(B, one.id)).toBe(false);
      expect((await s.alerts.active()).map((a) => a.id).sort()).toEqual([...mine.rows.map((r) => r.id), 'alert_b'].sort());
    });

    it('deactivate, refuse a reactivation over the cap, delete with its deliveries', async () => {
      const s = await fresh();
      const [A] = await twoKeys(s);
      const at = clock.now().toISOString();
      await s.alerts.insert(A, 'al_1', 's1', alertValues('one'), at, 2);
      await s.alerts.insert(A, 'al_2', 's2', alertValues('two'), at, 2);
      expect(await s.alerts.update(A, 'al_1', alertValues('one'), false, false, at, 2)).toBe(true);
      expect(await s.alerts.isActive('al_1')).toBe(false);
      expect(await s.alerts.insert(A, 'al_3', 's3', alertValues('three'), at, 2)).toBe(true);
      expect(await s.alerts.update(A, 'al_1', alertValues('one bis'), true, true, at, 2)).toBe(false);
      expect((await s.alerts.get(A, 'al_1'))!.label).toBe('one');
      await s.alerts.delete(A, 'al_3');
      expect(await s.alerts.update(A, 'al_1', alertValues('one bis'), true, true, at, 2)).toBe(true);
      expect(await s.alerts.get(A, 'al_1')).toMatchObject({ label: 'one bis', is_active: 1 });

      await s.deliveries.enqueue([match('al_1', 't1'), match('al_1', 't2')], clock.now());
      expect(await s.alerts.delete(A, 'al_1')).toBe(true);
      expect((await s.deliveries.list('al_1', 10, 0)).total).toBe(0);
      expect((await s.deliveries.countByStatus()).pending).toBe(0);
    });
  });

  describe('webhook deliveries', () => {
    it('enqueue each (alert, transaction) once; due oldest first with a byte-stable body; claimed by one worker; attempts recorded', async () => {
      const s = await fresh();
      const [A] = await twoKeys(s);
      const at = clock.now().toISOString();
      await s.alerts.insert(A, 'al_1', 'whsec_1', alertValues('one'), at, 20);
      expect(await s.deliveries.enqueue([match('al_1', 't1'), match('al_1', 't2'), match('al_1', 't1')], clock.now())).toBe(2);
      expect(await s.deliveries.enqueue([match('al_1', 't2'), match('al_1', 't3')], clock.now())).toBe(1);
      const due = await s.deliveries.due(clock.now(), 10);
      expect(due.map((d) => JSON.parse(d.payload).transaction.id)).toEqual(['t1', 't2', 't3']);
      const body = JSON.parse(due[0].payload);
      expect(body).toMatchObject({ event: 'new_transaction', alert_id: 'al_1', delivery_id: due[0].id, created_at: at, transaction: match('al_1', 't1').transaction });
      expect(due[0]).toMatchObject({ alert_id: 'al_1', attempts: 0, webhook_url: 'https://hooks.example.org/foncier', secret: 'whsec_1' });
      // Read again: the very same bytes (a receiver's signature check depends on them).
      expect((await s.deliveries.due(clock.now(), 1))[0].payload).toBe(due[0].payload);

      // Claims: a worker is never handed what it holds already, another worker nothing a live claim holds.
      const lease = 30_000;
      const w1 = await s.deliveries.claim('worker-1', clock.now(), 2, lease);
      expect(w1.map((d) => d.id)).toEqual([due[0].id, due[1].id]);
      expect(w1[0].payload).toBe(due[0].payload);
      expect((await s.deliveries.claim('worker-1', clock.now(), 10, lease)).map((d) => d.id)).toEqual([due[2].id]);
      expect(await s.deliveries.claim('worker-2', clock.now(), 10, lease)).toEqual([]);
      expect(await s.deliveries.confirm(w1[0], 'worker-1', lease)).toBe(true);
      expect(await s.deliveries.confirm(w1[0], 'worker-2', lease)).toBe(false);

      const retry = [60_000];
      expect(await s.deliveries.recordAttempt(w1[0], 'worker-1', { status: 204 }, clock.now(), retry)).toBe('succeeded');
      expect(await s.deliveries.recordAttempt(w1[1], 'worker-1', { error: 'timeout' }, clock.now(), retry)).toBe('retry');
      // A graceful stop gives the unsent claims back: another worker takes them; the retried one waits for its delay.
      await s.deliveries.release('worker-1');
      expect((await s.deliveries.due(clock.now(), 10)).map((d) => d.id)).toEqual([due[2].id]);
      expect((await s.deliveries.claim('worker-2', clock.now(), 10, lease)).map((d) => d.id)).toEqual([due[2].id]);
      clock.advance(60_000);
      const again = await s.deliveries.claim('worker-2', clock.now(), 10, lease);
      expect(again.map((d) => [d.id, d.attempts])).toEqual([[due[1].id, 1]]);
      expect(await s.deliveries.confirm(again[0], 'worker-2', lease)).toBe(true);
      expect(await s.deliveries.recordAttempt(again[0], 'worker-2', { status: 500 }, clock.now(), retry)).toBe('failed');
      expect(await s.deliveries.countByStatus()).toEqual({ pending: 1, succeeded: 1, failed: 1 });
      // What remains is held by worker-2: nothing due for anyone until its claim is given back.
      expect(await s.deliveries.anyDue(clock.now(), 'worker-2')).toBe(false);
      expect(await s.deliveries.anyDue(clock.now(), 'worker-1')).toBe(false);
      await s.deliveries.release('worker-2');
      expect(await s.deliveries.anyDue(clock.now(), 'worker-1')).toBe(true);

      const log = await s.deliveries.list('al_1', 10, 0);
      expect(log.total).toBe(3);
      expect(log.items.find((i) => i.id === due[0].id)).toMatchObject({ transaction_id: 't1', status: 'succeeded', attempts: 1, response_status: 204 });
      expect(log.items.find((i) => i.id === due[1].id)).toMatchObject({ transaction_id: 't2', status: 'failed', attempts: 2, response_status: 500 });
    });

    it('a 410 fails the delivery and deactivates its alert, whose other deliveries are then not due', async () => {
      const s = await fresh();
      const [A] = await twoKeys(s);
      await s.alerts.insert(A, 'al_1', 'whsec_1', alertValues('one'), clock.now().toISOString(), 20);
      await s.deliveries.enqueue([match('al_1', 't1'), match('al_1', 't2')], clock.now());
      const [first, second] = await s.deliveries.claim('worker-1', clock.now(), 2, 30_000);
      expect(await s.deliveries.confirm(first, 'worker-1', 30_000)).toBe(true);
      expect(await s.deliveries.recordAttempt(first, 'worker-1', { status: 410 }, clock.now(), [1_000])).toBe('failed');
      // The other delivery, claimed before, is not sent: its alert is no longer active.
      expect(await s.deliveries.confirm(second, 'worker-1', 30_000)).toBe(false);
      expect(await s.alerts.isActive('al_1')).toBe(false);
      expect((await s.alerts.get(A, 'al_1'))!.deactivated_reason).toMatch(/410/);
      expect(await s.deliveries.due(clock.now(), 10)).toEqual([]);
      await s.deliveries.release('worker-1');
      expect(await s.deliveries.claim('worker-2', clock.now(), 10, 30_000)).toEqual([]);
      expect((await s.alerts.active()).map((a) => a.id)).toEqual([]);
    });
  });

  describe('request log', () => {
    it("keep each key's requests, newest first, summed per UTC day and endpoint, pruned by age", async () => {
      const s = await fresh();
      const [A, B] = await twoKeys(s);
      const row = (id: string, at: string, endpoint: string, credits: number, status = 200) => ({ request_id: id, at, endpoint, transport: 'rest' as const, status, credits });
      await s.requestLog.record(A, row('r1', '2026-11-18T23:59:59.999Z', 'GET /v1/stats/market', 2));
      await s.requestLog.record(A, row('r2', '2026-11-19T00:00:00.000Z', 'GET /v1/stats/market', 2));
      await s.requestLog.record(A, row('r3', '2026-11-19T10:00:00.000Z', 'GET /v1/stats/market', 0, 402));
      await s.requestLog.record(A, row('r4', '2026-11-19T11:00:00.000Z', 'GET /v1/heatmap', 5));
      await s.requestLog.record(B, row('r5', '2026-11-19T12:00:00.000Z', 'GET /v1/heatmap', 5));
      expect((await s.requestLog.recent(A, 2)).map((r) => r.request_id)).toEqual(['r4', 'r3']);
      expect((await s.requestLog.recent(A, 10))[0]).toEqual(row('r4', '2026-11-19T11:00:00.000Z', 'GET /v1/heatmap', 5));
      const daily = await s.requestLog.daily(A, '2026-11-19T00:00:00.000Z');
      const byKey = Object.fromEntries(daily.map((d) => [`${d.date} ${d.endpoint}`, [d.requests, d.credits]]));
      expect(byKey).toEqual({ '2026-11-19 GET /v1/stats/market': [2, 2], '2026-11-19 GET /v1/heatmap': [1, 5] });
      await s.requestLog.prune('2026-11-19T00:00:00.000Z');
      expect((await s.requestLog.recent(A, 10)).map((r) => r.request_id)).toEqual(['r4', 'r3', 'r2']);
    });
  });

  describe('service state', () => {
    it('a named value only moves forward', async () => {
      const s = await fresh();
      expect(await s.serviceState.get('alerts.scan.imported_at')).toBeUndefined();
      await s.serviceState.setForward('alerts.scan.imported_at', '2026-11-19T00:00:00.000Z');
      await s.serviceState.setForward('alerts.scan.imported_at', '2026-11-18T00:00:00.000Z');
      expect(await s.serviceState.get('alerts.scan.imported_at')).toBe('2026-11-19T00:00:00.000Z');
      await s.serviceState.setForward('alerts.scan.imported_at', '2026-11-20T00:00:00.000Z');
      expect(await s.serviceState.get('alerts.scan.imported_at')).toBe('2026-11-20T00:00:00.000Z');
    });
  });

  describe('jobs', () => {
    it('run a named job once for the service where the engine is shared, else in every process', async () => {
      const s = await fresh();
      expect(await s.jobs.claim('alerts.scan.daily:2026-11-20', 'process-a', 60_000)).toBe(true);
      // Its holder may claim it again (a retry); another process only where jobs are not shared.
      expect(await s.jobs.claim('alerts.scan.daily:2026-11-20', 'process-a', 60_000)).toBe(true);
      expect(await s.jobs.claim('alerts.scan.daily:2026-11-20', 'process-b', 60_000)).toBe(!engine.jobsOncePerService);
      await s.jobs.finish('alerts.scan.daily:2026-11-20', 'process-a');
      // Finished: not run again where it runs once per service.
      expect(await s.jobs.claim('alerts.scan.daily:2026-11-20', 'process-b', 60_000)).toBe(!engine.jobsOncePerService);
      expect(await s.jobs.claim('alerts.scan.daily:2026-11-21', 'process-b', 60_000)).toBe(true);
    });
  });

  describe('oauth', () => {
    const code = (keyId: string, over: Partial<OAuthCodeRow> = {}): Omit<OAuthCodeRow, 'used_at'> => ({
      code_hash: 'code-1',
      family: 'fam-1',
      key_id: keyId,
      client_id: 'client-a',
      redirect_uri: 'https://agent.example/callback',
      code_challenge: 'challenge',
      scopes: 'read',
      resource: 'https://api.example/mcp',
      expires_at: '2026-11-20T10:05:00.000Z',
      ...over,
    });
    const token = (keyId: string, hash: string, kind: 'access' | 'refresh', family = 'fam-1', clientId = 'client-a'): NewOAuthToken => ({
      token_hash: hash,
      family,
      kind,
      key_id: keyId,
      client_id: clientId,
      scopes: 'read portfolio',
      resource: 'https://api.example/mcp',
      expires_at: kind === 'access' ? '2026-11-20T11:00:00.000Z' : '2026-12-20T10:00:00.000Z',
      created_at: '2026-11-20T10:00:00.000Z',
    });
    async function withClients(s: StateStore): Promise<void> {
      for (const id of ['client-a', 'client-b']) {
        await s.oauth.registerClient({ client_id: id, metadata: JSON.stringify({ client_id: id, client_name: `Agent ${id}` }), created_at: '2026-11-20T09:00:00.000Z' });
      }
    }

    it('register a client; a consent and its code in one step; a code is used once, its reuse deletes its tokens', async () => {
      const s = await fresh();
      const [A] = await twoKeys(s);
      await withClients(s);
      expect(JSON.parse((await s.oauth.getClient('client-a'))!.metadata).client_name).toBe('Agent client-a');
      expect(await s.oauth.getClient('nobody')).toBeUndefined();
      await s.oauth.approve(code(A), '2026-11-20T10:00:00.000Z');
      expect((await s.oauth.findCode('code-1'))?.used_at).toBeNull();
      const used = await s.oauth.useCode('code-1', '2026-11-20T10:00:30.000Z');
      expect(used).toMatchObject({ reused: false, code: { key_id: A, client_id: 'client-a', redirect_uri: 'https://agent.example/callback', code_challenge: 'challenge', expires_at: '2026-11-20T10:05:00.000Z' } });
      expect(await s.oauth.issue([token(A, 'at-1', 'access'), token(A, 'rt-1', 'refresh')])).toBe(true);
      expect(await s.oauth.findToken('at-1')).toMatchObject({ kind: 'access', key_id: A, scopes: 'read portfolio', expires_at: '2026-11-20T11:00:00.000Z', rotated_at: null });
      expect(await s.oauth.useCode('code-1', '2026-11-20T10:01:00.000Z')).toMatchObject({ reused: true });
      expect(await s.oauth.findToken('at-1')).toBeUndefined();
      expect(await s.oauth.findToken('rt-1')).toBeUndefined();
      expect(await s.oauth.useCode('unknown', '2026-11-20T10:01:00.000Z')).toBeUndefined();
    });

    it('tokens are issued only under a consent; concurrent uses of one code: exactly one wins', async () => {
      const s = await fresh();
      const [A, B] = await twoKeys(s);
      await withClients(s);
      expect(await s.oauth.issue([token(B, 'at-x', 'access')])).toBe(false);
      expect(await s.oauth.findToken('at-x')).toBeUndefined();
      await s.oauth.approve(code(A), '2026-11-20T10:00:00.000Z');
      const results = await Promise.all(Array.from({ length: 8 }, () => s.oauth.useCode('code-1', '2026-11-20T10:00:30.000Z')));
      expect(results.filter((r) => r && !r.reused)).toHaveLength(1);
    });

    it('refresh rotation: once per refresh token; its reuse deletes the family; expired or another client’s: refused', async () => {
      const s = await fresh();
      const [A] = await twoKeys(s);
      await withClients(s);
      await s.oauth.approve(code(A), '2026-11-20T10:00:00.000Z');
      await s.oauth.issue([token(A, 'at-1', 'access'), token(A, 'rt-1', 'refresh')]);
      expect(await s.oauth.rotate('rt-1', 'client-b', '2026-11-20T10:10:00.000Z', [])).toBeUndefined();
      expect(await s.oauth.rotate('rt-1', 'client-a', '2026-12-21T10:00:00.000Z', [])).toBeUndefined();
      const r = await s.oauth.rotate('rt-1', 'client-a', '2026-11-20T10:10:00.000Z', [token(A, 'at-2', 'access'), token(A, 'rt-2', 'refresh')]);
      expect(r).toMatchObject({ reused: false, old: { token_hash: 'rt-1', key_id: A, family: 'fam-1' } });
      expect(await s.oauth.findToken('rt-1')).toMatchObject({ rotated_at: '2026-11-20T10:10:00.000Z' });
      expect(await s.oauth.findToken('rt-2')).toMatchObject({ kind: 'refresh', rotated_at: null });
      // Concurrent rotations of rt-2: one rotates, the others are reuses (and the family is gone).
      const all = await Promise.all(Array.from({ length: 4 }, (_, i) => s.oauth.rotate('rt-2', 'client-a', '2026-11-20T10:20:00.000Z', [token(A, `at-3${i}`, 'access')])));
      expect(all.filter((x) => x && !x.reused)).toHaveLength(1);
      expect(all.filter((x) => x?.reused).length).toBeGreaterThan(0);
      for (const h of ['at-1', 'at-2', 'rt-2', 'at-30', 'at-31', 'at-32', 'at-33']) expect(await s.oauth.findToken(h)).toBeUndefined();
    });

    it('revoke a token (a refresh token takes its family along), and a consent with its codes and tokens, scoped per key', async () => {
      const s = await fresh();
      const [A, B] = await twoKeys(s);
      await withClients(s);
      await s.oauth.approve(code(A), '2026-11-20T10:00:00.000Z');
      clock.advance(1000);
      await s.oauth.approve(code(A, { code_hash: 'code-2', family: 'fam-2', client_id: 'client-b', scopes: 'read' }), '2026-11-20T10:00:01.000Z');
      await s.oauth.approve(code(B, { code_hash: 'code-3', family: 'fam-3' }), '2026-11-20T10:00:02.000Z');
      await s.oauth.issue([token(A, 'at-1', 'access'), token(A, 'rt-1', 'refresh'), token(A, 'at-2', 'access', 'fam-2', 'client-b'), token(B, 'at-3', 'access', 'fam-3')]);
      expect(await s.oauth.revokeToken('at-1', 'client-b')).toBe(false);
      expect(await s.oauth.revokeToken('rt-1', 'client-a')).toBe(true);
      expect(await s.oauth.findToken('at-1')).toBeUndefined();
      // Renewed consent keeps its first date and takes the new scopes.
      await s.oauth.approve(code(A, { code_hash: 'code-4', family: 'fam-4', scopes: 'read portfolio' }), '2026-11-20T10:30:00.000Z');
      const grants = await s.oauth.grants(A);
      expect(grants.map((g) => [g.client_id, g.scopes, g.created_at, g.updated_at])).toEqual([
        ['client-a', 'read portfolio', '2026-11-20T10:00:00.000Z', '2026-11-20T10:30:00.000Z'],
        ['client-b', 'read', '2026-11-20T10:00:01.000Z', '2026-11-20T10:00:01.000Z'],
      ]);
      expect(JSON.parse(grants[1].metadata).client_name).toBe('Agent client-b');
      expect(await s.oauth.revokeGrant(A, 'client-b')).toBe(true);
      expect(await s.oauth.revokeGrant(A, 'client-b')).toBe(false);
      expect(await s.oauth.findToken('at-2')).toBeUndefined();
      expect(await s.oauth.findCode('code-2')).toBeUndefined();
      expect(await s.oauth.issue([token(A, 'at-5', 'access', 'fam-2', 'client-b')])).toBe(false);
      // B's consent to the same client is untouched by A's revocations.
      expect(await s.oauth.findToken('at-3')).toMatchObject({ key_id: B });
      expect((await s.oauth.grants(B)).map((g) => g.client_id)).toEqual(['client-a']);
    });

    it('prune deletes the codes and tokens expired before the given time, and nothing else', async () => {
      const s = await fresh();
      const [A] = await twoKeys(s);
      await withClients(s);
      await s.oauth.approve(code(A), '2026-11-20T10:00:00.000Z');
      await s.oauth.issue([token(A, 'at-1', 'access'), token(A, 'rt-1', 'refresh')]);
      await s.oauth.prune('2026-11-20T10:05:00.000Z');
      expect(await s.oauth.findCode('code-1')).toBeDefined();
      await s.oauth.prune('2026-11-20T10:05:00.001Z');
      expect(await s.oauth.findCode('code-1')).toBeUndefined();
      expect(await s.oauth.findToken('at-1')).toBeDefined();
      await s.oauth.prune('2026-11-20T11:00:00.001Z');
      expect(await s.oauth.findToken('at-1')).toBeUndefined();
      expect(await s.oauth.findToken('rt-1')).toBeDefined();
      expect((await s.oauth.grants(A)).map((g) => g.client_id)).toEqual(['client-a']);
    });
  });

  describe('the engine', () => {
    it('serves (nothing pending to refund in a new state), answers ping while open, names itself, and closes', async () => {
      const s = await fresh();
      expect(await s.serve()).toBe(0);
      expect(await s.ping()).toBe(true);
      expect(['sqlite', 'postgresql']).toContain(s.engine);
      expect(s.engine).toBe(engine.name === 'postgres' ? 'postgresql' : 'sqlite');
    });
  });
});
