// The HTTP load kit of the API benchmarks (api.ts: every case; throughput.ts: the throughput targets): the France-scale
// dataset ensured, the real server started as a child process, a pool of Enterprise keys rotated per request, never-
// repeated query generators, and autocannon runs measured exactly (latency of every response, CPU of the server's
// process group, of the load generator and of the rest of the machine).
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { repoRoot } from '../../lib/config';
import { all, DuckDBInstance } from '../../lib/duck';
import { openStore } from '../../api/store';
import { freePort } from '../../lib/net';
import { readStamp, type Stamp } from '../france-data/build';
import { datasetDims, expandQuery, type BenchCase, type Dims } from './cases';

export const urlOf = (p: string, q: Record<string, string>) => {
  const qs = Object.entries(q).filter(([, v]) => v !== '').map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&');
  return qs ? `${p}?${qs}` : p;
};

/** Paths sent so far in this bench: an uncached request must never repeat one (across cases and modes). */
export const sent = new Set<string>();

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

/** Endless generator of never-sent queries for a case: index i → (i × stride) mod N, decoded in mixed radix. */
export function uncachedQueries(c: BenchCase, dims: Dims): { next: () => string; space: number; repeats: () => number } {
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

export interface Server { child: ChildProcess; base: string; logFile: string; exited: Promise<number | null> }

export async function startServer(dataDir: string, extraEnv: Record<string, string> = {}): Promise<Server> {
  const port = await freePort();
  const logFile = path.join(dataDir, 'bench-server.log');
  const log = fs.openSync(logFile, 'w');
  // Own process group (detached), so that stopping it also stops the node process npx and tsx start under it.
  const child = spawn('npx', ['tsx', 'scripts/start.ts'], {
    cwd: repoRoot, detached: true, stdio: ['ignore', log, log],
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), NODE_ENV: 'production', ...extraEnv },
  });
  fs.closeSync(log);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let dead = false;
  void exited.then(() => (dead = true));
  const base = `http://127.0.0.1:${port}`;
  // Up to 5 minutes: at France scale the in-memory sales index loads before the server answers.
  const deadline = Date.now() + 300_000;
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
  throw new Error(`the server did not answer /health within 300 s (log: ${logFile})`);
}

