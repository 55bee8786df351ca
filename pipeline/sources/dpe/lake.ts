// Writes the staged diagnostics of one département (every DPE dataset of it, staged together by parse.ts so that a
// replacement across datasets is seen) into the lake: source `dpe`, one partition per year of establishment. The
// département's import owns all its `dpe` partitions: years that no longer have a diagnostic are removed.
import fs from 'node:fs';
import path from 'node:path';
import { all, lit, run, type DuckDBConnection } from '../../../lib/duck';
import type { Lake, PartitionRecord } from '../../lake';

export const DPE_SOURCE = 'dpe';

/** Lake schema of the `dpe` source (file order; code_departement and annee live in the partition path). */
export const DPE_LAKE_COLUMNS = {
  dpe_id: 'VARCHAR',
  numero_dpe: 'VARCHAR',
  source_dataset: 'VARCHAR',
  date_etablissement_dpe: 'DATE',
  avant_reforme_2021: 'BOOLEAN',
  classe_energie: 'VARCHAR',
  classe_ges: 'VARCHAR',
  etiquette_dpe_brute: 'VARCHAR',
  etiquette_ges_brute: 'VARCHAR',
  conso_energie_kwh_m2_an: 'DOUBLE',
  emission_ges_kg_m2_an: 'DOUBLE',
  surface_habitable: 'DOUBLE',
  annee_construction: 'INTEGER',
  periode_construction: 'VARCHAR',
  type_batiment: 'VARCHAR',
  code_insee: 'VARCHAR',
  code_postal: 'VARCHAR',
  code_departement_dpe: 'VARCHAR',
  identifiant_ban: 'VARCHAR',
  id_parcelle: 'VARCHAR',
  address: 'VARCHAR',
  latitude: 'DOUBLE',
  longitude: 'DOUBLE',
  coord_source: 'VARCHAR',
  numero_dpe_remplace: 'VARCHAR',
  version_dpe: 'VARCHAR',
  methode: 'VARCHAR',
  modele: 'VARCHAR',
  imported_at: 'TIMESTAMP',
} as const;

export interface DpeLakeContext {
  lake: Lake;
  conn: DuckDBConnection;
  now: Date;
}

/**
 * Publishes table `dpe_staged` as the `dpe` partitions of département `dep` (one per year of establishment) and returns
 * one record per partition. Diagnostics without a date cannot be placed in time (nor matched): they are left out and
 * counted by the caller (`date_invalide`).
 */
export async function publishDpeDepartement(ctx: DpeLakeContext, dep: string, meta: Omit<PartitionRecord, 'code_departement' | 'annee' | 'file' | 'rows_read' | 'rows_kept' | 'imported_at'>): Promise<PartitionRecord[]> {
  const now = ctx.now.toISOString();
  const cols = Object.keys(DPE_LAKE_COLUMNS).map((c) =>
    c === 'imported_at' ? `${lit(now)}::TIMESTAMP AS imported_at` : c === 'code_departement_dpe' ? 'code_departement AS code_departement_dpe' : c);
  const staging = ctx.lake.makeStagingDir();
  try {
    await run(ctx.conn, `COPY (SELECT ${cols.join(', ')}, year(date_etablissement_dpe) AS annee FROM dpe_staged WHERE date_etablissement_dpe IS NOT NULL
      ORDER BY date_etablissement_dpe, dpe_id) TO ${lit(staging)} (FORMAT parquet, COMPRESSION zstd, PARTITION_BY (annee), OVERWRITE_OR_IGNORE)`);
    const counts = await all<{ annee: number; n: number }>(ctx.conn,
      'SELECT year(date_etablissement_dpe) AS annee, count(*) AS n FROM dpe_staged WHERE date_etablissement_dpe IS NOT NULL GROUP BY 1 ORDER BY 1');
    const records: PartitionRecord[] = [];
    for (const { annee, n } of counts) {
      const dir = path.join(staging, `annee=${annee}`);
      const [file] = fs.readdirSync(dir).filter((f) => f.endsWith('.parquet'));
      const rel = ctx.lake.publishPartition(path.join(dir, file), DPE_SOURCE, dep, annee);
      records.push({ ...meta, code_departement: dep, annee, file: rel, rows_read: n, rows_kept: n, imported_at: now });
    }
    const years = new Set(counts.map((c) => c.annee));
    for (const stale of ctx.lake.existingPartitionFiles(DPE_SOURCE, (d, y) => d === dep && !years.has(y))) fs.rmSync(path.dirname(stale), { recursive: true, force: true });
    return records;
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}
