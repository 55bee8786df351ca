// `npm run bench -- api [CASE …] [--sales 20000000 --data-dir data-bench --duration 10 --connections 1,8,32 --json FILE]`
// (CASE: substrings of case names, all cases when none; --only A|B says the same): HTTP load benchmark of the API on a
// France-scale dataset. The results go to --json FILE, by default a dated file of lab/results/ (lab/run.ts).
//
// 1. Ensures the dataset (lab/france-data/build.ts, in a child process): synthetic geo-DVF for 2020–2025
//    (20 M sales by default) → real pipeline → marts and serving database in --data-dir, reused when unchanged.
// 2. Starts the real server as a child process (`npx tsx scripts/start.ts`, DATA_DIR and PORT set), waits for /health.
// 3. Creates a pool of Enterprise keys in the data folder's api.sqlite (big top-up). The rate limit is per key
//    (120 requests a minute, sliding window): requests rotate over the pool, so a key is reused only every
//    `--keys` requests, which keeps every key under its limit up to keys/2 requests per second.
// 4. For every case of CASES, runs autocannon for --duration seconds at each --connections count, in two modes:
//    - uncached: every request has a query never sent before in this bench (postal codes of the dataset × type ×
//      date_debut, visited in a scrambled order), so a response cache can never answer it;
//    - cached: one fixed query repeated (sent a few times first, so a cached endpoint answers from its cache).
//    Latency percentiles are computed exactly from every response's time (autocannon's own histogram has 1 ms
//    resolution) over 2xx responses only; req/s counts 2xx responses; non-2xx responses are counted by status.
// 5. Prints the table, the targets and whether they are met, and the CPU used by the server and by the load
//    generator (both share the machine's cores).
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_DATA_DIR, DEFAULT_SALES } from '../france-data/build';
import { count, positive } from '../args';
import { CASES, type BenchCase, type Targets } from './cases';
import { benchDataset, createKeys, drain, fmt, load, sent, startServer, stopServer, uncachedQueries, urlOf, type RunResult } from './http-load';

interface Args { sales: number; dataDir: string; duration: number; connections: number[]; keys: number; only: string[]; json?: string; rebuild?: string; warmup: number }

function options(argv: string[]): Args {
  const text = { type: 'string' } as const;
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { sales: text, 'data-dir': text, duration: text, warmup: text, connections: text, keys: text, only: text, json: text, rebuild: text },
  });
  const connections = (values.connections ?? '1,8,32').split(',').map(Number);
  if (connections.some((c) => !Number.isInteger(c) || c < 1)) throw new Error('--connections takes positive whole numbers, comma-separated');
  return {
    sales: count(values.sales, 'sales', DEFAULT_SALES),
    dataDir: path.resolve(values['data-dir'] ?? DEFAULT_DATA_DIR),
    duration: positive(values.duration, 'duration', 10),
    warmup: values.warmup === '0' ? 0 : positive(values.warmup, 'warmup', 2),
    connections,
    keys: count(values.keys, 'keys', 10_000),
    only: [...positionals, ...(values.only?.split('|') ?? [])],
    json: values.json,
    rebuild: values.rebuild,
  };
}

const targetLabel = (t: Targets) => `p50≤${t.p50Ms}${t.p99Ms ? ` p99≤${t.p99Ms}` : ''}`;
const uncachedMet = (t: Targets, r: { p50: number | null; p99: number | null }) =>
  r.p50 !== null && r.p50 <= t.p50Ms && (t.p99Ms === undefined || (r.p99 !== null && r.p99 <= t.p99Ms));


