// Keys, credits and rate limits: hashed keys, atomic charges across processes, idempotent refunds, monthly resets.
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { FixedClock } from '../../../api/clock';
import { creditsField } from '../../../api/credits';
import { RateLimiter } from '../../../api/rate-limit';
import { PLANS, UnknownKeyError } from '../../../api/store';
import { migrationFiles } from '../../../api/store/sqlite/migrate';
import { SqliteState } from '../../../api/store/sqlite';
import { repoRoot } from '../../../lib/config';

const opened: SqliteState[] = [];

function tempDb(): string {
  return path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'foncier-store-')), 'api.sqlite');
}

function open(file = tempDb(), clock = new FixedClock('2026-11-20T10:00:00Z')) {
  const store = new SqliteState(file, clock);
  opened.push(store);
  return { store, clock, credits: store.credits, file };
}

afterEach(() => {
  for (const store of opened.splice(0)) {
    void store.close();
    fs.rmSync(path.dirname(store.file), { recursive: true, force: true });
  }
});

/** The ledger must always explain the balance: what was credited minus what was spent is what is left. */
function expectLedgerExplainsBalance(store: SqliteState, keyId: string): void {
  const k = store.keys.findByIdNow(keyId)!;
  const sums = store.db
    .prepare('select sum(delta) as total, sum(topup_delta) as topup from credit_ledger where key_id = ?')
    .get(keyId) as { total: number; topup: number };
  expect(sums.total).toBe(k.balance + k.topup);
  expect(sums.topup).toBe(k.topup);
}

