// `npm run bench -- pipeline --dpe [--rows 13000000] [--keep DIR] [--gzip] [--json FILE]`: the DPE import end to end
// at France scale (13 million v2 diagnostics ≥ 100,000 rows/s on 2 cores, peak RSS < 3 GB).
//
// 1. Generates (not measured) synthetic `dpe03existant` files in the format the pipeline reads: data-fair's CSV
//    output with API field names — the fields the data-fair client selects (DPE_API_FIELDS), in another order than the
//    select list, as a server may return them — one file per département laid out like `--from-dir` expects
//    (<dir>/source/dpe03existant/<dep>.csv, or .csv.gz with --gzip). Rows per département follow the population factor
//    of the DVF bench (all départements, Alsace-Moselle included). The value mix: replaced diagnostics
//    (`numero_dpe_remplace` pointing at an earlier row of the département), exact duplicate rows (a diagnostic served
//    twice), classes outside A–G (`N`, `I`), missing coordinates, `_geopoint` without X/Y, overseas X/Y outside
//    Lambert-93 bounds, absurd construction years and surfaces, empty surfaces on whole-building rows.
// 2. Measures, in a child process of its own: `runSource` (source dpe, format dpe03existant, --from-dir) over every
//    département into a fresh lake + manifest: wall, CPU seconds (user + system, DuckDB threads included), peak RSS
//    (getrusage maxRSS), the load average before and after, and every SQL statement timed by kind.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import proj4 from 'proj4';
import { ALL_DEPARTEMENTS } from '../../lib/sources/departements';
import { all, lit, openMemory, run } from '../../lib/duck';
import { lambert93Macros } from '../../lib/lambert93';
import { runSource, type PartOutcome } from '../../pipeline/run';
import { DPE_API_FIELDS } from '../../pipeline/sources/dpe/columns';
import { depProfiles, allocateRows, type DepProfile } from './pipeline';

export const DPE_TARGET_ROWS_PER_SECOND = 100_000;
export const DPE_TARGET_RSS_MIB = 3 * 1024;
const GENERATOR_VERSION = 1;

proj4.defs('EPSG:2154', '+proj=lcc +lat_0=46.5 +lon_0=3 +lat_1=49 +lat_2=44 +x_0=700000 +y_0=6600000 +ellps=GRS80 +towgs84=0,0,0,0,0,0,0 +units=m +no_defs');

/** Every département ADEME covers: the DVF bench's profiles plus Alsace-Moselle (absent from DVF) and Mayotte. */
export function dpeProfiles(): DepProfile[] {
  const extra: DepProfile[] = [
    { dep: '57', pop: 1045, lat: 49.05, lon: 6.6, prixM2: 2100, appart: 0.35, communes: 400 },
    { dep: '67', pop: 1140, lat: 48.6, lon: 7.6, prixM2: 2600, appart: 0.5, communes: 400 },
    { dep: '68', pop: 770, lat: 47.85, lon: 7.25, prixM2: 2300, appart: 0.4, communes: 340 },
    { dep: '976', pop: 300, lat: -12.8, lon: 45.15, prixM2: 2000, appart: 0.2, communes: 17 },
  ];
  const byDep = new Map([...depProfiles(), ...extra].map((p) => [p.dep, p]));
  return ALL_DEPARTEMENTS.map((d) => {
    const p = byDep.get(d);
    if (!p) throw new Error(`no profile for département ${d}`);
    return p;
  });
}

const sqlList = (xs: string[]) => `[${xs.map(lit).join(', ')}]`;
const STREETS = sqlList(['Rue de la République', 'Rue Victor Hugo', 'Avenue Jean Jaurès', 'Rue du Moulin', 'Chemin des Vignes',
  'Rue Pasteur', 'Place de l\'Église', 'Rue des Écoles', 'Allée des Chênes', 'Boulevard Gambetta', 'Rue Jules Ferry',
  'Impasse des Lilas', 'Rue de la Gare', 'Avenue du Général de Gaulle', 'Rue Saint-Martin', 'Résidence les Pins']);