export function stopServer(s: Server): Promise<unknown> {
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
export function groupCpuSeconds(pgid: number | undefined): number {
  if (!pgid || !fs.existsSync('/proc/self/stat')) return 0;
  return groupProcesses(pgid).reduce((s, p) => s + p.ticks, 0) / 100; // USER_HZ on Linux
}

/** The processes of a process group with their CPU ticks (user + system), from /proc (Linux; none elsewhere). */
function groupProcesses(pgid: number): Array<{ pid: number; ticks: number }> {
  const out: Array<{ pid: number; ticks: number }> = [];
  for (const pid of fs.readdirSync('/proc').filter((f) => /^\d+$/.test(f))) {
    const ticks = statTicks(`/proc/${pid}/stat`, pgid);
    if (ticks !== undefined) out.push({ pid: Number(pid), ticks });
  }
  return out;
}

/** utime + stime of a /proc stat file, when its process group is `pgid` (undefined otherwise or when gone). */
function statTicks(file: string, pgid?: number): number | undefined {
  try {
    const stat = fs.readFileSync(file, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields from 3 (state) on
    if (pgid !== undefined && Number(f[2]) !== pgid) return undefined; // pgrp = field 5
    return Number(f[11]) + Number(f[12]); // utime = 14, stime = 15
  } catch {
    return undefined;
  }
}

/**
 * CPU seconds of the server's main thread (the event loop that parses, routes and answers every request): the main
 * thread of the group's busiest process, the API (npx and tsx's launcher idle beside it). DuckDB's threads excluded.
 */
export function mainThreadCpuSeconds(pgid: number | undefined): number {
  if (!pgid || !fs.existsSync('/proc/self/stat')) return 0;
  const busiest = groupProcesses(pgid).sort((a, b) => b.ticks - a.ticks)[0];
  return busiest ? (statTicks(`/proc/${busiest.pid}/task/${busiest.pid}/stat`) ?? 0) / 100 : 0;
}

/** Resident memory of the group's busiest process (the API), current and peak, in bytes. */
export function serverMemory(pgid: number | undefined): { rss: number; peak: number } | undefined {
  if (!pgid || !fs.existsSync('/proc/self/status')) return undefined;
  const busiest = groupProcesses(pgid).sort((a, b) => b.ticks - a.ticks)[0];
  if (!busiest) return undefined;
  try {
    const status = fs.readFileSync(`/proc/${busiest.pid}/status`, 'utf8');
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
    return { rss: kb('VmRSS'), peak: kb('VmHWM') };
  } catch {
    return undefined;
  }
}

/**
 * Waits until the server is idle: requests still in flight when autocannon stops (up to one per connection) keep the
 * database busy for a while, and the next run, or its probe, must not start on that backlog.
 */
export async function drain(server: Server): Promise<void> {
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
export function machineBusySeconds(): number {
  try {
    const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const idle = f[3] + f[4]; // idle + iowait
    return (f.reduce((a, b) => a + b, 0) - idle) / 100;
  } catch {
    return 0;
  }
}

export async function createKeys(dataDir: string, n: number): Promise<string[]> {
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

export interface RunResult {
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
  /** CPU seconds of the server's main thread (its event loop) during the run. */
  mainThreadCpu: number;
  clientCores: number;
  /** CPU used meanwhile by everything else on the machine (other users' jobs on a shared machine). */
  otherCores: number;
}

export const percentile = (sorted: Float64Array, p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : null);

export async function load(server: Server, opts: { connections: number; duration: number; next: () => string; key?: () => string }): Promise<Omit<RunResult, 'case' | 'mode' | 'repeats'>> {
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  const cpu0 = groupCpuSeconds(server.child.pid);
  const main0 = mainThreadCpuSeconds(server.child.pid);
  const busy0 = machineBusySeconds();
  const self0 = process.cpuUsage();
  const t0 = performance.now();
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: server.base,
        connections: opts.connections,
        duration: opts.duration,
        requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: opts.next(), headers: opts.key ? { 'x-api-key': opts.key() } : {} }) }],
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
  const mainCpu = mainThreadCpuSeconds(server.child.pid) - main0;
  const otherCpu = Math.max(0, machineBusySeconds() - busy0 - serverCpu - (self.user + self.system) / 1e6);
  const sorted = Float64Array.from(latencies).sort();
  const requests = Object.values(statuses).reduce((a, b) => a + b, 0);
  const ok = latencies.length;
  return {
    connections: opts.connections, seconds, requests, ok, rps: ok / result.duration,
    p50: percentile(sorted, 50), p90: percentile(sorted, 90), p99: percentile(sorted, 99), max: sorted.length ? sorted[sorted.length - 1] : null,
    non2xx: requests - ok, statuses: Object.fromEntries(Object.entries(statuses).filter(([s]) => !s.startsWith('2'))),
    errors: result.errors, serverCores: serverCpu / seconds, mainThreadCpu: mainCpu, clientCores: (self.user + self.system) / 1e6 / seconds, otherCores: otherCpu / seconds,
  };
}

export const fmt = (x: number | null, d = 0) => (x === null ? '–' : x.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d }));

export function ensureData(a: { sales: number; dataDir: string; rebuild?: string }): Promise<void> {
  const script = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'france-data', 'build.ts');
  const argv = [...process.execArgv, script, '--sales', String(a.sales), '--data-dir', a.dataDir, ...(a.rebuild ? ['--rebuild', a.rebuild] : [])];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, argv, { stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`france-data exited with code ${code}`))));
  });
}

export async function readDims(servingFile: string): Promise<Dims & { postalCounts: number[]; fixedCounts: Record<string, number> }> {
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

/**
 * The France-scale dataset ensured (built or updated in --data-dir), its stamp, what the uncached queries draw from,
 * and the machine it runs on, printed as the first lines of a bench.
 */
export async function benchDataset(a: { sales: number; dataDir: string; rebuild?: string }) {
  await ensureData(a);
  const stamp = readStamp(a.dataDir) as Stamp & { marts: NonNullable<Stamp['marts']> };
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
  return { stamp, dims, machine, dataset };
}
