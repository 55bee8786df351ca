// `npm run bench -- alerts [--sales 1000000] [--alerts 10000] [--deliveries 3000]`: the alert scan and the deliveries at
// scale (docs/performance.md, Alerts).
// 1. The scan's SQL and reading (api/webhooks/scan.ts, unchanged) on a synthetic `ventes` of N newly imported sales (default
//    1,000,000) against A active alerts (default 10,000), DuckDB with 2 threads; then the matches enqueued in SQLite.
// 2. Deliveries per second from the worker (api/webhooks/worker.ts) to a local HTTPS receiver answering 204.
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import selfsigned from 'selfsigned';
import { closeContext, createContext } from '../../api/context';
import { createLogger } from '../../api/log';
import { matchesOf, SCAN_COLUMNS_SQL, toTimestamp, type ScanColumns } from '../../api/webhooks/scan';
import { DeliveryWorker } from '../../api/webhooks/worker';
import { columns, openMemory, run } from '../../lib/duck';
import { count } from '../args';

const { values } = parseArgs({ options: { sales: { type: 'string' }, alerts: { type: 'string' }, deliveries: { type: 'string' } } });
const SALES = count(values.sales, 'sales', 1_000_000);
const ALERTS = count(values.alerts, 'alerts', 10_000);
const DELIVERIES = count(values.deliveries, 'deliveries', 3_000);
import type { AlertValues } from '../../api/store';

const NO_CRITERIA: AlertValues = { label: null, webhook_url: '', code_postal: null, commune: null, code_departement: null, type_local: null, prix_min: null, prix_max: null, surface_min: null, surface_max: null };

async function scanBench(): Promise<void> {
  const { instance, conn } = await openMemory({ threads: 2 });
  // ~96 départements, 60 postal codes and 60 communes each, types and prices like DVF's.
  await run(conn, `
    create table ventes as
    select i as id, date '2025-01-01' + (i % 180)::INT as date_mutation,
      (50000 + hash(i, 1) % 900000)::DOUBLE as valeur_fonciere,
      (1000 + hash(i, 2) % 9000)::DOUBLE as prix_m2,
      ['Maison', 'Appartement', 'Appartement', 'Dépendance', 'Terrain', 'Local commercial'][(1 + hash(i, 3) % 6)::BIGINT] as type_local,
      (15 + hash(i, 4) % 200)::DOUBLE as surface_reelle_bati,
      (1 + hash(i, 5) % 6)::BIGINT as nombre_pieces_principales,
      lpad(((i % 96) + 1)::VARCHAR, 2, '0') as code_departement,
      lpad(((i % 96) + 1)::VARCHAR, 2, '0') || lpad((hash(i, 6) % 60)::VARCHAR, 3, '0') as code_postal,
      lpad(((i % 96) + 1)::VARCHAR, 2, '0') || lpad((hash(i, 7) % 60)::VARCHAR, 3, '0') as code_commune,
      'COMMUNE ' || lpad(((i % 96) + 1)::VARCHAR, 2, '0') || '-' || (hash(i, 7) % 60)::VARCHAR as commune,
      45.0 as latitude, 2.0 as longitude,
      timestamp '2026-04-15 06:00:00' as imported_at
    from range(${SALES}) t(i)`);
  // Alerts: 50 % by postal code, 30 % by commune, 20 % by département (those with a type and a price band).
  const alerts = Array.from({ length: ALERTS }, (_, k) => {
    const dep = String((k % 96) + 1).padStart(2, '0');
    const n = (k * 7919) % 60;
    const base = { id: `alert_${k}`, code_postal: null as string | null, commune: null as string | null, code_departement: null as string | null, type_local: null as string | null, prix_min: null as number | null, prix_max: null as number | null, surface_min: null as number | null, surface_max: null as number | null };
    if (k % 10 < 5) return { ...base, code_postal: dep + String(n).padStart(3, '0'), type_local: k % 2 ? 'Appartement' : null };
    if (k % 10 < 8) return { ...base, commune: `COMMUNE ${dep}-${n}`, prix_max: 400_000 };
    return { ...base, code_departement: dep, type_local: 'Maison', prix_min: 200_000, prix_max: 300_000, surface_min: 80 };
  });
  const cpu0 = process.cpuUsage();
  const started = performance.now();
  // What scanSince does: the query, its columns read, the matches built (then enqueued below).
  const cols = await columns<ScanColumns>(conn, SCAN_COLUMNS_SQL, { alerts: JSON.stringify(alerts), since: toTimestamp(new Date('2026-04-01T00:00:00Z')) });
  const matches = matchesOf(cols);
  const queryS = (performance.now() - started) / 1000;
  const cpuOf = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1e6;
  const queryCpu = cpuOf(process.cpuUsage(cpu0));
  conn.closeSync();
  instance.closeSync();

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'foncier-bench-alerts-'));
  const ctx = createContext({ dataRoot: dir, logger: createLogger({ level: 'silent' }) });
  const key = (await ctx.state.keys.createKey({ plan: 'Enterprise' })).id;
  for (const a of alerts) await ctx.state.alerts.insert(key, a.id, 'whsec_x', { ...NO_CRITERIA, webhook_url: 'https://93.184.216.34/x' }, '', Infinity);
  const cpu1 = process.cpuUsage();
  const t1 = performance.now();
  const enqueued = await ctx.state.deliveries.enqueue(matches, new Date());
  const enqueueS = (performance.now() - t1) / 1000;
  const enqueueCpu = cpuOf(process.cpuUsage(cpu1));
  await closeContext(ctx);
  fs.rmSync(dir, { recursive: true, force: true });
  console.log(`scan: ${SALES.toLocaleString('en')} new sales × ${ALERTS.toLocaleString('en')} alerts → ${matches.length.toLocaleString('en')} matches: query ${queryS.toFixed(2)} s (CPU ${queryCpu.toFixed(2)} s), enqueue ${enqueueS.toFixed(2)} s (CPU ${enqueueCpu.toFixed(2)} s, ${enqueued.toLocaleString('en')} rows), total ${(queryS + enqueueS).toFixed(2)} s; load average ${os.loadavg()[0].toFixed(1)}`);
}

