// dbt-like marts runner: SQL models under marts/models declare their dependencies with {{ ref('x') }} /
// {{ source('x') }} and their grain, sort order, indexes, checks and columns (each with its meaning) in header
// comments. Models are built in dependency order into a new DuckDB file; every check must pass; tables are exported to
// Parquet as a new generation of data/marts (lib/generations.ts), and the file becomes the serving database through an
// atomic pointer swap.
// Models live in marts/models; `modelsDirs` adds folders (a plug-in source's models, docs/adding-a-source.md).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { dataDir, paths, repoRoot } from '../lib/config';
import { GRID_CELLS_MACRO_SQL, HAVERSINE_MACRO_SQL } from '../lib/distance';
import { all, DuckDBInstance, lit, run, type DuckDBConnection } from '../lib/duck';
import { GenerationalDir, maybePauseForTests, TEMP_FILE } from '../lib/generations';
import { Lake } from '../lib/lake';
import { lakeManifestHash, servingStampFile, type ServingStamp } from '../lib/serving';
import { sourceDeclaration } from '../lib/sources';
import { env } from '../lib/env';
import { writeFileAtomic } from '../lib/files';

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
  /**
   * `-- column: name: meaning` lines, in header order. A meaning `= model` (or `= model.column`) says the column is
   * that model's column, with its meaning (`columnMeanings` resolves it). A table model that declares columns must
   * build exactly those: the build fails otherwise.
   */
  columns: ModelColumn[];
}

export interface ModelColumn {
  name: string;
  meaning: string;
}

export interface BuildReport {
  servingFile: string;
  models: Array<{ name: string; rows: number | null; seconds: number; checks: number }>;
  seconds: number;
}

export const MODELS_DIR = path.join(repoRoot, 'marts', 'models');

/** The Parquet marts folder (`data/marts`), published by generations. */
export const martsFolder = (root: string) => new GenerationalDir(paths.marts(root), path.join(root, '.marts', 'generations'));

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
      columns: header('column').map((line) => {
        const c = /^(\w+)\s*:\s*(.+)$/.exec(line);
        if (!c) throw new Error(`${rel}: a column line is "-- column: name: meaning", not "${line}"`);
        return { name: c[1], meaning: c[2].trim() };
      }).map((c, i, cols) => {
        if (cols.findIndex((d) => d.name === c.name) !== i) throw new Error(`${rel}: column ${c.name} is declared twice`);
        return c;
      }),
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
    // a relationships check reads its target model, which must be built first (unless it is the model itself)
    for (const r of [...m.refs, ...m.checks.flatMap(relationshipTarget).filter((t) => t !== m.name)]) {
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

/** The model a `relationships(column, model.column)` check refers to (none for other kinds). */
function relationshipTarget(check: string): string[] {
  const m = /^relationships\((.*)\)$/s.exec(check.trim());
  return m ? [relationshipArgs(m[1], check).model] : [];
}

function relationshipArgs(args: string, check: string): { column: string; model: string; target: string } {
  const m = /^(\w+)\s*,\s*(\w+)\.(\w+)$/.exec(args.trim());
  if (!m) throw new Error(`malformed check "${check}": relationships(column, model.column)`);
  return { column: m[1], model: m[2], target: m[3] };
}

/**
 * Each column's meaning, `= model[.column]` references followed (one level: a referenced meaning must be a text).
 * Throws on a reference to an unknown model or column, so a renamed column cannot leave a dangling meaning.
 */
export function columnMeanings(models: Model[]): Map<string, Map<string, string>> {
  const byName = new Map(models.map((m) => [m.name, new Map(m.columns.map((c) => [c.name, c.meaning]))]));
  const out = new Map<string, Map<string, string>>();
  for (const m of models) {
    const resolved = new Map<string, string>();
    for (const c of m.columns) {
      const ref = /^=\s*(\w+)(?:\.(\w+))?$/.exec(c.meaning);
      if (!ref) {
        resolved.set(c.name, c.meaning);
        continue;
      }
      const target = byName.get(ref[1])?.get(ref[2] ?? c.name);
      if (!target || target.startsWith('=')) throw new Error(`${m.name}.${c.name}: "${c.meaning}" names no documented column`);
      resolved.set(c.name, `${target} (as \`${ref[1]}.${ref[2] ?? c.name}\`)`);
    }
    out.set(m.name, resolved);
  }
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
    case 'relationships': {
      // every non-null value of the column exists in the target model's column (a foreign key)
      const r = relationshipArgs(args, check);
      return `select count(*) from (select ${r.column} as v from ${table} where ${r.column} is not null) c
        anti join ${r.model} t on t.${r.target} = c.v`;
    }
    default:
      throw new Error(`unknown check kind ${kind} on ${table}`);
  }
}

