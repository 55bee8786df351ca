// What several replicas share on PostgreSQL, with one pool per simulated replica on a real server: migrations, exact
// timestamps, credits under concurrency, the heartbeat lease refunding a dead replica's charges, the cross-replica rate
// limit, delivery claims and once-per-service jobs. (The multi-process tests spawn the API server itself.)
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../../api/clock';
import { PgCredits } from '../../../api/store/postgres/credits';
import { anyDue, claimDue, confirmClaim, enqueue, recordAttempt } from '../../../api/store/postgres/deliveries';
import { PgJobs } from '../../../api/store/postgres/jobs';
import { PgKeys } from '../../../api/store/postgres/keys';
import { migrate, migrationFiles, openPool } from '../../../api/store/postgres/pool';
import { PgRateLimiter } from '../../../api/store/postgres/rate-limit';
import { ReplicaLease } from '../../../api/store/postgres/replicas';
import type { Match } from '../../../api/webhooks/queue';
import { startPostgres, type TestPostgres } from '../../helpers/postgres';

let server: TestPostgres;
let url: string;
const pools: pg.Pool[] = [];
const pool = () => {
  const p = openPool(url, { max: 8 });
  pools.push(p);
  return p;
};

beforeAll(async () => {
  server = await startPostgres();
  url = server.url;
});
afterAll(async () => {
  await Promise.all(pools.map((p) => p.end()));
  await server?.stop();
});

describe('migrations', () => {
  it('run once even when three replicas start together, and record every version', async () => {
    const versions = await Promise.all([migrate(pool()), migrate(pool()), migrate(pool())]);
    expect(versions).toEqual([migrationFiles().length, migrationFiles().length, migrationFiles().length]);
    const { rows } = await pool().query('select version from schema_migrations order by version');
    expect(rows.map((r) => r.version)).toEqual(migrationFiles().map((f) => f.version));
  });

  it('return timestamps exactly as written (ISO 8601 UTC, milliseconds)', async () => {
    const p = pool();
    const keys = new PgKeys(p, new FixedClock('2026-03-01T00:00:00.100Z'));
    const { id } = await keys.createKey({ plan: 'Free' });
    expect((await keys.findById(id))!.createdAt).toBe('2026-03-01T00:00:00.100Z');
    for (const iso of ['2026-11-28T23:12:51.123Z', '2026-11-28T23:12:51.000Z', '1999-12-31T23:59:59.999Z']) {
      const { rows } = await p.query('select $1::timestamptz as t', [iso]);
      expect(rows[0].t).toBe(iso);
    }
  });
});

