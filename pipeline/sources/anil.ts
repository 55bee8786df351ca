// ANIL "carte des loyers" source: predicted advertised rents per m² (charges included, unfurnished) per commune, in four
// files per edition (all flats, T1–T2, T3+, houses), one lake partition per file (scope FR-<segment>, edition year).
import path from 'node:path';
import { all, lit, run, type DuckDBConnection } from '../../lib/duck';
import { stageFile } from '../stage';
import { communeCodeSql } from './text';
import { ANIL_COLUMNS, writeNationalPartition } from './national';
import { anilDeclaration } from '../../lib/sources/anil';
import type { ImportContext, ImportItem, ImportResult, Part, Selection, Source } from './types';

// data.gouv.fr dataset "Carte des loyers - Indicateurs de loyers d'annonce par commune en <year>": one folder per
// edition under this base (a mirror laid out the same way can be given with --base-url).
const ANIL_BASE = 'https://static.data.gouv.fr/resources';
const datasetFolder = (annee: number) => `carte-des-loyers-indicateurs-de-loyers-dannonce-par-commune-en-${annee}`;

/** Segment → published file name of an edition. */
export const ANIL_FILES = {
  appartement: 'pred-app-mef-dhup.csv',
  appartement_t1_t2: 'pred-app12-mef-dhup.csv',
  appartement_t3_plus: 'pred-app3-mef-dhup.csv',
  maison: 'pred-mai-mef-dhup.csv',
} as const;

export type AnilSegment = keyof typeof ANIL_FILES;

/**
 * Stages one ANIL file (dotted column names such as lwr.IPm2, decimal commas, CRLF or LF, optional quotes; read by
 * DuckDB, never by Node) into the TEMP table `anil_rows`. A commune keeps its first line that has a rent.
 */
export async function stageAnil(conn: DuckDBConnection, file: string, segment: AnilSegment, millesime: number, tmpDir?: string): Promise<{ table: string; encoding: string; rowsRead: number; rowsKept: number; anomalies: Record<string, number> }> {
  const staged = await stageFile(conn, {
    file, table: 'anil_raw', tmpDir, nullStrings: ['', 'NA', 'na', 'NaN', 'nan', 'NAN'],
    columns: {
      insee: { type: 'VARCHAR', names: ['INSEE_C', 'INSEE_COM', 'INSEE'] }, libgeo: { type: 'VARCHAR', names: ['LIBGEO'] },
      zone: { type: 'VARCHAR', names: ['id_zone'] }, loyer: { type: 'DOUBLE', names: ['loypredm2'] },
      lwr: { type: 'DOUBLE', names: ['lwr.IPm2'] }, upr: { type: 'DOUBLE', names: ['upr.IPm2'] }, typpred: { type: 'VARCHAR', names: ['TYPPRED'] },
      // the first ("2018") edition spells them NBobs_commune, NBobs_maille and R2adj (the last matches R2_adj once normalised)
      nb_com: { type: 'INTEGER', names: ['nbobs_com', 'NBobs_commune'] }, nb_mail: { type: 'INTEGER', names: ['nbobs_mail', 'NBobs_maille'] },
      r2: { type: 'DOUBLE', names: ['R2_adj'] },
    },
  });
  if (!staged.mapping.insee || !staged.mapping.loyer) {
    throw new Error(`not an ANIL rent file: INSEE_C and loypredm2 columns expected, got ${staged.header.slice(0, 6).join(';')}…`);
  }
  // rowid follows the file order: a valid code's first line with a rent is kept; later lines of a kept code are
  // duplicates; lines of a code that has no kept line before them lack their rent.
  await run(conn, `CREATE OR REPLACE TEMP TABLE anil_coded AS
    SELECT rowid AS i, ${communeCodeSql('insee')} AS code, * EXCLUDE (insee) FROM anil_raw`);
  await run(conn, 'DROP TABLE anil_raw');
  await run(conn, `CREATE OR REPLACE TEMP TABLE anil_rows AS
    SELECT code AS code_commune, ${lit(segment)} AS segment, libgeo AS libelle_commune, zone AS id_zone, loyer AS loyer_m2_cc,
      lwr AS loyer_m2_cc_bas, upr AS loyer_m2_cc_haut, lower(typpred) AS niveau_prediction, nb_com AS nb_observations_commune,
      nb_mail AS nb_observations_maille, r2 AS r2_ajuste, ${millesime} AS millesime, i
    FROM anil_coded WHERE code IS NOT NULL AND loyer IS NOT NULL
    QUALIFY row_number() OVER (PARTITION BY code ORDER BY i) = 1
    ORDER BY i`);
  const [c] = await all<Record<string, number>>(conn, `SELECT
      count(*) FILTER (code IS NULL)::INTEGER AS invalid_insee,
      count(*) FILTER (code IS NOT NULL AND i > k.first)::INTEGER AS duplicate_insee,
      count(*) FILTER (code IS NOT NULL AND (k.first IS NULL OR i < k.first))::INTEGER AS missing_loyer,
      (SELECT count(*) FROM anil_rows WHERE niveau_prediction IS DISTINCT FROM 'commune')::INTEGER AS prediction_not_commune,
      (SELECT count(*) FROM anil_rows)::INTEGER AS kept
    FROM anil_coded LEFT JOIN (SELECT code_commune, i AS first FROM anil_rows) k ON k.code_commune = anil_coded.code`);
  await run(conn, 'DROP TABLE anil_coded');
  await run(conn, 'ALTER TABLE anil_rows DROP COLUMN i');
  const unparsable = Object.entries(staged.anomalies).filter(([k]) => k.startsWith('unparsable_')).reduce((a, [, n]) => a + n, 0);
  const { kept, ...counts } = c;
  return {
    table: 'anil_rows', encoding: staged.encoding, rowsRead: staged.rowsRead, rowsKept: kept,
    anomalies: { ...counts, unparsable_value: unparsable, ...(staged.anomalies.malformed_line ? { malformed_line: staged.anomalies.malformed_line } : {}) },
  };
}

