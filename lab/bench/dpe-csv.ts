// `npm run bench -- pipeline --dpe-csv 5GB`: the streaming template (pipeline/stage.ts) on a national-size DPE file.
// Generates a CSV with the real 220-column label-style header of ADEME's DPE v2 export (the Lyon 8e sample, see
// /work/shared/data/dpe/PROVENANCE.md §1) and rows derived from the sample's real rows (unique N°DPE, départements,
// communes, coordinates, dates, surfaces and labels varied), then stages it with `stageFile` under a 1 GB DuckDB memory
// limit and writes it to Parquet, measuring rows/s and the peak RSS of the importing process (VmHWM).
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { samplesDir } from '../../lib/config';
import { all, lit, openMemory, run } from '../../lib/duck';
import { stageFile, type StageColumn } from '../../pipeline/stage';

export const DPE_SAMPLE = path.join(samplesDir, 'dpe', 'dpe-v2-logements-neufs_lyon8_69388.csv.gz');
/** One generated row in this many has an unparsable surface ("n/a"): the anomaly count the import must report. */
export const BAD_SURFACE_EVERY = 100_000;
export const DPE_MEMORY_LIMIT = '1GB';

/** The columns a DPE import keeps, under their API names, with the label-style names of the CSV exports. */
export const DPE_BENCH_COLUMNS: Record<string, StageColumn> = {
  numero_dpe: { type: 'VARCHAR', names: ['numero_dpe', 'N°DPE'], required: true },
  date_reception_dpe: { type: 'DATE' },
  date_etablissement_dpe: { type: 'DATE', required: true },
  date_fin_validite_dpe: { type: 'DATE' },
  modele_dpe: { type: 'VARCHAR' },
  numero_dpe_remplace: { type: 'VARCHAR', names: ['numero_dpe_remplace', 'N°_DPE_remplacé'] },
  version_dpe: { type: 'VARCHAR' },
  etiquette_dpe: { type: 'VARCHAR', required: true },
  etiquette_ges: { type: 'VARCHAR' },
  type_batiment: { type: 'VARCHAR' },
  annee_construction: { type: 'INTEGER' },
  periode_construction: { type: 'VARCHAR' },
  hauteur_sous_plafond: { type: 'DOUBLE' },
  nombre_appartement: { type: 'INTEGER' },
  nombre_niveau_logement: { type: 'INTEGER' },
  surface_habitable_immeuble: { type: 'DOUBLE' },
  surface_habitable_logement: { type: 'DOUBLE' },
  typologie_logement: { type: 'VARCHAR' },
  code_insee_ban: { type: 'VARCHAR' },
  code_postal_ban: { type: 'VARCHAR' },
  code_departement_ban: { type: 'VARCHAR', names: ['code_departement_ban', 'N°_département_(BAN)'] },
  nom_commune_ban: { type: 'VARCHAR' },
  adresse_ban: { type: 'VARCHAR' },
  identifiant_ban: { type: 'VARCHAR' },
  score_ban: { type: 'DOUBLE' },
  statut_geocodage: { type: 'VARCHAR' },
  coordonnee_cartographique_x_ban: { type: 'DOUBLE' },
  coordonnee_cartographique_y_ban: { type: 'DOUBLE' },
  conso_5_usages_ef: { type: 'DOUBLE', names: ['conso_5_usages_ef', 'Conso_5_usages_é_finale'] },
  conso_5_usages_par_m2_ep: { type: 'DOUBLE', names: ['conso_5_usages_par_m2_ep', 'Conso_5_usages_par_m²_é_primaire'] },
  emission_ges_5_usages_par_m2: { type: 'DOUBLE' },
  cout_total_5_usages: { type: 'DOUBLE' },
  type_energie_n1: { type: 'VARCHAR', names: ['type_energie_n1', 'Type_énergie_n°1'] },
  type_energie_principale_chauffage: { type: 'VARCHAR' },
  qualite_isolation_enveloppe: { type: 'VARCHAR' },
  ubat_w_m2_k: { type: 'DOUBLE', names: ['ubat_w_m2_k', 'Ubat_W/m²_K'] },
};

/** Splits a small CSV text (quoted fields, "" escapes, newlines inside quotes) into rows of raw field texts, quotes kept. */
function splitCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i <= text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') i++;
      else if (ch === '"') quoted = false;
    } else if (ch === '"') quoted = true;
    else if (ch === ',' || ch === '\n' || ch === undefined) {
      row.push(text.slice(start, i));
      start = i + 1;
      if (ch !== ',') {
        if (row.length > 1 || row[0] !== '') rows.push(row);
        row = [];
      }
    }
  }
  return rows;
}

const DEPS = ['01', '06', '13', '14', '21', '29', '31', '33', '34', '35', '38', '44', '45', '48', '54', '57', '59', '62', '63', '67', '69', '75', '76', '77', '78', '83', '91', '92', '93', '94', '95', '2A', '971'];
const LABELS = ['A', 'B', 'C', 'C', 'D', 'D', 'D', 'E', 'E', 'F', 'G'];

