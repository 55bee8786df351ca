// Webhook deliveries with three API replicas on one PostgreSQL, one of them SIGKILLed while its deliveries are in
// flight (sent, not answered): 0 lost, 0 acknowledged twice, and only the killed replica's in-flight deliveries sent
// again (by a live replica, once its claims expired); every other delivery reaches the receiver exactly once.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { systemClock } from '../../../api/clock';
import { closeContext, createContext } from '../../../api/context';
import { createLogger } from '../../../api/log';
import { newSigningSecret } from '../../../api/routes/alerts/common';
import { PgState } from '../../../api/store/postgres';
import { scanSince } from '../../../api/webhooks/scan';
import { testData } from '../../helpers/data';
import { startPostgres, type TestPostgres } from '../../helpers/postgres';
import { killReplicas, startReplica, until } from '../../helpers/replicas';
import { startReceiver, type Receiver } from '../../helpers/webhook-receiver';

let server: TestPostgres | undefined;
let receiver: Receiver | undefined;
let state: PgState | undefined;
afterAll(async () => {
  await killReplicas();
  await state?.close();
  await receiver?.close();
  await server?.stop();
});

it('delivers each webhook once across three replicas, one killed mid-delivery: 0 lost, 0 duplicated', async () => {
  server = await startPostgres();
  receiver = await startReceiver();
  const dataRoot = await testData('sample');
  const caFile = path.join(fs.mkdtempSync(path.join(dataRoot, 'ca-')), 'receiver-ca.pem');
  fs.writeFileSync(caFile, receiver.ca);

  // The queue in PostgreSQL, filled by the real scan over everything served, before the replicas start.
  const ctx = createContext({ dataRoot, logger: createLogger({ level: 'silent' }), state: { databaseUrl: server.url, leaseMs: 1_500 } });
  await ctx.db.start();
  await ctx.state.ready();
  // Its own connection too, to check the queue with its own SQL.
  state = await PgState.open(server.url, { clock: systemClock, leaseMs: 1_500 });
  const { id: keyId } = await state.keys.createKey({ plan: 'Enterprise' });
  const criteria = [{ code_postal: '33230' }, { code_departement: '01' }, { code_departement: '01', type_local: 'Maison' }, { code_postal: '33230', prix_min: 50_000 }];
  for (const [i, c] of criteria.entries()) {
    const secret = newSigningSecret();
    const values = { label: null, webhook_url: `${receiver.url}/ok`, code_postal: null, commune: null, code_departement: null, type_local: null, prix_min: null, prix_max: null, surface_min: null, surface_max: null, ...c };
    expect(await state.alerts.insert(keyId, `alert_kill${i}`, secret, values, new Date().toISOString(), 20)).toBe(true);
    receiver.secrets.set(`alert_kill${i}`, secret);
  }
  const { enqueued } = await scanSince(ctx, new Date(0));
  await closeContext(ctx);
  expect(enqueued).toBeGreaterThan(150);

  // Answers the first 40 at once, then holds every answer until a replica has been killed.
  const acknowledged: string[] = [];
  let answered = 0;
  let holding = true;
  const pending: Array<() => void> = [];
  receiver.onRequest = (id, respond) => {
    if (holding && answered >= 40) {
      pending.push(() => respond(204, () => acknowledged.push(id)));
      return;
    }
    answered++;
    respond(204, () => acknowledged.push(id));
  };

  // A claim outlasts the receiver's deadline (4 s) by 2 s: a dead replica's deliveries wait 6 s for another.
  const env = {
    DATA_DIR: dataRoot, DATABASE_URL: server.url, STATE_LEASE_MS: '1500',
    WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', WEBHOOK_CA_FILE: caFile, WEBHOOK_LEASE_MS: '1000', WEBHOOK_TIMEOUT_MS: '4000', WEBHOOK_CONCURRENCY: '6',
  };
  const replicas = await Promise.all([0, 1, 2].map(async () => startReplica({ ...env, DATA_DIR: await testData('sample') })));
  await until(() => pending.length >= 12, 30_000, 'deliveries in flight');

  // The victim: the replica holding the most claims of deliveries in flight. The others hold claims too: the work is shared.
  // A claim names its replica (api/webhooks/worker.ts: the state's owner), whose row gives its pid.
  const { rows } = await state.pool.query<{ claimed_by: string; pid: number; n: number }>(
    `select d.claimed_by, r.pid, count(*)::int as n from alert_deliveries d join replicas r on r.id = d.claimed_by
     where d.status = 'pending' group by 1, 2 order by 3 desc`,
  );
  expect(rows.length).toBeGreaterThanOrEqual(2);
  const victim = replicas.find((r) => r.child.pid === rows[0].pid)!;
  expect(victim).toBeDefined();
  const victimClaims = new Set(
    (await state.pool.query<{ id: string }>(`select id from alert_deliveries where status = 'pending' and claimed_by = $1`, [rows[0].claimed_by])).rows.map((r) => r.id),
  );
  await victim.kill('SIGKILL');
  holding = false;
  // The held answers: those to the live replicas arrive; those to the dead one reach nobody.
  for (const p of pending) p();

  await until(() => new Set(acknowledged).size >= enqueued, 60_000, 'every delivery acknowledged');
  // A little longer, to see any delivery sent again.
  await new Promise((r) => setTimeout(r, 1_500));

  expect(new Set(acknowledged).size).toBe(enqueued); // 0 lost
  expect(acknowledged.length).toBe(enqueued); // 0 acknowledged twice
  expect(receiver.received.every((r) => r.verifyError === undefined)).toBe(true);
  const sent = new Map<string, number>();
  for (const r of receiver.received) sent.set(r.id, (sent.get(r.id) ?? 0) + 1);
  const repeated = [...sent].filter(([, n]) => n > 1).map(([id]) => id);
  // The dead replica's in-flight deliveries were sent again by a live one (same webhook-id); nothing else ever was.
  expect(repeated.length).toBeGreaterThan(0);
  expect(repeated.every((id) => victimClaims.has(id))).toBe(true);
  expect([...sent.values()].every((n) => n <= 2)).toBe(true);
  const { rows: statuses } = await state.pool.query(`select status, count(*)::int as n, count(claimed_by)::int as claimed from alert_deliveries group by status`);
  expect(statuses).toEqual([{ status: 'succeeded', n: enqueued, claimed: 0 }]);
}, 120_000);
