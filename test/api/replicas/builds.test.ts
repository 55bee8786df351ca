// A new serving build reaching replicas on several machines (one data folder each): copied then the CURRENT pointer
// switched, as docs/deploying.md says. The replicas that receive it swap to it; one that has not yet keeps answering
// from the old build; the alert scan of the new build runs on ONE replica for the whole service, and its deliveries
// go out once.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { systemClock } from '../../../api/clock';
import { newSigningSecret } from '../../../api/routes/alerts/common';
import { PgState } from '../../../api/store/postgres';
import { DuckDBInstance } from '../../../lib/duck';
import { currentServingFile } from '../../../lib/serving';
import { testData } from '../../helpers/data';
import { startPostgres, type TestPostgres } from '../../helpers/postgres';
import { killReplicas, startReplica, until, type Replica } from '../../helpers/replicas';
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

const servedBy = async (r: Replica) => ((await (await fetch(`${r.url}/health`)).json()) as { serving_database: { name: string } }).serving_database.name;

/** Publishes `file` into a replica's data folder: the file first, then the pointer (a rename, atomic). */
function publish(dataRoot: string, file: string): void {
  const dir = path.join(dataRoot, 'serving');
  fs.copyFileSync(file, path.join(dir, path.basename(file)));
  fs.writeFileSync(path.join(dir, 'CURRENT.tmp'), path.basename(file));
  fs.renameSync(path.join(dir, 'CURRENT.tmp'), path.join(dir, 'CURRENT'));
}

it('swaps the replicas that receive a build, leaves the others on the old one, and scans the build once', async () => {
  server = await startPostgres();
  receiver = await startReceiver();
  const folders = await Promise.all([0, 1, 2].map(() => testData('sample', { writable: true })));
  const caFile = path.join(folders[0], 'receiver-ca.pem');
  fs.writeFileSync(caFile, receiver.ca);
  receiver.onRequest = (_id, respond) => respond(204, () => {});

  state = await PgState.open(server.url, { clock: systemClock, leaseMs: 1_500 });
  const { id: keyId, key } = await state.keys.createKey({ plan: 'Enterprise' });
  const secret = newSigningSecret();
  const values = { label: null, webhook_url: `${receiver.url}/ok`, code_postal: '33230', commune: null, code_departement: null, type_local: null, prix_min: null, prix_max: null, surface_min: null, surface_max: null };
  expect(await state.alerts.insert(keyId, 'alert_build', secret, values, new Date().toISOString(), 20)).toBe(true);
  receiver.secrets.set('alert_build', secret);

  const env = { DATABASE_URL: server.url, STATE_LEASE_MS: '1500', LOG_LEVEL: 'info', WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', WEBHOOK_CA_FILE: caFile };
  const replicas = await Promise.all(folders.map((DATA_DIR) => startReplica({ ...env, DATA_DIR })));
  const oldName = await servedBy(replicas[0]);

  // The pipeline host's new build: the served data with 25 sales of 33230 imported now (after everything served).
  const built = path.join(fs.mkdtempSync(path.join(folders[0], 'build-')), 'serving-next.duckdb');
  fs.copyFileSync(currentServingFile(folders[0])!, built);
  const db = await DuckDBInstance.create(built);
  const conn = await db.connect();
  await conn.run(`update ventes set imported_at = now()::timestamp where id in (select id from ventes where code_postal = '33230' order by id limit 25)`);
  conn.closeSync();
  db.closeSync();

  // It reaches two replicas of three.
  publish(folders[0], built);
  publish(folders[1], built);
  await until(async () => (await servedBy(replicas[0])) === 'serving-next.duckdb' && (await servedBy(replicas[1])) === 'serving-next.duckdb', 20_000, 'the swap');
  // The third still answers, from the old build.
  expect(await servedBy(replicas[2])).toBe(oldName);
  const old = await fetch(`${replicas[2].url}/v1/transactions?code_postal=33230&limit=5`, { headers: { 'X-API-Key': key } });
  expect(old.status).toBe(200);

  // 25 deliveries, once each, from a scan that one replica ran and the other skipped.
  await until(() => receiver!.received.length >= 25, 30_000, 'the deliveries');
  await new Promise((r) => setTimeout(r, 2_000));
  expect(receiver.received).toHaveLength(25);
  expect(new Set(receiver.received.map((r) => r.payload.transaction.id)).size).toBe(25);
  const scans = replicas.flatMap((r) => r.output().split('\n').filter((l) => l.includes('"scan":"import"')).map((l) => JSON.parse(l) as { enqueued: number; skipped?: string }));
  expect(scans.filter((s) => !s.skipped).map((s) => s.enqueued)).toEqual([25]);
  expect(scans.filter((s) => s.skipped)).toHaveLength(1);
  const { rows } = await state.pool.query(`select count(*)::int as n, count(finished_at)::int as finished from service_jobs where name = 'alerts.scan.import:serving-next.duckdb'`);
  expect(rows[0]).toEqual({ n: 1, finished: 1 });
}, 120_000);
