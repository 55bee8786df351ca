// API replicas over one PostgreSQL, as real processes (api/server.ts) with their own data folders: credits exact and
// the rate limit per key across replicas under thousands of concurrent calls, a replica killed with SIGKILL whose
// pending charges a live replica refunds once its lease expired, a graceful SIGTERM settling its charges, /health, the
// keys CLI on DATABASE_URL, and each key's portfolio and alerts isolated whichever replica answers.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../../api/clock';
import { PgCredits } from '../../../api/store/postgres/credits';
import { PgKeys } from '../../../api/store/postgres/keys';
import { migrate, openPool } from '../../../api/store/postgres/pool';
import { repoRoot } from '../../../lib/config';
import { testData } from '../../helpers/data';
import { startPostgres, type TestPostgres } from '../../helpers/postgres';
import { killReplicas, startReplica, until, type Replica } from '../../helpers/replicas';

let server: TestPostgres;
let pool: pg.Pool;
let keys: PgKeys;
let credits: PgCredits;
let replicas: Replica[];
// The long-lived replicas beat every 3 s (a 10 s lease: a busy machine never makes them look dead to each other); the
// replica killed in a test has a 1.5 s lease, so that its charges are refunded within seconds.
const LEASE_MS = 10_000;
const SHORT_LEASE_MS = 1_500;

const replicaEnv = async (leaseMs = LEASE_MS) => ({ DATA_DIR: await testData('sample'), DATABASE_URL: server.url, STATE_LEASE_MS: String(leaseMs) });

/** The replica's row in `replicas` (its id is the owner of its charges), once it registered. */
async function replicaIdOf(r: Replica): Promise<string> {
  let id: string | undefined;
  await until(async () => {
    id = (await pool.query<{ id: string }>(`select id from replicas where pid = $1`, [r.child.pid])).rows[0]?.id;
    return id !== undefined;
  }, 10_000, 'the replica to register');
  return id!;
}

beforeAll(async () => {
  server = await startPostgres();
  pool = openPool(server.url, { max: 4 });
  await migrate(pool);
  keys = new PgKeys(pool, systemClock);
  credits = new PgCredits(pool, systemClock, 'test');
  replicas = await Promise.all([0, 1, 2].map(async () => startReplica(await replicaEnv())));
}, 120_000);

afterAll(async () => {
  await killReplicas();
  await pool?.end();
  await server?.stop();
});

const PATHS = [
  '/v1/stats/market?code_postal=33230&date_debut=2021-01-01&date_fin=2021-12-31', // 5 credits, cached after the first
  '/v1/transactions?code_postal=33230&limit=20', // 5 credits
  '/v1/transactions/999999999999', // 404 not_found: its 2 credits are refunded
];

interface Outcome {
  status: number;
  /** The error body's code. */
  code?: string;
  used: number;
  headers: Headers;
}

async function call(r: Replica, key: string, p: string): Promise<Outcome | undefined> {
  const res = await fetch(r.url + p, { headers: { 'X-API-Key': key } }).catch(() => undefined);
  if (!res) return undefined;
  const body = (await res.json().catch(() => undefined)) as { _credits?: { used: number }; error?: { code: string } } | undefined;
  if (!body) return undefined;
  return { status: res.status, code: body.error?.code, used: res.status < 300 ? (body._credits?.used ?? 0) : 0, headers: res.headers };
}

const pendingCharges = async (owner?: string) =>
  (await pool.query<{ n: number }>(`select count(*)::int as n from credit_ledger where settled = 'pending' ${owner ? 'and owner = $1' : ''}`, owner ? [owner] : [])).rows[0].n;