export const anilSource: Source = {
  ...anilDeclaration,

  parts(sel: Selection): Part[] {
    const base = (sel.baseUrl ?? ANIL_BASE).replace(/\/$/, '');
    return sel.annees.flatMap((annee) =>
      (Object.entries(ANIL_FILES) as Array<[AnilSegment, string]>).map(([segment, name]) => ({
        source: 'anil', key: `FR-${segment}/${annee}`, format: segment, relPath: `${annee}/${name}`,
        url: `${base}/${datasetFolder(annee)}/${name}`, annee, partitions: [{ scope: `FR-${segment}`, annee }],
      })),
    );
  },

  batchKey: (part) => part.key,

  async importFiles(ctx: ImportContext, items: ImportItem[]): Promise<ImportResult[]> {
    const results: ImportResult[] = [];
    for (const item of items) {
      const segment = item.part.format as AnilSegment;
      const parsed = await stageAnil(ctx.conn, item.file.path, segment, item.part.annee!, path.join(ctx.lake.root, '.staging'));
      const anomalies = Object.fromEntries(Object.entries(parsed.anomalies).filter(([, n]) => n > 0));
      ctx.log(`anil ${segment} ${item.part.annee} (${parsed.encoding}): ${parsed.rowsKept} communes; ${Object.entries(anomalies).map(([k, n]) => `${k} ${n}`).join(', ') || 'no anomaly'}`);
      const partition = await writeNationalPartition(ctx, {
        source: 'anil', scope: `FR-${segment}`, annee: item.part.annee!, columns: ANIL_COLUMNS, table: parsed.table,
        item, rowsRead: parsed.rowsRead, anomalies,
      });
      await run(ctx.conn, `DROP TABLE ${parsed.table}`);
      results.push({ partitions: [partition], fileAnomalies: {} });
    }
    return results;
  },
};