async function deliveryBench(): Promise<void> {
  const pems = await selfsigned.generate([{ name: 'commonName', value: '127.0.0.1' }], { keySize: 2048, algorithm: 'sha256', extensions: [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }] });
  let received = 0;
  const server = https.createServer({ key: pems.private, cert: pems.cert }, (req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      res.statusCode = 204;
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'foncier-bench-deliveries-'));
  const ctx = createContext({ dataRoot: dir, logger: createLogger({ level: 'silent' }), webhooks: { allowedHosts: ['127.0.0.1'], ca: pems.cert } });
  const key = (await ctx.state.keys.createKey({ plan: 'Enterprise' })).id;
  await ctx.state.alerts.insert(key, 'a', 'whsec_' + Buffer.alloc(32, 7).toString('base64'), { ...NO_CRITERIA, webhook_url: url }, '', Infinity);
  const tx = { date_mutation: '2025-01-02', valeur_fonciere: 250000, prix_m2: 3000, type_local: 'Maison', surface_reelle_bati: 83, nombre_pieces_principales: 4, commune: 'X', code_postal: '33000', latitude: 44.8, longitude: -0.57 };
  await ctx.state.deliveries.enqueue(Array.from({ length: DELIVERIES }, (_, i) => ({ alert_id: 'a', transaction: { ...tx, id: String(i) } })), ctx.clock.now());
  const worker = new DeliveryWorker(ctx, { pollMs: 10 });
  const cpu0 = process.cpuUsage();
  const started = performance.now();
  await worker.drain();
  const s = (performance.now() - started) / 1000;
  await worker.stop();
  const succeeded = (await ctx.state.deliveries.countByStatus()).succeeded;
  await closeContext(ctx);
  server.close();
  fs.rmSync(dir, { recursive: true, force: true });
  const cpu = process.cpuUsage(cpu0);
  console.log(`deliveries: ${succeeded.toLocaleString('en')} of ${DELIVERIES.toLocaleString('en')} succeeded (${received} received) in ${s.toFixed(2)} s (CPU ${((cpu.user + cpu.system) / 1e6).toFixed(2)} s, sender and receiver in one process): ${(succeeded / s).toFixed(0)} per second, concurrency ${ctx.webhooks.concurrency}; load average ${os.loadavg()[0].toFixed(1)}`);
  process.exit(0);
}

await scanBench();
await deliveryBench();
