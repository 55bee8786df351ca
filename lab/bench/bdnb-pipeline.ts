// `npm run bench -- pipeline --bdnb [--groups 20000000] [--keep DIR] [--seed S] [--json FILE]`: the BDNB import at
// France scale.
// 1. Generates (not measured) a synthetic BDNB in the publisher's layout with lab/france-data/bdnb-generate.ts: one
//    `open_data_millesime_{M}_dep{dd}_csv.zip` per metropolitan département, `--groups` building groups in proportion
//    to the population, clustered in towns. Reused by a later run with the same --keep DIR, --groups and generator.
// 2. Measures, in a child process of its own (its peak RSS is the import's), the real pipeline: `runSource('bdnb')`
//    from that directory into a fresh lake + manifest (fetch: sha256 of each archive; then per département, in
//    batches of about ten: its four tables streamed out of the archive while the previous département stages, typed
//    staging, centroids, Lambert-93 → WGS84, joins, Parquet). Reported: wall time, CPU seconds (user + system of the process,
//    DuckDB's threads included), peak RSS, the load average sampled every 2 s during the run, and every SQL statement
//    timed, grouped by the table it builds.
// The target: ≥ 100,000 groups/s on 2 cores, i.e. ≤ 20 CPU-s per million groups with both cores busy
// (≤ 10 wall-s per million).
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { openMemory } from '../../lib/duck';
import { runSource } from '../../pipeline/run';
import { instrumentDuckDB, runChild } from './pipeline';
import { generateFranceBdnb, type FranceBdnbGenerated } from '../france-data/bdnb-generate';

const SELF = fileURLToPath(import.meta.url);
const TARGET_GROUPS_PER_SECOND = 100_000;
const fmt = (x: number, d = 0) => x.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });

export interface BdnbImportResult {
  seconds: number;
  cpuSeconds: number;
  maxRssMiB: number;
  /** From the start to the first import batch: sha256 of every archive. */
  fetchSeconds: number;
  fetchCpuSeconds: number;
  failed: string[];
  rowsRead: number;
  rowsKept: number;
  statements: Record<string, { count: number; seconds: number }>;
}

/** The step a statement of the BDNB import is: the table or view it builds, else its kind. */
function classify(sql: string): string {
  const created = /CREATE\s+OR\s+REPLACE\s+TEMP\s+(?:TABLE|VIEW)\s+(\w+)/i.exec(sql);
  if (created) return `build ${created[1]}`;
  if (/^\s*COPY/i.test(sql)) return 'COPY → Parquet (zstd)';
  if (/rows_read/.test(sql)) return 'anomaly counts';
  if (/read_parquet/.test(sql)) return 'count of the written Parquet';
  if (/^\s*DROP/i.test(sql)) return 'DROP temp tables';
  return 'other (settings, macros)';
}

const cpuNow = () => {
  const r = process.resourceUsage();
  return (r.userCPUTime + r.systemCPUTime) / 1e6;
};

/** The measured phase (child process): runSource('bdnb') over every generated archive into a fresh lake. */
async function phaseImport(dir: string, departements: string[]): Promise<BdnbImportResult> {
  const statements = instrumentDuckDB(classify);
  const dataRoot = path.join(dir, 'data');
  fs.rmSync(dataRoot, { recursive: true, force: true });
  const cpu0 = cpuNow();
  const t0 = performance.now();
  let fetchSeconds = 0;
  let fetchCpuSeconds = 0;
  const outcomes = await runSource(
    { source: 'bdnb', fromDir: path.join(dir, 'bdnb-source'), annees: [], departements, dataRoot, force: true },
    {
      onImportStart: () => {
        if (fetchSeconds) return;
        fetchSeconds = (performance.now() - t0) / 1000;
        fetchCpuSeconds = cpuNow() - cpu0;
      },
    },
  );
  const seconds = (performance.now() - t0) / 1000;
  return {
    seconds, cpuSeconds: cpuNow() - cpu0, maxRssMiB: process.resourceUsage().maxRSS / 1024, fetchSeconds, fetchCpuSeconds,
    failed: outcomes.filter((o) => o.status === 'failed').map((o) => `${o.part.key}: ${o.error}`),
    rowsRead: outcomes.reduce((a, o) => a + o.rowsRead, 0), rowsKept: outcomes.reduce((a, o) => a + o.rowsKept, 0), statements,
  };
}

