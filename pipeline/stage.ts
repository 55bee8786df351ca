// The streaming template every file-based source uses: DuckDB reads the published CSV / CSV.gz / JSON-lines / JSON
// array (or an entry of a ZIP) straight from disk into a typed TEMP table, mapping the publisher's headers to a declared
// schema by name, and counts what did not fit. The file never passes through the Node heap: Node only reads the first
// lines (header, delimiter, encoding) and, for Windows-1252 files, transcodes them to UTF-8 as a stream.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import { splitDelimited } from '../lib/csv';
import { all, lit, run, type DuckDBConnection } from '../lib/duck';
import { unzipEntry, unzipFirstEntry } from './unzip';

/** One target column: its DuckDB type, the source names accepted for it, and whether a file must have it. */
export interface StageColumn {
  /** DuckDB type of the staged column: VARCHAR, INTEGER, BIGINT, DOUBLE, DECIMAL(p,s), DATE, TIMESTAMP, BOOLEAN… */
  type: string;
  /**
   * Accepted source names, in order of preference (default: the target name itself). A string matches a header or JSON
   * key ignoring case, accents and punctuation (`Coordonnée_cartographique_X_(BAN)` = `coordonnee_cartographique_x_ban`);
   * a RegExp is tested on the name as published (e.g. /^MED\d{2}$/i for a column named after its vintage).
   */
  names?: Array<string | RegExp>;
  /** The file is refused when no header matches; rows where the value is empty are counted as `missing_<column>`. */
  required?: boolean;
}

export interface StageOptions {
  /** CSV (plain or gzip, any extension), JSON-lines / JSON array (`.json`, `.jsonl`, `.ndjson`, optionally `.gz`), or ZIP. */
  file: string;
  /** Name of the TEMP table created (replaced if it exists) on the connection. */
  table: string;
  /** Target schema: column → type, or the full declaration. */
  columns: Record<string, StageColumn | string>;
  /** Default: 'json' for .json/.jsonl/.ndjson(.gz) names, else 'csv'. */
  format?: 'csv' | 'json';
  /** CSV delimiter; default: the most frequent of ; , TAB | in the header line. */
  delimiter?: string;
  /** Values read as NULL after trimming (default '' and 'NA', R's missing value). */
  nullStrings?: string[];
  /** JSON: key of the records array inside each top-level object (ADEME data-fair API pages: 'results'). */
  jsonRecords?: string;
  /** ZIP: entry to stage (a name ending the entry's path, case-insensitive); default the first entry. */
  zipEntry?: string;
  /** Where a ZIP entry or a transcoded copy is written while staging (removed after); default the OS temp folder. */
  tmpDir?: string;
}

export interface StageResult {
  table: string;
  format: 'csv' | 'json';
  encoding: 'utf-8' | 'windows-1252';
  /** Records read (data rows of a CSV, including malformed ones rejected by the reader; records of a JSON file). */
  rowsRead: number;
  /** Rows in the staged table (rowsRead minus malformed lines). */
  rowsStaged: number;
  /** Names as published: the CSV header (BOM removed) or the union of the JSON records' keys. */
  header: string[];
  /** Target column → the published name it was read from, or null when the file lacks it (NULL of the declared type). */
  mapping: Record<string, string | null>;
  /** The CSV rows carry one more field than the header, a row number without a name (R's write.table): dropped. */
  leadingRowNumber: boolean;
  /** CSV delimiter used. */
  delimiter?: string;
  /**
   * Non-zero counts only: `malformed_line` (wrong number of fields, unterminated quote), `unparsable_<column>` (a value
   * that is present but does not cast to the declared type: staged as NULL), `missing_<column>` (a required column
   * NULL or empty).
   */
  anomalies: Record<string, number>;
}

/** Header key used for matching: accents, case and everything but letters and digits removed (`N°_DPE` → `ndpe`). */
export function normalizeName(name: string): string {
  return name.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase().replace(/[^a-z0-9]/g, '');
}

const ROW_NUMBER = '__row_number';
const NUMERIC = /^(TINYINT|SMALLINT|INTEGER|INT|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|FLOAT|REAL|DOUBLE|DECIMAL|NUMERIC)\b/i;
const DATE_LIKE = /^(DATE|TIMESTAMP)\b/i;
const ident = (s: string) => `"${s.replace(/"/g, '""')}"`;