describe('credits across replicas', () => {
  it('never overspend: 1,500 concurrent charges through three pools leave start − accepted, never negative', async () => {
    const clock = new FixedClock('2026-05-10T08:00:00Z');
    const replicas = [pool(), pool(), pool()].map((p, i) => new PgCredits(p, clock, `replica-${i}`));
    const keys = new PgKeys(pools[0], clock);
    const start = 1_000;
    const ids = await Promise.all([0, 1, 2].map(() => keys.createKey({ plan: 'Scale', balance: start }).then((k) => k.id)));
    const spent = new Map(ids.map((id) => [id, 0]));
    let refused = 0;
    await Promise.all(
      Array.from({ length: 1_500 }, async (_, i) => {
        const keyId = ids[i % 3];
        const cost = 1 + (i % 4);
        const r = await replicas[i % 3].hold(keyId, cost, `req-${i}`);
        if (!r.ok) {
          // Refused only when the key truly lacked the credits at that moment.
          expect(r.remaining).toBeLessThan(cost);
          refused++;
          return;
        }
        // Every fifth one fails (a 5xx): refunded; the others are kept.
        if (i % 5 === 0) await replicas[(i + 1) % 3].refundCharge(r.chargeId);
        else {
          await replicas[i % 3].keep(r.chargeId);
          spent.set(keyId, spent.get(keyId)! + cost);
        }
      }),
    );
    // Demand (≈ 1,250 credits kept per key) exceeded the balance: keys ran dry rather than going negative.
    expect(refused).toBeGreaterThan(0);
    // The check docs/deploying.md gives operators: no key whose ledger does not explain its balance.
    const { rows: unbalanced } = await pools[0].query(
      `select k.id from api_keys k join credit_ledger l on l.key_id = k.id group by k.id, k.balance, k.topup having sum(l.delta) <> k.balance + k.topup`,
    );
    expect(unbalanced).toEqual([]);
    for (const id of ids) {
      const k = (await keys.findById(id))!;
      expect(k.balance + k.topup).toBe(start - spent.get(id)!);
      expect(k.balance).toBeGreaterThanOrEqual(0);
      const { rows } = await pools[0].query(`select sum(delta)::bigint as total, count(*) filter (where settled = 'pending')::int as pending from credit_ledger where key_id = $1`, [id]);
      expect(rows[0]).toEqual({ total: start - spent.get(id)!, pending: 0 });
    }
  });

  it('a dead replica\'s pending charges are refunded by a live one once its lease expires, and only then', async () => {
    const clock = new FixedClock('2026-05-10T08:00:00Z');
    const [pa, pb] = [pool(), pool()];
    let creditsA!: PgCredits;
    let creditsB!: PgCredits;
    const leaseA = new ReplicaLease(pa, () => creditsA, { leaseMs: 400 });
    const leaseB = new ReplicaLease(pb, () => creditsB, { leaseMs: 400 });
    creditsA = new PgCredits(pa, clock, leaseA.id);
    creditsB = new PgCredits(pb, clock, leaseB.id);
    await leaseA.beat();
    await leaseB.beat();
    const keys = new PgKeys(pa, clock);
    const { id } = await keys.createKey({ plan: 'Indie', balance: 100 });
    const held = [];
    for (let i = 0; i < 5; i++) held.push(await creditsA.hold(id, 3, `dying-${i}`));
    const kept = await creditsB.hold(id, 7, 'alive');
    expect((await keys.findById(id))!.balance).toBe(100 - 15 - 7);

    // A is alive (its lease holds): B's beat leaves its charges alone.
    await leaseB.beat();
    expect((await keys.findById(id))!.balance).toBe(100 - 15 - 7);
    // A stops beating (SIGKILL): once its lease is over, B's next beat refunds its five charges, and not B's own.
    await new Promise((r) => setTimeout(r, 500));
    expect(await leaseB.settleDead()).toBe(5);
    expect((await keys.findById(id))!.balance).toBe(100 - 7);
    expect(await leaseB.settleDead()).toBe(0);
    // A late keep by A (it was only frozen) does not take back what was refunded.
    for (const h of held) if (h.ok) await creditsA.keep(h.chargeId);
    if (kept.ok) await creditsB.keep(kept.chargeId);
    const { rows } = await pa.query(`select settled, count(*)::int as n from credit_ledger where key_id = $1 and reason = 'charge' group by settled order by settled`, [id]);
    expect(rows).toEqual([{ settled: 'kept', n: 1 }, { settled: 'refunded', n: 5 }]);
    expect((await keys.findById(id))!.balance).toBe(100 - 7);
    await leaseB.stop();
  });
});

describe('rate limit across replicas', () => {
  it('accepts exactly the limit in a window whichever replica counts, then tells when to retry', async () => {
    const clock = new FixedClock('2026-05-10T08:00:00Z');
    const limiters = [pool(), pool(), pool()].map((p) => new PgRateLimiter(p, clock));
    const first = await Promise.all(Array.from({ length: 200 }, (_, i) => limiters[i % 3].hit('key_rl', 120)));
    expect(first.filter((d) => d.allowed)).toHaveLength(120);
    expect(first.filter((d) => d.allowed).map((d) => d.remaining).sort((a, b) => a - b)).toEqual(Array.from({ length: 120 }, (_, i) => i));
    expect(first.find((d) => !d.allowed)).toEqual({ allowed: false, limit: 120, remaining: 0, retryAfterSeconds: 60 });
    // Another key is counted on its own.
    expect((await limiters[1].hit('key_other', 120)).remaining).toBe(119);
    // 30 s later half of nothing has expired; 60 s after the first hits, the window is free again.
    clock.advance(30_000);
    expect(await limiters[2].hit('key_rl', 120)).toMatchObject({ allowed: false, retryAfterSeconds: 30 });
    clock.advance(30_000);
    const again = await Promise.all(Array.from({ length: 130 }, (_, i) => limiters[i % 3].hit('key_rl', 120)));
    expect(again.filter((d) => d.allowed)).toHaveLength(120);
  });
});

