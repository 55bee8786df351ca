// INSEE Filosofi source: the commune file of the "base comparateur de territoires" (CODGEO, NBMENFISC<yy>, MED<yy>),
// one lake partition per income vintage (scope FR). Secrecy markers become nulls with their reason kept.
import path from 'node:path';
import { all, run, type DuckDBConnection } from '../../lib/duck';
import { stageFile } from '../stage';
import { communeCodeSql, frenchNumberSql } from './text';
import { FILOSOFI_COLUMNS, writeNationalPartition } from './national';
import { filosofiDeclaration } from '../../lib/sources/filosofi';
import type { ImportContext, ImportItem, ImportResult, Part, Selection, Source } from './types';

// INSEE publishes each vintage under a new page number: this is the 2020 one; --base-url selects another.
const FILOSOFI_BASE = 'https://www.insee.fr/fr/statistiques/fichier/6692392';

interface FilosofiParse {
  annee: number;
  /** TEMP table holding the partition's rows (FILOSOFI_COLUMNS but imported_at), in file order. */
  table: string;
  encoding: string;
  rowsRead: number;
  rowsKept: number;
  anomalies: Record<string, number>;
}

/** SQL: the reason a Filosofi value is null ('s' = statistical secrecy, 'nd' = not available), or 'ok'. */
export function filosofiStatutSql(expr: string): string {
  return `(CASE WHEN ${expr} IS NULL THEN 'missing' WHEN lower(${expr}) = 's' THEN 'secret' WHEN lower(${expr}) = 'nd' THEN 'not_available'
    WHEN ${frenchNumberSql(expr)} IS NULL THEN 'unparsable' ELSE 'ok' END)`;
}

/**
 * Stages a Filosofi commune file (read by DuckDB, never by Node) into the TEMP table `filosofi_rows`; the vintage comes
 * from the MED<yy> column (MED20 → 2020), else from `fileYear`. A commune code seen twice keeps its first line.
 */
export async function stageFilosofi(conn: DuckDBConnection, file: string, fileYear?: number, tmpDir?: string): Promise<FilosofiParse> {
  const staged = await stageFile(conn, {
    file, table: 'filosofi_raw', tmpDir, nullStrings: [''],
    columns: {
      codgeo: { type: 'VARCHAR', names: ['CODGEO'] },
      med: { type: 'VARCHAR', names: [/^MED\d{2}$/i, /^MED$/i] },
      menages: { type: 'VARCHAR', names: [/^NBMENFISC\d{2}$/i, /^NBMENFISC$/i] },
    },
  });
  const { codgeo: codCol, med: medCol } = staged.mapping;
  if (!codCol || !medCol) throw new Error(`not a Filosofi commune file: CODGEO and MED<yy> columns expected, got ${staged.header.slice(0, 5).join(';')}…`);
  const yy = /(\d{2})$/.exec(medCol)?.[1];
  const annee = yy ? 2000 + Number(yy) : fileYear;
  if (!annee) throw new Error('Filosofi vintage unknown: no MED<yy> column and no year in the file name');
  if (fileYear && yy && fileYear !== annee) throw new Error(`Filosofi file for ${fileYear} has ${medCol} (vintage ${annee})`);

  // rowid follows the file order (DuckDB preserves insertion order): the first line of a duplicated code wins.
  await run(conn, `CREATE OR REPLACE TEMP TABLE filosofi_rows AS
    WITH coded AS (SELECT rowid AS i, ${communeCodeSql('codgeo')} AS code_commune, med, menages FROM filosofi_raw)
    SELECT code_commune,
      ${frenchNumberSql('menages')} AS nb_menages_fiscaux,
      ${frenchNumberSql('med')} AS revenu_median_uc,
      ${filosofiStatutSql('med')} AS revenu_median_statut,
      ${annee} AS annee_revenus,
      ${filosofiStatutSql('menages')} AS menages_statut
    FROM coded WHERE code_commune IS NOT NULL
    QUALIFY row_number() OVER (PARTITION BY code_commune ORDER BY i) = 1
    ORDER BY i`);
  const [c] = await all<Record<string, number>>(conn, `SELECT
      (SELECT count(*) FROM filosofi_raw WHERE ${communeCodeSql('codgeo')} IS NULL)::INTEGER AS invalid_codgeo,
      (SELECT count(*) FROM filosofi_raw WHERE ${communeCodeSql('codgeo')} IS NOT NULL)::INTEGER - count(*)::INTEGER AS duplicate_codgeo,
      count(*) FILTER (revenu_median_statut = 'secret')::INTEGER AS med_secret,
      count(*) FILTER (revenu_median_statut = 'not_available')::INTEGER AS med_not_available,
      count(*) FILTER (revenu_median_statut = 'missing')::INTEGER AS med_missing,
      count(*) FILTER (revenu_median_statut = 'unparsable')::INTEGER AS med_unparsable,
      count(*) FILTER (menages_statut = 'unparsable')::INTEGER AS menages_unparsable,
      count(*)::INTEGER AS kept
    FROM filosofi_rows`);
  await run(conn, 'DROP TABLE filosofi_raw');
  await run(conn, 'ALTER TABLE filosofi_rows DROP COLUMN menages_statut');
  const { kept, ...counts } = c;
  return {
    annee, table: 'filosofi_rows', encoding: staged.encoding, rowsRead: staged.rowsRead, rowsKept: kept,
    anomalies: { ...counts, ...staged.anomalies },
  };
}

export const filosofiSource: Source = {
  ...filosofiDeclaration,

  parts(sel: Selection): Part[] {
    const base = (sel.baseUrl ?? FILOSOFI_BASE).replace(/\/$/, '');
    return sel.annees.map((annee) => {
      const relPath = `base-cc-filosofi-${annee}_CSV.zip`;
      return {
        source: 'filosofi', key: `FR/${annee}`, format: 'filosofi-com', relPath, url: `${base}/${relPath}`, annee, partitions: [{ scope: 'FR', annee }],
        // The archive also holds other levels; under --from-dir the bare commune file is accepted too.
        zipEntry: `cc_filosofi_${annee}_COM.csv`,
        localAlternatives: [`cc_filosofi_${annee}_COM.csv`, `cc_filosofi_${annee}_COM.csv.gz`],
      };
    });
  },

  batchKey: (part) => part.key,

  async importFiles(ctx: ImportContext, items: ImportItem[]): Promise<ImportResult[]> {
    const results: ImportResult[] = [];
    for (const item of items) {
      const parsed = await stageFilosofi(ctx.conn, item.file.path, item.part.annee, path.join(ctx.lake.root, '.staging'));
      const anomalies = Object.fromEntries(Object.entries(parsed.anomalies).filter(([, n]) => n > 0));
      ctx.log(`filosofi ${parsed.annee} (${parsed.encoding}): ${parsed.rowsKept} communes; ${Object.entries(anomalies).map(([k, n]) => `${k} ${n}`).join(', ') || 'no anomaly'}`);
      const partition = await writeNationalPartition(ctx, {
        source: 'filosofi', scope: 'FR', annee: parsed.annee, columns: FILOSOFI_COLUMNS, table: parsed.table,
        item, rowsRead: parsed.rowsRead, anomalies,
      });
      await run(ctx.conn, `DROP TABLE ${parsed.table}`);
      results.push({ partitions: [partition], fileAnomalies: {} });
    }
    return results;
  },
};
