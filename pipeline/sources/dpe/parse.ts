// Reads DPE files of any published style into DuckDB through the streaming template (pipeline/stage.ts): CSV exports
// (label-style or API names, `,` or `;`, BOM, gzip, R re-exports with a row-number column and `NA`), NDJSON pages
// written by the data-fair client, and raw API responses ({total, next, results}). Columns are found by header name
// (the aliases of columns.ts), then typed by stage.sql.
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import zlib from 'node:zlib';
import { all, lit, run, type DuckDBConnection } from '../../../lib/duck';
import { lambert93Macros } from '../../../lib/lambert93';
import { stageFile, type StageColumn, type StageResult as TemplateResult } from '../../stage';
import { DPE_ALIASES, DPE_RAW_COLUMNS } from './columns';

export interface DpeFile {
  path: string;
  /** Dataset the file comes from (dpe03existant, dpe02neuf, dpe-france…), kept on every row. */
  dataset: string;
}

const STAGE_SQL = fs.readFileSync(path.join(path.dirname(new URL(import.meta.url).pathname), 'stage.sql'), 'utf8');

/** The first bytes of a file as text, gunzipped when needed: enough to tell a raw API response from NDJSON pages. */
async function readHead(file: string, maxBytes = 64 * 1024): Promise<string> {
  const fd = await fs.promises.open(file, 'r');
  const magic = Buffer.alloc(2);
  await fd.read(magic, 0, 2, 0);
  await fd.close();
  const gz = magic[0] === 0x1f && magic[1] === 0x8b;
  const chunks: Buffer[] = [];
  let size = 0;
  const stream = fs.createReadStream(file).pipe(gz ? zlib.createGunzip() : new PassThrough());
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= maxBytes) break;
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Every canonical raw column as VARCHAR, found by any of its published names (the template normalises them). */
const RAW_COLUMNS: Record<string, StageColumn> = Object.fromEntries(DPE_RAW_COLUMNS.map((c) => [c, { type: 'VARCHAR', names: [...DPE_ALIASES[c]] }]));

/**
 * Stages one file with the streaming template (pipeline/stage.ts: CSV or JSON, BOM, gzip, R row numbers and NA, header
 * names matched ignoring case, accents and punctuation) into TEMP table `dpe_file`, and returns what it mapped.
 */
export async function stageRawFile(conn: DuckDBConnection, file: DpeFile): Promise<TemplateResult> {
  const head = (await readHead(file.path)).replace(/^\uFEFF/, '');
  const json = /^\s*[[{]/.test(head);
  // A raw API response holds its rows under `results`; the client's NDJSON pages are the rows themselves.
  const apiResponse = json && /^\s*\{\s*"(total|next|results)"\s*:/.test(head);
  const res = await stageFile(conn, {
    file: file.path, table: 'dpe_file', columns: RAW_COLUMNS, format: json ? 'json' : 'csv', ...(apiResponse ? { jsonRecords: 'results' } : {}),
  });
  if (!res.mapping.etiquette_dpe) throw new Error(`${path.basename(file.path)}: no energy class column among ${res.header.slice(0, 8).join(', ')}…`);
  return res;
}

export interface StageResult {
  rowsRead: number;
  rows: number;
  anomalies: Record<string, number>;
}

/** Loads the files into table `dpe_raw`, types them into table `dpe_staged` and counts the anomalies. */
export async function stageDpeFiles(conn: DuckDBConnection, files: DpeFile[]): Promise<StageResult> {
  await run(conn, lambert93Macros());
  await run(conn, `CREATE OR REPLACE TEMP TABLE dpe_raw (source_dataset VARCHAR, ${DPE_RAW_COLUMNS.map((c) => `${c} VARCHAR`).join(', ')})`);
  const fileAnomalies: Record<string, number> = {};
  for (const file of files) {
    const res = await stageRawFile(conn, file);
    for (const [k, n] of Object.entries(res.anomalies)) fileAnomalies[k] = (fileAnomalies[k] ?? 0) + n;
    await run(conn, `INSERT INTO dpe_raw SELECT ${lit(file.dataset)}, ${DPE_RAW_COLUMNS.join(', ')} FROM dpe_file`);
  }
  await run(conn, 'DROP TABLE IF EXISTS dpe_file');
  await run(conn, `CREATE OR REPLACE TEMP TABLE dpe_staged AS ${STAGE_SQL.replace('{{raw}}', 'dpe_raw')}`);
  const [c] = await all<Record<string, number>>(conn, `
    SELECT (SELECT count(*) FROM dpe_raw) AS rows_read, count(*) AS rows,
      count(*) FILTER (anomalie_classe_hors_a_g) AS classe_hors_a_g,
      count(*) FILTER (etiquette_dpe_brute IS NULL) AS sans_classe,
      count(*) FILTER (anomalie_annee_absurde) AS annee_construction_absurde,
      count(*) FILTER (anomalie_surface_absurde) AS surface_absurde,
      count(*) FILTER (anomalie_date_invalide) AS date_invalide,
      count(*) FILTER (anomalie_sans_coordonnees) AS sans_coordonnees,
      count(*) FILTER (numero_dpe IS NULL) AS sans_numero,
      count(*) FILTER (est_remplace) AS remplace_par_un_plus_recent,
      coalesce(sum(copies_dropped), 0) AS numero_dpe_duplique
    FROM dpe_staged`);
  const { rows_read, rows, ...anomalies } = c;
  return { rowsRead: rows_read, rows, anomalies: { ...anomalies, ...fileAnomalies } };
}