describe('webhook deliveries across replicas', () => {
  async function seedAlert(p: pg.Pool, keyId: string, alertId: string): Promise<void> {
    await p.query(
      `insert into alerts (id, key_id, seq, webhook_url, secret, is_active, created_at, updated_at) values ($1, $2, 1, 'https://example.test/x', 'whsec_x', true, now(), now())`,
      [alertId, keyId],
    );
  }
  const tx = (i: number): Match['transaction'] => ({
    id: `t${i}`, date_mutation: '2025-01-02', valeur_fonciere: 200_000 + i, prix_m2: 3_000.5, type_local: 'Appartement', surface_reelle_bati: 66,
    nombre_pieces_principales: 3, commune: 'Bordeaux', code_postal: '33000', latitude: 44.8, longitude: -0.57,
  });

  it('each due delivery is claimed by one replica only; an expired claim is taken over; a stale holder cannot record', async () => {
    const clock = new FixedClock('2026-05-10T08:00:00Z');
    const p = pool();
    const { id: keyId } = await new PgKeys(p, clock).createKey({ plan: 'Free' });
    await seedAlert(p, keyId, 'alert_claims');
    const matches = Array.from({ length: 300 }, (_, i) => ({ alert_id: 'alert_claims', transaction: tx(i) }));
    expect(await enqueue(p, matches, clock.now())).toBe(300);
    expect(await enqueue(p, matches.slice(0, 10), clock.now())).toBe(0);

    const replicas = [pool(), pool(), pool()];
    const claimed = await Promise.all(Array.from({ length: 12 }, (_, i) => claimDue(replicas[i % 3], `r${i % 3}`, clock.now(), 40, 60_000)));
    const all = claimed.flat().map((d) => d.id);
    expect(all).toHaveLength(300);
    expect(new Set(all).size).toBe(300);
    expect(await anyDue(p, clock.now())).toBe(false);
    // The body is the SQLite queue's, rebuilt from the row.
    const one = claimed.flat().find((d) => JSON.parse(d.payload).transaction.id === 't7')!;
    expect(JSON.parse(one.payload)).toEqual({ event: 'new_transaction', alert_id: 'alert_claims', delivery_id: one.id, created_at: '2026-05-10T08:00:00.000Z', transaction: tx(7) });

    // r0 claims one more with a short lease and dies; after the lease r1 takes it over; r0's late record is refused.
    const owner0 = claimed.findIndex((c) => c.length > 0);
    const d = claimed[owner0][0];
    const holder = `r${owner0 % 3}`;
    await p.query(`update alert_deliveries set claimed_until = clock_timestamp() - interval '1 second' where seq = $1`, [d.seq]);
    const [taken] = await claimDue(replicas[1], 'r-new', clock.now(), 5, 60_000);
    expect(taken.id).toBe(d.id);
    expect(await confirmClaim(p, d, holder, 60_000)).toBe(false);
    expect(await recordAttempt(p, d, holder, { status: 204 }, clock.now(), [60_000])).toBe('lost');
    expect(await confirmClaim(p, taken, 'r-new', 60_000)).toBe(true);
    expect(await recordAttempt(p, taken, 'r-new', { status: 204 }, clock.now(), [60_000])).toBe('succeeded');
    // A retry is due again after its delay, for whoever claims it then.
    const [other] = claimed[(owner0 + 1) % 12].length ? claimed[(owner0 + 1) % 12] : claimed.flat().filter((x) => x.id !== d.id);
    const otherOwner = `r${claimed.findIndex((c) => c.some((x) => x.id === other.id)) % 3}`;
    expect(await recordAttempt(p, other, otherOwner, { status: 500 }, clock.now(), [60_000])).toBe('retry');
    clock.advance(60_000);
    const [retried] = await claimDue(replicas[2], 'r2', clock.now(), 5, 60_000);
    expect(retried).toMatchObject({ id: other.id, attempts: 1 });
  });
});

describe('once-per-service jobs', () => {
  it('one replica of three runs a job; another takes it over only when unfinished past its lease', async () => {
    const replicas = [pool(), pool(), pool()].map((p) => new PgJobs(p));
    const won = await Promise.all(replicas.map((j, i) => j.claim('scan:build-1', `r${i}`, 300)));
    expect(won.filter(Boolean)).toHaveLength(1);
    const winner = won.indexOf(true);
    expect(await replicas[(winner + 1) % 3].claim('scan:build-1', 'late', 300)).toBe(false);
    await new Promise((r) => setTimeout(r, 400));
    expect(await replicas[(winner + 1) % 3].claim('scan:build-1', 'heir', 300)).toBe(true);
    expect(await replicas[winner].renew('scan:build-1', `r${winner}`, 300)).toBe(false);
    await replicas[0].finish('scan:build-1', 'heir');
    await new Promise((r) => setTimeout(r, 400));
    expect(await replicas[2].claim('scan:build-1', 'after', 300)).toBe(false);
  });
});
