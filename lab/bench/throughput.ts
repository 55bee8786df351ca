// `npm run bench` (= `npm run bench -- throughput [--sales 20000000 --data-dir data-bench --duration 10 --keys 10000
// --env NAME=VALUE,… --json FILE]`): the throughput targets of the API on the France-scale dataset, each a row of one
// table with its measured value, met or not, and every rate also as a share of the same server's bare HTTP rate
// (`GET /health` at 8 connections, measured in the same run): machines differ 2–3× in speed, the share does not.
//
// Runs, each --duration seconds against the real server (a child process, as `npm start` runs it), requests rotated
// over a pool of Enterprise keys, every uncached query never sent before (lab/bench/http-load.ts):
//   /health at 8 connections; stats/market by postal code uncached at 1, 8, 32 and 128 connections (the last two:
//   clients that ignore Retry-After, the overload case) and cached at 8; the département aggregates (stats/market,
//   stats/trends, heatmap, market-overview) at 8; a transactions page of 50 at 1; heatmap by département at 32 and
//   128 (overload where DuckDB is the bound, so that the capacity gate refuses); then the memory of the server.
//   A generator whose space is spent repeats queries: only market-overview's is that small, and it has no response cache.
// Then the same stats/market mix side by side with a tuned PostgreSQL over the same sales (`--no-postgres`: skipped).
// `--env` passes variables to the server (SALES_MEMORY_INDEX=off measures the DuckDB path; DATABASE_URL a PostgreSQL
// state).
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_DATA_DIR, DEFAULT_SALES } from '../france-data/build';
import { count, positive } from '../args';
import { CASES, type BenchCase } from './cases';
import { benchDataset, createKeys, drain, fmt, load, sent, serverMemory, startServer, stopServer, uncachedQueries, urlOf, type RunResult, type Server } from './http-load';
import { mixQueries, preparePostgres, runPostgresMix, type MixKind } from './postgres-side';

interface Args { sales: number; dataDir: string; duration: number; keys: number; env: Record<string, string>; postgres: boolean; json?: string }

function options(argv: string[]): Args {
  const text = { type: 'string' } as const;
  const { values } = parseArgs({ args: argv, options: { sales: text, 'data-dir': text, duration: text, keys: text, env: text, json: text, 'no-postgres': { type: 'boolean' } } });
  const env: Record<string, string> = {};
  for (const pair of values.env ? values.env.split(',') : []) {
    const i = pair.indexOf('=');
    if (i < 1) throw new Error(`--env takes NAME=VALUE pairs, comma-separated (got "${pair}")`);
    env[pair.slice(0, i)] = pair.slice(i + 1);
  }
  return {
    sales: count(values.sales, 'sales', DEFAULT_SALES),
    dataDir: path.resolve(values['data-dir'] ?? DEFAULT_DATA_DIR),
    duration: positive(values.duration, 'duration', 10),
    keys: count(values.keys, 'keys', 10_000),
    env,
    postgres: !values['no-postgres'],
    json: values.json,
  };
}

const caseNamed = (name: string): BenchCase => {
  const c = CASES.find((x) => x.name === name);
  if (!c) throw new Error(`no bench case "${name}" in lab/bench/cases`);
  return c;
};

/** The runs of the table: a case (or /health), uncached or cached, at a number of connections. */
const RUNS: Array<{ id: string; case: string; mode: 'uncached' | 'cached'; connections: number }> = [
  { id: 'health', case: '/health', mode: 'cached', connections: 8 },
  { id: 'cp1', case: 'stats/market code_postal', mode: 'uncached', connections: 1 },
  { id: 'cp8', case: 'stats/market code_postal', mode: 'uncached', connections: 8 },
  { id: 'cp32', case: 'stats/market code_postal', mode: 'uncached', connections: 32 },
  { id: 'cp128', case: 'stats/market code_postal', mode: 'uncached', connections: 128 },
  { id: 'cached8', case: 'stats/market code_postal', mode: 'cached', connections: 8 },
  { id: 'dep-market', case: 'stats/market code_departement (info)', mode: 'uncached', connections: 8 },
  { id: 'dep-trends', case: 'stats/trends code_departement', mode: 'uncached', connections: 8 },
  { id: 'dep-heatmap', case: 'heatmap code_departement', mode: 'uncached', connections: 8 },
  { id: 'dep-overview', case: 'market-overview code_departement', mode: 'uncached', connections: 8 },
  { id: 'transactions', case: 'transactions code_postal limit=50', mode: 'uncached', connections: 1 },
  // Overload where DuckDB is the bound (a département's sales grouped by zone): where the capacity gate has to refuse.
  { id: 'dep-heatmap32', case: 'heatmap code_departement', mode: 'uncached', connections: 32 },
  { id: 'dep-heatmap128', case: 'heatmap code_departement', mode: 'uncached', connections: 128 },
];

