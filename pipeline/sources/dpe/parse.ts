// Reads DPE files of any published style into DuckDB through the streaming template (pipeline/stage.ts): CSV exports
// (label-style or API names, `,` or `;`, BOM, gzip, R re-exports with a row-number column and `NA`), NDJSON pages
// written by the data-fair client, and raw API responses ({total, next, results}). Columns are found by header name
// (the aliases of columns.ts), typed row by row by stage.sql into one table, then deduplicated.
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import zlib from 'node:zlib';
import { all, lit, run, type DuckDBConnection } from '../../../lib/duck';
import { lambert93Macros } from '../../../lib/lambert93';
import { csvQuery, stageFile, type StageColumn, type StageResult as TemplateResult } from '../../stage';
import { DPE_ALIASES, DPE_RAW_COLUMNS } from './columns';
import { fillSql, readSql } from '../../../lib/sql-file';

export interface DpeFile {
  path: string;
  /** Dataset the file comes from (dpe03existant, dpe02neuf, dpe-france…), kept on every row. */
  dataset: string;
}

const STAGE_SQL = readSql(import.meta.url, 'stage.sql');

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

async function fileKind(file: DpeFile): Promise<{ json: boolean; apiResponse: boolean }> {
  const head = (await readHead(file.path)).replace(/^\uFEFF/, '');
  const json = /^\s*[[{]/.test(head);
  // A raw API response holds its rows under `results`; the client's NDJSON pages are the rows themselves.
  return { json, apiResponse: json && /^\s*\{\s*"(total|next|results)"\s*:/.test(head) };
}

function checkMapping(file: DpeFile, mapping: Record<string, string | null>, header: string[]): void {
  if (!mapping.etiquette_dpe) throw new Error(`${path.basename(file.path)}: no energy class column among ${header.slice(0, 8).join(', ')}…`);
}

/**
 * Stages one file with the streaming template (pipeline/stage.ts: CSV or JSON, BOM, gzip, R row numbers and NA, header
 * names matched ignoring case, accents and punctuation) into TEMP table `dpe_file`, and returns what it mapped.
 */
export async function stageRawFile(conn: DuckDBConnection, file: DpeFile): Promise<TemplateResult> {
  const { json, apiResponse } = await fileKind(file);
  const res = await stageFile(conn, {
    file: file.path, table: 'dpe_file', columns: RAW_COLUMNS, format: json ? 'json' : 'csv', ...(apiResponse ? { jsonRecords: 'results' } : {}),
  });
  checkMapping(file, res.mapping, res.header);
  return res;
}

export interface StageResult {
  rowsRead: number;
  rows: number;
  anomalies: Record<string, number>;
}

const TYPED_COLUMNS = DPE_RAW_COLUMNS.join(', ');

/**
 * Appends one file's typed rows to `dpe_typed` (created by the first file). A UTF-8 CSV — what the data-fair client
 * downloads — is read, typed and stored in one statement (csvQuery: no intermediate table of text); JSON, ZIP and
 * Windows-1252 files are staged by the template first. Returns the rows read and the file's own anomalies.
 */
async function loadFile(conn: DuckDBConnection, file: DpeFile, first: boolean): Promise<{ rowsRead: number; anomalies: Record<string, number> }> {
  const into = (select: string) =>
    first ? `CREATE OR REPLACE TEMP TABLE dpe_typed AS ${select}` : `INSERT INTO dpe_typed ${select}`;
  const typed = (raw: string) => fillSql(STAGE_SQL, { raw, dataset: lit(file.dataset) });
  const { json } = await fileKind(file);
  if (!json) {
    const q = await csvQuery(conn, { file: file.path, table: 'dpe_file', columns: RAW_COLUMNS, format: 'csv' });
    if (q) {
      checkMapping(file, q.mapping, q.header);
      const before = first ? 0 : await count(conn, 'dpe_typed');
      await run(conn, into(typed(`(SELECT ${TYPED_COLUMNS} FROM (${q.sql}))`)));
      const done = await q.finish();
      if (done) {
        const rows = (await count(conn, 'dpe_typed')) - before;
        return { rowsRead: rows + done.malformed, anomalies: done.malformed ? { malformed_line: done.malformed } : {} };
      }
      // Not UTF-8 after all: undo and let the template transcode it.
      if (first) await run(conn, 'DROP TABLE dpe_typed');
      else await run(conn, `DELETE FROM dpe_typed WHERE rowid >= ${before}`);
    }
  }
  const res = await stageRawFile(conn, file);
  await run(conn, into(typed(`(SELECT ${TYPED_COLUMNS} FROM dpe_file)`)));
  await run(conn, 'DROP TABLE IF EXISTS dpe_file');
  return { rowsRead: res.rowsRead, anomalies: res.anomalies };
}

async function count(conn: DuckDBConnection, table: string): Promise<number> {
  const [{ n }] = await all<{ n: number }>(conn, `SELECT count(*)::BIGINT AS n FROM ${table}`);
  return Number(n);
}

/**
 * Loads and types the files into table `dpe_typed`, then exposes one row per diagnostic as view `dpe_staged` and counts
 * the anomalies. The bulk is materialised once (dpe_typed); deduplication and replacement only build small side tables
 * (the rowids of dropped copies, the replaced numbers), so no sort or second copy of every row is made.
 */
export async function stageDpeFiles(conn: DuckDBConnection, files: DpeFile[]): Promise<StageResult> {
  await run(conn, lambert93Macros());
  await run(conn, 'DROP VIEW IF EXISTS dpe_staged');
  const fileAnomalies: Record<string, number> = {};
  let rowsRead = 0;
  for (const [i, file] of files.entries()) {
    const res = await loadFile(conn, file, i === 0);
    rowsRead += res.rowsRead;
    for (const [k, n] of Object.entries(res.anomalies)) fileAnomalies[k] = (fileAnomalies[k] ?? 0) + n;
  }
  if (!files.length) await run(conn, `CREATE OR REPLACE TEMP TABLE dpe_typed AS ${fillSql(STAGE_SQL, { raw: `(SELECT ${DPE_RAW_COLUMNS.map((c) => `NULL::VARCHAR AS ${c}`).join(', ')} LIMIT 0)`, dataset: "''" })}`);
  // Legacy exports may carry no number: identical lines there can be distinct dwellings of one building, so they are
  // numbered, never merged (the dataset is part of the hash, and a département has one file per dataset).
  await run(conn, `UPDATE dpe_typed SET dpe_id = 'sans-numero-' || s.content_hash || '-' || s.n
    FROM (SELECT rowid AS rid, content_hash, row_number() OVER (PARTITION BY content_hash) AS n FROM dpe_typed WHERE numero_dpe IS NULL) s
    WHERE dpe_typed.rowid = s.rid`);
  // The same diagnostic twice (two pages, two files): the copy with the most recent date is kept (then the first dataset
  // by name, then the first seen: rowid is file order). Only the duplicated ids go through the window (a hash aggregate
  // finds them): the bulk of the rows is left alone.
  await run(conn, `CREATE OR REPLACE TEMP TABLE dpe_dropped AS
    SELECT rid FROM (
      SELECT t.rowid AS rid, row_number() OVER (PARTITION BY t.dpe_id ORDER BY t.date_etablissement_dpe DESC NULLS LAST, t.source_dataset, t.rowid) AS k
      FROM dpe_typed t SEMI JOIN (SELECT dpe_id FROM dpe_typed GROUP BY dpe_id HAVING count(*) > 1) d USING (dpe_id)
    ) WHERE k > 1`);
  // Replaced by a newer diagnostic of the same dwelling: kept for lookups, never counted in statistics.
  await run(conn, `CREATE OR REPLACE TEMP TABLE dpe_replaced AS
    SELECT DISTINCT numero_dpe_remplace AS numero_dpe FROM dpe_typed
    WHERE numero_dpe_remplace IS NOT NULL AND rowid NOT IN (SELECT rid FROM dpe_dropped)`);
  await run(conn, `CREATE OR REPLACE TEMP VIEW dpe_staged AS
    SELECT t.* EXCLUDE (content_hash), t.numero_dpe IS NOT NULL AND t.numero_dpe IN (SELECT numero_dpe FROM dpe_replaced) AS est_remplace
    FROM dpe_typed t WHERE t.rowid NOT IN (SELECT rid FROM dpe_dropped)`);
  const [c] = await all<Record<string, number>>(conn, `
    SELECT count(*) AS rows,
      count(*) FILTER (anomalie_classe_hors_a_g) AS classe_hors_a_g,
      count(*) FILTER (etiquette_dpe_brute IS NULL) AS sans_classe,
      count(*) FILTER (anomalie_annee_absurde) AS annee_construction_absurde,
      count(*) FILTER (anomalie_surface_absurde) AS surface_absurde,
      count(*) FILTER (anomalie_date_invalide) AS date_invalide,
      count(*) FILTER (anomalie_sans_coordonnees) AS sans_coordonnees,
      count(*) FILTER (numero_dpe IS NULL) AS sans_numero,
      count(*) FILTER (est_remplace) AS remplace_par_un_plus_recent,
      (SELECT count(*) FROM dpe_dropped) AS numero_dpe_duplique
    FROM dpe_staged`);
  const { rows, ...anomalies } = c;
  return { rowsRead, rows: Number(rows), anomalies: { ...Object.fromEntries(Object.entries(anomalies).map(([k, n]) => [k, Number(n)])), ...fileAnomalies } };
}