export interface BuildOptions {
  dataRoot?: string;
  /** Replaces marts/models (tests). */
  modelsDir?: string;
  /** Extra model folders, loaded with the main one (model names must stay unique). */
  modelsDirs?: string[];
  log?: (m: string) => void;
}

export async function buildMarts(opts: BuildOptions = {}): Promise<BuildReport> {
  const root = opts.dataRoot ?? dataDir();
  const log = opts.log ?? (() => {});
  const lake = new Lake(root);
  const unlock = lake.lock();
  try {
    // leftovers of a killed import or build (both hold the lock, so nothing else is writing them)
    lake.cleanLeftovers();
    cleanMartsLeftovers(root);
    return await build(lake, root, [opts.modelsDir ?? MODELS_DIR, ...(opts.modelsDirs ?? [])], log);
  } finally {
    unlock();
  }
}

async function build(lake: Lake, root: string, modelsDirs: string[], log: (m: string) => void): Promise<BuildReport> {
  const started = performance.now();
  const servingDir = paths.serving(root);
  fs.mkdirSync(servingDir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[-:.]/g, '').replace('T', '-').slice(0, 15);
  // unique even for two builds in the same second: the name is what tells the API a new build exists
  const name = `foncier-${stamp}-${crypto.randomBytes(4).toString('hex')}.duckdb`;
  const building = path.join(servingDir, `.building-${process.pid}-${name}`);
  // FONCIER_MARTS_MEMORY_LIMIT (a DuckDB size, default 8GB) for machines with more memory: docs/performance.md
  const instance = await DuckDBInstance.create(building, { threads: '2', memory_limit: env().FONCIER_MARTS_MEMORY_LIMIT! });
  const conn = await instance.connect();
  await run(conn, HAVERSINE_MACRO_SQL);
  await run(conn, GRID_CELLS_MACRO_SQL);
  const report: BuildReport = { servingFile: '', models: [], seconds: 0 };
  let martsGen: string | undefined;
  // One manifest read for the whole build: every model sees the same lake, and the stamp says which one.
  const manifestHash = lakeManifestHash(root);
  const manifest = lake.readManifest();
  try {
    const sourceSql = (src: string, table?: string) => {
      if (table) {
        const file = path.join(lake.root, src, `${table}.parquet`);
        if (!fs.existsSync(file)) throw new Error(`the lake has no ${src}/${table} yet: run \`npm run pipeline\` first`);
        return `read_parquet(${lit(file)})`;
      }
      const decl = sourceDeclaration(src);
      if (!decl) throw new Error(`models read source ${src}, which no source declares (lib/sources)`);
      // A source not loaded reads as an empty table of its declared shape: its marts are built empty, and the API
      // says the data is not loaded.
      if (!Object.keys(manifest.sources[src]?.partitions ?? {}).length) log(`  (source ${src} is not loaded: its models are built empty)`);
      return lake.readSql(decl, manifest);
    };
    const names = new Set<string>();
    const models = modelsDirs.flatMap((d) => loadModels(d));
    for (const m of models) {
      if (names.has(m.name)) throw new Error(`two models are named ${m.name}`);
      names.add(m.name);
    }
    const ordered = orderModels(models);
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
        if (model.columns.length) await checkColumns(conn, model);
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
    await run(conn, `create or replace table meta_manifest as select ${lit(JSON.stringify(manifest))} as manifest, now() as built_at,
      ${lit(manifestHash)} as manifest_sha256`);
    martsGen = await exportParquet(conn, ordered.filter((m) => m.materialized === 'table'), root);
    await run(conn, 'checkpoint');
  } catch (e) {
    conn.closeSync();
    instance.closeSync();
    fs.rmSync(building, { force: true });
    fs.rmSync(`${building}.wal`, { force: true });
    if (martsGen) fs.rmSync(martsGen, { recursive: true, force: true });
    throw e;
  }
  conn.closeSync();
  instance.closeSync();
  const final = path.join(servingDir, name);
  fs.renameSync(building, final);
  const from: ServingStamp = { manifest_sha256: manifestHash, built_at: new Date().toISOString() };
  writeFileAtomic(servingStampFile(final), JSON.stringify(from) + '\n');
  // The Parquet marts, then the serving database: each switch is one atomic rename. A kill between the two leaves a
  // serving database older than the lake, which the next run rebuilds (its stamp says what it was made from).
  martsFolder(root).publish(martsGen!, 'marts-before-swap');
  maybePauseForTests('before-serving-swap');
  writeFileAtomic(path.join(servingDir, 'CURRENT'), name + '\n');
  pruneServingFiles(servingDir, name);
  report.servingFile = final;
  report.seconds = (performance.now() - started) / 1000;
  return report;
}