describe('three replicas on one PostgreSQL', () => {
  it('report the state engine in /health', async () => {
    for (const r of replicas) {
      const res = await fetch(`${r.url}/health`);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { state_database: unknown }).state_database).toEqual({ engine: 'postgresql', reachable: true });
    }
  });

  it('charge every key exactly the credits of the answers it received, and hold its rate limit across replicas', async () => {
    // Enterprise: 120 requests a minute. Four keys with credits to spare (the rate limit decides), four that run dry.
    const rich = await Promise.all(Array.from({ length: 4 }, () => keys.createKey({ plan: 'Enterprise', balance: 100_000 })));
    const poor = await Promise.all(Array.from({ length: 4 }, () => keys.createKey({ plan: 'Enterprise', balance: 203 })));
    const all = [...rich, ...poor];
    const CALLS = 250; // per key: 2,000 calls, 12 in flight per key, spread over the three replicas
    const outcomes = new Map<string, Outcome[]>(all.map((k) => [k.id, []]));
    const started = Date.now();
    await Promise.all(
      all.flatMap((k, ki) =>
        Array.from({ length: 12 }, async (_, w) => {
          for (let i = w; i < CALLS; i += 12) {
            const o = await call(replicas[(ki + i) % 3], k.key, PATHS[i % PATHS.length]);
            if (o) outcomes.get(k.id)!.push(o);
          }
        }),
      ),
    );
    // The whole burst within one window, or the exact count below would not be the rule.
    expect(Date.now() - started).toBeLessThan(55_000);
    // Keeps are written right after each answer: give the last ones a moment.
    await until(async () => (await pendingCharges()) === 0, 5_000, 'the last charges to settle');

    for (const k of all) {
      const got = outcomes.get(k.id)!;
      expect(got).toHaveLength(CALLS);
      // No server error but at_capacity, refused before any charge (a charged 5xx is refunded too, and would blur the
      // refund count below).
      expect(got.filter((o) => o.status >= 500 && o.code !== 'at_capacity').map((o) => `${o.status} ${o.code}`)).toEqual([]);
      const limited = got.filter((o) => o.status === 429);
      // Exactly the limit across the three replicas: 120 accepted (charged, refused for credits or refunded), the rest
      // 429s, but for the at_capacity refusals, which come before the rate limit and do not count against it.
      const refused = got.filter((o) => o.code === 'at_capacity');
      expect(got.length - limited.length - refused.length).toBe(120);
      expect(limited.every((o) => o.headers.get('x-ratelimit-limit') === '120' && o.headers.get('x-ratelimit-remaining') === '0' && Number(o.headers.get('retry-after')) >= 1)).toBe(true);
      const start = rich.includes(k) ? 100_000 : 203;
      const used = got.reduce((s, o) => s + o.used, 0);
      const b = (await credits.balance(k.id))!;
      expect(b.remaining).toBe(start - used);
      if (poor.includes(k)) {
        // Ran dry without going negative: 402s once fewer credits were left than a call costs.
        expect(got.some((o) => o.status === 402)).toBe(true);
        expect(b.remaining).toBeGreaterThanOrEqual(0);
        expect(b.remaining).toBeLessThan(5);
      }
      // The ledger explains the balance, and every 404 was refunded.
      const { rows } = await pool.query(
        `select sum(delta)::bigint as total, count(*) filter (where reason = 'refund')::int as refunds from credit_ledger where key_id = $1`,
        [k.id],
      );
      expect(rows[0].total).toBe(b.remaining);
      expect(rows[0].refunds).toBe(got.filter((o) => o.status === 404).length);
    }
    // The 2xx answers came from all three replicas' pools of connections (one ledger, three writers).
    const { rows: owners } = await pool.query(`select count(distinct owner)::int as n from credit_ledger where reason = 'charge'`);
    expect(owners[0].n).toBe(3);
  }, 90_000);

  it('refunds a SIGKILLed replica\'s pending charges from a live replica once its lease expired, never charging more than answered', async () => {
    const victim = await startReplica(await replicaEnv(SHORT_LEASE_MS));
    const victimId = await replicaIdOf(victim);
    const ks = await Promise.all(Array.from({ length: 4 }, () => keys.createKey({ plan: 'Enterprise', balance: 10_000 })));
    const received = new Map(ks.map((k) => [k.id, 0]));
    let stop = false;
    const clients = ks.flatMap((k) =>
      Array.from({ length: 6 }, async (_, c) => {
        for (let i = 0; !stop && i < 40; i++) {
          const o = await call(victim, k.key, PATHS[(c + i) % 2]);
          if (!o) return;
          received.set(k.id, received.get(k.id)! + o.used);
        }
      }),
    );
    // Killed while charges of its are pending (between a charge and its settlement).
    let pendingAtKill = 0;
    await until(async () => (pendingAtKill = await pendingCharges(victimId)) > 0, 20_000, 'pending charges on the victim');
    // Its lease as last renewed before the kill (a beat between this read and the kill only makes it later).
    const { rows: lease } = await pool.query<{ expires_at: string }>(`select expires_at from replicas where id = $1`, [victimId]);
    await victim.kill('SIGKILL');
    stop = true;
    await Promise.all(clients);
    expect(pendingAtKill).toBeGreaterThan(0);
    // What the test is about: charges the dead replica took and never settled, refunded by the others (no restart).
    // The live replicas look at each beat (every third of their 10 s lease).
    await until(async () => (await pendingCharges(victimId)) === 0, 20_000, 'a live replica to refund the dead one\'s charges');
    const { rows: refunds } = await pool.query<{ n: number; first: string }>(
      `select count(*)::int as n, min(r.at) as first from credit_ledger r join credit_ledger c on c.id = r.charge_id
       where r.reason = 'refund' and c.owner = $1 and c.request_id is not null`,
      [victimId],
    );
    expect(refunds[0].n).toBeGreaterThan(0);
    // Not before its lease expired (no row: a loaded machine had already let it lapse before the kill).
    const expiredAt = lease.length ? new Date(lease[0].expires_at).getTime() : 0;
    expect(new Date(refunds[0].first).getTime()).toBeGreaterThanOrEqual(expiredAt);
    let undercharged = 0;
    for (const k of ks) {
      const drop = 10_000 - (await credits.balance(k.id))!.remaining;
      expect(drop).toBeLessThanOrEqual(received.get(k.id)!);
      undercharged += received.get(k.id)! - drop;
    }
    // Answers written but whose keep had not committed when the process died are refunded: the client's gain, a few.
    expect(undercharged).toBeLessThanOrEqual(5 * 24);
    expect((await pool.query(`select 1 from replicas where id = $1`, [victimId])).rows).toHaveLength(0);
  }, 60_000);

  it('settles every charge of a replica stopped with SIGTERM before it exits', async () => {
    const leaving = await startReplica(await replicaEnv());
    const leavingId = await replicaIdOf(leaving);
    const k = await keys.createKey({ plan: 'Enterprise', balance: 10_000 });
    let received = 0;
    let answered = 0;
    const clients = Array.from({ length: 8 }, async (_, c) => {
      for (let i = 0; i < 12; i++) {
        const o = await call(leaving, k.key, PATHS[(c + i) % 2]);
        if (!o) return;
        answered++;
        received += o.used;
      }
    });
    await until(async () => answered >= 10, 20_000, 'a few answers');
    const exit = await leaving.kill('SIGTERM');
    await Promise.all(clients);
    expect(exit).toBe(0);
    // Nothing left for the others to refund: it settled its own charges and gave its lease up.
    expect(await pendingCharges(leavingId)).toBe(0);
    expect((await pool.query(`select 1 from replicas where id = $1`, [leavingId])).rows).toHaveLength(0);
    expect(10_000 - (await credits.balance(k.id))!.remaining).toBe(received);
  }, 60_000);

  it('`npm run keys` works on DATABASE_URL: the key it creates is accepted by every replica', async () => {
    const run = promisify(execFile);
    const { stdout } = await run(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'scripts/keys.ts'), 'create', '--plan', 'Indie', '--credits', '42'], {
      cwd: repoRoot,
      env: { ...process.env, DATABASE_URL: server.url },
    });
    const key = stdout.trim();
    for (const r of replicas) {
      const res = await fetch(`${r.url}/v1/account`, { headers: { 'X-API-Key': key } });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { credits: { remaining: number } }).credits.remaining).toBe(42);
    }
    const { stdout: list } = await run(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'scripts/keys.ts'), 'list'], { cwd: repoRoot, env: { ...process.env, DATABASE_URL: server.url } });
    expect(list).toContain(key.slice(0, 12));
  });

  it('keep a key\'s portfolio and alerts to that key whichever replica answers, and its alert cap across replicas', async () => {
    const [a, b, c] = await Promise.all([0, 1, 2].map(() => keys.createKey({ plan: 'Enterprise', balance: 10_000 })));
    const send = async (r: Replica, key: string, method: string, p: string, body?: unknown) => {
      const res = await fetch(r.url + p, { method, headers: { 'X-API-Key': key, ...(body ? { 'Content-Type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    };
    const house = { latitude: 45.022262, longitude: -0.149933, type_local: 'Terrain', surface: 500, label: 'plot of A' };
    const alert = { webhook_url: 'https://93.184.216.34/hooks/a', code_postal: '33230' };
    const prop = await send(replicas[0], a.key, 'POST', '/v1/portfolio', house);
    expect(prop.status).toBe(201);
    const al = await send(replicas[1], a.key, 'POST', '/v1/alerts', alert);
    expect(al.status).toBe(201);
    const propId = prop.body.property.id as string;
    const alertId = al.body.alert.id as string;
    // A sees both through every replica; B sees neither, through any, by list or by id (404, never 403).
    for (const r of replicas) {
      expect((await send(r, a.key, 'GET', `/v1/portfolio/${propId}`)).body.property).toMatchObject({ id: propId, label: 'plot of A' });
      expect((await send(r, a.key, 'GET', '/v1/alerts')).body.alerts.map((x: { id: string }) => x.id)).toEqual([alertId]);
      expect((await send(r, b.key, 'GET', '/v1/portfolio')).body).toMatchObject({ properties: [], total: 0 });
      expect((await send(r, b.key, 'GET', '/v1/alerts')).body).toMatchObject({ alerts: [], total: 0 });
      for (const [method, p, body] of [
        ['GET', `/v1/portfolio/${propId}`], ['PUT', `/v1/portfolio/${propId}`, { label: 'taken' }], ['DELETE', `/v1/portfolio/${propId}`],
        ['PUT', `/v1/alerts/${alertId}`, { is_active: false }], ['DELETE', `/v1/alerts/${alertId}`], ['GET', `/v1/alerts/${alertId}/deliveries`],
      ] as Array<[string, string, unknown?]>) {
        const res = await send(r, b.key, method, p, body);
        expect([method, p, res.status]).toEqual([method, p, 404]);
      }
    }
    // Untouched by B's attempts.
    expect((await send(replicas[2], a.key, 'GET', `/v1/portfolio/${propId}`)).body.property.label).toBe('plot of A');
    expect((await send(replicas[2], a.key, 'GET', '/v1/alerts')).body.alerts[0]).toMatchObject({ id: alertId, is_active: true });

    // 25 creations at once for one key, spread over the replicas: exactly 20 active alerts, 5 refused with 409.
    const made = await Promise.all(Array.from({ length: 25 }, (_, i) => send(replicas[i % 3], c.key, 'POST', '/v1/alerts', { ...alert, code_postal: String(33000 + i) })));
    expect(made.filter((m) => m.status === 201)).toHaveLength(20);
    expect(made.filter((m) => m.status === 409).map((m) => m.body.error.code)).toEqual(Array(5).fill('alert_limit_reached'));
    expect((await send(replicas[0], c.key, 'GET', '/v1/alerts')).body.total).toBe(20);
  });

  it('answer /health with 503 state_unavailable once PostgreSQL is gone', async () => {
    await pool.end();
    await server.stop();
    const res = await fetch(`${replicas[0].url}/health`);
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ status: 'state_unavailable', state_database: { engine: 'postgresql', reachable: false } });
    pool = undefined as unknown as pg.Pool;
    server = undefined as unknown as TestPostgres;
  });
});
