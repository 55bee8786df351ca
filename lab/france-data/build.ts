// France-scale dataset for the API benchmark (`npm run bench -- api`), also runnable alone:
//   npm run lab -- france-data [--sales 20000000] [--data-dir data-bench] [--seed 20240] [--rebuild source|lake|income|dpe|sirene|bdnb|marts]
//
// 1. Generates synthetic geo-DVF files for 2020–2025 in the real tree (<data-dir>/source/{annee}/departements/{dep}.csv.gz)
//    with the generator of lab/bench/pipeline.ts (same départements, shares and line mix; one seed per year).
//    Lines are sized from the wanted number of sales with LINES_PER_SALE (measured, see below).
// 2. Imports them with the real pipeline (`runSource`, offline through fromDir) into <data-dir>/lake.
// 3. Generates a Filosofi commune file and the four ANIL rent files (real formats) for every commune of the reference
//    geography into <data-dir>/income-source and imports them with `runSource` (step "income", after the DVF lake).
// 4. Sources generated from the lake after it (LAKE_STEPS: DPE in lab/france-data/dpe.ts, SIRENE in
//    sirene.ts, BDNB in bdnb.ts), in their real formats, imported with `runSource` offline; each chained into the marts' hash.
// 5. Builds the marts and the serving database into <data-dir>/marts and <data-dir>/serving, then the valuation
//    calibration: the pipeline's after-import step (`afterImport`).
// Each step is recorded in <data-dir>/bench-stamp.json and skipped when its inputs did not change: the source files
// by a hash of every generated file's SQL (sizes, seeds, years, generator code), the lake by the source's hash, the
// serving database by the lake's hash plus a hash of marts/models. A rerun with the same parameters is free.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { repoRoot } from '../../lib/config';
import { all, DuckDBInstance, lit, openMemory } from '../../lib/duck';
import { allCommunes } from '../../lib/geo';
import { currentServingFile } from '../../lib/serving';
import { Lake } from '../../lib/lake';
import { afterImport } from '../../marts/after-import';
import { runSource } from '../../pipeline/run';
import { anilCsv, DEMO_ANIL_YEAR, DEMO_FILOSOFI_YEAR, filosofiCsv, SEGMENTS } from '../../pipeline/demo/generate-income';
import { DVF_DEPARTEMENTS } from '../../pipeline/sources/dvf';
import { count, integer } from '../args';
import { allocateRows, departementSql, depProfiles, GEO_DVF_HEADER, mutationsProvisioned } from '../bench/pipeline';
import { buildFranceBdnb, franceBdnbHash } from './bdnb';
import { dpeStep } from './dpe';
import { sireneStep } from './sirene';

export const DEFAULT_SALES = 20_000_000;
export const DEFAULT_YEARS = [2020, 2021, 2022, 2023, 2024, 2025];
export const DEFAULT_SEED = 20240;
export const DEFAULT_DATA_DIR = path.join(repoRoot, 'data-bench');
/**
 * Generated geo-DVF lines per sale of the `ventes` mart, measured on this generator: 563,610 lines → 300,399 sales
 * (1.876) for 2020–2025 at --sales 300000; 3,500,000 lines → 1,863,102 sales (1.879) for 2024 in the pipeline
 * benchmark. Slightly above the ~1.85 of the real files: the 2 % of generated exchanges and expropriations are not
 * sales in `ventes`.
 */
export const LINES_PER_SALE = 1.876;
const STAMP_VERSION = 1;

/** A source generated from the bench lake (after the income step) in its real format and imported with runSource. */
export interface LakeStep {
  name: string;
  /** The lake source it imports: the stamp is trusted only while the lake's manifest lists it. */
  source: string;
  /** What the generated files depend on besides the lake (sizes, seed, generator code): a change rebuilds the step. */
  inputs(p: { sales: number; seed: number }): string;
  /** Generates the files under `dir` and imports them; returns the figures kept in the stamp and a one-line summary. */
  build(ctx: { dataDir: string; dir: string; sales: number; seed: number; log: (m: string) => void }): Promise<{ figures: Record<string, number>; summary: string }>;
}

