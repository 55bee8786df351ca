// `npm run bench -- postgres-side [--data-dir DIR] [--connections 1,8] [--duration 10] [--queries 100000]
// [--cluster-dir DIR]`: what a user would pick instead of the API, side by side. The `ventes` of the serving file
// loaded into a local PostgreSQL with the best indexes for the query mix, then the query mix of GET /v1/stats/market
// (postal-code and département medians over random windows, the default cleaning) run over the wire at each
// connection count: queries/s, p50, p99 and PostgreSQL's CPU. The throughput bench calls the same functions to put
// PostgreSQL's rates beside the API's.
//
// The cluster is kept in `<data-dir>/postgres-side/` (or --cluster-dir) with a stamp naming the serving file it
// holds, so a rerun on the same serving file skips the load (minutes at France scale).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { DuckDBInstance, lit, run } from '../../lib/duck';
import { currentServingFile } from '../../lib/serving';
import { Rng } from '../../pipeline/demo/generate';
import { startPostgres } from '../../test/helpers/postgres';
import { count, positive } from '../args';
import { DEFAULT_DATA_DIR } from '../france-data/build';
import { dateDebut, types3 } from './cases';
import { fmt, percentile, readDims } from './http-load';

/** One query of the mix: what the API side sends as query parameters of GET /v1/stats/market. */
export interface MixQuery {
  code_postal?: string;
  code_departement?: string;
  /** Absent: the API's default types (Maison, Appartement, Local commercial, Dépendance). */
  type_local?: string;
  date_debut: string;
  date_fin: string;
}

export type MixKind = 'code_postal' | 'code_departement';

/** The window's end of every query: the end of the data, so that windows run 2–3 years. */
export const MIX_DATE_FIN = '2025-12-31';

/** The types GET /v1/stats/market counts without type_local (api/sales/filter.ts's DEFAULT_TYPES). */
const DEFAULT_TYPES = ['Maison', 'Appartement', 'Local commercial', 'Dépendance'];

/**
 * `n` deterministic random queries: a zone of `zones`, a type ('' = absent, 'Maison' or 'Appartement'), date_debut a
 * day of 2022-12-01 … 2023-11-30, date_fin MIX_DATE_FIN. No query twice while the combinations last.
 */
export function mixQueries(zones: string[], kind: MixKind, n: number, seed: number): MixQuery[] {
  if (!zones.length) throw new Error('mixQueries: no zones');
  const rng = new Rng(seed);
  const types = types3();
  const days = dateDebut();
  const space = zones.length * types.length * days.length;
  const seen = new Set<string>();
  const out: MixQuery[] = [];
  while (out.length < n) {
    let zone: string, type: string, day: string;
    let tries = 0;
    do {
      [zone, type, day] = [rng.pick(zones), rng.pick(types), rng.pick(days)];
    } while (seen.has(`${zone}|${type}|${day}`) && seen.size < space && ++tries < 1000);
    seen.add(`${zone}|${type}|${day}`);
    out.push({ [kind]: zone, ...(type ? { type_local: type } : {}), date_debut: day, date_fin: MIX_DATE_FIN });
  }
  return out;
}

/** The columns of `ventes` the mix reads, in the order of the exported CSV and of the PostgreSQL table. */
const COLUMNS: Array<[name: string, pgType: string]> = [
  ['code_postal', 'text'], ['code_departement', 'text'], ['type_local', 'text'], ['date_mutation', 'date'],
  ['valeur_fonciere', 'double precision'], ['prix_m2', 'double precision'], ['surface_reelle_bati', 'double precision'],
  ['is_bulk_sale', 'boolean'], ['is_outlier', 'boolean'], ['is_vefa', 'boolean'],
];

/** The default cleaning of the API, the predicate of the partial indexes and of every query of the mix. */
const CLEAN = 'not is_bulk_sale and not is_outlier and not is_vefa';

/**
 * The indexes: per zone kind, a partial covering B-tree on (zone, type_local, date_mutation) over the clean sales only,
 * with the three measured columns as payload: a query is one index range per type, read by an index-only scan (the
 * table is vacuumed after the load so that every page is all-visible), never touching the heap.
 */
const INDEXES = (['code_postal', 'code_departement'] as const).map((zone) => ({
  name: `ventes_${zone}_clean`,
  sql: `create index ventes_${zone}_clean on ventes (${zone}, type_local, date_mutation)
    include (valeur_fonciere, prix_m2, surface_reelle_bati) where ${CLEAN}`,
}));

