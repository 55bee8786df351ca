// `npm run sql -- "select …"`: one SQL query over the Parquet marts of DATA_DIR (data/marts/*.parquet) in an in-memory
// DuckDB, each mart a view named after its file (`from ventes`), printed as a table (or --format csv|json).
// docs/analysts.md shows the same in Python; its worked examples are run by test/marts/analysts.test.ts through runSql().
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { dataDir, paths } from '../lib/config';
import { lit, openMemory, toJs, type DuckDBConnection, type DuckDBInstance, type Row } from '../lib/duck';
import { checkEnvOrExit } from '../lib/env';

// A bad environment variable stops the command here, with a message naming it.
checkEnvOrExit();

export interface Marts {
  instance: DuckDBInstance;
  conn: DuckDBConnection;
  /** The marts found, by view name. */
  tables: string[];
  close(): void;
}

const quoteIdent = (s: string) => `"${s.replace(/"/g, '""')}"`;

/** An in-memory DuckDB with one view per Parquet mart of `root` (the current generation that data/marts points to). */
export async function openMarts(root = dataDir()): Promise<Marts> {
  const dir = paths.marts(root);
  if (!fs.existsSync(dir)) throw new Error(`no marts in ${dir}: run \`npm start\` (demo data) or \`npm run pipeline\` first`);
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.parquet')).sort();
  const { instance, conn } = await openMemory();
  for (const f of files) {
    await conn.run(`create view ${quoteIdent(path.basename(f, '.parquet'))} as select * from read_parquet(${lit(path.join(dir, f))})`);
  }
  return { instance, conn, tables: files.map((f) => path.basename(f, '.parquet')), close: () => instance.closeSync() };
}

/** Column names (also for an empty result) and plain-JS rows. */
export async function runSql(conn: DuckDBConnection, sql: string): Promise<{ columns: string[]; rows: Row[] }> {
  const reader = await conn.runAndReadAll(sql);
  const columns = reader.columnNames();
  const rows = reader.getRows().map((r) => Object.fromEntries(columns.map((c, i) => [c, toJs(r[i])])));
  return { columns, rows };
}

const cell = (v: unknown): string => (v === null || v === undefined ? 'NULL' : typeof v === 'object' ? JSON.stringify(v) : String(v));

/** An aligned text table: numbers right-aligned, a row count below. */
export function formatTable(columns: string[], rows: Row[]): string {
  const cells = rows.map((r) => columns.map((c) => cell(r[c])));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((r) => r[i].length)));
  const numeric = columns.map((c) => rows.length > 0 && rows.every((r) => r[c] === null || typeof r[c] === 'number'));
  const line = (vals: string[]) => vals.map((v, i) => (numeric[i] ? v.padStart(widths[i]) : v.padEnd(widths[i]))).join(' │ ').trimEnd();
  return [line(columns), widths.map((w) => '─'.repeat(w)).join('─┼─'), ...cells.map(line), `(${rows.length} row${rows.length === 1 ? '' : 's'})`].join('\n');
}

function formatCsv(columns: string[], rows: Row[]): string {
  const esc = (v: unknown) => {
    const s = v === null || v === undefined ? '' : cell(v);
    return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  return [columns.map(esc).join(','), ...rows.map((r) => columns.map((c) => esc(r[c])).join(','))].join('\n');
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { format: { type: 'string', default: 'table' } } });
  const sql = positionals.join(' ').trim();
  if (!sql || !['table', 'csv', 'json'].includes(values.format!)) {
    throw new Error('usage: npm run sql -- [--format table|csv|json] "select … from ventes"  (views: one per data/marts/*.parquet)');
  }
  const marts = await openMarts();
  try {
    const { columns, rows } = await runSql(marts.conn, sql);
    const out = values.format === 'json' ? JSON.stringify(rows, null, 2) : values.format === 'csv' ? formatCsv(columns, rows) : formatTable(columns, rows);
    process.stdout.write(`${out}\n`);
  } finally {
    marts.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((e: Error) => {
    process.stderr.write(`sql: ${e.message}\n`);
    process.exit(1);
  });
}