/** Writes about `bytes` bytes of DPE CSV to `file`; returns the data rows written. */
export async function generateDpeCsv(file: string, bytes: number, seed = 2024): Promise<{ rows: number; bytes: number; seconds: number; badSurfaces: number }> {
  const started = performance.now();
  const text = zlib.gunzipSync(fs.readFileSync(DPE_SAMPLE)).toString('utf8');
  const [header, ...sample] = splitCsv(text);
  const col = (label: string) => {
    const i = header.findIndex((h) => h.replace(/^\uFEFF/, '') === `"${label}"`);
    if (i < 0) throw new Error(`sample header lacks ${label}`);
    return i;
  };
  const c = {
    numero: col('N°DPE'), etablissement: col('Date_établissement_DPE'), etiquette: col('Etiquette_DPE'), surface: col('Surface_habitable_logement'),
    insee: col('Code_INSEE_(BAN)'), postal: col('Code_postal_(BAN)'), dep: col('N°_département_(BAN)'), x: col('Coordonnée_cartographique_X_(BAN)'),
    y: col('Coordonnée_cartographique_Y_(BAN)'), conso: col('Conso_5_usages_par_m²_é_primaire'),
  };
  let state = seed >>> 0;
  const rand = () => ((state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32);
  const out = fs.createWriteStream(file);
  const write = async (s: string) => {
    if (!out.write(s)) await once(out, 'drain');
  };
  let written = 0;
  let rows = 0;
  let badSurfaces = 0;
  const head = '\uFEFF' + header.join(',') + '\n';
  await write(head);
  written += Buffer.byteLength(head);
  while (written < bytes) {
    const parts: string[] = [];
    for (let k = 0; k < 4000; k++, rows++) {
      const f = sample[rows % sample.length].slice();
      const dep = DEPS[Math.floor(rand() * DEPS.length)];
      const commune = String(1 + Math.floor(rand() * 400)).padStart(dep.length === 3 ? 2 : 3, '0');
      f[c.numero] = `"${String(21 + (rows % 5)).padStart(2, '0')}${dep.slice(0, 2)}E${String(rows).padStart(8, '0')}${'ABCDEFGHJK'[rows % 10]}"`;
      const day = new Date(Date.UTC(2021, 6, 1) + Math.floor(rand() * 1600) * 86_400_000).toISOString().slice(0, 10);
      f[c.etablissement] = `"${day}"`;
      f[c.etiquette] = `"${LABELS[Math.floor(rand() * LABELS.length)]}"`;
      f[c.surface] = rows % BAD_SURFACE_EVERY === BAD_SURFACE_EVERY - 1 ? (badSurfaces++, '"n/a"') : (15 + rand() * 150).toFixed(1);
      f[c.insee] = `"${dep}${commune}"`;
      f[c.postal] = `"${dep.slice(0, 2)}${String(Math.floor(rand() * 1000)).padStart(3, '0')}"`;
      f[c.dep] = `"${dep}"`;
      f[c.x] = (100_000 + rand() * 1_100_000).toFixed(2);
      f[c.y] = (6_050_000 + rand() * 1_050_000).toFixed(2);
      f[c.conso] = (40 + rand() * 400).toFixed(1);
      parts.push(f.join(','));
    }
    const chunk = parts.join('\n') + '\n';
    written += Buffer.byteLength(chunk);
    await write(chunk);
  }
  await new Promise<void>((resolve, reject) => out.end((e?: Error | null) => (e ? reject(e) : resolve())));
  return { rows, bytes: written, seconds: (performance.now() - started) / 1000, badSurfaces };
}

/** Peak resident set size of this process (kernel high-water mark), MiB. */
export function vmHwmMiB(): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) / 1024 : process.resourceUsage().maxRSS / 1024;
}

export interface DpeImportResult {
  rowsRead: number;
  rowsStaged: number;
  anomalies: Record<string, number>;
  unmappedColumns: number;
  stageSeconds: number;
  copySeconds: number;
  parquetMiB: number;
  peakRssMiB: number;
  cpuSeconds: number;
}

/** Stages `file` through the template under DPE_MEMORY_LIMIT and writes the staged rows to `outDir`/dpe.parquet. */
export async function importDpeCsv(file: string, outDir: string): Promise<DpeImportResult> {
  const r0 = process.resourceUsage();
  const { instance, conn } = await openMemory({ threads: 2, memoryLimit: DPE_MEMORY_LIMIT });
  try {
    await run(conn, `SET temp_directory = ${lit(path.join(outDir, 'duckdb-tmp'))}`);
    // preserve_insertion_order stays on (DuckDB's default, the pipeline's setting): sources rely on rowid = file order
    const t0 = performance.now();
    const staged = await stageFile(conn, { file, table: 'dpe_staged', columns: DPE_BENCH_COLUMNS, tmpDir: outDir });
    const t1 = performance.now();
    const parquet = path.join(outDir, 'dpe.parquet');
    await run(conn, `COPY dpe_staged TO ${lit(parquet)} (FORMAT parquet, COMPRESSION zstd)`);
    const t2 = performance.now();
    const [{ n }] = await all<{ n: number }>(conn, `SELECT count(*)::BIGINT AS n FROM read_parquet(${lit(parquet)})`);
    if (n !== staged.rowsStaged) throw new Error(`Parquet has ${n} rows, staged ${staged.rowsStaged}`);
    const r1 = process.resourceUsage();
    return {
      rowsRead: staged.rowsRead, rowsStaged: staged.rowsStaged, anomalies: staged.anomalies,
      unmappedColumns: staged.header.length - Object.values(staged.mapping).filter((m) => m !== null).length,
      stageSeconds: (t1 - t0) / 1000, copySeconds: (t2 - t1) / 1000, parquetMiB: fs.statSync(parquet).size / 2 ** 20,
      peakRssMiB: vmHwmMiB(), cpuSeconds: (r1.userCPUTime + r1.systemCPUTime - r0.userCPUTime - r0.systemCPUTime) / 1e6,
    };
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

/** "5GB", "500MB", "2.5GiB" → bytes. */
export function parseSize(s: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([KMG])i?B?$/i.exec(s.trim());
  if (!m) throw new Error(`--dpe-csv expects a size such as 5GB or 500MB, got ${s}`);
  return Math.round(Number(m[1]) * 1024 ** ' KMG'.indexOf(m[2].toUpperCase()));
}