/** The columns a table model declares in its header are exactly those it built (names; order free). */
async function checkColumns(conn: DuckDBConnection, model: Model): Promise<void> {
  const built = (await all<{ column_name: string }>(conn, `describe ${model.name}`)).map((r) => r.column_name);
  const declared = model.columns.map((c) => c.name);
  const undeclared = built.filter((c) => !declared.includes(c));
  const absent = declared.filter((c) => !built.includes(c));
  if (undeclared.length || absent.length) {
    throw new Error(`columns of ${model.name} differ from its header: ${[
      undeclared.length ? `no "-- column:" line for ${undeclared.join(', ')}` : '',
      absent.length ? `declared but not built: ${absent.join(', ')}` : '',
    ].filter(Boolean).join('; ')}`);
  }
}

/**
 * Analysts' copies: one Parquet file per mart, written into a new, unpublished generation of the marts folder (which
 * keeps the valuation outputs of the current one until the next backtest replaces them). Returns its folder.
 */
async function exportParquet(conn: DuckDBConnection, models: Model[], root: string): Promise<string> {
  const next = martsFolder(root).begin((rel) => rel.startsWith('valuation_'));
  for (const m of models) await run(conn, `copy ${m.name} to ${lit(path.join(next, `${m.name}.parquet`))} (format parquet, compression zstd)`);
  return next;
}

/** Unpublished marts generations and half-written files (a calibration killed mid-write) of interrupted runs. */
function cleanMartsLeftovers(root: string): void {
  const marts = martsFolder(root);
  marts.cleanLeftovers();
  const current = marts.current();
  if (current) for (const f of fs.readdirSync(current)) if (TEMP_FILE.test(f) || /^\.valuation_backtest-\d+\./.test(f)) fs.rmSync(path.join(current, f), { force: true });
}

/** Keeps the current serving file and the previous one (a running API may still be reading it). */
function pruneServingFiles(dir: string, current: string): void {
  const files = fs.readdirSync(dir).filter((f) => /^foncier-.*\.duckdb$/.test(f) && f !== current).sort();
  for (const f of files.slice(0, -1)) {
    fs.rmSync(path.join(dir, f), { force: true });
    fs.rmSync(servingStampFile(path.join(dir, f)), { force: true });
  }
  for (const f of fs.readdirSync(dir).filter((f) => f.startsWith('.building-'))) {
    // builds hold the lake lock, so another process's unfinished build is a leftover of a killed run
    const pid = Number(/^\.building-(\d+)-/.exec(f)?.[1]);
    if (pid !== process.pid) fs.rmSync(path.join(dir, f), { recursive: true, force: true }); // with its .tmp spill folder
  }
}
