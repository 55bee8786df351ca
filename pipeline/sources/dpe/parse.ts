// Reads DPE files of any published style into DuckDB: CSV exports (label-style or API names, `,` or `;`, BOM, gzip,
// R re-exports with a row-number column and `NA`), NDJSON pages written by the data-fair client, and raw API
// responses ({total, next, results}). Columns are found by header name (columns.ts), then typed by stage.sql.
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import zlib from 'node:zlib';
import { all, lit, run, type DuckDBConnection } from '../../../lib/duck';
import { lambert93Macros } from '../../../lib/lambert93';
import { DPE_RAW_COLUMNS, mapHeaders, sniffCsv, type DpeRawColumn } from './columns';

export interface DpeFile {
  path: string;
  /** Dataset the file comes from (dpe03existant, dpe02neuf, dpe-france…), kept on every row. */
  dataset: string;
}

const STAGE_SQL = fs.readFileSync(path.join(path.dirname(new URL(import.meta.url).pathname), 'stage.sql'), 'utf8');

/** The first bytes of a file as text, gunzipped when needed: enough for a header line and a data row. */
async function readHead(file: string, maxBytes = 512 * 1024): Promise<string> {
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

const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** `SELECT <canonical columns as text> FROM <source>`, given the canonical → source column mapping. */
function canonicalSelect(mapping: Partial<Record<DpeRawColumn, string>>, from: string, dataset: string): string {
  const cols = DPE_RAW_COLUMNS.map((c) => (mapping[c] !== undefined ? `CAST(${quoteIdent(mapping[c]!)} AS VARCHAR)` : 'NULL::VARCHAR') + ` AS ${c}`);
  return `SELECT ${lit(dataset)} AS source_dataset, ${cols.join(', ')} FROM ${from}`;
}

/** The SELECT giving one file's rows under the canonical raw columns. */
export async function rawSelect(conn: DuckDBConnection, file: DpeFile): Promise<string> {
  const head = (await readHead(file.path)).replace(/^\uFEFF/, '');
  if (/^\s*[[{]/.test(head)) {
    // A raw API response holds its rows under `results`; our NDJSON pages are the rows themselves.
    // The whole file is scanned for keys: data-fair omits absent fields, so `numero_dpe_remplace` may first appear
    // far past DuckDB's default sample.
    const src = `read_json(${lit(file.path)}, union_by_name = true, sample_size = -1)`;
    const top = await all<{ column_name: string }>(conn, `DESCRIBE SELECT * FROM ${src}`);
    const names = top.map((c) => c.column_name);
    const from = names.includes('results') && names.includes('total') ? `(SELECT unnest(results, max_depth := 2) FROM ${src})` : src;
    const cols = (await all<{ column_name: string }>(conn, `DESCRIBE SELECT * FROM ${from}`)).map((c) => c.column_name);
    return canonicalSelect(mapHeaders(cols), from, file.dataset);
  }
  const layout = sniffCsv(head);
  const mapping = mapHeaders(layout.headers);
  if (!mapping.etiquette_dpe) throw new Error(`${path.basename(file.path)}: no energy class column among ${layout.headers.slice(0, 8).join(', ')}…`);
  // Read positionally under the header's own names; R's unnamed row-number column gets a name of its own.
  const names = layout.leadingRowNumber ? ['_r_row_number', ...layout.headers] : layout.headers;
  const nullstr = layout.leadingRowNumber ? `['', 'NA']` : `['']`;
  const from = `read_csv(${lit(file.path)}, header = false, skip = 1, all_varchar = true, delim = ${lit(layout.delimiter)}, quote = '"', escape = '"',
    names = [${names.map(lit).join(', ')}], nullstr = ${nullstr}, null_padding = true, strict_mode = false)`;
  return canonicalSelect(mapping, from, file.dataset);
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
  for (const file of files) await run(conn, `INSERT INTO dpe_raw ${await rawSelect(conn, file)}`);
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
  return { rowsRead: rows_read, rows, anomalies };
}
