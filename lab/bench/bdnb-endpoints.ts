// BDNB endpoints' latency at France scale, in process, one client, no response cache:
//   npm run bench -- bdnb-endpoints [--groups 20000000] [--sales 20000000] [--data-dir DIR] [--zones 200] [--json FILE]
// Reads the serving database of bdnb-matching.ts (built first when missing): bdnb_batiments,
// bdnb_ventes and ventes at France scale, built as the marts runner builds them (sort orders and indexes of the model
// headers). Then calls each endpoint's own prepare + handler (api/routes/bdnb/*) through the API's ServingDb for
// varied zones: postal codes, communes and départements, the busiest ones and others spread over the ranking (one call
// per zone, each zone new: no cache but DuckDB's buffers), after 10 warm-up calls; and transactions/:id/bdnb for
// random sale ids (matched and not). Reports p50 / p95 per endpoint and zone kind, with the load average.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { AppContext } from '../../api/context';
import { ServingDb } from '../../api/db';
import { ApiError } from '../../api/errors';
import type { AnyEndpoint } from '../../api/platform';
import { bdnbAgeStats } from '../../api/routes/bdnb/age-stats';
import { transactionBdnb } from '../../api/routes/transactions/bdnb';
import { bdnbRenovationScore } from '../../api/routes/bdnb/renovation-score';
import { bdnbStats } from '../../api/routes/bdnb/stats';
import { count } from '../args';
import { benchMartsFile, buildBenchMarts, DEFAULT_BENCH_DIR, ensureBdnbModels } from './bdnb-matching';

const { values } = parseArgs({
  options: { groups: { type: 'string' }, sales: { type: 'string' }, 'data-dir': { type: 'string' }, zones: { type: 'string' }, json: { type: 'string' } },
});
const groups = count(values.groups, 'groups', 20_000_000);
const sales = count(values.sales, 'sales', 20_000_000);
const dir = path.resolve(values['data-dir'] ?? DEFAULT_BENCH_DIR);
const zonesPerKind = Math.round(count(values.zones, 'zones', 200) / 3);
const fmt = (x: number, d = 0) => x.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });

const file = benchMartsFile(dir, groups, sales);
if (!fs.existsSync(file)) await buildBenchMarts({ dir, groups, sales });
else await ensureBdnbModels(file);
fs.writeFileSync(path.join(dir, 'serving', 'CURRENT'), path.basename(file) + '\n');

const db = new ServingDb({ dataRoot: dir });
await db.start();
const ctx = { db } as unknown as AppContext;

/** `n` values of a ranking: the first half the busiest, the rest spread evenly over the remainder. */
function pickZones<T>(ranked: T[], n: number): T[] {
  const top = ranked.slice(0, Math.ceil(n / 2));
  const rest = ranked.slice(top.length);
  const step = Math.max(1, Math.floor(rest.length / (n - top.length)));
  return [...top, ...rest.filter((_, i) => i % step === 0).slice(0, n - top.length)];
}
const ranked = async (col: string) => (await db.query<{ z: string }>(`select ${col} as z from ventes group by 1 order by count(*) desc, 1`)).map((r) => r.z);
const zones = {
  code_postal: pickZones(await ranked('code_postal'), zonesPerKind),
  commune: pickZones(await ranked('code_commune_actuel'), zonesPerKind),
  code_departement: pickZones(await ranked('code_departement'), zonesPerKind),
};

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];

/** Times prepare + handler of `ep` for each input (after 10 warm-up calls on the first inputs); errors other than 404 fail the run. */
async function time(ep: AnyEndpoint, inputs: Array<{ query?: Record<string, string>; params?: Record<string, string> }>): Promise<number[]> {
  const spec = ep as unknown as {
    query?: { parse: (x: unknown) => unknown }; params?: { parse: (x: unknown) => unknown };
    prepare: (i: unknown, c: unknown) => unknown; handler: (p: unknown, c: unknown) => Promise<unknown>;
  };
  const call = async (input: (typeof inputs)[number]) => {
    const prepared = spec.prepare({ query: spec.query?.parse(input.query ?? {}), params: spec.params?.parse(input.params ?? {}) }, { ctx });
    try {
      await spec.handler(prepared, { ctx });
    } catch (e) {
      if (!(e instanceof ApiError && e.code === 'not_found')) throw e;
    }
  };
  for (const input of inputs.slice(0, 10)) await call(input);
  const times: number[] = [];
  for (const input of inputs) {
    const t0 = performance.now();
    await call(input);
    times.push(performance.now() - t0);
  }
  return times;
}

const results: Array<{ endpoint: string; zone: string; n: number; p50: number; p95: number; max: number; load: number }> = [];
const report = (endpoint: string, zone: string, times: number[]) => {
  const r = { endpoint, zone, n: times.length, p50: quantile(times, 0.5), p95: quantile(times, 0.95), max: Math.max(...times), load: os.loadavg()[0] };
  results.push(r);
  console.log(`${endpoint.padEnd(28)} ${zone.padEnd(18)} n ${String(r.n).padStart(3)}  p50 ${fmt(r.p50, 1).padStart(7)} ms  p95 ${fmt(r.p95, 1).padStart(7)} ms  max ${fmt(r.max, 1).padStart(7)} ms  (load ${fmt(r.load, 1)})`);
};

console.log(`Serving file ${path.basename(file)} (${fmt(fs.statSync(file).size / 2 ** 20)} MiB); ${zonesPerKind} zones per kind; load average ${os.loadavg().map((l) => fmt(l, 1)).join(' ')}`);
for (const [name, ep] of [['bdnb/age-stats', bdnbAgeStats], ['bdnb/renovation-score', bdnbRenovationScore], ['bdnb/stats', bdnbStats]] as const) {
  for (const [kind, list] of Object.entries(zones)) {
    // stats names a commune by code_commune_insee or commune; the zone endpoints by commune
    report(name, kind, await time(ep as AnyEndpoint, list.map((z) => ({ query: { [kind]: z } }))));
  }
}
const ids = (await db.query<{ id: bigint }>(`select id from ventes using sample 200 rows (reservoir, 42)`)).map((r) => String(r.id));
report('transactions/:id/bdnb', 'id', await time(transactionBdnb as AnyEndpoint, ids.map((id) => ({ params: { id } }))));
await db.close();
const out = values.json ?? '';
if (out) fs.writeFileSync(out, JSON.stringify({ file: path.basename(file), groups, sales, results, load: os.loadavg() }, null, 2));
