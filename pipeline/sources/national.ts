// Shared by the national, commune-level sources (Filosofi, ANIL): parsed rows are written as one lake partition
// (scope, vintage year) through DuckDB with a fixed schema, and published atomically like a DVF partition.
import fs from 'node:fs';
import path from 'node:path';
import { lit, run } from '../../lib/duck';
import type { PartitionRecord } from '../lake';
import { DPE_LAKE_COLUMNS, DPE_SOURCE } from './dpe/lake';
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

export const OPTIONAL_SOURCE_COLUMNS: Record<string, Record<string, string>> = { filosofi: FILOSOFI_COLUMNS, anil: ANIL_COLUMNS, [DPE_SOURCE]: DPE_LAKE_COLUMNS };

type Columns = Record<string, string>;

/** Writes `rows` (objects with the schema's columns) as the partition (scope, annee) of `source` and returns its record. */
export async function writeNationalPartition(
  ctx: ImportContext,
  opts: { source: string; scope: string; annee: number; columns: Columns; rows: Array<Record<string, unknown>>; item: ImportItem; rowsRead: number; anomalies: Record<string, number> },
): Promise<PartitionRecord> {
  const { source, scope, annee, columns, rows, item } = opts;
  const staging = ctx.lake.makeStagingDir();
  try {
    const json = path.join(staging, 'rows.ndjson');
    const now = ctx.now.toISOString();
    fs.writeFileSync(json, rows.map((r) => JSON.stringify({ ...r, imported_at: now })).join('\n') + '\n');
    const spec = Object.entries(columns).map(([c, t]) => `${lit(c)}: ${lit(t)}`).join(', ');
    const out = path.join(staging, 'data.parquet');
    await run(ctx.conn, `COPY (SELECT ${Object.keys(columns).join(', ')} FROM read_json(${lit(json)}, format = 'newline_delimited', columns = {${spec}}))
      TO ${lit(out)} (FORMAT parquet, COMPRESSION zstd)`);
    const file = ctx.lake.publishPartition(out, source, scope, annee);
    return {
      code_departement: scope, annee, file, source_url: item.file.url, source_format: item.part.format, vintage: item.file.vintage,
      sha256: item.file.sha256, rows_read: opts.rowsRead, rows_kept: rows.length, mutations: 0, new_mutations: 0,
      anomalies: opts.anomalies, imported_at: now,
    };
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}