describe('Store: keys', () => {
  it('stores only the SHA-256 of a key, never the key itself', () => {
    const { store, file } = open();
    const { id, key } = store.keys.createKeyNow({ plan: 'Scale', label: 'Acme prod' });
    expect(key).toMatch(/^fk_live_[0-9A-Za-z]{32}$/);
    expect(id).toMatch(/^key_[0-9A-Za-z]+$/);
    const hash = crypto.createHash('sha256').update(key).digest('hex');
    expect(store.db.prepare('select key_hash from api_keys where id = ?').pluck().get(id)).toBe(hash);
    void store.close();

    // Raw bytes of every file SQLite may have written (main file, WAL, shared memory).
    const dir = path.dirname(file);
    const raw = fs
      .readdirSync(dir)
      .filter((f) => f.startsWith('api.sqlite'))
      .map((f) => fs.readFileSync(path.join(dir, f)).toString('latin1'))
      .join('');
    expect(raw).not.toContain(key);
    expect(raw).not.toContain(key.slice(12)); // not even the secret part without the displayed prefix
    expect(raw).toContain(hash);
  });

  it('finds a key by the key itself, and nothing for a near miss', () => {
    const { store } = open();
    const { id, key } = store.keys.createKeyNow({ plan: 'Indie', label: 'mine' });
    store.keys.createKeyNow({ plan: 'Free' });
    const rec = store.keys.findByKeyNow(key)!;
    expect(rec).toMatchObject({ id, plan: 'Indie', label: 'mine', isActive: true, balance: 2_000, topup: 0, period: '2026-11' });
    expect(rec.prefix).toBe(key.slice(0, 12));
    const nearMiss = key.slice(0, -1) + (key.endsWith('a') ? 'b' : 'a');
    expect(store.keys.findByKeyNow(nearMiss)).toBeUndefined();
    expect(store.keys.findByKeyNow('')).toBeUndefined();
    expect((store.db.prepare('select id from api_keys').all() as Array<{ id: string }>).map((k) => k.id)).toContain(id);
  });

  it('revokes by id or prefix; a revoked key is still found, as inactive', () => {
    const { store, clock } = open();
    const a = store.keys.createKeyNow({ plan: 'Free' });
    const b = store.keys.createKeyNow({ plan: 'Agent' });
    clock.advance(1000);
    expect(store.keys.revokeNow(a.id).alreadyRevoked).toBe(false);
    expect(store.keys.findByKeyNow(a.key)).toMatchObject({ isActive: false, revokedAt: '2026-11-20T10:00:01.000Z' });
    expect(store.keys.findByKeyNow(b.key)!.isActive).toBe(true);
    expect(store.keys.revokeNow(a.id).alreadyRevoked).toBe(true);
    store.keys.revokeNow(b.key.slice(0, 12));
    expect(store.keys.findByKeyNow(b.key)!.isActive).toBe(false);
    expect(() => store.keys.revokeNow('key_nope')).toThrow(UnknownKeyError);
  });

  it('rejects unknown plans, bad balances and non-positive top-ups', () => {
    const { store } = open();
    expect(() => store.keys.createKeyNow({ plan: 'Gold' as never })).toThrow(/unknown plan/);
    expect(() => store.keys.createKeyNow({ plan: 'Free', balance: -1 })).toThrow(RangeError);
    const { id } = store.keys.createKeyNow({ plan: 'Free' });
    expect(() => store.keys.topupNow(id, 0)).toThrow(RangeError);
    expect(() => store.keys.topupNow(id, -5)).toThrow(RangeError);
    expect(() => store.keys.topupNow(id, 1.5)).toThrow(RangeError);
    expect(() => store.keys.topupNow('key_nope', 5)).toThrow(UnknownKeyError);
  });

  it('migrates once and keeps the data when reopened', () => {
    const first = open();
    const { key } = first.store.keys.createKeyNow({ plan: 'Enterprise' });
    void first.store.close();
    const again = open(first.file);
    expect(again.store.db.pragma('user_version', { simple: true })).toBe(migrationFiles().length);
    expect(again.store.db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(again.store.keys.findByKeyNow(key)!.balance).toBe(PLANS.Enterprise.monthly);
  });
});

describe('Credits', () => {
  it('charges, refuses without debiting when short, and refunds a request once', () => {
    const { store, credits } = open();
    const { id } = store.keys.createKeyNow({ plan: 'Free' });
    expect(credits.chargeNow(id, 30, 'r1')).toEqual({ ok: true, used: 30, remaining: 70 });
    expect(credits.chargeNow(id, 80, 'r2')).toEqual({ ok: false, remaining: 70 });
    expect(credits.balanceNow(id)!.remaining).toBe(70);
    expect(credits.chargeNow(id, 0, 'r3')).toEqual({ ok: true, used: 0, remaining: 70 });

    expect(credits.refundNow(id, 30, 'r1')).toEqual({ refunded: 30, remaining: 100 });
    expect(credits.refundNow(id, 30, 'r1')).toEqual({ refunded: 0, remaining: 100 });
    // Never charged: nothing to give back, whatever the caller claims.
    expect(credits.refundNow(id, 80, 'r2')).toEqual({ refunded: 0, remaining: 100 });
    expect(credits.refundNow(id, 5, 'never-seen')).toEqual({ refunded: 0, remaining: 100 });
    // A refund never exceeds the charge.
    credits.chargeNow(id, 10, 'r4');
    expect(credits.refundNow(id, 50, 'r4')).toEqual({ refunded: 10, remaining: 100 });

    const reasons = store.db.prepare('select reason from credit_ledger where key_id = ? order by id').pluck().all(id);
    expect(reasons).toEqual(['create', 'charge', 'refund', 'charge', 'refund']);
    expectLedgerExplainsBalance(store, id);
    expect(() => credits.chargeNow(id, -1, 'r5')).toThrow(RangeError);
    expect(() => credits.chargeNow('key_nope', 1, 'r6')).toThrow(/unknown key/);
  });

  it('spends the monthly allotment before top-ups, and refunds to the bucket charged', () => {
    const { store, credits } = open();
    const { id } = store.keys.createKeyNow({ plan: 'Free', balance: 5 });
    store.keys.topupNow(id, 10);
    expect(credits.chargeNow(id, 8, 'a')).toEqual({ ok: true, used: 8, remaining: 7 });
    expect(credits.balanceNow(id)).toMatchObject({ monthly: 0, topup: 7, remaining: 7 });
    expect(credits.chargeNow(id, 8, 'b')).toEqual({ ok: false, remaining: 7 });
    credits.refundNow(id, 8, 'a');
    expect(credits.balanceNow(id)).toMatchObject({ monthly: 5, topup: 10 });
    expectLedgerExplainsBalance(store, id);
  });

  it('resets the allotment on the 1st of the month (UTC), keeps top-ups, and resets once per month', () => {
    const { store, credits, clock } = open(undefined, new FixedClock('2026-01-15T12:00:00Z'));
    const { id } = store.keys.createKeyNow({ plan: 'Indie' });
    credits.chargeNow(id, 1_500, 'a');
    store.keys.topupNow(id, 300);
    expect(credits.chargeNow(id, 600, 'b')).toEqual({ ok: true, used: 600, remaining: 200 });
    expect(credits.balanceNow(id)).toMatchObject({ monthly: 0, topup: 200 });

    clock.set('2026-01-31T23:59:59.999Z');
    expect(credits.balanceNow(id)!.remaining).toBe(200);
    clock.set('2026-02-01T00:00:00Z');
    // Reading shows the reset the next charge will apply, without writing it.
    expect(credits.balanceNow(id)).toMatchObject({ monthly: 2_000, topup: 200, remaining: 2_200, period: '2026-02' });
    expect(store.keys.findByIdNow(id)!.period).toBe('2026-01');
    expect(credits.chargeNow(id, 1, 'c')).toEqual({ ok: true, used: 1, remaining: 2_199 });
    expect(store.keys.findByIdNow(id)).toMatchObject({ balance: 1_999, topup: 200, period: '2026-02' });
    clock.advance(3_600_000);
    credits.chargeNow(id, 1, 'd');
    expect(store.keys.findByIdNow(id)!.balance).toBe(1_998); // no second reset within the month

    // Unused credits do not roll over; months without use reset once.
    clock.set('2026-05-10T08:00:00Z');
    expect(credits.chargeNow(id, 10, 'e')).toEqual({ ok: true, used: 10, remaining: 2_190 });
    // A clock running backwards must not reset again.
    clock.set('2026-04-30T23:00:00Z');
    credits.chargeNow(id, 10, 'f');
    expect(store.keys.findByIdNow(id)).toMatchObject({ balance: 1_980, topup: 200, period: '2026-05' });

    const resets = store.db
      .prepare(`select at, delta from credit_ledger where key_id = ? and reason = 'reset' order by id`)
      .all(id);
    expect(resets).toEqual([
      { at: '2026-02-01T00:00:00.000Z', delta: 2_000 },
      { at: '2026-05-10T08:00:00.000Z', delta: 2 },
    ]);
    expectLedgerExplainsBalance(store, id);
  });

  it('refunds a charge made before a reset without losing credits', () => {
    const { store, credits, clock } = open(undefined, new FixedClock('2026-03-31T23:59:59.900Z'));
    const { id } = store.keys.createKeyNow({ plan: 'Free' });
    credits.chargeNow(id, 10, 'late');
    clock.set('2026-04-01T00:00:00.100Z');
    expect(credits.refundNow(id, 10, 'late')).toEqual({ refunded: 10, remaining: 110 });
    expectLedgerExplainsBalance(store, id);
  });

  it('adds a note below 20 remaining credits, with the next reset date', () => {
    const clock = new FixedClock('2026-11-20T10:00:00Z');
    expect(creditsField(5, 12, clock.now())).toEqual({
      used: 5,
      remaining: 12,
      note: '12 credits left; the balance resets on 2026-12-01.',
    });
    expect(creditsField(5, 20, clock.now())).toEqual({ used: 5, remaining: 20 });
    expect(creditsField(5, 19, clock.now()).note).toBe('19 credits left; the balance resets on 2026-12-01.');
    expect(creditsField(2, 1, clock.now()).note).toBe('1 credit left; the balance resets on 2026-12-01.');
    clock.set('2026-12-31T23:59:59Z');
    expect(creditsField(10, 0, clock.now()).note).toBe('0 credits left; the balance resets on 2027-01-01.');
  });

  it('200 concurrent charges from 4 processes on a key with 100 credits: exactly 100 succeed', async () => {
    const { store, credits, file } = open(undefined, new FixedClock(new Date()));
    const { id } = store.keys.createKeyNow({ plan: 'Free' });
    const workers = 4;
    const perWorker = 50;
    const storeUrl = pathToFileURL(path.join(repoRoot, 'api', 'store', 'index.ts')).href;
    // Each child opens its own connection, reports ready, then waits for a common start instant so the charges overlap.
    const childCode = `
      import { openStore } from ${JSON.stringify(storeUrl)};
      const [file, keyId, worker, n] = process.argv.slice(1);
      const store = openStore({ file });
      const credits = store.credits;
      process.stdout.write('ready\\n');
      process.stdin.once('data', async (buf) => {
        const startAt = Number(String(buf).trim());
        while (Date.now() < startAt) {}
        let ok = 0, refused = 0;
        for (let i = 0; i < Number(n); i++) {
          (await credits.charge(keyId, 1, worker + '-' + i)).ok ? ok++ : refused++;
          // A pause between charges spreads each worker's charges over the same stretch of time as the others'.
          await new Promise((r) => setTimeout(r, 1));
        }
        await store.close();
        process.stdout.write(JSON.stringify({ ok, refused }) + '\\n');
        process.stdin.destroy();
      });
    `;
    const children = Array.from({ length: workers }, (_, w) => {
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', '--input-type=module', '-e', childCode, file, id, `w${w}`, String(perWorker)],
        { cwd: repoRoot, stdio: ['pipe', 'pipe', 'inherit'] },
      );
      let out = '';
      const ready = new Promise<void>((resolve) => child.stdout.on('data', (d) => (out += d) && out.includes('ready\n') && resolve()));
      const done = new Promise<{ ok: number; refused: number }>((resolve, reject) =>
        child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out.split('\n').filter(Boolean).at(-1)!)) : reject(new Error(`worker exit ${code}`)))),
      );
      return { child, ready, done };
    });
    await Promise.all(children.map((c) => c.ready));
    const startAt = Date.now() + 150;
    for (const c of children) c.child.stdin.write(`${startAt}\n`);
    const results = await Promise.all(children.map((c) => c.done));

    expect(results.reduce((s, r) => s + r.ok, 0)).toBe(100);
    // Evidence that the workers really raced: several of them obtained credits.
    expect(results.filter((r) => r.ok > 0).length).toBeGreaterThanOrEqual(2);
    expect(results.reduce((s, r) => s + r.refused, 0)).toBe(100);
    expect(credits.balanceNow(id)!.remaining).toBe(0);
    expect(store.keys.findByIdNow(id)).toMatchObject({ balance: 0, topup: 0 });
    const charges = store.db
      .prepare(`select count(*) as n, sum(delta) as total, count(distinct request_id) as ids from credit_ledger where key_id = ? and reason = 'charge'`)
      .get(id);
    expect(charges).toEqual({ n: 100, total: -100, ids: 100 });
    expectLedgerExplainsBalance(store, id);
  });
});

