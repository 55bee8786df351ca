// Writing one lake partition from DuckDB: `writeQueryPartition` streams any SELECT (e.g. over read_csv of the
// published file) to a staged Parquet file and stages it in the batch's transaction; `writeNationalPartition` does it
// for a table staged by pipeline/stage.ts (the national files: Filosofi, ANIL), cast to the source's declared schema.
import fs from 'node:fs';
import path from 'node:path';
import { all, lit, run } from '../../lib/duck';
import type { PartitionRecord } from '../../lib/lake';
import { ANIL_SCHEMA } from '../../lib/sources/anil';
import { FILOSOFI_SCHEMA } from '../../lib/sources/filosofi';
import type { PartitionValues } from '../../lib/sources/types';
import type { ImportContext, ImportItem } from './types';

/** Lake schemas (column → DuckDB type, file order): declared in lib/sources, re-exported for the importers. */
export const FILOSOFI_COLUMNS = FILOSOFI_SCHEMA;
export const ANIL_COLUMNS = ANIL_SCHEMA;

type Columns = Record<string, string>;

/**
 * Writes the rows of `select` (whose columns are the source's lake columns, without the partition axes) as the
 * partition `partition` of `source`, staged in the batch's transaction, and returns its manifest record. `count` is
 * what the record counts (default: the rows written).
 */
export async function writeQueryPartition(
  ctx: ImportContext,
  opts: { source: string; partition: PartitionValues; select: string; item: ImportItem; rowsRead: number; anomalies: Record<string, number>; count?: number; newCount?: number },
): Promise<PartitionRecord> {
  const staging = ctx.lake.makeStagingDir();
  try {
    const out = path.join(staging, 'data.parquet');
    await run(ctx.conn, `COPY (${opts.select}) TO ${lit(out)} (FORMAT parquet, COMPRESSION zstd)`);
    const [{ n }] = await all<{ n: number }>(ctx.conn, `SELECT count(*) AS n FROM read_parquet(${lit(out)})`);
    const file = ctx.lake.publishPartition(out, opts.source, opts.partition);
    return {
      partition: opts.partition, file, source_url: opts.item.file.url, source_format: opts.item.part.format,
      vintage: opts.item.file.vintage, sha256: opts.item.file.sha256, rows_read: opts.rowsRead, rows_kept: n,
      count: opts.count ?? n, new_count: opts.newCount ?? 0, anomalies: opts.anomalies, imported_at: ctx.now.toISOString(),
    };
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

/**
 * Writes the rows of the DuckDB table `table` (the schema's columns except imported_at, in the order to keep) as the
 * partition (scope, annee) of `source`, cast to the declared schema, and returns its record.
 */
export async function writeNationalPartition(
  ctx: ImportContext,
  opts: { source: string; scope: string; annee: number; columns: Columns; table: string; item: ImportItem; rowsRead: number; anomalies: Record<string, number> },
): Promise<PartitionRecord> {
  const now = ctx.now.toISOString().replace('T', ' ').replace('Z', '');
  const select = Object.entries(opts.columns)
    .map(([c, t]) => `${c === 'imported_at' ? `TIMESTAMP ${lit(now)}` : `CAST(${c} AS ${t})`} AS ${c}`)
    .join(', ');
  return writeQueryPartition(ctx, {
    source: opts.source, partition: { scope: opts.scope, annee: opts.annee }, item: opts.item, rowsRead: opts.rowsRead,
    anomalies: opts.anomalies, select: `SELECT ${select} FROM ${opts.table}`,
  });
}