const COMMUNES = sqlList(['Saint-Martin', 'Beaulieu', 'Villeneuve', 'Montigny', 'Châtillon', 'La Rivière', 'Sainte-Foy', 'Le Bourg']);
const PERIODES = sqlList(['avant 1948', '1948-1974', '1975-1977', '1978-1982', '1983-1988', '1989-2000', '2001-2005', '2006-2012', '2013-2021', 'après 2021']);
const VERSIONS = sqlList(['2.4', '2.3', '2.2', '2.1', '2', '1.1']);
const METHODES = sqlList(['dpe appartement individuel', 'dpe maison individuelle', 'dpe appartement généré à partir des données DPE immeuble', 'dpe immeuble collectif']);

/**
 * SQL yielding `rows` rows of one département, columns in `order`. Everything is a function of the row's global number
 * g (hash(seed, g, k) for the k-th draw), so a row's number can be recomputed to point a replacement at it.
 */
function departementSql(p: DepProfile, rows: number, offset: number, seed: number, order: string[]): string {
  const dom = p.dep.length === 3;
  const [cx, cy] = dom ? [650_000, 1_800_000] : proj4('WGS84', 'EPSG:2154', [p.lon, p.lat]);
  const dd = p.dep.slice(0, 2);
  const u = (k: number, g = 'g') => `((hash(${seed}, ${g}, ${k}) % 1000003) / 1000003.0)`;
  const numero = (g: string) => `'2' || ((${g} % 5) + 1)::VARCHAR || ${lit(dd)} || 'E' || lpad(${g}::VARCHAR, 8, '0') || chr(65 + (${g} % 26)::INTEGER)`;
  const cls = (k: number) => `CASE WHEN ${u(k)} < 0.012 THEN 'A' WHEN ${u(k)} < 0.04 THEN 'B' WHEN ${u(k)} < 0.15 THEN 'C' WHEN ${u(k)} < 0.45 THEN 'D'
    WHEN ${u(k)} < 0.74 THEN 'E' WHEN ${u(k)} < 0.88 THEN 'F' WHEN ${u(k)} < 0.9985 THEN 'G' WHEN ${u(k)} < 0.9995 THEN 'N' ELSE 'I' END`;
  const expr: Record<string, string> = {
    numero_dpe: numero('g'),
    date_etablissement_dpe: `strftime(DATE '2021-07-01' + floor(${u(1)} * 1640)::INTEGER, '%Y-%m-%d')`,
    etiquette_dpe: cls(2),
    etiquette_ges: cls(3),
    conso_5_usages_par_m2_ep: `round(45 + ${u(4)} * 420, 1)`,
    emission_ges_5_usages_par_m2: `round(${u(5)} * 90, 1)`,
    surface_habitable_logement: `CASE WHEN typ = 'immeuble' THEN NULL WHEN ${u(6)} < 0.0005 THEN 0
      WHEN typ = 'appartement' THEN round(14 + ${u(7)} * 110, 1) ELSE round(55 + ${u(7)} * 170, 1) END`,
    annee_construction: `CASE WHEN ${u(8)} < 0.001 THEN 5200 WHEN ${u(8)} < 0.6 THEN 1850 + floor(${u(9)} * 171)::INTEGER END`,
    periode_construction: `${PERIODES}[1 + floor(${u(9)} * 10)::INTEGER]`,
    type_batiment: 'typ',
    code_insee_ban: 'insee',
    code_postal_ban: `${lit(dd)} || lpad((floor(${u(10)} * 990)::INTEGER)::VARCHAR, 3, '0')`,
    code_departement_ban: lit(p.dep),
    identifiant_ban: `insee || '_' || lpad((floor(${u(11)} * 9000)::INTEGER)::VARCHAR, 4, '0') || '_' || lpad(num::VARCHAR, 5, '0')`,
    adresse_ban: `num::VARCHAR || ' ' || ${STREETS}[1 + floor(${u(11)} * 16)::INTEGER] || ' ' || ${lit(dd)} || '000 ' || ${COMMUNES}[1 + floor(${u(12)} * 8)::INTEGER]`,
    coordonnee_cartographique_x_ban: 'CASE WHEN has_xy THEN round(x, 2) END',
    coordonnee_cartographique_y_ban: 'CASE WHEN has_xy THEN round(y, 2) END',
    _geopoint: dom
      ? `CASE WHEN has_geo THEN round(${p.lat} + (${u(13)} - 0.5) * 0.3, 6)::VARCHAR || ',' || round(${p.lon} + (${u(14)} - 0.5) * 0.3, 6)::VARCHAR END`
      : `CASE WHEN has_geo THEN lambert93_lat(x, y)::VARCHAR || ',' || lambert93_lon(x, y)::VARCHAR END`,
    // 4 % replace an earlier diagnostic of the département (the same dwelling diagnosed again).
    numero_dpe_remplace: `CASE WHEN ${u(15)} < 0.04 AND i > 60 THEN ${numero(`(g - 1 - floor(${u(16)} * 50)::BIGINT)`)} END`,
    version_dpe: `${VERSIONS}[1 + floor(${u(17)} * 6)::INTEGER]`,
    methode_application_dpe: `${METHODES}[CASE typ WHEN 'maison' THEN 2 WHEN 'immeuble' THEN 4 ELSE 1 + 2 * floor(${u(18)} * 1.2)::INTEGER END]`,
    modele_dpe: `'DPE 3CL 2021 méthode logement'`,
  };
  const missing = order.filter((c) => !(c in expr));
  if (missing.length) throw new Error(`generator lacks ${missing.join(', ')}`);
  // A row in 500 is a copy of the previous one (a diagnostic served twice): its draws use the previous g.
  return `WITH r AS (
      SELECT i, ${offset} + i - CASE WHEN i > 0 AND (hash(${seed}, ${offset} + i, 99) % 500) = 0 THEN 1 ELSE 0 END AS g FROM range(${rows}) t(i)
    ), b AS (
      SELECT i, g,
        CASE WHEN ${u(20)} < 0.01 THEN 'immeuble' WHEN ${u(20)} < 0.01 + ${p.appart} THEN 'appartement' ELSE 'maison' END AS typ,
        ${lit(p.dep)} || lpad((1 + floor(${u(21)} * ${p.communes})::INTEGER)::VARCHAR, ${dom ? 2 : 3}, '0') AS insee,
        1 + floor(${u(22)} * 120)::INTEGER AS num,
        ${cx} + (${u(23)} - 0.5) * 70000 AS x, ${cy} + (${u(24)} - 0.5) * 70000 AS y,
        ${u(25)} >= 0.03 AS has_xy, ${u(25)} >= 0.02 AS has_geo
      FROM r
    )
    SELECT ${order.map((c) => `${expr[c]} AS ${c}`).join(', ')} FROM b ORDER BY i`;
}