describe('RateLimiter', () => {
  it('allows 60 requests in a sliding minute, refuses the 61st with Retry-After, and frees up as time passes', () => {
    const clock = new FixedClock('2026-11-20T10:00:00Z');
    const limiter = new RateLimiter(clock);
    const first = limiter.hit('k1', PLANS.Scale.rpm);
    expect(first).toEqual({ allowed: true, limit: 60, remaining: 59, retryAfterSeconds: 0 });
    clock.advance(30_000);
    for (let i = 1; i < 60; i++) expect(limiter.hit('k1', 60).allowed).toBe(true);
    const refused = limiter.hit('k1', 60);
    expect(refused).toMatchObject({ allowed: false, limit: 60, remaining: 0 });
    // The oldest hit leaves the window 30 s from now.
    expect(refused.retryAfterSeconds).toBe(30);
    // Other keys have their own window.
    expect(limiter.hit('k2', 60).allowed).toBe(true);

    clock.advance(29_500);
    expect(limiter.hit('k1', 60)).toMatchObject({ allowed: false, retryAfterSeconds: 1 });
    clock.advance(500);
    expect(limiter.hit('k1', 60)).toMatchObject({ allowed: true, remaining: 0 });
    expect(limiter.hit('k1', 60).allowed).toBe(false);
    // Sliding, not fixed: the 59 later hits are still in the window until 60 s after they were made.
    clock.advance(60_000);
    expect(limiter.hit('k1', 60)).toMatchObject({ allowed: true, remaining: 59 });
  });

  it('gives Enterprise 120 requests a minute', () => {
    const clock = new FixedClock();
    const limiter = new RateLimiter(clock);
    for (let i = 0; i < PLANS.Enterprise.rpm; i++) expect(limiter.hit('ent', PLANS.Enterprise.rpm).allowed).toBe(true);
    const refused = limiter.hit('ent', PLANS.Enterprise.rpm);
    expect(refused).toMatchObject({ allowed: false, limit: 120 });
    expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    clock.advance(60_000);
    expect(limiter.hit('ent', 120).allowed).toBe(true);
  });
});