type Measured = RunResult & { id: string };

interface Target {
  what: string;
  /** The measured value as shown, and whether the target is met (undefined: not measured). */
  check(m: Record<string, Measured>): { value: string; met: boolean } | undefined;
}

const share = (m: Record<string, Measured>, id: string) => (m[id] && m.health ? m[id].rps / m.health.rps : NaN);
const pct = (x: number) => `${fmt(x * 100, 0)} %`;

const TARGETS: Target[] = [
  {
    what: 'stats/market postal code, uncached, 8 connections: ≥ 2,000 req/s and ≥ 40 % of /health, p99 ≤ 25 ms',
    check: (m) => m.cp8 && { value: `${fmt(m.cp8.rps)} req/s (${pct(share(m, 'cp8'))}), p99 ${fmt(m.cp8.p99, 1)} ms`, met: m.cp8.rps >= 2000 && share(m, 'cp8') >= 0.4 && (m.cp8.p99 ?? Infinity) <= 25 },
  },
  {
    what: 'stats/market postal code, uncached, 1 connection: p50 ≤ 1.5 ms',
    check: (m) => m.cp1 && { value: `p50 ${fmt(m.cp1.p50, 2)} ms (${fmt(m.cp1.rps)} req/s)`, met: (m.cp1.p50 ?? Infinity) <= 1.5 },
  },
  {
    what: 'stats/market postal code, cached, 8 connections: ≥ 5,000 req/s and ≥ 90 % of /health',
    check: (m) => m.cached8 && { value: `${fmt(m.cached8.rps)} req/s (${pct(share(m, 'cached8'))})`, met: m.cached8.rps >= 5000 && share(m, 'cached8') >= 0.9 },
  },
  ...(['dep-market', 'dep-trends', 'dep-heatmap', 'dep-overview'] as const).map((id) => ({
    what: `${RUNS.find((r) => r.id === id)!.case.replace(' (info)', '')}, uncached, 8 connections: p50 ≤ 15 ms`,
    check: (m: Record<string, Measured>) => m[id] && { value: `p50 ${fmt(m[id].p50, 1)} ms (${fmt(m[id].rps)} req/s)`, met: (m[id].p50 ?? Infinity) <= 15 },
  })),
  {
    what: 'transactions page of 50, uncached, 1 connection: p50 ≤ 5 ms',
    check: (m) => m.transactions && { value: `p50 ${fmt(m.transactions.p50, 2)} ms`, met: (m.transactions.p50 ?? Infinity) <= 5 },
  },
  ...(['cp', 'dep-heatmap'] as const).flatMap((mix) =>
    ([32, 128] as const).map((c) => ({
      what: `overload: ${mix === 'cp' ? 'stats/market postal code' : 'heatmap département'} at ${c} connections ignoring Retry-After: 2xx ≥ 90 % of the 8-connection rate`,
      check: (m: Record<string, Measured>) => {
        const r = m[`${mix}${c}`];
        const base = m[mix === 'cp' ? 'cp8' : 'dep-heatmap'];
        return r && base && { value: `${fmt(r.rps)} req/s of 2xx (${pct(r.rps / base.rps)}), ${fmt(r.non2xx)} refused, p99 ${fmt(r.p99, 1)} ms`, met: r.rps >= 0.9 * base.rps };
      },
    })),
  ),
  {
    what: 'overload: a refused request costs < 0.1 ms of main-thread CPU',
    check: (m) => {
      // The main thread's CPU beyond what the answered requests cost at 8 connections, per refused request.
      const costs = ([['cp8', ['cp32', 'cp128']], ['dep-heatmap', ['dep-heatmap32', 'dep-heatmap128']]] as const).flatMap(([base, runs]) =>
        runs.filter((id) => m[id] && m[base] && m[id].non2xx > 0).map((id) => (m[id].mainThreadCpu - m[id].ok * (m[base].mainThreadCpu / Math.max(1, m[base].ok))) / m[id].non2xx),
      );
      if (!costs.length) return m.cp128 && { value: 'no request refused in the overload runs', met: true };
      const worst = Math.max(...costs) * 1000;
      return { value: `${fmt(Math.max(0, worst), 3)} ms (main-thread CPU beyond the answers' cost, per refusal; worst run)`, met: worst < 0.1 };
    },
  },
];