/** Stages `opts.file` into the TEMP table `opts.table` (one row per record, the declared columns, in declared order). */
export async function stageFile(conn: DuckDBConnection, opts: StageOptions): Promise<StageResult> {
  const cleanup: string[] = [];
  try {
    let file = opts.file;
    const magic = readStart(file, 4);
    if (magic.readUInt32LE(0) === 0x04034b50) {
      const out = tempPath(opts, path.basename(opts.zipEntry ?? 'entry'));
      cleanup.push(out);
      file = opts.zipEntry ? await unzipEntry(file, opts.zipEntry, out) : await unzipFirstEntry(file, out);
    }
    const format = opts.format ?? (/\.(json|jsonl|ndjson)(\.gz)?$/i.test(file) ? 'json' : 'csv');
    return format === 'json' ? await stageJson(conn, opts, file) : await stageCsv(conn, opts, file, cleanup);
  } finally {
    for (const f of cleanup) fs.rmSync(f, { force: true });
  }
}

function readStart(file: string, n: number): Buffer {
  const fd = fs.openSync(file, 'r');
  try {
    const b = Buffer.alloc(n);
    fs.readSync(fd, b, 0, n, 0);
    return b;
  } finally {
    fs.closeSync(fd);
  }
}

const isGzip = (file: string) => {
  const b = readStart(file, 2);
  return b[0] === 0x1f && b[1] === 0x8b;
};

function tempPath(opts: StageOptions, name: string): string {
  const dir = opts.tmpDir ?? os.tmpdir();
  fs.mkdirSync(dir, { recursive: true });
  return path.join(dir, `stage-${process.pid}-${Math.random().toString(36).slice(2, 8)}-${name}`);
}

// ---------------------------------------------------------------------------------------------------------------
// CSV
// ---------------------------------------------------------------------------------------------------------------

/** The first `lines` complete lines of a (possibly gzipped) file as bytes, reading no more than needed (≤ 16 MB). */
async function headBytes(file: string, lines: number): Promise<Buffer> {
  const limit = 16 * 2 ** 20;
  const input = fs.createReadStream(file, { highWaterMark: 64 * 1024 });
  const stream = isGzip(file) ? input.pipe(zlib.createGunzip()) : input;
  const chunks: Buffer[] = [];
  let size = 0;
  let seen = 0;
  let end = -1;
  let quoted = false;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      // Newlines inside quoted fields (ADEME addresses have some) do not end a line.
      for (let i = 0; i < chunk.length && end < 0; i++) {
        if (chunk[i] === 0x22) quoted = !quoted;
        else if (chunk[i] === 0x0a && !quoted && ++seen === lines) end = size + i + 1;
      }
      chunks.push(chunk);
      size += chunk.length;
      if (end >= 0 || size > limit) break;
    }
  } finally {
    input.destroy();
    if (stream !== input) (stream as zlib.Gunzip).destroy();
  }
  const all = Buffer.concat(chunks);
  return end >= 0 ? all.subarray(0, end) : all;
}

/** Fields of one delimited line, trimmed. */
const splitFields = (line: string, sep: string) => splitDelimited(line, sep).map((s) => s.trim());

function sniffDelimiter(headerLine: string): string {
  const counts = new Map<string, number>();
  let quoted = false;
  for (const ch of headerLine) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && [';', ',', '\t', '|'].includes(ch)) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  }
  return [...counts.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? ',';
}

/** Decodes bytes as UTF-8, or as Windows-1252 (older INSEE/ANIL files) when they are not valid UTF-8. */
function decodeHead(bytes: Buffer): { text: string; encoding: 'utf-8' | 'windows-1252' } {
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes), encoding: 'utf-8' };
  } catch {
    return { text: new TextDecoder('windows-1252').decode(bytes), encoding: 'windows-1252' };
  }
}

/** Streams a Windows-1252 file (gzipped or not) to a UTF-8 copy: DuckDB's latin-1 refuses the 0x80–0x9F characters (’ € œ). */
async function transcode(file: string, out: string): Promise<void> {
  const decoder = new TextDecoder('windows-1252');
  const toUtf8 = new Transform({
    transform(chunk: Buffer, _enc, done) {
      done(null, Buffer.from(decoder.decode(chunk, { stream: true }), 'utf8'));
    },
  });
  const input = fs.createReadStream(file);
  await (isGzip(file) ? pipeline(input, zlib.createGunzip(), toUtf8, fs.createWriteStream(out)) : pipeline(input, toUtf8, fs.createWriteStream(out)));
}

