// Shared by the national, commune-level sources (Filosofi, ANIL): their staged DuckDB rows are written as one lake
// partition (scope, vintage year) with a fixed schema, and published atomically like a DVF partition.
import fs from 'node:fs';
import path from 'node:path';
import { lit, run } from '../../lib/duck';
import type { PartitionRecord } from '../lake';
import type { ImportContext, ImportItem } from './types';

/** Lake schemas (column → DuckDB type, file order) of the sources the marts may read before they are loaded. */
export const FILOSOFI_COLUMNS = {
  code_commune: 'VARCHAR',
  nb_menages_fiscaux: 'DOUBLE',
  revenu_median_uc: 'DOUBLE',
  /** 'ok', 'secret' (INSEE "s"), 'not_available' ("nd"), 'missing' (empty) or 'unparsable'. */
  revenu_median_statut: 'VARCHAR',
  annee_revenus: 'INTEGER',
  imported_at: 'TIMESTAMP',
} as const;

export const ANIL_COLUMNS = {
  code_commune: 'VARCHAR',
  segment: 'VARCHAR',
  libelle_commune: 'VARCHAR',
  id_zone: 'VARCHAR',
  loyer_m2_cc: 'DOUBLE',
  loyer_m2_cc_bas: 'DOUBLE',
  loyer_m2_cc_haut: 'DOUBLE',
  niveau_prediction: 'VARCHAR',
  nb_observations_commune: 'INTEGER',
  nb_observations_maille: 'INTEGER',
  r2_ajuste: 'DOUBLE',
  millesime: 'INTEGER',
  imported_at: 'TIMESTAMP',
} as const;

export const OPTIONAL_SOURCE_COLUMNS: Record<string, Record<string, string>> = { filosofi: FILOSOFI_COLUMNS, anil: ANIL_COLUMNS };

type Columns = Record<string, string>;

/**
 * Writes the rows of `table` (a DuckDB table or view holding the schema's columns except imported_at, in the order
 * to keep) as the partition (scope, annee) of `source` and returns its record.
 */
export async function writeNationalPartition(
  ctx: ImportContext,
  opts: { source: string; scope: string; annee: number; columns: Columns; table: string; item: ImportItem; rowsRead: number; rowsKept: number; anomalies: Record<string, number> },
): Promise<PartitionRecord> {
  const { source, scope, annee, columns, item } = opts;
  const staging = ctx.lake.makeStagingDir();
  try {
    const now = ctx.now.toISOString();
    const select = Object.entries(columns)
      .map(([c, t]) => (c === 'imported_at' ? `TIMESTAMP ${lit(now.replace('T', ' ').replace('Z', ''))}` : `CAST(${c} AS ${t})`) + ` AS ${c}`)
      .join(', ');
    const out = path.join(staging, 'data.parquet');
    await run(ctx.conn, `COPY (SELECT ${select} FROM ${opts.table}) TO ${lit(out)} (FORMAT parquet, COMPRESSION zstd)`);
    const file = ctx.lake.publishPartition(out, source, scope, annee);
    return {
      code_departement: scope, annee, file, source_url: item.file.url, source_format: item.part.format, vintage: item.file.vintage,
      sha256: item.file.sha256, rows_read: opts.rowsRead, rows_kept: opts.rowsKept, mutations: 0, new_mutations: 0,
      anomalies: opts.anomalies, imported_at: now,
    };
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}