export interface DpeGenerateResult { files: number; rows: number; bytes: number; seconds: number; rowsByDep: Record<string, number> }

/** Writes the département files under `sourceDir`/dpe03existant with DuckDB (one COPY each). */
export async function generateDpeFiles(sourceDir: string, rows: number, seed: number, gzip: boolean): Promise<DpeGenerateResult> {
  const t0 = performance.now();
  const profiles = dpeProfiles();
  const counts = allocateRows(rows, profiles);
  const out = path.join(sourceDir, 'dpe03existant');
  fs.rmSync(out, { recursive: true, force: true });
  fs.mkdirSync(out, { recursive: true });
  // data-fair returns the selected fields in its schema's order, not the select list's: shuffled here on purpose.
  const order = [...DPE_API_FIELDS.dpe03existant].sort((a, b) => (a.length * 7 + a.charCodeAt(1)) % 11 - (b.length * 7 + b.charCodeAt(1)) % 11);
  const { instance, conn } = await openMemory({ threads: 2, memoryLimit: '2GB' });
  try {
    await run(conn, lambert93Macros());
    let offset = 0;
    let bytes = 0;
    const rowsByDep: Record<string, number> = {};
    for (const [i, p] of profiles.entries()) {
      const file = path.join(out, `${p.dep}.csv${gzip ? '.gz' : ''}`);
      await run(conn, `COPY (${departementSql(p, counts[i], offset, seed, order)}) TO ${lit(file)} (FORMAT csv, HEADER, DELIMITER ',', COMPRESSION ${gzip ? 'gzip' : 'none'})`);
      offset += counts[i];
      bytes += fs.statSync(file).size;
      rowsByDep[p.dep] = counts[i];
    }
    return { files: profiles.length, rows, bytes, seconds: (performance.now() - t0) / 1000, rowsByDep };
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Measured phase
// ---------------------------------------------------------------------------------------------------------------

/** Which step of the DPE import a SQL statement is, from its text (pipeline/sources/dpe/parse.ts, stage.ts). */
export function classifyDpe(sql: string): string {
  if (/TEMP TABLE dpe_typed AS|INSERT INTO dpe_typed/i.test(sql)) return '1 read CSV → typed rows → dpe_typed (one statement a file)';
  if (/UPDATE dpe_typed/i.test(sql)) return '2 ids of rows without a number';
  if (/TEMP TABLE dpe_dropped/i.test(sql)) return '3 duplicate copies (hash aggregate, window on dups)';
  if (/TEMP TABLE dpe_replaced/i.test(sql)) return '4 replaced numbers';
  if (/FROM dpe_staged/i.test(sql) && !/^\s*COPY/i.test(sql)) return '5 anomaly counts';
  if (/^\s*COPY/i.test(sql)) return '6 COPY dpe_staged → Parquet zstd';
  if (/read_parquet/i.test(sql)) return '7 count of written rows';
  if (/rejects/i.test(sql)) return '8 reader rejects (malformed lines)';
  return '9 other (macros, settings, DROP, row counts)';
}

export interface DpePipelinePhase {
  seconds: number; cpuSeconds: number; maxRssMiB: number;
  parts: number; failed: string[]; rowsRead: number; rowsKept: number;
  anomalies: Record<string, number>;
  statements: Record<string, { count: number; seconds: number; cpuSeconds: number }>;
}

type Instrument = (classify: (sql: string) => string) => Record<string, { count: number; seconds: number; cpuSeconds: number }>;

/** The measured phase (run in a child process): runSource over every département, fresh lake. */
export async function phaseDpePipeline(dir: string, instrument: Instrument): Promise<DpePipelinePhase> {
  const dataRoot = path.join(dir, 'data');
  fs.rmSync(dataRoot, { recursive: true, force: true });
  const statements = instrument(classifyDpe);
  const deps = fs.readdirSync(path.join(dir, 'source', 'dpe03existant')).map((f) => f.replace(/\.csv(\.gz)?$/, '')).sort();
  const r0 = process.resourceUsage();
  const t0 = performance.now();
  const outcomes: PartOutcome[] = await runSource({
    source: 'dpe', format: 'dpe03existant', fromDir: path.join(dir, 'source'), departements: deps, annees: [],
    dataRoot, force: true, now: new Date('2026-01-01T00:00:00Z'),
  }, { log: () => {} });
  const seconds = (performance.now() - t0) / 1000;
  const r1 = process.resourceUsage();
  const anomalies: Record<string, number> = {};
  for (const o of outcomes) for (const [k, n] of Object.entries(o.anomalies)) anomalies[k] = (anomalies[k] ?? 0) + n;
  return {
    seconds, cpuSeconds: (r1.userCPUTime + r1.systemCPUTime - r0.userCPUTime - r0.systemCPUTime) / 1e6, maxRssMiB: r1.maxRSS / 1024,
    parts: outcomes.length, failed: outcomes.filter((o) => o.status !== 'imported').map((o) => `${o.part.key}: ${o.status} ${o.error ?? ''}`),
    rowsRead: outcomes.reduce((a, o) => a + o.rowsRead, 0), rowsKept: outcomes.reduce((a, o) => a + o.rowsKept, 0), anomalies, statements,
  };
}

/** Lake check after the run (not measured): rows, replaced, classes, coordinates. */
async function lakeSummary(dir: string): Promise<Record<string, number>> {
  const { instance, conn } = await openMemory();
  try {
    const glob = path.join(dir, 'data', 'lake', 'dpe', '**', '*.parquet');
    const [s] = await all<Record<string, number>>(conn, `SELECT count(*)::BIGINT AS rows, count(DISTINCT dpe_id)::BIGINT AS ids,
      count(*) FILTER (classe_energie IS NULL)::BIGINT AS no_class, count(*) FILTER (latitude IS NULL)::BIGINT AS no_coordinates,
      count(*) FILTER (coord_source = 'geopoint')::BIGINT AS from_geopoint, count(*) FILTER (numero_dpe_remplace IS NOT NULL)::BIGINT AS replacing
      FROM read_parquet(${lit(glob)}, hive_partitioning = true)`);
    return s;
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

const fmt = (x: number, d = 0) => x.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d }).replace(/,/g, ' ');

type RunChild = <T>(phase: string, args: Record<string, string>) => Promise<T>;

/** The orchestrating side: generate (reused with --keep when unchanged), measure in a child, print, check. */
export async function dpeImportBench(args: Record<string, string>, runChild: RunChild): Promise<void> {
  const rows = Number(args.rows ?? 13_000_000);
  if (!Number.isInteger(rows) || rows < 10_000) throw new Error('--rows must be an integer ≥ 10000');
  const seed = Number(args.seed ?? 2026);
  const gzip = args.gzip === 'yes';
  const dir = args.keep ? path.resolve(args.keep) : fs.mkdtempSync(path.join(os.tmpdir(), 'foncier-bench-dpe-'));
  fs.mkdirSync(dir, { recursive: true });
  const cpus = os.cpus();
  console.log(`DPE import benchmark: ${fmt(rows)} dpe03existant rows (data-fair CSV, API field names${gzip ? ', gzip' : ''}), in ${dir}`);
  console.log(`Machine: ${cpus.length} CPUs (${cpus[0]?.model.trim() ?? '?'}), ${fmt(os.totalmem() / 2 ** 30, 1)} GiB RAM, Node ${process.version}`);
  try {
    const metaFile = path.join(dir, 'source', 'dpe-bench-meta.json');
    const wanted = { generator: GENERATOR_VERSION, rows, seed, gzip, fields: DPE_API_FIELDS.dpe03existant };
    const previous = fs.existsSync(metaFile) ? (JSON.parse(fs.readFileSync(metaFile, 'utf8')) as typeof wanted & { result: DpeGenerateResult }) : undefined;
    let gen: DpeGenerateResult;
    if (previous && JSON.stringify({ ...previous, result: undefined }) === JSON.stringify({ ...wanted, result: undefined })) {
      gen = previous.result;
      console.log(`\nGeneration: reusing ${gen.files} files of ${dir}/source (generated earlier in ${fmt(gen.seconds, 1)} s)`);
    } else {
      console.log('\nGenerating (not measured)…');
      gen = await runChild<DpeGenerateResult>('dpe-generate-dir', { dir, rows: String(rows), seed: String(seed), compress: gzip ? 'gzip' : 'none' });
      fs.writeFileSync(metaFile, JSON.stringify({ ...wanted, result: gen }, null, 2));
    }
    console.log(`Files: ${gen.files} départements, ${fmt(gen.rows)} rows, ${fmt(gen.bytes / 2 ** 20)} MiB (${fmt(gen.bytes / gen.rows)} bytes/row), largest ${Object.entries(gen.rowsByDep).sort((a, b) => b[1] - a[1]).slice(0, 3).map(([d, n]) => `${d}: ${fmt(n)}`).join(', ')}`);

    const loadBefore = os.loadavg();
    console.log(`\nMeasuring the import (runSource dpe --from-dir, every département, fresh lake; load average before ${loadBefore.map((l) => fmt(l, 2)).join(' ')})…`);
    const r = await runChild<DpePipelinePhase>('dpe-pipeline', { dir });
    const loadAfter = os.loadavg();
    if (r.failed.length) throw new Error(`import failures: ${r.failed.join('; ')}`);
    if (r.rowsRead !== rows) throw new Error(`${r.rowsRead} rows read, ${rows} generated`);
    const lake = await lakeSummary(dir);

    const twoCore = r.cpuSeconds / 2; // the wall time with both cores busy and nobody else on them
    const cores = r.cpuSeconds / r.seconds;
    console.log(`\nend to end (runSource → lake + manifest): ${fmt(r.seconds, 1)} s wall, ${fmt(rows / r.seconds)} rows/s wall`);
    console.log(`CPU: ${fmt(r.cpuSeconds, 1)} CPU-s (${fmt(cores, 2)} cores obtained on average), ${fmt(rows / r.cpuSeconds)} rows per CPU-s → ${fmt(rows / twoCore)} rows/s with 2 busy cores`);
    console.log(`peak RSS (getrusage maxRSS of the importing process): ${fmt(r.maxRssMiB)} MiB`);
    console.log(`load average after: ${loadAfter.map((l) => fmt(l, 2)).join(' ')}`);
    console.log(`Lake: ${fmt(r.rowsKept)} diagnostics kept of ${fmt(r.rowsRead)} read in ${r.parts} partitions; ${JSON.stringify(lake)}`);
    console.log(`Anomalies: ${Object.entries(r.anomalies).sort().map(([k, n]) => `${k} ${fmt(n)}`).join(', ')}`);
    console.log('\nWhere the time goes (SQL statements timed inside runSource):');
    const sqlTotal = Object.values(r.statements).reduce((a, s) => a + s.seconds, 0);
    const sqlCpu = Object.values(r.statements).reduce((a, s) => a + s.cpuSeconds, 0);
    console.log(`  ${'step'.padEnd(64)} ${'wall s'.padStart(7)}  ${'CPU-s'.padStart(7)}  ${'CPU %'.padStart(5)}`);
    const row = (k: string, s: number, c: number, count?: number) =>
      console.log(`  ${k.padEnd(64)} ${fmt(s, 1).padStart(7)}  ${fmt(c, 1).padStart(7)}  ${fmt((100 * c) / r.cpuSeconds, 0).padStart(5)}${count ? `  (${count}×)` : ''}`);
    for (const [k, s] of Object.entries(r.statements).sort()) row(k, s.seconds, s.cpuSeconds, s.count);
    row('10 outside SQL (header sniffing, index files, sha256, manifest)', r.seconds - sqlTotal, r.cpuSeconds - sqlCpu);

    const rate = rows / twoCore;
    const met = rate >= DPE_TARGET_ROWS_PER_SECOND && r.maxRssMiB < DPE_TARGET_RSS_MIB;
    console.log(`\nTarget: ≥ ${fmt(DPE_TARGET_ROWS_PER_SECOND)} rows/s on 2 cores (≤ ${fmt(rows / DPE_TARGET_ROWS_PER_SECOND / 0.5, 1)} CPU-s for these rows) and peak RSS < ${fmt(DPE_TARGET_RSS_MIB)} MiB → ${met ? 'MET' : 'NOT MET'}`
      + ` (${fmt(rate)} rows/s by CPU-s, ${fmt(rows / r.seconds)} by wall at ${fmt(cores, 2)} cores)`);
    if (args.json) {
      fs.writeFileSync(args.json, JSON.stringify({
        machine: { cpus: cpus.length, model: cpus[0]?.model, totalMemGiB: os.totalmem() / 2 ** 30, node: process.version },
        rows, generation: gen, pipeline: r, lake, loadBefore, loadAfter, rowsPerSecondWall: rows / r.seconds, rowsPerSecondTwoCores: rate,
      }, null, 2));
    }
  } finally {
    if (!args.keep) fs.rmSync(dir, { recursive: true, force: true });
  }
}