/** What a CSV file is, read from its first lines: delimiter, header, R row numbers, the declared columns' mapping. */
interface CsvLayout {
  header: string[];
  names: string[];
  delimiter: string;
  leadingRowNumber: boolean;
  mapping: Record<string, string | null>;
  encoding: 'utf-8' | 'windows-1252';
}

async function csvLayout(opts: StageOptions, file: string): Promise<CsvLayout> {
  const head = decodeHead(await headBytes(file, 2));
  const [headerLine = '', firstRow] = head.text.replace(/^\uFEFF/, '').split('\n').map((l) => l.replace(/\r$/, ''));
  if (!headerLine.trim()) throw new Error(`${opts.file}: empty file`);
  const delimiter = opts.delimiter ?? sniffDelimiter(headerLine);
  const header = splitFields(headerLine, delimiter);
  // R's write.table numbers its rows without naming the column: one more field per row than header names.
  const leadingRowNumber = firstRow !== undefined && firstRow.trim() !== '' && splitFields(firstRow, delimiter).length === header.length + 1;
  const names = leadingRowNumber ? [ROW_NUMBER, ...header] : header;
  const mapping = mapColumns(opts, names.map((n, i) => (n === '' || (leadingRowNumber && i === 0) ? undefined : n)));
  return { header, names, delimiter, leadingRowNumber, mapping, encoding: head.encoding };
}

/** read_csv of `source` (every field as text, rejects kept) and the typed SELECT of the declared columns over it. */
function csvSelect(opts: StageOptions, layout: CsvLayout, source: string, gzip: boolean, rejects: string): string {
  const columns = layout.names.map((_, i) => `${lit(`c${i}`)}: 'VARCHAR'`).join(', ');
  const reader = `read_csv(${lit(source)}, header = false, skip = 1, auto_detect = false, delim = ${lit(layout.delimiter)}, quote = '"', escape = '"',
      columns = {${columns}}, compression = ${lit(gzip ? 'gzip' : 'none')},
      ignore_errors = true, store_rejects = true, rejects_table = ${lit(rejects)}, rejects_scan = ${lit(`${rejects}_scan`)})`;
  const raw = (target: string) => (layout.mapping[target] === null ? null : ident(`c${layout.names.indexOf(layout.mapping[target]!)}`));
  return typedSelect(opts, reader, raw);
}

/** Lines the reader rejected (wrong number of fields, unterminated quote…), by error type. */
async function readRejects(conn: DuckDBConnection, rejects: string): Promise<Array<{ error_type: string; n: number }>> {
  return all<{ error_type: string; n: number }>(conn, `SELECT error_type, count(DISTINCT line)::INTEGER AS n FROM ${ident(rejects)} GROUP BY ALL`);
}

async function dropRejects(conn: DuckDBConnection, rejects: string): Promise<void> {
  await run(conn, `DROP TABLE IF EXISTS ${ident(rejects)}`);
  await run(conn, `DROP TABLE IF EXISTS ${ident(`${rejects}_scan`)}`);
}

/** A CSV file as a query that is not run yet (see csvQuery). */
export interface CsvQuery {
  /** SELECT yielding one row per record: the declared columns, typed, in declared order, plus `__unparsable` (the
   * list of the row's columns whose present value did not cast). Usable once, inside the caller's own statement. */
  sql: string;
  header: string[];
  mapping: Record<string, string | null>;
  delimiter: string;
  leadingRowNumber: boolean;
  /** After the caller's statement ran: the malformed lines the reader skipped, and drops the bookkeeping tables.
   * Null when the file turned out not to be UTF-8 past its first lines: read it with stageFile (it transcodes). */
  finish(): Promise<{ malformed: number } | null>;
}

/**
 * The streaming template's CSV reading without its TEMP table: for a source that types and writes its rows in one
 * statement of its own (at France scale, one materialisation fewer). UTF-8 CSV (plain or gzip) only; returns null for a
 * ZIP, JSON or Windows-1252 file, which go through stageFile.
 */