interface SideBySide {
  kind: MixKind;
  connections: number;
  api: { rps: number; p50: number | null; p99: number | null; non2xx: number };
  postgres: { qps: number; p50: number; p99: number };
}

/**
 * The same stats/market mix (random postal codes or départements, types and windows: postgres-side.ts) answered by the
 * API over HTTP and by PostgreSQL over the same `ventes` with its best indexes (loaded once into <data-dir>/
 * postgres-side), at 1 and 8 connections, one after the other on the same machine.
 */
async function againstPostgres(server: Server, a: Args, servingFile: string, dims: Awaited<ReturnType<typeof benchDataset>>['dims'], key: () => string): Promise<SideBySide[]> {
  console.log('\nSide by side with PostgreSQL (lab/bench/postgres-side.ts): loading or reusing its copy of ventes…');
  const pgServer = await preparePostgres({ servingFile, dataDir: a.dataDir, log: (l) => console.log(`  ${l}`) });
  const out: SideBySide[] = [];
  try {
    console.log(`  PostgreSQL ready: ${fmt(pgServer.rows)} sales${pgServer.reused ? ' (reused)' : `, loaded and indexed in ${fmt(pgServer.loadSeconds)} s`}`);
    for (const kind of ['code_postal', 'code_departement'] as const) {
      const queries = mixQueries(kind === 'code_postal' ? dims.postal : dims.departements, kind, 200_000, kind === 'code_postal' ? 1 : 2);
      let i = 0;
      const nextUrl = () => {
        for (;;) {
          const q = queries[i++ % queries.length];
          const url = urlOf('/v1/stats/market', { ...(q.code_postal ? { code_postal: q.code_postal } : { code_departement: q.code_departement! }), type_local: q.type_local ?? '', date_debut: q.date_debut, date_fin: q.date_fin });
          if (!sent.has(url) || i > 4 * queries.length) {
            sent.add(url);
            return url;
          }
        }
      };
      for (const connections of [1, 8]) {
        await drain(server);
        const api = await load(server, { connections, duration: a.duration, next: nextUrl, key });
        const pgRun = await runPostgresMix({ url: pgServer.url, queries, connections, durationSeconds: a.duration });
        out.push({ kind, connections, api: { rps: api.rps, p50: api.p50, p99: api.p99, non2xx: api.non2xx }, postgres: { qps: pgRun.qps, p50: pgRun.p50, p99: pgRun.p99 } });
        console.log(`  ${kind.padEnd(16)} ${String(connections).padStart(2)} conn: API ${fmt(api.rps).padStart(6)} req/s p50 ${fmt(api.p50, 2)} ms p99 ${fmt(api.p99, 1)} ms | PostgreSQL ${fmt(pgRun.qps).padStart(6)} q/s p50 ${fmt(pgRun.p50, 2)} ms p99 ${fmt(pgRun.p99, 1)} ms | ×${fmt(api.rps / pgRun.qps, 1)}`);
      }
    }
  } finally {
    await pgServer.stop();
  }
  return out;
}

