// dbt-like marts runner: SQL models under marts/models declare their dependencies with {{ ref('x') }} /
// {{ source('x') }} and their grain, sort order, indexes and checks in header comments. Models are built in
// dependency order into a new DuckDB file; every check must pass; tables are exported to Parquet (data/marts)
// and the file becomes the serving database through an atomic pointer swap.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { dataDir, paths, repoRoot } from '../lib/config';
import { all, DuckDBInstance, lit, run, type DuckDBConnection } from '../lib/duck';
import { Lake, writeFileAtomic } from '../pipeline/lake';
import { OPTIONAL_SOURCE_COLUMNS } from '../pipeline/sources/national';

export interface Model {
  name: string;
  file: string;
  sql: string;
  materialized: 'table' | 'view';
  grain?: string;
  sort: string[];
  indexes: string[];
  checks: string[];
  refs: string[];
  sources: string[];
}

export interface BuildReport {
  servingFile: string;
  models: Array<{ name: string; rows: number | null; seconds: number; checks: number }>;
  seconds: number;
}

const MODELS_DIR = path.join(repoRoot, 'marts', 'models');
const HIVE = `hive_partitioning = true, hive_types = {'code_departement': VARCHAR, 'annee': INTEGER}`;

export function loadModels(dir = MODELS_DIR): Model[] {
  const files = fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.sql')).sort();
  return files.map((rel) => {
    const file = path.join(dir, rel);
    const sql = fs.readFileSync(file, 'utf8');
    const header = (key: string) =>
      [...sql.matchAll(new RegExp(`^--\\s*${key}:\\s*(.+)$`, 'gm'))].map((m) => m[1].trim());
    const list = (key: string) => header(key).flatMap((v) => v.split(',').map((s) => s.trim())).filter(Boolean);
    const materialized = header('materialized')[0] ?? 'table';
    if (materialized !== 'table' && materialized !== 'view') throw new Error(`${rel}: materialized must be table or view`);
    return {
      name: path.basename(rel, '.sql'),
      file,
      sql,
      materialized,
      grain: header('grain')[0],
      sort: list('sort'),
      indexes: list('index'),
      checks: header('check'),
      refs: [...sql.matchAll(/\{\{\s*ref\('(\w+)'\)\s*\}\}/g)].map((m) => m[1]),
      sources: [...sql.matchAll(/\{\{\s*source\('(\w+)'(?:,\s*'(\w+)')?\)\s*\}\}/g)].map((m) => m[1]),
    };
  });
}