export async function csvQuery(conn: DuckDBConnection, opts: StageOptions): Promise<CsvQuery | null> {
  const file = opts.file;
  if (readStart(file, 4).readUInt32LE(0) === 0x04034b50) return null;
  if ((opts.format ?? (/\.(json|jsonl|ndjson)(\.gz)?$/i.test(file) ? 'json' : 'csv')) !== 'csv') return null;
  const layout = await csvLayout(opts, file);
  if (layout.encoding !== 'utf-8') return null;
  const rejects = `${opts.table}__rejects`;
  return {
    sql: csvSelect(opts, layout, file, isGzip(file), rejects),
    header: layout.header, mapping: layout.mapping, delimiter: layout.delimiter, leadingRowNumber: layout.leadingRowNumber,
    async finish() {
      try {
        const errors = await readRejects(conn, rejects);
        if (errors.some((e) => e.error_type === 'INVALID ENCODING')) return null;
        return { malformed: errors.reduce((a, e) => a + e.n, 0) };
      } finally {
        await dropRejects(conn, rejects);
      }
    },
  };
}

async function stageCsv(conn: DuckDBConnection, opts: StageOptions, file: string, cleanup: string[]): Promise<StageResult> {
  const layout = await csvLayout(opts, file);
  const { header, mapping, leadingRowNumber, delimiter } = layout;
  let encoding = layout.encoding;
  for (;;) {
    let source = file;
    if (encoding === 'windows-1252') {
      source = tempPath(opts, 'utf8.csv');
      cleanup.push(source);
      await transcode(file, source);
    }
    const rejects = `${opts.table}__rejects`;
    try {
      await run(conn, `CREATE OR REPLACE TEMP TABLE ${ident(opts.table)} AS ${csvSelect(opts, layout, source, source === file && isGzip(file), rejects)}`);
      const errors = await readRejects(conn, rejects);
      if (encoding === 'utf-8' && errors.some((e) => e.error_type === 'INVALID ENCODING')) {
        // Invalid UTF-8 past the first lines: the file is Windows-1252 after all; read it again transcoded.
        encoding = 'windows-1252';
        continue;
      }
      const malformed = errors.reduce((a, e) => a + e.n, 0);
      const result = await finish(conn, opts, mapping, malformed);
      return { ...result, format: 'csv', encoding, header, mapping, leadingRowNumber, delimiter };
    } finally {
      await dropRejects(conn, rejects);
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// JSON
// ---------------------------------------------------------------------------------------------------------------

async function stageJson(conn: DuckDBConnection, opts: StageOptions, file: string): Promise<StageResult> {
  const objects = `read_json_objects(${lit(file)}, format = 'auto', compression = ${lit(isGzip(file) ? 'gzip' : 'uncompressed')})`;
  const records = opts.jsonRecords
    ? `(SELECT unnest(json_extract(json, ${lit(`$.${JSON.stringify(opts.jsonRecords)}[*]`)})) AS r FROM ${objects})`
    : `(SELECT json AS r FROM ${objects})`;
  // Absent fields are omitted, not null, in data-fair responses: the header is the union of every record's keys.
  const keys = await all<{ k: string }>(conn, `SELECT k FROM (SELECT unnest(json_keys(r)) AS k, row_number() OVER () AS i FROM ${records}) GROUP BY k ORDER BY min(i)`);
  const header = keys.map((k) => k.k);
  const mapping = mapColumns(opts, header);
  const raw = (target: string) => (mapping[target] === null ? null : `json_extract_string(r, ${lit(`$.${JSON.stringify(mapping[target])}`)})`);
  await run(conn, `CREATE OR REPLACE TEMP TABLE ${ident(opts.table)} AS ${typedSelect(opts, records, raw)}`);
  const result = await finish(conn, opts, mapping, 0);
  return { ...result, format: 'json', encoding: 'utf-8', header, mapping, leadingRowNumber: false };
}

// ---------------------------------------------------------------------------------------------------------------
// Mapping, typing, counting
// ---------------------------------------------------------------------------------------------------------------

function declared(opts: StageOptions): Array<[string, StageColumn]> {
  return Object.entries(opts.columns).map(([k, v]) => [k, typeof v === 'string' ? { type: v } : v]);
}

/** Target → published name. `names` holds the published names by position (undefined for unnamed ones). */
function mapColumns(opts: StageOptions, names: Array<string | undefined>): Record<string, string | null> {
  const mapping: Record<string, string | null> = {};
  const missing: string[] = [];
  for (const [target, col] of declared(opts)) {
    let found: string | undefined;
    for (const want of col.names ?? [target]) {
      found = names.find((n) => n !== undefined && (typeof want === 'string' ? normalizeName(n) === normalizeName(want) : want.test(n)));
      if (found !== undefined) break;
    }
    mapping[target] = found ?? null;
    if (found === undefined && col.required) missing.push(`${target} (${(col.names ?? [target]).map(String).join(' | ')})`);
  }
  if (missing.length) {
    throw new Error(`${opts.file}: required column(s) not found: ${missing.join(', ')}; the file has ${names.filter(Boolean).slice(0, 12).join(', ')}${names.length > 12 ? '…' : ''}`);
  }
  return mapping;
}

/** SQL casting a trimmed, non-null text to `type`: French decimal commas and spaced thousands for numbers, dd/mm/yyyy dates. */
function castSql(v: string, type: string): string {
  if (NUMERIC.test(type)) return `TRY_CAST(replace(regexp_replace(${v}, '[\\s\\x{00A0}\\x{202F}]', '', 'g'), ',', '.') AS ${type})`;
  if (DATE_LIKE.test(type)) return `coalesce(TRY_CAST(${v} AS ${type}), TRY_CAST(try_strptime(${v}, '%d/%m/%Y') AS ${type}))`;
  if (/^VARCHAR\b/i.test(type)) return v;
  return `TRY_CAST(${v} AS ${type})`;
}

/**
 * SELECT of the typed columns plus `__unparsable`, the list of the row's columns whose value was present but did not
 * cast. Layers: r<i> = trimmed text or NULL, t<i> = typed value, then the declared names.
 */
function typedSelect(opts: StageOptions, from: string, raw: (target: string) => string | null): string {
  const nulls = (opts.nullStrings ?? ['', 'NA']).map(lit).join(', ');
  const cols = declared(opts).map(([target, col], i) => ({ target, type: col.type, raw: raw(target), i }));
  const present = cols.filter((c) => c.raw !== null);
  const trimmed = present.map((c) => `trim(${c.raw}) AS r${c.i}`).join(', ');
  const cleaned = present.map((c) => `CASE WHEN r${c.i} IN (${nulls}) THEN NULL ELSE r${c.i} END AS r${c.i}`).join(', ');
  const typed = present.map((c) => `${castSql(`r${c.i}`, c.type)} AS t${c.i}`).join(', ');
  const checks = present.filter((c) => !/^VARCHAR\b/i.test(c.type)).map((c) => `CASE WHEN r${c.i} IS NOT NULL AND t${c.i} IS NULL THEN ${lit(c.target)} END`);
  const out = cols.map((c) => `${c.raw === null ? `CAST(NULL AS ${c.type})` : `t${c.i}`} AS ${ident(c.target)}`).join(', ');
  const unparsable = checks.length ? `list_filter([${checks.join(', ')}], x -> x IS NOT NULL)` : `[]::VARCHAR[]`;
  const layers = present.length
    ? `(SELECT *, ${typed} FROM (SELECT ${cleaned} FROM (SELECT ${trimmed} FROM ${from})))`
    : `(SELECT 1 AS one FROM ${from})`;
  return `SELECT ${out}, ${unparsable} AS __unparsable FROM ${layers}`;
}

/** Counts rows and anomalies, then drops the bookkeeping column. */
async function finish(conn: DuckDBConnection, opts: StageOptions, mapping: Record<string, string | null>, malformed: number) {
  const t = ident(opts.table);
  const required = declared(opts).filter(([target, c]) => c.required && mapping[target] !== null).map(([target]) => target);
  const [counts] = await all<Record<string, number>>(conn, `SELECT count(*)::BIGINT AS rows
    ${required.map((c, i) => `, count(*) FILTER (${ident(c)} IS NULL AND NOT list_contains(__unparsable, ${lit(c)}))::BIGINT AS m${i}`).join('')} FROM ${t}`);
  const unparsable = await all<{ c: string; n: number }>(conn, `SELECT c, count(*)::BIGINT AS n FROM (SELECT unnest(__unparsable) AS c FROM ${t}) GROUP BY c ORDER BY c`);
  await run(conn, `ALTER TABLE ${t} DROP COLUMN __unparsable`);
  const anomalies: Record<string, number> = {};
  if (malformed) anomalies.malformed_line = malformed;
  for (const u of unparsable) anomalies[`unparsable_${u.c}`] = u.n;
  required.forEach((c, i) => {
    if (counts[`m${i}`]) anomalies[`missing_${c}`] = counts[`m${i}`];
  });
  return { table: opts.table, rowsRead: counts.rows + malformed, rowsStaged: counts.rows, anomalies };
}