/**
 * Server settings for a 24 GB / 2-core machine serving a read-only table of up to ~2 GB and its two ~1 GB indexes,
 * with the API and its load generator beside it: everything fits in shared_buffers (a quarter of the memory, the usual
 * rule); work_mem holds a département's sorts (three ordered-set aggregates over up to ~300,000 values) in memory at
 * 8 connections; no JIT (it costs tens of milliseconds per département query and pays back nothing on index-only
 * scans); planner costs of a cached, SSD-backed database. Nothing is durable: wal_level minimal lets the load skip
 * WAL (the table is created and filled in one transaction), and startPostgres turns fsync off.
 */
export const POSTGRES_SETTINGS: Record<string, string> = {
  shared_buffers: '6GB',
  effective_cache_size: '16GB',
  work_mem: '64MB',
  maintenance_work_mem: '2GB',
  max_parallel_maintenance_workers: '2',
  jit: 'off',
  random_page_cost: '1.1',
  effective_io_concurrency: '200',
  wal_level: 'minimal',
  max_wal_senders: '0',
  max_wal_size: '8GB',
  checkpoint_timeout: '30min',
};

/** Bumped when the table, its load order or its indexes change, so that a kept cluster is reloaded. */
const DESIGN = 1;

interface Stamp { serving_file: string; size: number; mtime_ms: number; design: number; rows: number; load_seconds: number }

/** The aggregates of GET /v1/stats/market (api/sales/filter.ts's marketStatsSql) in PostgreSQL, for one zone kind. */
export function mixSql(kind: MixKind): string {
  const stats = (col: string, p: string, filter = '') =>
    `percentile_cont(0.5) within group (order by ${col})${filter} as ${p}_med, avg(${col})${filter} as ${p}_avg, ` +
    `min(${col})${filter} as ${p}_min, max(${col})${filter} as ${p}_max`;
  return `select count(*)::int as count, ${stats('valeur_fonciere', 'p')}, ${stats('prix_m2', 'm')},
      ${stats('surface_reelle_bati', 's', ' filter (where surface_reelle_bati > 0)')}
    from ventes
    where ${kind} = $1 and type_local = any($2::text[]) and date_mutation between $3::date and $4::date and ${CLEAN}`;
}

/** The parameters of mixSql for one query. */
export function mixParams(q: MixQuery): [string, string[], string, string] {
  const zone = q.code_postal ?? q.code_departement;
  if (zone === undefined) throw new Error('a mix query names a code_postal or a code_departement');
  return [zone, q.type_local ? [q.type_local] : DEFAULT_TYPES, q.date_debut, q.date_fin];
}

export const mixKind = (q: MixQuery): MixKind => (q.code_postal !== undefined ? 'code_postal' : 'code_departement');

/**
 * A local PostgreSQL holding the `ventes` of `servingFile` (the columns the mix reads), indexed for the mix, its
 * indexes read into shared_buffers. The cluster is kept in `clusterDir` (default `<dataDir>/postgres-side`; the
 * server's account must be able to enter its parents) and reloaded only when the serving file or the design changed;
 * `loadSeconds` is the load's duration (that of the earlier run when `reused`).
 */
