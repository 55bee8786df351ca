// DPE endpoints' latency at France scale, one client, without the 45-minute bench dataset:
//   npm run bench -- dpe-latency [--dir data-bench-dpe] [--runs 200] [--sales 20000000] [--diagnostics 13000000] [--deps …]
// uses the synthetic France of lab/bench/dpe-matching.ts (20 M sales, 13 M diagnostics; generated when absent)
// laid out as the marts runner materializes ventes and dpe_diagnostics, builds the four DPE marts from them with
// their own SQL as the runner does (dpe_ventes, dpe_ventes_200m, dpe_communes, dpe_communes_classes; kept when
// already built, `--rebuild` forces it), then opens that database read-only through the API's ServingDb and times
// each DPE endpoint's prepare + handler (the query path; no HTTP, no response cache) over `runs` calls per case,
// each on a zone of the case's list in turn: the busiest postal codes and communes (INSEE codes) of the data, every
// département. 10 warm-up calls per case are not counted.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { AppContext } from '../../api/context';
import { ServingDb } from '../../api/db';
import { DPE_ENDPOINTS } from '../../api/routes/dpe';
import type { AnyEndpoint } from '../../api/platform';
import { repoRoot } from '../../lib/config';
import { all, run } from '../../lib/duck';
import { buildModel, layOutAsMarts, openSynthetic } from './dpe-matching';

const { values } = parseArgs({
  options: { dir: { type: 'string' }, runs: { type: 'string' }, sales: { type: 'string' }, diagnostics: { type: 'string' }, deps: { type: 'string' }, rebuild: { type: 'boolean' } },
});
const dir = path.resolve(values.dir ?? path.join(repoRoot, 'data-bench-dpe'));
const runs = Number(values.runs ?? 200);
const MARTS = ['dpe_ventes', 'dpe_ventes_200m', 'dpe_communes', 'dpe_communes_classes'];

// 1. The data and the marts (written into the synthetic database itself, which then serves).
const { instance, conn, file } = await openSynthetic(dir, { sales: Number(values.sales ?? 20_000_000), diagnostics: Number(values.diagnostics ?? 13_000_000), deps: values.deps?.split(',') });
await layOutAsMarts(conn);
const existing = new Set((await all<{ t: string }>(conn, 'select table_name as t from duckdb_tables()')).map((r) => r.t));
for (const m of MARTS) {
  if (existing.has(m) && !values.rebuild) continue;
  const t = await buildModel(conn, m);
  console.log(`built ${m}: ${t.rows} rows, ${(t.build_s + t.index_check_s).toFixed(1)} s, ${(t.build_cpu_s + t.index_check_cpu_s).toFixed(1)} CPU-s`);
}
const top = async (col: string, n: number) =>
  (await all<{ v: string }>(conn, `select ${col} as v from ventes group by 1 order by count(*) desc, 1 limit ${n}`)).map((r) => r.v);
const zones = {
  code_postal: await top('code_postal', runs),
  commune: await top('code_commune_actuel', runs),
  code_departement: await top('code_departement', 200),
};
const ids = (await all<{ id: bigint }>(conn, `select id from dpe_ventes using sample reservoir(${runs + 10} rows) repeatable (7)`)).map((r) => String(r.id));
const [sizes] = await all(conn, `select (select count(*) from ventes) as ventes, (select count(*) from dpe_diagnostics) as dpe_diagnostics,
  (select count(*) from dpe_ventes) as dpe_ventes, (select count(*) from dpe_ventes_200m) as dpe_ventes_200m, (select count(*) from dpe_communes) as dpe_communes`);
await run(conn, 'checkpoint');
conn.closeSync();
instance.closeSync();
console.log(`data: ${JSON.stringify(sizes, (_, v) => (typeof v === 'bigint' ? Number(v) : v))}`);

// 2. The serving database: CURRENT points at the synthetic file.
fs.mkdirSync(path.join(dir, 'serving'), { recursive: true });
fs.writeFileSync(path.join(dir, 'serving', 'CURRENT'), path.relative(path.join(dir, 'serving'), file) + '\n');
const db = new ServingDb({ dataRoot: dir });
await db.start();
const call = { ctx: { db } as unknown as AppContext, key: {}, now: new Date(), requestId: 'bench' } as never;
const byPath = new Map(DPE_ENDPOINTS.map((e) => [e.path, e as AnyEndpoint]));

async function time(label: string, endpointPath: string, inputs: Array<{ query?: Record<string, unknown>; params?: Record<string, unknown> }>, target?: number): Promise<void> {
  const e = byPath.get(endpointPath)!;
  const times: number[] = [];
  const load0 = os.loadavg()[0];
  const c0 = process.cpuUsage();
  for (let i = 0; i < runs + 10; i++) {
    const raw = inputs[i % inputs.length];
    const t0 = performance.now();
    const input = { query: e.query ? e.query.parse(raw.query ?? {}) : undefined, params: e.params ? e.params.parse(raw.params ?? {}) : undefined, body: undefined };
    await e.handler(e.prepare(input as never, call), call);
    if (i >= 10) times.push(performance.now() - t0);
  }
  const cpu = process.cpuUsage(c0);
  times.sort((a, b) => a - b);
  const q = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))];
  const verdict = target === undefined ? '' : q(0.5) <= target ? ` (target p50 ≤ ${target} ms: met)` : ` (target p50 ≤ ${target} ms: NOT MET)`;
  console.log(`${label.padEnd(52)} p50 ${q(0.5).toFixed(1).padStart(6)} ms  p95 ${q(0.95).toFixed(1).padStart(6)} ms  max ${times.at(-1)!.toFixed(1).padStart(6)} ms  ` +
    `${((cpu.user + cpu.system) / 1e3 / (runs + 10)).toFixed(1)} CPU-ms/call  load ${load0.toFixed(1)}${verdict}`);
}

const ZONED: Array<[string, string, Array<keyof typeof zones>]> = [
  ['GET /v1/dpe/stats', '/v1/dpe/stats', ['code_postal', 'commune', 'code_departement']],
  ['GET /v1/dpe/prix-par-classe', '/v1/dpe/prix-par-classe', ['code_postal', 'commune', 'code_departement']],
  ['GET /v1/dpe/passoires-thermiques', '/v1/dpe/passoires-thermiques', ['code_postal', 'commune', 'code_departement']],
  ['GET /v1/stats/dpe-premium', '/v1/stats/dpe-premium', ['code_postal', 'commune']],
  ['GET /v1/dpe/evolution-prime-verte', '/v1/dpe/evolution-prime-verte', ['code_postal', 'commune']],
  ['GET /v1/dpe/commune-stats', '/v1/dpe/commune-stats', ['code_postal', 'commune', 'code_departement']],
];
const TARGETS: Record<string, number | undefined> = { code_postal: 20, code_departement: 100, commune: undefined };
console.log(`\n${runs} timed calls per case, one client, ${os.cpus().length} cores; load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
for (const [label, p, kinds] of ZONED) {
  for (const kind of kinds) {
    const target = p === '/v1/dpe/commune-stats' ? 10 : TARGETS[kind];
    await time(`${label} by ${kind}`, p, zones[kind].map((z) => ({ query: { [kind]: z } })), target);
  }
}
await time('GET /v1/transactions/:id/dpe', '/v1/transactions/:id/dpe', ids.map((id) => ({ params: { id } })));
await db.close();