/** BDNB consistent with the sales (lab/france-data/bdnb.ts: parcels linked, renumbered or without a building). */
const bdnbStep: LakeStep = {
  name: 'bdnb',
  source: 'bdnb',
  inputs: () => franceBdnbHash(''),
  async build({ dataDir, log }) {
    const r = await buildFranceBdnb({ dataDir, log });
    return {
      figures: { 'building groups': r.groups, 'unsold stock groups': r.stockGroups, archives: r.departements },
      summary: `${r.groups.toLocaleString('en-US')} groups in ${r.departements} archives (parcels linked ${r.parcels.linked}, renumbered ${r.parcels.renumbered}, none ${r.parcels.none})`,
    };
  },
};

export const LAKE_STEPS: LakeStep[] = [dpeStep, sireneStep, bdnbStep];
const STEP_NAMES = ['source', 'lake', 'income', ...LAKE_STEPS.map((s) => s.name), 'marts'];

export interface FranceDataOptions {
  sales?: number;
  years?: number[];
  seed?: number;
  dataDir?: string;
  /** Redo this step and the ones after it even if the stamp says it is up to date. */
  rebuild?: string;
  log?: (m: string) => void;
}

export interface Stamp {
  version: number;
  params: { sales: number; years: number[]; seed: number; linesPerSale: number; linesPerYear: number };
  source?: { hash: string; files: number; lines: number; bytes: number; seconds: number };
  lake?: { hash: string; seconds: number; linesRead: number; linesKept: number; mutations: number; bytes: number; pipelineHash: string; resumed: boolean };
  /** Filosofi and ANIL files generated for every commune and imported into the lake (after the DVF lake). */
  income?: { hash: string; seconds: number; communes: number };
  /** The LAKE_STEPS, by name. */
  steps?: Record<string, { hash: string; seconds: number; figures: Record<string, number> }>;
  /** A lake import started for this hash and not finished (failed or killed): the next run resumes it. */
  lakePending?: { hash: string; seconds: number };
  marts?: { hash: string; seconds: number; servingFile: string; servingBytes: number; sales: number; models: Array<{ name: string; rows: number | null; seconds: number }> };
}

export interface FranceData {
  dataDir: string;
  servingFile: string;
  stamp: Stamp;
  /** Steps done in this call (empty when everything was reused). */
  built: string[];
}

export const stampFile = (dataDir: string) => path.join(dataDir, 'bench-stamp.json');

export function readStamp(dataDir: string): Stamp | undefined {
  try {
    return JSON.parse(fs.readFileSync(stampFile(dataDir), 'utf8')) as Stamp;
  } catch {
    return undefined;
  }
}

const sha = (s: string) => crypto.createHash('sha256').update(s).digest('hex').slice(0, 16);

/** Hash of every file under `dir` (names and contents) whose name matches `re`. */
function hashTree(dir: string, re: RegExp): string {
  const h = crypto.createHash('sha256');
  const files = fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => re.test(f)).sort();
  for (const f of files) h.update(f).update('\0').update(fs.readFileSync(path.join(dir, f))).update('\0');
  return h.digest('hex').slice(0, 16);
}

const duSize = (p: string): number => {
  if (!fs.existsSync(p)) return 0;
  const st = fs.statSync(p);
  if (!st.isDirectory()) return st.size;
  return fs.readdirSync(p).reduce((a, f) => a + duSize(path.join(p, f)), 0);
};

interface FilePlan { annee: number; dep: string; rows: number; sql: string; file: string }

/** Every file to generate with its SQL: one national id sequence per year, one seed per year (years differ). */
function plan(sourceDir: string, linesPerYear: number, years: number[], seed: number): FilePlan[] {
  const deps = depProfiles();
  const perDep = allocateRows(linesPerYear, deps);
  return years.flatMap((annee) => {
    let idOffset = 0;
    return deps.map((p, i) => {
      const sql = departementSql(p, perDep[i], idOffset, seed + annee, annee);
      idOffset += mutationsProvisioned(perDep[i]);
      return { annee, dep: p.dep, rows: perDep[i], sql, file: path.join(sourceDir, String(annee), 'departements', `${p.dep}.csv.gz`) };
    });
  });
}

const fmt = (x: number, d = 0) => x.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
const mib = (b: number) => `${fmt(b / 2 ** 20, 0)} MiB`;

