// Typed staging of géo-SIRENE establishment files and StockUniteLegale files in DuckDB: the streaming template
// (pipeline/stage.ts) reads the files where they lie (CSV, CSV.gz, ZIP; never into the Node heap) and finds columns by
// header name; the rules (active, seven business types, privacy of partial diffusion) live in the sibling .sql files.
import { all, lit, one, run, type DuckDBConnection } from '../../../lib/duck';
import { nafTypeValuesSql, NOT_DIFFUSED } from '../../../lib/sirene';
import { stageFile, type StageColumn } from '../../stage';
import { fillSql, readSql as readSqlFile } from '../../../lib/sql-file';

const readSql = (name: string) => readSqlFile(import.meta.url, name);

/** Columns of a StockEtablissement / géo-SIRENE file the staging reads; the others are ignored. */
export const ETAB_REQUIRED = ['siren', 'etatAdministratifEtablissement', 'activitePrincipaleEtablissement', 'codeCommuneEtablissement'];
export const ETAB_OPTIONAL = [
  'nic', 'siret', 'statutDiffusionEtablissement', 'dateCreationEtablissement', 'etablissementSiege', 'numeroVoieEtablissement',
  'indiceRepetitionEtablissement', 'typeVoieEtablissement', 'libelleVoieEtablissement', 'codePostalEtablissement',
  'libelleCommuneEtablissement', 'enseigne1Etablissement', 'denominationUsuelleEtablissement',
  'nomenclatureActivitePrincipaleEtablissement', 'dateDernierTraitementEtablissement', 'longitude', 'latitude', 'geo_score',
];
export const UL_REQUIRED = ['siren'];
export const UL_OPTIONAL = [
  'statutDiffusionUniteLegale', 'etatAdministratifUniteLegale', 'categorieJuridiqueUniteLegale', 'denominationUniteLegale',
  'prenomUsuelUniteLegale', 'prenom1UniteLegale', 'nomUsageUniteLegale', 'nomUniteLegale', 'dateCreationUniteLegale',
];

/** INSEE's street-type codes written out (the stock abbreviates them; unknown codes are kept as published). */
const VOIE_TYPES: Record<string, string> = {
  ALL: 'ALLEE', AV: 'AVENUE', BD: 'BOULEVARD', CAR: 'CARREFOUR', CHE: 'CHEMIN', CHS: 'CHAUSSEE', CITE: 'CITE',
  COR: 'CORNICHE', CRS: 'COURS', DOM: 'DOMAINE', DSC: 'DESCENTE', ECA: 'ECART', ESP: 'ESPLANADE', FG: 'FAUBOURG',
  GR: 'GRANDE RUE', HAM: 'HAMEAU', HLE: 'HALLE', IMP: 'IMPASSE', LD: 'LIEU DIT', LOT: 'LOTISSEMENT', MAR: 'MARCHE',
  MTE: 'MONTEE', PAS: 'PASSAGE', PL: 'PLACE', PLN: 'PLAINE', PLT: 'PLATEAU', PRO: 'PROMENADE', PRV: 'PARVIS',
  QUA: 'QUARTIER', QUAI: 'QUAI', RES: 'RESIDENCE', RLE: 'RUELLE', ROC: 'ROCADE', RPT: 'ROND POINT', RTE: 'ROUTE',
  RUE: 'RUE', SEN: 'SENTIER', SQ: 'SQUARE', TPL: 'TERRE PLEIN', TRA: 'TRAVERSE', VLA: 'VILLA', VLGE: 'VILLAGE',
};

const voieTypesSql = () => Object.entries(VOIE_TYPES).map(([c, l]) => `(${lit(c)}, ${lit(l)})`).join(', ');

/**
 * A table `name` with exactly the wanted columns, read from the files by the streaming template (pipeline/stage.ts):
 * headers matched by name (a required column missing is an error naming it, an optional one is NULL), `[ND]` and
 * blanks NULL, malformed lines counted. Several files are appended one by one.
 */
async function rawTable(conn: DuckDBConnection, name: string, files: string[], required: string[], optional: string[]): Promise<{ absent: string[]; malformed: number }> {
  if (files.length === 0) throw new Error(`${name}: no file to read`);
  const columns: Record<string, StageColumn> = Object.fromEntries([
    ...required.map((c) => [c, { type: 'VARCHAR', required: true }]),
    ...optional.map((c) => [c, { type: 'VARCHAR' }]),
  ]);
  const absent = new Set(optional);
  let malformed = 0;
  for (const [i, file] of files.entries()) {
    const table = i === 0 ? name : `${name}__next`;
    const r = await stageFile(conn, { file, table, columns, delimiter: ',', nullStrings: ['', NOT_DIFFUSED] });
    for (const c of optional) if (r.mapping[c] !== null) absent.delete(c);
    malformed += r.anomalies.malformed_line ?? 0;
    if (i > 0) {
      await run(conn, `INSERT INTO ${name} SELECT * FROM ${table}`);
      await run(conn, `DROP TABLE ${table}`);
    }
  }
  return { absent: [...absent], malformed };
}

async function defineMacros(conn: DuckDBConnection): Promise<void> {
  // `[ND]` is INSEE's marker of a value hidden by partial diffusion: like a blank, it is no value.
  await run(conn, `CREATE OR REPLACE TEMP MACRO sirene_v(x) AS nullif(nullif(trim(x), ''), '[ND]')`);
}