export async function preparePostgres(opts: { servingFile: string; dataDir: string; log: (line: string) => void; clusterDir?: string }): Promise<{
  url: string; stop(): Promise<void>; loadSeconds: number; rows: number; reused: boolean;
}> {
  const dir = path.resolve(opts.clusterDir ?? path.join(opts.dataDir, 'postgres-side'));
  const stampFile = path.join(dir, 'loaded.json');
  const st = fs.statSync(opts.servingFile);
  const want = { serving_file: path.basename(opts.servingFile), size: st.size, mtime_ms: Math.round(st.mtimeMs), design: DESIGN };
  const server = await startPostgres({ dir, settings: POSTGRES_SETTINGS });
  const client = new pg.Client({ connectionString: server.url });
  try {
    await client.connect();
    const old = fs.existsSync(stampFile) ? (JSON.parse(fs.readFileSync(stampFile, 'utf8')) as Stamp) : undefined;
    const same = old && (Object.keys(want) as Array<keyof typeof want>).every((k) => old[k] === want[k]);
    // The table as the stamp describes it: a load interrupted after the stamp's removal leaves no stamp.
    const present = same && (await client.query<{ n: number }>('select count(*)::int as n from ventes').catch(() => undefined));
    let stamp: Stamp;
    let reused = false;
    if (same && present && present.rows[0].n === old.rows) {
      stamp = old;
      reused = true;
      opts.log(`PostgreSQL: ${fmt(stamp.rows)} sales of ${stamp.serving_file} already loaded in ${dir} (in ${fmt(stamp.load_seconds, 1)} s)`);
    } else {
      fs.rmSync(stampFile, { force: true });
      const t0 = performance.now();
      const rows = await load(client, opts.servingFile, dir, opts.log);
      stamp = { ...want, rows, load_seconds: (performance.now() - t0) / 1000 };
      fs.writeFileSync(stampFile, JSON.stringify(stamp, null, 2) + '\n');
      opts.log(`PostgreSQL: ${fmt(rows)} sales loaded and indexed in ${fmt(stamp.load_seconds, 1)} s`);
    }
    // The indexes into shared_buffers: every run starts as warm as the API's in-memory data.
    await client.query('create extension if not exists pg_prewarm');
    for (const ix of INDEXES) await client.query('select pg_prewarm($1)', [ix.name]);
    return { url: server.url, stop: () => server.stop(), loadSeconds: stamp.load_seconds, rows: stamp.rows, reused };
  } catch (e) {
    await server.stop();
    throw e;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Exports the mix's columns with DuckDB (in index order, as CLUSTER would leave them), COPYs them in, indexes, vacuums. */
async function load(client: pg.Client, servingFile: string, dir: string, log: (line: string) => void): Promise<number> {
  const csv = path.join(dir, 'ventes.csv');
  let t = performance.now();
  const lap = () => {
    const s = (performance.now() - t) / 1000;
    t = performance.now();
    return `${fmt(s, 1)} s`;
  };
  const tmp = path.join(dir, 'duckdb-tmp');
  const instance = await DuckDBInstance.create(servingFile, { access_mode: 'READ_ONLY', threads: '2', memory_limit: '4GB', temp_directory: tmp });
  const conn = await instance.connect();
  try {
    await run(conn, `copy (select ${COLUMNS.map(([c]) => c).join(', ')} from ventes order by code_postal, type_local, date_mutation)
      to ${lit(csv)} (format csv, header false)`);
  } finally {
    conn.closeSync();
    instance.closeSync();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  fs.chmodSync(csv, 0o644); // read by the server's account
  log(`PostgreSQL: ventes exported from ${path.basename(servingFile)} (${fmt(fs.statSync(csv).size / 2 ** 20)} MiB of CSV) in ${lap()}`);
  try {
    // Created and filled in one transaction: with wal_level minimal the COPY writes no WAL, and FREEZE writes the rows
    // frozen with their pages marked all-visible, which index-only scans need.
    await client.query('begin');
    await client.query('drop table if exists ventes');
    await client.query(`create table ventes (${COLUMNS.map(([c, type]) => `${c} ${type}`).join(', ')})`);
    const copied = await client.query(`copy ventes from ${lit(csv)} (format csv, freeze)`);
    await client.query('commit');
    log(`PostgreSQL: ${fmt(copied.rowCount ?? 0)} rows copied in ${lap()}`);
    for (const ix of INDEXES) {
      await client.query(ix.sql);
      log(`PostgreSQL: index ${ix.name} built in ${lap()}`);
    }
    await client.query('vacuum (analyze) ventes');
    const [vm] = (await client.query<{ pages: number; visible: number }>(`select relpages as pages, relallvisible as visible from pg_class where relname = 'ventes'`)).rows;
    log(`PostgreSQL: vacuum analyze in ${lap()}; ${fmt(vm.visible)} of ${fmt(vm.pages)} pages all-visible (index-only scans)`);
    return copied.rowCount ?? 0;
  } finally {
    fs.rmSync(csv, { force: true });
  }
}

/** CPU seconds (user + system) of the postmaster and its children (backends, background workers), from /proc. */
function postgresCpuSeconds(postmaster: number): number {
  let ticks = 0;
  for (const pid of fs.readdirSync('/proc').filter((f) => /^\d+$/.test(f))) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields from 3 (state) on
      if (Number(pid) === postmaster || Number(f[1]) === postmaster) ticks += Number(f[11]) + Number(f[12]); // ppid = 4, utime = 14, stime = 15
    } catch {
      // the process ended meanwhile
    }
  }
  return ticks / 100; // USER_HZ on Linux
}

/**
 * `connections` clients, each running the next query of `queries` (one shared cursor: no query twice until the list
 * is exhausted) as a prepared statement per zone kind, back to back for `durationSeconds`. Latencies in ms, measured
 * from the client's send to its answer; cpuSeconds is PostgreSQL's (all its processes), when /proc is there, and
 * clientCpuSeconds this process's (the pg clients', on the same cores).
 */
export async function runPostgresMix(opts: { url: string; queries: MixQuery[]; connections: number; durationSeconds: number }): Promise<{
  queries: number; qps: number; p50: number; p99: number; cpuSeconds?: number; clientCpuSeconds: number; repeats: number;
}> {
  if (!opts.queries.length) throw new Error('runPostgresMix: no queries');
  const clients = Array.from({ length: opts.connections }, () => new pg.Client({ connectionString: opts.url }));
  try {
    await Promise.all(clients.map((c) => c.connect()));
    const postmaster = parentOf((await clients[0].query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0].pid);
    const latencies: number[] = [];
    let next = 0;
    const cpu0 = postmaster ? postgresCpuSeconds(postmaster) : undefined;
    const self0 = process.cpuUsage();
    const t0 = performance.now();
    const end = t0 + opts.durationSeconds * 1000;
    await Promise.all(clients.map(async (c) => {
      while (performance.now() < end) {
        const q = opts.queries[next++ % opts.queries.length];
        const kind = mixKind(q);
        const s = performance.now();
        await c.query({ name: `mix_${kind}`, text: mixSql(kind), values: mixParams(q) });
        latencies.push(performance.now() - s);
      }
    }));
    const seconds = (performance.now() - t0) / 1000;
    const self = process.cpuUsage(self0);
    const cpuSeconds = postmaster && cpu0 !== undefined ? postgresCpuSeconds(postmaster) - cpu0 : undefined;
    const sorted = Float64Array.from(latencies).sort();
    return {
      queries: latencies.length,
      qps: latencies.length / seconds,
      p50: percentile(sorted, 50) ?? 0,
      p99: percentile(sorted, 99) ?? 0,
      ...(cpuSeconds !== undefined ? { cpuSeconds } : {}),
      clientCpuSeconds: (self.user + self.system) / 1e6,
      repeats: Math.max(0, next - opts.queries.length),
    };
  } finally {
    await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
  }
}

/** The parent of a process (the postmaster of a backend), from /proc; undefined elsewhere. */
function parentOf(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

async function main(): Promise<void> {
  const text = { type: 'string' } as const;
  const { values } = parseArgs({ options: { 'data-dir': text, 'cluster-dir': text, connections: text, duration: text, queries: text, seed: text } });
  const dataDir = path.resolve(values['data-dir'] ?? DEFAULT_DATA_DIR);
  const connections = (values.connections ?? '1,8').split(',').map((c) => count(c, 'connections', 1));
  const duration = positive(values.duration, 'duration', 10);
  const n = count(values.queries, 'queries', 100_000);
  const seed = count(values.seed, 'seed', 42);
  const servingFile = currentServingFile(dataDir);
  if (!servingFile) throw new Error(`no serving database in ${dataDir} (build the data first)`);

  const dims = await readDims(servingFile);
  const pgSide = await preparePostgres({ servingFile, dataDir, log: console.log, clusterDir: values['cluster-dir'] });
  const rows: Array<{ kind: MixKind; connections: number; r: Awaited<ReturnType<typeof runPostgresMix>> }> = [];
  try {
    for (const [kind, zones] of [['code_postal', dims.postal], ['code_departement', dims.departements]] as const) {
      // One list per kind, walked on across connection counts: no query runs twice in the whole bench.
      const queries = mixQueries(zones, kind, n, seed);
      let offset = 0;
      for (const c of connections) {
        const r = await runPostgresMix({ url: pgSide.url, queries: queries.slice(offset).concat(queries.slice(0, offset)), connections: c, durationSeconds: duration });
        offset = (offset + r.queries) % queries.length;
        rows.push({ kind, connections: c, r });
        console.log(`${kind} × ${c}: ${fmt(r.qps)} queries/s`);
      }
    }
  } finally {
    await pgSide.stop();
  }

  const cpu = os.cpus();
  console.log(`\nPostgreSQL side by side: ${fmt(pgSide.rows)} sales of ${path.basename(servingFile)}, ${duration} s per run`);
  console.log(`machine: ${cpu.length} × ${cpu[0]?.model ?? '?'}, ${fmt(os.totalmem() / 2 ** 30)} GiB, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const head = ['mix', 'connections', 'queries/s', 'p50 ms', 'p99 ms', 'PG cores', 'client cores', 'queries'];
  const table = rows.map(({ kind, connections: c, r }) => [
    kind === 'code_postal' ? 'postal code' : 'département', String(c), fmt(r.qps), fmt(r.p50, 2), fmt(r.p99, 2),
    r.cpuSeconds === undefined ? '–' : fmt(r.cpuSeconds / duration, 2), fmt(r.clientCpuSeconds / duration, 2), fmt(r.queries) + (r.repeats ? ` (${fmt(r.repeats)} repeated)` : ''),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...table.map((t) => t[i].length)));
  for (const line of [head, widths.map((w) => '-'.repeat(w)), ...table]) console.log(line.map((v, i) => (i < 1 ? v.padEnd(widths[i]) : v.padStart(widths[i]))).join('  '));
}

// Run as a program (lab/run.ts), not when the throughput bench or the test imports the functions.
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