export async function ensureFranceData(opts: FranceDataOptions = {}): Promise<FranceData> {
  const log = opts.log ?? console.log;
  const sales = opts.sales ?? DEFAULT_SALES;
  const years = opts.years ?? DEFAULT_YEARS;
  const seed = opts.seed ?? DEFAULT_SEED;
  const dataDir = path.resolve(opts.dataDir ?? DEFAULT_DATA_DIR);
  if (!Number.isInteger(sales) || sales < 10_000) throw new Error('--sales must be an integer ≥ 10000');
  const linesPerYear = Math.round((sales / years.length) * LINES_PER_SALE);
  const sourceDir = path.join(dataDir, 'source');
  fs.mkdirSync(dataDir, { recursive: true });

  const files = plan(sourceDir, linesPerYear, years, seed);
  const params = { sales, years, seed, linesPerSale: LINES_PER_SALE, linesPerYear };
  const sourceHash = sha(JSON.stringify({ v: STAMP_VERSION, header: GEO_DVF_HEADER, files: files.map((f) => [f.annee, f.dep, f.rows, sha(f.sql)]) }));
  const lakeHash = sha(`lake:${sourceHash}`);
  const income = incomeFiles();
  const incomeHash = sha(`income:${lakeHash}:${sha(Object.entries(income).map(([f, c]) => `${f}\0${c}`).join('\0'))}`);
  // Each generated source chains on the one before it: a new lake or income redoes them, and then the marts.
  const stepHashes: string[] = [];
  for (const s of LAKE_STEPS) stepHashes.push(sha(`${s.name}:${stepHashes.at(-1) ?? incomeHash}:${s.inputs({ sales, seed })}`));
  const martsHash = sha(`marts:${stepHashes.at(-1) ?? incomeHash}:${hashTree(path.join(repoRoot, 'marts', 'models'), /\.sql$/)}`);
  const pipelineHash = hashTree(path.join(repoRoot, 'pipeline'), /\.(ts|sql)$/);

  const previous = readStamp(dataDir);
  const stamp: Stamp = previous?.version === STAMP_VERSION ? { ...previous, params } : { version: STAMP_VERSION, params };
  const forced = (step: string) => opts.rebuild !== undefined && STEP_NAMES.indexOf(opts.rebuild) <= STEP_NAMES.indexOf(step);
  const save = () => fs.writeFileSync(stampFile(dataDir), JSON.stringify(stamp, null, 2) + '\n');
  const built: string[] = [];
  log(`Bench dataset in ${dataDir}: ${fmt(sales)} sales wanted over ${years[0]}–${years.at(-1)} → ${fmt(linesPerYear)} geo-DVF lines a year `
    + `(${LINES_PER_SALE} lines per sale), ${files.length} files`);

  // 1. Source files
  const sourceOk = stamp.source?.hash === sourceHash && files.every((f) => fs.existsSync(f.file)) && !forced('source');
  if (sourceOk) {
    log(`  source: reusing ${stamp.source!.files} files, ${fmt(stamp.source!.lines)} lines, ${mib(stamp.source!.bytes)} (generated in ${fmt(stamp.source!.seconds, 0)} s)`);
  } else {
    delete stamp.source;
    delete stamp.lake;
    delete stamp.marts;
    save();
    const df = fs.statfsSync(dataDir);
    const needGiB = (linesPerYear * years.length * 160) / 2 ** 30; // per line ≈ 30 B of gzip, 60 of lake, 70 of marts and serving
    log(`  source: generating (free disk ${fmt((df.bavail * df.bsize) / 2 ** 30, 1)} GiB, this dataset needs about ${fmt(needGiB, 1)} GiB)…`);
    fs.rmSync(sourceDir, { recursive: true, force: true });
    const started = performance.now();
    const { instance, conn } = await openMemory({ threads: os.cpus().length, memoryLimit: '8GB' });
    let bytes = 0;
    try {
      for (const [i, f] of files.entries()) {
        fs.mkdirSync(path.dirname(f.file), { recursive: true });
        const [written] = await all<{ Count: number }>(conn, `COPY (${f.sql}) TO ${lit(f.file)} (FORMAT csv, HEADER, DELIMITER ',', QUOTE '"', COMPRESSION gzip)`);
        if (written.Count !== f.rows) throw new Error(`${f.annee}/${f.dep}: generated ${written.Count} lines instead of ${f.rows}`);
        bytes += fs.statSync(f.file).size;
        if (f.dep === DVF_DEPARTEMENTS.at(-1)) {
          log(`    ${f.annee}: ${i + 1}/${files.length} files, ${mib(bytes)}, ${fmt((performance.now() - started) / 1000, 0)} s`);
        }
      }
      const header = (await all<{ h: string }>(conn, `SELECT column_name AS h FROM (DESCRIBE SELECT * FROM read_csv(${lit(files[0].file)}, header = true, all_varchar = true))`)).map((r) => r.h);
      if (header.join(',') !== GEO_DVF_HEADER.join(',')) throw new Error(`generated header differs from geo-DVF: ${header.join(',')}`);
    } finally {
      conn.closeSync();
      instance.closeSync();
    }
    stamp.source = { hash: sourceHash, files: files.length, lines: linesPerYear * years.length, bytes, seconds: (performance.now() - started) / 1000 };
    save();
    built.push('source');
    log(`  source: ${files.length} files, ${fmt(stamp.source.lines)} lines, ${mib(bytes)} of gzip in ${fmt(stamp.source.seconds, 1)} s`);
  }

  // 2. Lake, through the real pipeline (offline)
  const lakeDir = path.join(dataDir, 'lake');
  const lakeOk = stamp.lake?.hash === lakeHash && fs.existsSync(path.join(lakeDir, 'manifest.json')) && !forced('lake');
  if (lakeOk) {
    log(`  lake: reusing ${fmt(stamp.lake!.linesKept)} lines, ${fmt(stamp.lake!.mutations)} mutations, ${mib(stamp.lake!.bytes)} (imported in ${fmt(stamp.lake!.seconds, 0)} s)`);
    if (stamp.lake!.pipelineHash !== pipelineHash) log('  lake: note: pipeline/ changed since this lake was imported; pass --rebuild lake to re-import');
  } else {
    // A pending import of the same source resumes: runSource skips the files already imported (same sha256, partitions
    // present) and imports the rest; otherwise the lake starts from scratch.
    const resume = stamp.lakePending?.hash === lakeHash && fs.existsSync(path.join(lakeDir, 'manifest.json')) && !forced('lake');
    const before = resume ? stamp.lakePending!.seconds : 0;
    delete stamp.lake;
    delete stamp.marts;
    stamp.lakePending = { hash: lakeHash, seconds: before };
    save();
    log(`  lake: ${resume ? 'resuming the unfinished import' : 'importing'} with runSource (${files.length} files)…`);
    if (!resume) new Lake(dataDir).remove(); // the lake link and every generation
    fs.rmSync(path.join(dataDir, 'serving'), { recursive: true, force: true });
    const started = performance.now();
    let done = 0;
    let lines = 0;
    const outcomes = await runSource(
      { source: 'dvf', format: 'geo-dvf', fromDir: sourceDir, annees: years, departements: DVF_DEPARTEMENTS, dataRoot: dataDir, force: !resume },
      {
        onPartDone: (o) => {
          done++;
          lines += o.rowsRead;
          if (done % DVF_DEPARTEMENTS.length === 0 || o.status === 'failed') {
            const s = (performance.now() - started) / 1000;
            log(`    ${done}/${files.length} files, ${fmt(lines)} lines, ${fmt(s, 0)} s (${fmt(lines / s)} lines/s)${o.status === 'failed' ? ` — ${o.part.key} FAILED: ${o.error}` : ''}`);
          }
        },
      },
    );
    const seconds = before + (performance.now() - started) / 1000;
    const failed = outcomes.filter((o) => o.status === 'failed');
    if (failed.length) {
      stamp.lakePending.seconds = seconds;
      save();
      const first = failed.slice(0, 5).map((o) => `${o.part.key}: ${o.error ?? ''}`).join('; ');
      throw new Error(`pipeline failures on ${failed.length} of ${outcomes.length} files (${first}${failed.length > 5 ? '; …' : ''}); rerun to resume`);
    }
    const manifest = JSON.parse(fs.readFileSync(path.join(lakeDir, 'manifest.json'), 'utf8')) as {
      sources: { dvf: { partitions: Record<string, { rows_read: number; rows_kept: number; count: number }> } };
    };
    const parts = Object.values(manifest.sources.dvf.partitions);
    stamp.lake = {
      hash: lakeHash, seconds, pipelineHash, bytes: duSize(lakeDir), resumed: resume,
      linesRead: parts.reduce((a, p) => a + p.rows_read, 0), linesKept: parts.reduce((a, p) => a + p.rows_kept, 0),
      mutations: parts.reduce((a, p) => a + p.count, 0),
    };
    delete stamp.lakePending;
    save();
    built.push('lake');
    log(`  lake: ${fmt(stamp.lake.linesKept)} lines kept of ${fmt(stamp.lake.linesRead)}, ${fmt(stamp.lake.mutations)} mutations, ${mib(stamp.lake.bytes)}, `
      + `${fmt(stamp.lake.seconds, 1)} s (${fmt(stamp.lake.linesRead / stamp.lake.seconds)} lines/s${resume ? ', over several runs' : ''})`);
  }

  // 3. Income and rent sources (the DVF lake import above starts from an empty lake, so they come after it)
  const manifestSources = () => (JSON.parse(fs.readFileSync(path.join(lakeDir, 'manifest.json'), 'utf8')) as { sources: Record<string, unknown> }).sources;
  const incomeOk = stamp.income?.hash === incomeHash && manifestSources().filosofi !== undefined && manifestSources().anil !== undefined && !forced('income');
  if (incomeOk) {
    log(`  income: reusing Filosofi and ANIL files of ${fmt(stamp.income!.communes)} communes`);
  } else {
    delete stamp.income;
    delete stamp.marts;
    save();
    const started = performance.now();
    const dir = path.join(dataDir, 'income-source');
    fs.rmSync(dir, { recursive: true, force: true });
    for (const [rel, content] of Object.entries(income)) {
      fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
      fs.writeFileSync(path.join(dir, rel), content);
    }
    for (const [source, annee] of [['filosofi', DEMO_FILOSOFI_YEAR], ['anil', DEMO_ANIL_YEAR]] as const) {
      const failed = (await runSource({ source, fromDir: dir, annees: [annee], departements: [], dataRoot: dataDir, force: true })).filter((o) => o.status === 'failed');
      if (failed.length) throw new Error(`income import failed: ${failed.map((o) => `${o.part.key}: ${o.error}`).join('; ')}`);
    }
    stamp.income = { hash: incomeHash, seconds: (performance.now() - started) / 1000, communes: incomeCommunes().length };
    save();
    built.push('income');
    log(`  income: Filosofi ${DEMO_FILOSOFI_YEAR} and ANIL ${DEMO_ANIL_YEAR} for ${fmt(stamp.income.communes)} communes in ${fmt(stamp.income.seconds, 1)} s`);
  }

  // 4. Sources generated from the lake (DPE, SIRENE)
  for (const [i, step] of LAKE_STEPS.entries()) {
    const done = stamp.steps?.[step.name];
    if (done?.hash === stepHashes[i] && manifestSources()[step.source] !== undefined && !forced(step.name)) {
      log(`  ${step.name}: reusing ${Object.entries(done.figures).map(([k, v]) => `${fmt(v)} ${k}`).join(', ')} (built in ${fmt(done.seconds, 0)} s)`);
      continue;
    }
    stamp.steps = Object.fromEntries(Object.entries(stamp.steps ?? {}).filter(([k]) => k !== step.name));
    delete stamp.marts;
    save();
    const started = performance.now();
    const r = await step.build({ dataDir, dir: path.join(dataDir, `${step.name}-source`), sales, seed, log });
    stamp.steps[step.name] = { hash: stepHashes[i], seconds: (performance.now() - started) / 1000, figures: r.figures };
    save();
    built.push(step.name);
    log(`  ${step.name}: ${r.summary} in ${fmt(stamp.steps[step.name].seconds, 1)} s`);
  }

  // 5. Marts and serving database
  const serving = currentServingFile(dataDir);
  const martsOk = stamp.marts?.hash === martsHash && serving !== undefined && serving === stamp.marts.servingFile && !forced('marts');
  if (martsOk) {
    log(`  serving: reusing ${path.basename(serving!)} (${mib(stamp.marts!.servingBytes)}, ${fmt(stamp.marts!.sales)} sales, built in ${fmt(stamp.marts!.seconds, 0)} s)`);
  } else {
    delete stamp.marts;
    save();
    log('  marts: building (afterImport: marts, then the valuation calibration)…');
    const started = performance.now();
    // As after a pipeline run: the marts, then the valuation intervals calibrated on the data just built.
    const after = await afterImport({ dataRoot: dataDir, force: true, log: (m) => log(`  ${m}`) });
    if (!after.ok) throw new Error('valuation backtest failed');
    const report = after.marts!;
    const instance = await DuckDBInstance.create(report.servingFile, { access_mode: 'READ_ONLY' });
    const conn = await instance.connect();
    let salesCount: number;
    try {
      salesCount = (await all<{ n: number }>(conn, 'select count(*) as n from ventes'))[0].n;
    } finally {
      conn.closeSync();
      instance.closeSync();
    }
    log(`  valuation backtest: ${fmt(after.backtest!.targets)} targets in ${fmt(after.backtest!.seconds, 1)} s`);
    stamp.marts = {
      hash: martsHash, seconds: (performance.now() - started) / 1000, servingFile: report.servingFile,
      servingBytes: fs.statSync(report.servingFile).size, sales: salesCount,
      models: report.models.map(({ name, rows, seconds }) => ({ name, rows, seconds })),
    };
    save();
    built.push('marts');
    log(`  serving: ${path.basename(report.servingFile)}, ${mib(stamp.marts.servingBytes)}, built in ${fmt(stamp.marts.seconds, 1)} s`);
  }
  const m = stamp.marts!;
  log(`  dataset: ${fmt(m.sales)} sales in the ventes mart (${fmt((100 * m.sales) / sales, 1)} % of the ${fmt(sales)} wanted), `
    + `${fmt(stamp.lake!.linesKept)} lake lines, serving file ${mib(m.servingBytes)}`);
  return { dataDir, servingFile: m.servingFile, stamp, built };
}