export interface StageReport {
  rowsRead: number;
  rowsKept: number;
  /** Optional columns absent from the files' header (their values are NULL). */
  absentColumns: string[];
  /** Establishment files: the newest processing day of any line (`dateDernierTraitementEtablissement`), the date of
   * the stock's data; null when the files do not carry it. */
  latestTreatment?: string | null;
  anomalies: Record<string, number>;
}

/** Stages establishment files into the temp table `sirene_etablissements_stg` (columns: stage_etablissements.sql). */
export async function stageEtablissements(conn: DuckDBConnection, files: string[]): Promise<StageReport> {
  await defineMacros(conn);
  const raw = await rawTable(conn, 'sirene_raw_etab', files, ETAB_REQUIRED, ETAB_OPTIONAL);
  const absentColumns = raw.absent;
  await run(conn, fillSql(readSql('scan_etablissements.sql'), { naf_types: nafTypeValuesSql() }));
  await run(conn, `CREATE OR REPLACE TEMP TABLE sirene_etablissements_stg AS ${fillSql(readSql('stage_etablissements.sql'), { voie_types: voieTypesSql() })}`);
  const { latest_treatment, ...scan } = (await one<Record<string, number> & { latest_treatment: string | null }>(
    conn,
    `SELECT count(*) AS rows_read, max(date_traitement)::VARCHAR AS latest_treatment,
       count(*) FILTER (WHERE etat IS DISTINCT FROM 'A') AS not_active,
       count(*) FILTER (WHERE etat = 'A' AND business_type IS NULL) AS other_activity,
       count(*) FILTER (WHERE etat = 'A' AND business_type IS NOT NULL AND coalesce(nomenclature, 'NAFRev2') <> 'NAFRev2') AS old_nomenclature,
       count(*) FILTER (WHERE etat = 'A' AND business_type IS NOT NULL AND NOT regexp_full_match(coalesce(siret, ''), '\\d{14}')) AS invalid_siret
     FROM sirene_etab_scan`,
  ))!;
  const kept = (await one<Record<string, number>>(
    conn,
    `SELECT count(*) AS rows_kept,
       count(*) FILTER (WHERE diffusion_partielle) AS partial_diffusion,
       count(*) FILTER (WHERE NOT diffusion_partielle AND position_precision = 'commune') AS not_geocoded,
       count(*) FILTER (WHERE latitude IS NULL) AS no_position
     FROM sirene_etablissements_stg`,
  ))!;
  await run(conn, 'DROP TABLE sirene_etab_scan');
  await run(conn, 'DROP TABLE sirene_raw_etab');
  const { rows_read, rows_kept, ...rest } = { ...scan, ...kept };
  // Duplicated SIRETs are what the kept count lacks once every other reason is counted.
  const duplicate_siret = rows_read - rows_kept - rest.not_active - rest.other_activity - rest.old_nomenclature - rest.invalid_siret;
  return {
    rowsRead: rows_read + raw.malformed, rowsKept: rows_kept, absentColumns, latestTreatment: latest_treatment,
    anomalies: { ...rest, duplicate_siret, malformed_line: raw.malformed },
  };
}

/**
 * Stages StockUniteLegale files into the temp table `sirene_unites_legales_stg`, keeping the legal units whose SIREN
 * is in `sirensSql` (a query returning one `siren` column): the national stock has ~30 million units, the endpoints
 * need the names of a few hundred thousand.
 */
export async function stageUnitesLegales(conn: DuckDBConnection, files: string[], sirensSql: string): Promise<StageReport> {
  await defineMacros(conn);
  const raw = await rawTable(conn, 'sirene_raw_ul', files, UL_REQUIRED, UL_OPTIONAL);
  const absentColumns = raw.absent;
  await run(conn, `CREATE OR REPLACE TEMP TABLE sirene_wanted_sirens AS SELECT DISTINCT siren FROM (${sirensSql})`);
  await run(conn, `CREATE OR REPLACE TEMP TABLE sirene_unites_legales_stg AS ${readSql('stage_unites_legales.sql')}`);
  const r = (await one<Record<string, number>>(
    conn,
    `SELECT (SELECT count(*) FROM sirene_unites_legales_stg) AS rows_kept,
       (SELECT count(*) FROM sirene_unites_legales_stg WHERE diffusion_partielle) AS partial_diffusion,
       (SELECT count(*) FROM sirene_wanted_sirens WHERE siren NOT IN (SELECT siren FROM sirene_unites_legales_stg)) AS unit_not_found`,
  ))!;
  const [{ n }] = await all<{ n: number }>(conn, 'SELECT count(*)::INTEGER AS n FROM sirene_raw_ul');
  await run(conn, 'DROP TABLE sirene_raw_ul');
  return {
    rowsRead: n + raw.malformed, rowsKept: r.rows_kept, absentColumns,
    anomalies: { unit_partial_diffusion: r.partial_diffusion, unit_not_found: r.unit_not_found, unit_malformed_line: raw.malformed },
  };
}

/** The snapshot's lake rows (businesses.sql) from the two staged tables, into the temp table `sirene_businesses`. */
export async function joinBusinesses(conn: DuckDBConnection): Promise<number> {
  await run(conn, `CREATE OR REPLACE TEMP TABLE sirene_businesses AS ${readSql('businesses.sql')}`);
  return (await one<{ n: number }>(conn, 'SELECT count(*)::INTEGER AS n FROM sirene_businesses'))!.n;
}
