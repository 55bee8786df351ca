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
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { repoRoot } from '../../lib/config';
import { all, DuckDBInstance } from '../../lib/duck';
import { openStore } from '../../api/store';
import { DEFAULT_DATA_DIR, DEFAULT_SALES, readStamp, type Stamp } from '../france-data/build';
import { freePort } from '../../lib/net';
import { count, positive } from '../args';
import { CASES, datasetDims, expandQuery, type BenchCase, type Dims, type Targets } from './cases';

// ---------------------------------------------------------------------------------------------------------------
// Targets and cases
// ---------------------------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------------------------
// Query generation
// ---------------------------------------------------------------------------------------------------------------

const urlOf = (p: string, q: Record<string, string>) => {
  const qs = Object.entries(q).filter(([, v]) => v !== '').map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&');
  return qs ? `${p}?${qs}` : p;
};

/** Paths sent so far in this bench: an uncached request must never repeat one (across cases and modes). */
const sent = new Set<string>();

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

/** Endless generator of never-sent queries for a case: index i → (i × stride) mod N, decoded in mixed radix. */
function uncachedQueries(c: BenchCase, dims: Dims): { next: () => string; space: number; repeats: () => number } {
  const names = Object.keys(c.vary);
  const values = names.map((n) => c.vary[n](dims));
  const space = values.reduce((a, v) => a * v.length, 1);
  let stride = Math.floor(space * 0.6180339887) | 1;
  while (gcd(stride, space) !== 1) stride++;
  let i = 0;
  let repeats = 0;
  const at = (k: number) => {
    let idx = (k * stride) % space;
    const q: Record<string, string> = {};
    for (let d = names.length - 1; d >= 0; d--) {
      q[names[d]] = values[d][idx % values[d].length];
      idx = Math.floor(idx / values[d].length);
    }
    return urlOf(c.path, expandQuery(Object.fromEntries(names.map((n) => [n, q[n]]))));
  };
  return {
    space,
    repeats: () => repeats,
    next: () => {
      for (let tries = 0; tries < space; tries++) {
        const u = at(i++ % space);
        if (!sent.has(u)) {
          sent.add(u);
          return u;
        }
      }
      repeats++; // the space is exhausted: the table reports it (make `vary` larger)
      return at(i++ % space);
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Server, keys, load
// ---------------------------------------------------------------------------------------------------------------

interface Server { child: ChildProcess; base: string; logFile: string; exited: Promise<number | null> }

async function startServer(dataDir: string): Promise<Server> {
  const port = await freePort();
  const logFile = path.join(dataDir, 'bench-server.log');
  const log = fs.openSync(logFile, 'w');
  // Own process group (detached), so that stopping it also stops the node process npx and tsx start under it.
  const child = spawn('npx', ['tsx', 'scripts/start.ts'], {
    cwd: repoRoot, detached: true, stdio: ['ignore', log, log],
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), NODE_ENV: 'production' },
  });
  fs.closeSync(log);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let dead = false;
  void exited.then(() => (dead = true));
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (dead) throw new Error(`the server exited before answering /health:\n${fs.readFileSync(logFile, 'utf8').slice(-3000)}`);
    try {
      const r = await fetch(`${base}/health`);
      if (r.status === 200) return { child, base, logFile, exited };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  stopServer({ child, base, logFile, exited });
  throw new Error(`the server did not answer /health within 120 s (log: ${logFile})`);
}

function stopServer(s: Server): Promise<unknown> {
  try {
    if (s.child.pid) process.kill(-s.child.pid, 'SIGTERM');
  } catch {
    // already gone
  }
  const kill = setTimeout(() => {
    try {
      if (s.child.pid) process.kill(-s.child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }, 5000);
  return s.exited.finally(() => clearTimeout(kill));
}

/** CPU seconds (user + system) of every process of a process group, from /proc (Linux; 0 elsewhere). */
function groupCpuSeconds(pgid: number | undefined): number {
  if (!pgid || !fs.existsSync('/proc/self/stat')) return 0;
  const hz = 100; // USER_HZ on Linux
  let ticks = 0;
  for (const pid of fs.readdirSync('/proc').filter((f) => /^\d+$/.test(f))) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields from 3 (state) on
      if (Number(f[2]) === pgid) ticks += Number(f[11]) + Number(f[12]); // pgrp = field 5, utime = 14, stime = 15
    } catch {
      // the process ended meanwhile
    }
  }
  return ticks / hz;
}

/**
 * Waits until the server is idle: requests still in flight when autocannon stops (up to one per connection) keep the
 * database busy for a while, and the next run, or its probe, must not start on that backlog.
 */
async function drain(server: Server): Promise<void> {
  const deadline = Date.now() + 30_000;
  if (!fs.existsSync('/proc/self/stat')) return new Promise((r) => setTimeout(r, 3000));
  let idle = 0;
  while (Date.now() < deadline && idle < 2) {
    const c0 = groupCpuSeconds(server.child.pid);
    await new Promise((r) => setTimeout(r, 250));
    idle = (groupCpuSeconds(server.child.pid) - c0) / 0.25 < 0.1 ? idle + 1 : 0;
  }
}

/** Busy CPU seconds of the whole machine (all cores), from /proc/stat (Linux; 0 elsewhere). */
function machineBusySeconds(): number {
  try {
    const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const idle = f[3] + f[4]; // idle + iowait
    return (f.reduce((a, b) => a + b, 0) - idle) / 100;
  } catch {
    return 0;
  }
}

async function createKeys(dataDir: string, n: number): Promise<string[]> {
  const state = openStore({ dataRoot: dataDir });
  try {
    const label = `bench ${new Date().toISOString()}`;
    const keys: string[] = [];
    for (let i = 0; i < n; i++) {
      const { id, key } = await state.keys.createKey({ plan: 'Enterprise', label });
      await state.keys.topup(id, 10_000_000);
      keys.push(key);
    }
    return keys;
  } finally {
    await state.close();
  }
}

interface RunResult {
  case: string;
  mode: 'uncached' | 'cached';
  connections: number;
  seconds: number;
  requests: number;
  ok: number;
  rps: number;
  p50: number | null;
  p90: number | null;
  p99: number | null;
  max: number | null;
  non2xx: number;
  statuses: Record<string, number>;
  errors: number;
  repeats: number;
  serverCores: number;
  clientCores: number;
  /** CPU used meanwhile by everything else on the machine (other users' jobs on a shared machine). */
  otherCores: number;
}

const percentile = (sorted: Float64Array, p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : null);

async function load(server: Server, opts: { connections: number; duration: number; next: () => string; key: () => string }): Promise<Omit<RunResult, 'case' | 'mode' | 'repeats'>> {
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  const cpu0 = groupCpuSeconds(server.child.pid);
  const busy0 = machineBusySeconds();
  const self0 = process.cpuUsage();
  const t0 = performance.now();
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: server.base,
        connections: opts.connections,
        duration: opts.duration,
        requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: opts.next(), headers: { 'x-api-key': opts.key() } }) }],
      },
      (err, res) => (err ? reject(err) : resolve(res)),
    );
    instance.on('response', (_client, status, _bytes, ms) => {
      statuses[status] = (statuses[status] ?? 0) + 1;
      if (status >= 200 && status < 300) latencies.push(ms);
    });
  });
  const seconds = (performance.now() - t0) / 1000;
  const self = process.cpuUsage(self0);
  const serverCpu = groupCpuSeconds(server.child.pid) - cpu0;
  const otherCpu = Math.max(0, machineBusySeconds() - busy0 - serverCpu - (self.user + self.system) / 1e6);
  const sorted = Float64Array.from(latencies).sort();
  const requests = Object.values(statuses).reduce((a, b) => a + b, 0);
  const ok = latencies.length;
  return {
    connections: opts.connections, seconds, requests, ok, rps: ok / result.duration,
    p50: percentile(sorted, 50), p90: percentile(sorted, 90), p99: percentile(sorted, 99), max: sorted.length ? sorted[sorted.length - 1] : null,
    non2xx: requests - ok, statuses: Object.fromEntries(Object.entries(statuses).filter(([s]) => !s.startsWith('2'))),
    errors: result.errors, serverCores: serverCpu / seconds, clientCores: (self.user + self.system) / 1e6 / seconds, otherCores: otherCpu / seconds,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------------------------

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

const fmt = (x: number | null, d = 0) => (x === null ? '–' : x.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d }));