/** Current communes and arrondissements of the reference geography (the codes DVF's code_commune_actuel uses). */
const incomeCommunes = () => allCommunes().filter((c) => c.type === 'commune-actuelle' || c.type === 'arrondissement-municipal');

/** A number in [0, 1) fixed by a commune code and a salt: the bench values are deterministic without a generator state. */
const unit = (code: string, salt: string) => crypto.createHash('sha256').update(`${salt}:${code}`).digest().readUInt32LE(0) / 2 ** 32;

/** The bench's Filosofi and ANIL files (relative path → content), in their published formats. */
function incomeFiles(): Record<string, string> {
  const communes = incomeCommunes().sort((a, b) => (a.code < b.code ? -1 : 1));
  const files: Record<string, string> = {
    [`cc_filosofi_${DEMO_FILOSOFI_YEAR}_COM.csv`]: filosofiCsv(DEMO_FILOSOFI_YEAR, communes.map((c) => ({
      code: c.code,
      households: Math.max(10, Math.round((c.population ?? 200) / 2.1)),
      // INSEE keeps the median secret for small communes (about a tenth of them).
      med: (c.population ?? 0) < 200 ? 's' : Math.round((16_000 + 16_000 * unit(c.code, 'med')) / 10) * 10,
    }))),
  };
  // ANIL publishes arrondissements, not the whole cities they make up.
  const rented = communes.filter((c) => !['75056', '69123', '13055'].includes(c.code));
  for (const segment of SEGMENTS) {
    files[`${DEMO_ANIL_YEAR}/pred-${segment}-mef-dhup.csv`] = anilCsv(rented.map((c, i) => {
      const coarse = unit(c.code, `coarse-${segment}`) < 0.6;
      return {
        zone: String(1 + (coarse ? Math.floor(i / 20) : i)), code: c.code, name: c.nom, epci: '', dep: c.departement, region: c.region ?? '',
        rent: 6 + 14 * unit(c.code, `rent-${segment}`), coarse, observations: Math.round(5 + 300 * unit(c.code, `obs-${segment}`)),
        r2: 0.35 + 0.5 * unit(c.code, `r2-${segment}`),
      };
    }));
  }
  return files;
}

function options(argv: string[]): FranceDataOptions {
  const text = { type: 'string' } as const;
  const { values } = parseArgs({ args: argv, options: { sales: text, 'data-dir': text, seed: text, rebuild: text } });
  if (values.rebuild !== undefined && !STEP_NAMES.includes(values.rebuild)) throw new Error(`--rebuild takes one of ${STEP_NAMES.join('|')}`);
  return {
    sales: values.sales === undefined ? undefined : count(values.sales, 'sales', DEFAULT_SALES),
    dataDir: values['data-dir'],
    seed: values.seed === undefined ? undefined : integer(values.seed, 'seed'),
    rebuild: values.rebuild,
  };
}

if (path.resolve(process.argv[1] ?? '') === fileURLToPath(import.meta.url)) {
  const t0 = performance.now();
  ensureFranceData(options(process.argv.slice(2)))
    .then((r) => console.log(`France data ready in ${fmt((performance.now() - t0) / 1000, 1)} s${r.built.length ? ` (built: ${r.built.join(', ')})` : ' (all reused)'}`))
    .catch((e: Error) => {
      console.error(`france-data failed: ${e.stack ?? e.message}`);
      process.exit(1);
    });
}