/** Removes batiment_groupe.csv extracted next to an archive (by the fetch step of earlier versions), so the tree stays archives only. */
function removeExtracted(sourceDir: string) {
  if (!fs.existsSync(sourceDir)) return;
  for (const f of fs.readdirSync(sourceDir, { recursive: true, encoding: 'utf8' })) {
    if (f.endsWith('batiment_groupe.csv')) fs.rmSync(path.join(sourceDir, f), { force: true });
  }
}

/** The benchmark (parent process): generation (reused when unchanged), then the measured import in a child. */
export async function bdnbPipelineBench(args: Record<string, string>): Promise<void> {
  const groups = Number((args.groups ?? '2000000').replace(/_/g, ''));
  if (!Number.isInteger(groups) || groups < 10_000) throw new Error('--groups must be an integer ≥ 10000');
  const seed = Number(args.seed ?? 2025);
  const dir = args.keep ? path.resolve(args.keep) : fs.mkdtempSync(path.join(os.tmpdir(), 'foncier-bench-bdnb-'));
  const sourceDir = path.join(dir, 'bdnb-source');
  fs.mkdirSync(dir, { recursive: true });
  const cpus = os.cpus();
  console.log(`BDNB import benchmark: ${fmt(groups)} building groups, metropolitan départements, in ${dir}`);
  console.log(`Machine: ${cpus.length} CPUs (${cpus[0]?.model.trim() ?? '?'}), ${fmt(os.totalmem() / 2 ** 30, 1)} GiB RAM, Node ${process.version}`);
  try {
    const generatorHash = crypto.createHash('sha256').update(fs.readFileSync(path.join(path.dirname(SELF), '..', 'france-data', 'bdnb-generate.ts'))).digest('hex').slice(0, 16);
    const wanted = { groups, seed, generatorHash };
    const metaFile = path.join(sourceDir, 'bench-meta.json');
    const previous = fs.existsSync(metaFile) ? (JSON.parse(fs.readFileSync(metaFile, 'utf8')) as typeof wanted & { result: FranceBdnbGenerated }) : undefined;
    let gen: FranceBdnbGenerated;
    if (previous && previous.groups === groups && previous.seed === seed && previous.generatorHash === generatorHash) {
      gen = previous.result;
      console.log(`\nGeneration: reusing ${gen.departements.length} archives (generated earlier in ${fmt(gen.seconds, 0)} s)`);
    } else {
      console.log('\nGenerating (not measured)…');
      fs.rmSync(sourceDir, { recursive: true, force: true });
      const { instance, conn } = await openMemory({ threads: 2, memoryLimit: '4GB' });
      try {
        gen = await generateFranceBdnb(conn, sourceDir, groups, seed, console.log);
      } finally {
        conn.closeSync();
        instance.closeSync();
      }
      fs.writeFileSync(metaFile, JSON.stringify({ ...wanted, result: gen }, null, 2));
    }
    console.log(`Source: ${gen.departements.length} archives, ${fmt(gen.groups)} groups, ${fmt(gen.relations)} parcel relations, `
      + `${fmt(gen.csvBytes / 2 ** 20)} MiB of CSV, ${fmt(gen.bytes / 2 ** 20)} MiB zipped (${fmt(gen.csvBytes / gen.groups)} bytes of CSV per group)`);

    removeExtracted(sourceDir);
    const loads: number[] = [];
    const loadBefore = os.loadavg()[0];
    console.log(`\nMeasuring runSource('bdnb') in a child process (fresh lake; load average before ${fmt(loadBefore, 2)})…`);
    const tick = setInterval(() => loads.push(os.loadavg()[0]), 2000);
    const r = await runChild<BdnbImportResult>('import', { dir, departements: gen.departements.join(',') }, SELF).finally(() => clearInterval(tick));
    removeExtracted(sourceDir);
    if (r.failed.length) throw new Error(`import failures: ${r.failed.slice(0, 5).join('; ')}`);
    const perM = (x: number) => (x * 1e6) / r.rowsKept;
    const rate = r.rowsKept / r.seconds;
    const load = loads.length ? { min: Math.min(...loads), mean: loads.reduce((a, b) => a + b, 0) / loads.length, max: Math.max(...loads) } : { min: loadBefore, mean: loadBefore, max: loadBefore };
    console.log(`\nGroups: ${fmt(r.rowsKept)} kept of ${fmt(r.rowsRead)} read`);
    console.log(`Wall: ${fmt(r.seconds, 1)} s → ${fmt(rate)} groups/s (${fmt(perM(r.seconds), 2)} s per million)`);
    console.log(`CPU: ${fmt(r.cpuSeconds, 1)} s = ${fmt(perM(r.cpuSeconds), 2)} CPU-s per million groups, ${fmt(r.cpuSeconds / r.seconds, 2)} cores on average`);
    console.log(`  fetch (sha256 of every archive): ${fmt(r.fetchSeconds, 1)} s wall, ${fmt(r.fetchCpuSeconds, 1)} CPU-s`);
    console.log(`Peak RSS: ${fmt(r.maxRssMiB)} MiB; load average during the run: min ${fmt(load.min, 2)}, mean ${fmt(load.mean, 2)}, max ${fmt(load.max, 2)} (2 CPUs)`);
    const cpuTarget = 2e6 / TARGET_GROUPS_PER_SECOND;
    console.log(`Target ≥ ${fmt(TARGET_GROUPS_PER_SECOND)} groups/s on 2 cores ⇔ ≤ ${fmt(cpuTarget)} CPU-s per million with both cores busy: `
      + `${perM(r.cpuSeconds) <= cpuTarget ? 'MET' : 'NOT MET'} by CPU time; wall ${rate >= TARGET_GROUPS_PER_SECOND ? 'MET' : 'NOT MET'} on this (shared) machine`);
    console.log('\nWhere the time goes (SQL statements timed inside runSource, summed over départements):');
    const sqlTotal = Object.values(r.statements).reduce((a, s) => a + s.seconds, 0);
    for (const [k, s] of Object.entries(r.statements).sort((a, b) => b[1].seconds - a[1].seconds)) {
      console.log(`  ${k.padEnd(44)} ${fmt(s.seconds, 1).padStart(8)} s  ${fmt((100 * s.seconds) / r.seconds).padStart(3)} %  (${s.count}×)`);
    }
    console.log(`  ${'outside SQL (fetch, waits for extraction, manifest)'.padEnd(44)} ${fmt(r.seconds - sqlTotal, 1).padStart(8)} s  ${fmt((100 * (r.seconds - sqlTotal)) / r.seconds).padStart(3)} %`);
    if (args.json) fs.writeFileSync(args.json, JSON.stringify({ machine: { cpus: cpus.length, model: cpus[0]?.model }, generation: gen, import: r, loadBefore, load }, null, 2));
  } finally {
    if (!args.keep) fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (path.resolve(process.argv[1] ?? '') === SELF) {
  const text = { type: 'string' } as const;
  const { values } = parseArgs({ options: { phase: text, result: text, dir: text, departements: text, groups: text, seed: text, keep: text, json: text } });
  const args = Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)) as Record<string, string>;
  (async () => {
    if (args.phase === 'import') {
      const r = await phaseImport(args.dir, args.departements.split(','));
      fs.writeFileSync(args.result, JSON.stringify(r));
    } else await bdnbPipelineBench(args);
  })().catch((e: Error) => {
    console.error(`bdnb bench failed: ${e.stack ?? e.message}`);
    process.exit(1);
  });
}