function ensureData(a: Args): Promise<void> {
  const script = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'france-data', 'build.ts');
  const argv = [...process.execArgv, script, '--sales', String(a.sales), '--data-dir', a.dataDir, ...(a.rebuild ? ['--rebuild', a.rebuild] : [])];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, argv, { stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`france-data exited with code ${code}`))));
  });
}

async function readDims(servingFile: string): Promise<Dims & { postalCounts: number[]; fixedCounts: Record<string, number> }> {
  const instance = await DuckDBInstance.create(servingFile, { access_mode: 'READ_ONLY' });
  const conn = await instance.connect();
  try {
    const fixed = await all<{ k: string; n: number }>(conn, `select 'code_postal=75015' as k, count(*) as n from ventes where code_postal = '75015'
      union all select 'code_departement=33', count(*) from ventes where code_departement = '33'`);
    return { ...(await datasetDims(conn)), fixedCounts: Object.fromEntries(fixed.map((r) => [r.k, r.n])) };
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

async function main() {
  const a = options(process.argv.slice(2));
  const started = Date.now();
  await ensureData(a);
  const stamp = readStamp(a.dataDir) as Stamp;
  if (!stamp?.marts) throw new Error(`no bench stamp in ${a.dataDir}`);
  const dims = await readDims(stamp.marts.servingFile);

  const cpus = os.cpus();
  const machine = {
    cpus: cpus.length, model: cpus[0]?.model.trim() ?? '?', memGiB: os.totalmem() / 2 ** 30, node: process.version,
    os: `${os.platform()} ${os.release()}`, loadavg: os.loadavg(),
  };
  const dataset = {
    sales: stamp.marts.sales, years: stamp.params.years, lakeLines: stamp.lake?.linesKept ?? 0,
    servingFile: path.basename(stamp.marts.servingFile), servingMiB: stamp.marts.servingBytes / 2 ** 20,
  };
  console.log(`\nMachine: ${machine.cpus} CPUs (${machine.model}), ${fmt(machine.memGiB, 1)} GiB RAM, Node ${machine.node}, ${machine.os}; `
    + `load average ${machine.loadavg.map((l) => l.toFixed(2)).join(' ')} (shared machine: the load generator and the server share these cores)`);
  console.log(`Dataset: ${fmt(dataset.sales)} sales (${dataset.years[0]}–${dataset.years.at(-1)}), ${fmt(dataset.lakeLines)} DVF lines; serving file ${dataset.servingFile}, ${fmt(dataset.servingMiB)} MiB`);
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