async function main() {
  const a = options(process.argv.slice(2));
  const started = Date.now();
  const { dims, machine, dataset } = await benchDataset(a);
  const medianCount = dims.postalCounts[Math.floor(dims.postalCounts.length / 2)] ?? 0;
  console.log(`Uncached queries: ${dims.postal.length} busiest postal codes (${fmt(dims.postalCounts.at(-1) ?? 0)}–${fmt(dims.postalCounts[0] ?? 0)} sales each, median ${fmt(medianCount)}), `
    + `${dims.departements.length} départements; fixed queries: ${Object.entries(dims.fixedCounts).map(([k, n]) => `${k} ${fmt(n)} sales`).join(', ')}`);

  const t0 = performance.now();
  const keys = await createKeys(a.dataDir, a.keys);
  console.log(`Keys: ${a.keys} Enterprise keys created in ${fmt((performance.now() - t0) / 1000, 1)} s (rotated per request: no key exceeds 120/min below ${fmt(a.keys / 2)} req/s)`);
  let k = 0;
  const nextKey = () => keys[k++ % keys.length];

  const server = await startServer(a.dataDir);
  const stop = () => void stopServer(server).then(() => process.exit(130));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  console.log(`Server: ${server.base} (child process group ${server.child.pid}, log ${path.relative(process.cwd(), server.logFile)})\n`);

  const results: RunResult[] = [];
  const skipped: string[] = [];
  const head = ['endpoint', 'mode', 'conn', 'requests', 'req/s', 'p50 ms', 'p99 ms', 'max ms', 'non-2xx', 'server CPU', 'client CPU', 'other CPU', 'target'];
  const widths = [38, 8, 4, 9, 8, 7, 7, 8, 16, 10, 10, 9, 28];
  const line = (r: string[]) => r.map((c, i) => (i < 2 ? c.padEnd(widths[i]) : i === r.length - 1 ? ` ${c}` : c.padStart(widths[i]))).join(' ');
  const targetCell = (c: BenchCase, r: RunResult) => {
    const t = c.targets;
    if (!t) return '';
    if (r.mode === 'uncached') return `${targetLabel(t)}: ${uncachedMet(t, r) ? 'met' : 'NOT MET'}`;
    return t.cachedRps ? `≥${fmt(t.cachedRps)} req/s: ${r.rps >= t.cachedRps ? 'met' : 'NOT MET'}` : '';
  };
  const cell = (c: BenchCase, r: RunResult) => [
    c.name, r.mode, String(r.connections), fmt(r.requests), fmt(r.rps), fmt(r.p50, 1), fmt(r.p99, 1), fmt(r.max, 0),
    r.non2xx ? `${fmt(r.non2xx)} (${Object.entries(r.statuses).map(([s, n]) => `${s}×${n}`).join(' ')})` : '0',
    fmt(r.serverCores, 2), fmt(r.clientCores, 2), fmt(r.otherCores, 2), targetCell(c, r) + (r.repeats ? ` ${r.repeats} repeated queries` : ''),
  ];

  try {
    let printedHead = false;
    for (const c of CASES.filter((x) => !a.only.length || a.only.some((o) => x.name.includes(o)))) {
      // Probe: the fixed query must answer 200 (else the endpoint is missing or rejects the parameters).
      const fixedUrl = urlOf(c.path, c.fixed);
      sent.add(fixedUrl);
      await drain(server);
      const probe = await fetch(server.base + fixedUrl, { headers: { 'x-api-key': nextKey() } });
      const body = (await probe.json().catch(() => ({}))) as { cache?: { hit: boolean }; query_time_ms?: number; count?: number; total_found?: number; error?: { code: string; message: string } };
      if (probe.status !== 200) {
        const why = `${c.name}: GET ${fixedUrl} → ${probe.status} ${body.error?.code ?? ''} ${body.error?.message ?? ''}`.trim();
        console.log(`SKIPPED ${why}`);
        skipped.push(why);
        continue;
      }
      const queries = uncachedQueries(c, dims);
      const info = `${c.name}: ${fixedUrl} → count ${body.count ?? body.total_found ?? '?'}, first answer query_time_ms ${body.query_time_ms ?? '?'}`
        + `${body.cache ? ` (cache hit ${body.cache.hit})` : ' (no cache field: not a cached endpoint)'}; ${fmt(queries.space)} distinct uncached queries`;
      if (!printedHead) {
        console.log(`${line(head)}\n${widths.map((w) => '-'.repeat(w)).join(' ')}`);
        printedHead = true;
      }
      console.log(`  ${info}`);
      if (a.warmup > 0) await load(server, { connections: 8, duration: a.warmup, next: queries.next, key: nextKey });

      for (const conn of a.connections) {
        await drain(server);
        const before = queries.repeats();
        const r = await load(server, { connections: conn, duration: a.duration, next: queries.next, key: nextKey });
        const row: RunResult = { case: c.name, mode: 'uncached', ...r, repeats: queries.repeats() - before };
        results.push(row);
        console.log(line(cell(c, row)));
      }
      // Cached: the same request repeated; sent a few times first so that a cached endpoint holds it.
      await drain(server);
      for (let i = 0; i < 5; i++) await (await fetch(server.base + fixedUrl, { headers: { 'x-api-key': nextKey() } })).arrayBuffer();
      for (const conn of a.connections) {
        await drain(server);
        const r = await load(server, { connections: conn, duration: a.duration, next: () => fixedUrl, key: nextKey });
        const row: RunResult = { case: c.name, mode: 'cached', ...r, repeats: 0 };
        results.push(row);
        console.log(line(cell(c, row)));
      }
    }
  } finally {
    await stopServer(server);
  }

  console.log('\nreq/s and latencies over 2xx responses; latency = time to the full response seen by autocannon (keep-alive, no pipelining).');
  console.log('CPU columns, in cores: server = the server\'s process group; client = the load generator (this process); other = the rest of the machine (other jobs).');
  console.log(`\nTargets (${machine.cpus} cores):`);
  for (const c of CASES.filter((x) => x.targets)) {
    const t = c.targets as Targets;
    const tr = results.filter((r) => r.case === c.name);
    if (!tr.length) {
      console.log(`  ${c.name}: not measured (skipped or filtered out)`);
      continue;
    }
    for (const r of tr.filter((x) => x.mode === 'uncached')) {
      console.log(`  ${c.name}, uncached, ${String(r.connections).padStart(2)} connections: p50 ${fmt(r.p50, 1)} ms, p99 ${fmt(r.p99, 1)} ms (target ${targetLabel(t)}) → ${uncachedMet(t, r) ? 'met' : 'NOT MET'}`);
    }
    const best = tr.filter((x) => x.mode === 'cached').sort((x, y) => y.rps - x.rps)[0];
    if (best && t.cachedRps) console.log(`  ${c.name}, cached: best ${fmt(best.rps)} req/s at ${best.connections} connections (target ≥ ${fmt(t.cachedRps)}) → ${best.rps >= t.cachedRps ? 'met' : 'NOT MET'}`);
  }
  const bad = results.filter((r) => r.non2xx > 0);
  console.log(bad.length
    ? `\nNon-2xx responses in ${bad.length} run(s): ${bad.map((r) => `${r.case} ${r.mode} ${r.connections}c: ${Object.entries(r.statuses).map(([s, n]) => `${s}×${n}`).join(' ')}`).join('; ')}`
      + (bad.some((r) => r.statuses['429']) ? ' — 429 means the key pool is too small: raise --keys' : '')
      + (bad.some((r) => r.statuses['503']) ? ' — 503 at_capacity is the specified limit of 15 concurrent database requests' : '')
    : '\nNon-2xx responses: 0 in every run.');
  if (skipped.length) console.log(`Skipped (endpoint missing or failing): ${skipped.join('; ')}`);
  console.log(`Bench done in ${fmt((Date.now() - started) / 1000, 0)} s.`);

  if (a.json) {
    fs.writeFileSync(a.json, JSON.stringify({ date: new Date().toISOString(), machine, dataset, targets: Object.fromEntries(CASES.filter((c) => c.targets).map((c) => [c.name, c.targets])), duration: a.duration, keys: a.keys, results, skipped }, null, 2));
  }
}

main().catch((e: Error) => {
  console.error(`bench failed: ${e.stack ?? e.message}`);
  process.exit(1);
});