async function main() {
  const a = options(process.argv.slice(2));
  const started = Date.now();
  const { stamp, dims, machine } = await benchDataset(a);
  if (Object.keys(a.env).length) console.log(`Server environment: ${Object.entries(a.env).map(([k, v]) => `${k}=${k === 'DATABASE_URL' ? '…' : v}`).join(' ')}`);

  const keys = await createKeys(a.dataDir, a.keys);
  let k = 0;
  const nextKey = () => keys[k++ % keys.length];
  const t0 = Date.now();
  const server: Server = await startServer(a.dataDir, a.env);
  console.log(`Server ready in ${fmt((Date.now() - t0) / 1000, 1)} s (the in-memory sales index loads before it serves)`);
  const stop = () => void stopServer(server).then(() => process.exit(130));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);

  const measured: Record<string, Measured> = {};
  const head = ['run', 'mode', 'conn', 'req/s', 'of /health', 'p50 ms', 'p99 ms', 'non-2xx', 'server CPU', 'main thread', 'client CPU', 'other CPU'];
  const widths = [38, 8, 4, 8, 10, 7, 7, 18, 10, 11, 10, 9];
  const line = (r: string[]) => r.map((c, i) => (i < 2 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(' ');
  console.log(`\n${line(head)}\n${widths.map((w) => '-'.repeat(w)).join(' ')}`);
  const generators = new Map<string, () => string>();
  let memory: ReturnType<typeof serverMemory>;
  let sideBySide: SideBySide[] = [];
  try {
    for (const run of RUNS) {
      let next: () => string;
      if (run.case === '/health') next = () => '/health';
      else {
        const c = caseNamed(run.case);
        const fixed = urlOf(c.path, c.fixed);
        sent.add(fixed);
        if (run.mode === 'cached') {
          for (let i = 0; i < 5; i++) await (await fetch(server.base + fixed, { headers: { 'x-api-key': nextKey() } })).arrayBuffer();
          next = () => fixed;
        } else {
          if (!generators.has(c.name)) {
            const g = uncachedQueries(c, dims).next;
            generators.set(c.name, g);
            // Warm-up (JIT, DuckDB's caches) at 8 connections, not measured.
            await drain(server);
            await load(server, { connections: 8, duration: 2, next: g, key: nextKey });
          }
          next = generators.get(c.name)!;
        }
      }
      await drain(server);
      const r = await load(server, { connections: run.connections, duration: a.duration, next, key: run.case === '/health' ? undefined : nextKey });
      const row: Measured = { ...r, id: run.id, case: run.case, mode: run.mode, repeats: 0 };
      measured[run.id] = row;
      console.log(line([
        run.case, run.mode, String(run.connections), fmt(r.rps), run.id === 'health' ? '100 %' : pct(share(measured, run.id)), fmt(r.p50, 2), fmt(r.p99, 1),
        r.non2xx ? `${fmt(r.non2xx)} (${Object.entries(r.statuses).map(([s, n]) => `${s}×${n}`).join(' ')})` : '0',
        fmt(r.serverCores, 2), `${fmt((r.mainThreadCpu / Math.max(1, r.requests)) * 1000, 3)} ms/req`, fmt(r.clientCores, 2), fmt(r.otherCores, 2),
      ]));
    }
    memory = serverMemory(server.child.pid);
    if (a.postgres) sideBySide = await againstPostgres(server, a, stamp.marts.servingFile, dims, nextKey);
  } finally {
    await stopServer(server);
  }

  console.log('\nreq/s, p50 and p99 over 2xx responses; "of /health": the rate as a share of GET /health at 8 connections in this run;');
  console.log('main thread: CPU of the server\'s event loop per request (all responses); CPU columns in cores (server: its process group).');
  console.log(`\nTargets (${machine.cpus} cores, France-scale dataset):`);
  const rows = TARGETS.map((t) => ({ what: t.what, result: t.check(measured) }));
  if (memory) rows.push({ what: 'server memory: RSS < 4 GB', result: { value: `${fmt(memory.rss / 2 ** 30, 2)} GiB (peak ${fmt(memory.peak / 2 ** 30, 2)} GiB)`, met: memory.peak < 4e9 } });
  for (const c of [1, 8]) {
    for (const kind of ['code_postal', 'code_departement'] as const) {
      const r = sideBySide.find((x) => x.kind === kind && x.connections === c);
      if (!r) continue;
      const ratio = r.api.rps / r.postgres.qps;
      const goal = kind === 'code_departement' ? 5 : 1;
      rows.push({
        what: `same ${kind === 'code_postal' ? 'postal-code' : 'département'} medians as a tuned PostgreSQL, ${c} connection${c > 1 ? 's' : ''}: ${goal === 1 ? 'ahead' : '≥ 5×'}`,
        result: { value: `API ${fmt(r.api.rps)} req/s (p50 ${fmt(r.api.p50, 2)} ms) vs PostgreSQL ${fmt(r.postgres.qps)} queries/s (p50 ${fmt(r.postgres.p50, 2)} ms): ×${fmt(ratio, 1)}`, met: ratio >= goal },
      });
    }
  }
  for (const r of rows) console.log(`  ${r.result ? (r.result.met ? 'met    ' : 'NOT MET') : 'not run'}  ${r.what}: ${r.result?.value ?? '–'}`);
  console.log(`Bench done in ${fmt((Date.now() - started) / 1000, 0)} s.`);
  if (a.json) {
    fs.writeFileSync(a.json, JSON.stringify({ date: new Date().toISOString(), machine, dataset: { sales: stamp.marts.sales, servingFile: path.basename(stamp.marts.servingFile) }, env: Object.keys(a.env), duration: a.duration, runs: measured, targets: rows, memory, sideBySide }, null, 2));
  }
}

main().catch((e: Error) => {
  console.error(`bench failed: ${e.stack ?? e.message}`);
  process.exit(1);
});