/** Topological order; a missing or cyclic reference is a build error, not a silent skip. */
export function orderModels(models: Model[]): Model[] {
  const byName = new Map(models.map((m) => [m.name, m]));
  const out: Model[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (m: Model) => {
    if (state.get(m.name) === 'done') return;
    if (state.get(m.name) === 'visiting') throw new Error(`dependency cycle through model ${m.name}`);
    state.set(m.name, 'visiting');
    for (const r of m.refs) {
      const dep = byName.get(r);
      if (!dep) throw new Error(`model ${m.name} refers to unknown model ${r}`);
      visit(dep);
    }
    state.set(m.name, 'done');
    out.push(m);
  };
  for (const m of models) visit(m);
  return out;
}

/** Turns one `-- check:` line into a query returning the number of offending rows. */
export function checkQuery(table: string, check: string): string {
  const m = /^(\w+)\((.*)\)$/s.exec(check.trim());
  if (!m) throw new Error(`malformed check "${check}" on ${table}`);
  const [, kind, args] = m;
  const cols = args.split(',').map((s) => s.trim());
  switch (kind) {
    case 'unique':
      return `select count(*) from (select ${args} from ${table} group by all having count(*) > 1)`;
    case 'not_null':
      return `select count(*) from ${table} where ${cols.map((c) => `${c} is null`).join(' or ')}`;
    case 'accepted_values':
      return `select count(*) from ${table} where ${cols[0]} is not null and ${cols[0]} not in (${cols.slice(1).join(', ')})`;
    case 'expression':
      return `select count(*) from ${table} where not coalesce((${args}), false)`;
    default:
      throw new Error(`unknown check kind ${kind} on ${table}`);
  }
}

export async function buildMarts(opts: { dataRoot?: string; modelsDir?: string; log?: (m: string) => void } = {}): Promise<BuildReport> {
  const root = opts.dataRoot ?? dataDir();
  const log = opts.log ?? (() => {});
  const lake = new Lake(root);
  const unlock = lake.lock();
  try {
    return await build(lake, root, opts.modelsDir ?? MODELS_DIR, log);
  } finally {
    unlock();
  }
}

async function build(lake: Lake, root: string, modelsDir: string, log: (m: string) => void): Promise<BuildReport> {
  const started = performance.now();
  const servingDir = paths.serving(root);
  fs.mkdirSync(servingDir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[-:.]/g, '').replace('T', '-').slice(0, 15);
  // unique even for two builds in the same second: the name is what tells the API a new build exists
  const name = `foncier-${stamp}-${crypto.randomBytes(4).toString('hex')}.duckdb`;
  const building = path.join(servingDir, `.building-${process.pid}-${name}`);
  const instance = await DuckDBInstance.create(building, { threads: '2', memory_limit: '8GB' });
  const conn = await instance.connect();
  const report: BuildReport = { servingFile: '', models: [], seconds: 0 };
  try {
    const sourceSql = (src: string, table?: string) => {
      if (table) {
        const file = path.join(lake.root, src, `${table}.parquet`);
        if (!fs.existsSync(file)) throw new Error(`the lake has no ${src}/${table} yet: run \`npm run pipeline\` first`);
        return `read_parquet(${lit(file)})`;
      }
      if (lake.existingPartitionFiles(src).length === 0) {
        // Income and rent sources are optional: their marts are built empty, and the API says the data is not loaded.
        const optional = OPTIONAL_SOURCE_COLUMNS[src];
        if (optional) {
          const cols = Object.entries({ ...optional, code_departement: 'VARCHAR', annee: 'INTEGER' }).map(([c, t]) => `NULL::${t} AS ${c}`);
          log(`  (source ${src} is not loaded: its models are built empty)`);
          return `(select ${cols.join(', ')} where false)`;
        }
        throw new Error(`the lake has no ${src} data yet: run \`npm run pipeline\` first`);
      }
      return `read_parquet(${lit(lake.glob(src))}, ${HIVE})`;
    };
    const ordered = orderModels(loadModels(modelsDir));
    for (const model of ordered) {
      const t0 = performance.now();
      const body = model.sql
        .replace(/\{\{\s*ref\('(\w+)'\)\s*\}\}/g, (_, r: string) => r)
        .replace(/\{\{\s*source\('(\w+)'(?:,\s*'(\w+)')?\)\s*\}\}/g, (_, s: string, t?: string) => sourceSql(s, t));
      if (model.materialized === 'view') {
        // Views read the lake: kept temporary so the serving file never points outside itself.
        await run(conn, `create or replace temp view ${model.name} as ${body}`);
      } else {
        const order = model.sort.length ? ` order by ${model.sort.join(', ')}` : '';
        await run(conn, `create or replace table ${model.name} as select * from (${body})${order}`);
        for (const col of model.indexes) await run(conn, `create index ${model.name}_${col}_idx on ${model.name} (${col})`);
      }
      for (const check of model.checks) {
        const [row] = await all<Record<string, number>>(conn, checkQuery(model.name, check));
        const bad = Object.values(row)[0];
        if (bad > 0) throw new Error(`check failed on ${model.name}: ${check} (${bad} offending rows)`);
      }
      const rows = model.materialized === 'table'
        ? Number(Object.values((await all(conn, `select count(*) from ${model.name}`))[0])[0])
        : null;
      const seconds = (performance.now() - t0) / 1000;
      report.models.push({ name: model.name, rows, seconds, checks: model.checks.length });
      log(`  ${model.name.padEnd(24)} ${rows === null ? 'view' : `${rows} rows`}, ${model.checks.length} checks passed, ${seconds.toFixed(2)} s`);
    }

    // Snapshot of the manifest inside the serving file, so data vintages and the served data never disagree.
    await run(conn, `create or replace table meta_manifest as select ${lit(JSON.stringify(lake.readManifest()))} as manifest, now() as built_at`);
    await exportParquet(conn, ordered.filter((m) => m.materialized === 'table'), paths.marts(root));
    await run(conn, 'checkpoint');
  } catch (e) {
    conn.closeSync();
    instance.closeSync();
    fs.rmSync(building, { force: true });
    fs.rmSync(`${building}.wal`, { force: true });
    throw e;
  }
  conn.closeSync();
  instance.closeSync();
  const final = path.join(servingDir, name);
  fs.renameSync(building, final);
  writeFileAtomic(path.join(servingDir, 'CURRENT'), name + '\n');
  pruneServingFiles(servingDir, name);
  report.servingFile = final;
  report.seconds = (performance.now() - started) / 1000;
  return report;
}

/** Analysts' copies: one Parquet file per mart, each written under a temporary name then renamed. */
async function exportParquet(conn: DuckDBConnection, models: Model[], dir: string): Promise<void> {
  fs.mkdirSync(dir, { recursive: true });
  for (const m of models) {
    const target = path.join(dir, `${m.name}.parquet`);
    const tmp = `${target}.tmp-${process.pid}`;
    await run(conn, `copy ${m.name} to ${lit(tmp)} (format parquet, compression zstd)`);
    fs.renameSync(tmp, target);
  }
}

/** Keeps the current serving file and the previous one (a running API may still be reading it). */
function pruneServingFiles(dir: string, current: string): void {
  const files = fs.readdirSync(dir).filter((f) => /^foncier-.*\.duckdb$/.test(f) && f !== current).sort();
  for (const f of files.slice(0, -1)) fs.rmSync(path.join(dir, f), { force: true });
  for (const f of fs.readdirSync(dir).filter((f) => f.startsWith('.building-'))) {
    // builds hold the lake lock, so another process's unfinished build is a leftover of a killed run
    const pid = Number(/^\.building-(\d+)-/.exec(f)?.[1]);
    if (pid !== process.pid) fs.rmSync(path.join(dir, f), { recursive: true, force: true }); // with its .tmp spill folder
  }
}
