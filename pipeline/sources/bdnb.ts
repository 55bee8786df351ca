// BDNB (CSTB's national buildings database), open-data millésime per département: the archive's tables read by
// header name (full names, or the 10-character names of a QGIS/shapefile re-export), typed in the staging SQL of
// ./bdnb/, and joined into one row per building group with a WGS84 point (area-weighted centroid of its footprint)
// plus the group ↔ parcel relation. DuckDB reads the CSVs from disk; nothing passes through the Node heap but headers.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { all, lit, run, type DuckDBConnection } from '../../lib/duck';
import { lambert93Macros } from '../../lib/lambert93';
import { BDNB_DEFAULT_MILLESIME, BDNB_SCHEMA, bdnbDeclaration } from '../../lib/sources/bdnb';
import { unzipEntry } from '../unzip';
import { writeQueryPartition } from './national';
import type { ImportContext, ImportItem, ImportResult, Part, Selection, Source } from './types';

export { BDNB_DEFAULT_MILLESIME };

export const BDNB_BASE = 'https://open-data.s3.fr-par.scw.cloud';

/** Path of a département's CSV archive under the publisher's bucket (also the layout expected under --from-dir). */
export function bdnbArchivePath(vintage: string, dep: string): string {
  // The bucket spells Corsica in lower case (dep2a, dep2b).
  const d = dep.toLowerCase();
  return `bdnb_millesime_${vintage}/millesime_${vintage}_dep${d}/open_data_millesime_${vintage}_dep${d}_csv.zip`;
}

export type BdnbTable = 'batiment_groupe' | 'batiment_groupe_ffo_bat' | 'rel_batiment_groupe_parcelle' | 'batiment_groupe_dvf_open_statistique';

/**
 * Every column each table is known to have (PROVENANCE.md of shared/data/bdnb: the API's field names, which are the
 * tables' column names). The full list matters for truncated headers: a 10-character name is only trusted when no
 * other column of the table truncates to it (`prix_m2_local_median` and `prix_m2_local_max` are both `prix_m2_lo`).
 */
const KNOWN_COLUMNS: Record<BdnbTable, string[]> = {
  batiment_groupe: [
    'batiment_groupe_id', 'code_commune_insee', 'code_departement_insee', 'code_epci_insee', 'code_iris', 'code_qp',
    'code_region_insee', 'contient_fictive_geom_groupe', 'geom_groupe', 'geom_groupe_pos_wgs84', 'libelle_commune_insee',
    'nom_qp', 'quartier_prioritaire', 's_geom_groupe',
  ],
  batiment_groupe_ffo_bat: [
    'annee_construction', 'batiment_groupe_id', 'code_departement_insee', 'mat_mur_txt', 'mat_toit_txt', 'nb_log',
    'nb_niveau', 'usage_niveau_1_txt', 'nb_log_vac', 'nb_log_residence_principale', 'nb_log_residence_secondaire',
    'nb_log_soc', 's_log', 'usage_principal',
  ],
  rel_batiment_groupe_parcelle: ['batiment_groupe_id', 'code_departement_insee', 'parcelle_id', 'parcelle_principale'],
  batiment_groupe_dvf_open_statistique: [
    'batiment_groupe_id', 'code_departement_insee', 'nb_appartement_mutee', 'nb_dependance_mutee', 'nb_locaux_mutee',
    'nb_locaux_tertiaire_mutee', 'nb_maisons_mutee', 'nb_mutation', 'prix_m2_local_max', 'prix_m2_local_median',
    'prix_m2_local_min', 'prix_m2_local_moyen', 'prix_m2_terrain_max', 'prix_m2_terrain_median', 'prix_m2_terrain_min',
    'prix_m2_terrain_moyen', 'valeur_fonciere_max', 'valeur_fonciere_median', 'valeur_fonciere_min',
    'valeur_fonciere_moyenne',
  ],
};

/** Other names a column is published under: GDAL's CSV driver names the geometry column `WKT`. */
const ALIASES: Record<string, string[]> = { geom_groupe: ['wkt'] };

const STAGING: Record<BdnbTable, string> = {
  batiment_groupe: 'stage_batiment_groupe.sql',
  batiment_groupe_ffo_bat: 'stage_ffo_bat.sql',
  rel_batiment_groupe_parcelle: 'stage_rel_parcelle.sql',
  batiment_groupe_dvf_open_statistique: 'stage_dvf_open_statistique.sql',
};

/** The archive entry of each table (inside the `csv/` folder). */
export const BDNB_TABLE_FILES: Record<BdnbTable, string> = {
  batiment_groupe: 'csv/batiment_groupe.csv',
  batiment_groupe_ffo_bat: 'csv/batiment_groupe_ffo_bat.csv',
  rel_batiment_groupe_parcelle: 'csv/rel_batiment_groupe_parcelle.csv',
  batiment_groupe_dvf_open_statistique: 'csv/batiment_groupe_dvf_open_statistique.csv',
};

const sqlDir = path.join(path.dirname(new URL(import.meta.url).pathname), 'bdnb');
const readSql = (name: string) => fs.readFileSync(path.join(sqlDir, name), 'utf8');

export interface HeaderMapping {
  /** Canonical column → the file's header name, for the columns found. */
  columns: Record<string, string>;
  /** Canonical columns the staging needs that the file lacks (or only has under an ambiguous truncated name). */
  missing: string[];
}

/** Maps a file's header to the table's canonical columns: exact name (case-insensitive), alias, or unambiguous 10-character truncation. */
export function mapBdnbHeader(table: BdnbTable, header: string[], wanted: string[] = stagingColumns(table)): HeaderMapping {
  const byLower = new Map(header.map((h) => [h.trim().toLowerCase(), h]));
  const known = KNOWN_COLUMNS[table];
  const columns: Record<string, string> = {};
  const missing: string[] = [];
  for (const col of wanted) {
    const short = col.slice(0, 10);
    const unambiguous = known.filter((k) => k.slice(0, 10) === short).length === 1;
    const found = [col, ...(ALIASES[col] ?? []), ...(unambiguous && short !== col ? [short] : [])]
      .map((n) => byLower.get(n))
      .find((h) => h !== undefined);
    if (found !== undefined) columns[col] = found;
    else missing.push(col);
  }
  return { columns, missing };
}

/** The canonical columns a table's staging SQL reads ({{c:name}} markers). */
function stagingColumns(table: BdnbTable): string[] {
  return [...new Set([...readSql(STAGING[table]).matchAll(/\{\{c:(\w+)\}\}/g)].map((m) => m[1]))];
}

/** First line of a (possibly gzipped) text file, read by streaming only its first chunks. */
export async function readFirstLine(file: string): Promise<string> {
  const raw = fs.createReadStream(file, { highWaterMark: 64 * 1024 });
  const gz = await new Promise<boolean>((resolve) => {
    const fd = fs.openSync(file, 'r');
    const b = Buffer.alloc(2);
    fs.readSync(fd, b, 0, 2, 0);
    fs.closeSync(fd);
    resolve(b[0] === 0x1f && b[1] === 0x8b);
  });
  const stream = gz ? raw.pipe(zlib.createGunzip()) : raw;
  let text = '';
  try {
    for await (const chunk of stream) {
      text += (chunk as Buffer).toString('utf8');
      const nl = text.indexOf('\n');
      if (nl >= 0) return text.slice(0, nl).replace(/\r$/, '').replace(/^\uFEFF/, '');
      if (text.length > 1_000_000) throw new Error(`${file}: no end of line in the first megabyte`);
    }
    return text.replace(/^\uFEFF/, '');
  } finally {
    raw.destroy();
  }
}

/** Header names and delimiter (`,` as published, or `;` as some re-exports use) of a CSV file. */
export async function readCsvHeader(file: string): Promise<{ header: string[]; delim: string }> {
  const line = await readFirstLine(file);
  const delim = (line.match(/;/g)?.length ?? 0) > (line.match(/,/g)?.length ?? 0) ? ';' : ',';
  return { header: line.split(delim).map((h) => h.trim().replace(/^"(.*)"$/, '$1')), delim };
}

const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** The typed staging SELECT of one table file, its columns found by header name. */
export async function stagingSql(table: BdnbTable, file: string): Promise<{ sql: string; mapping: HeaderMapping }> {
  const { header, delim } = await readCsvHeader(file);
  const mapping = mapBdnbHeader(table, header);
  if (!mapping.columns.batiment_groupe_id) throw new Error(`${file}: no batiment_groupe_id column (header: ${header.join(', ')})`);
  const sql = readSql(STAGING[table]).replace(/\{\{(c:)?(\w+)\}\}/g, (_, c: string | undefined, k: string) => {
    if (c) return mapping.columns[k] !== undefined ? `t.${quoteIdent(mapping.columns[k])}` : 'NULL::VARCHAR';
    if (k === 'file') return lit(file);
    if (k === 'delim') return lit(delim);
    throw new Error(`missing SQL template variable ${k}`);
  });
  return { sql, mapping };
}

export type BdnbFiles = Partial<Record<BdnbTable, string>> & { batiment_groupe: string };

/**
 * The tables of one département: streamed out of its ZIP archive into workDir (one entry at a time, never the whole
 * archive in memory), or found in an already unzipped folder (`…_csv/` holding `csv/<table>.csv`). Only
 * batiment_groupe is required; a missing optional table leaves its columns NULL.
 */
export async function bdnbTableFiles(file: string, workDir: string, have: Partial<Record<BdnbTable, string>> = {}): Promise<BdnbFiles> {
  const out: Partial<Record<BdnbTable, string>> = { ...have };
  const tables = Object.entries(BDNB_TABLE_FILES) as Array<[BdnbTable, string]>;
  if (fs.statSync(file).isDirectory()) {
    for (const [table, entry] of tables) {
      const found = [path.join(file, entry), path.join(file, path.basename(entry))].find((p) => fs.existsSync(p));
      if (found) out[table] = found;
    }
  } else {
    fs.mkdirSync(workDir, { recursive: true });
    for (const [table, entry] of tables) {
      if (out[table]) continue;
      try {
        out[table] = await unzipEntry(file, entry, path.join(workDir, path.basename(entry)));
      } catch (e) {
        if (!/ has no entry /.test((e as Error).message)) throw e;
      }
    }
  }
  if (!out.batiment_groupe) throw new Error(`${file}: no ${BDNB_TABLE_FILES.batiment_groupe} (not a BDNB CSV archive?)`);
  return out as BdnbFiles;
}

export interface BdnbStaged {
  rowsRead: number;
  anomalies: Record<string, number>;
  /** Columns absent from a file (or only present under an ambiguous truncated name), per table. */
  missingColumns: Partial<Record<BdnbTable, string[]>>;
}

/**
 * Stages a département's tables into temp tables `bdnb_batiments` (the lake schema but millesime and imported_at) and
 * `bdnb_parcelles` (batiment_groupe_id, parcelle_id, parcelle_principale). A table whose file is absent contributes NULLs (or no relation rows).
 */
export async function stageBdnb(conn: DuckDBConnection, files: BdnbFiles): Promise<BdnbStaged> {
  await run(conn, lambert93Macros());
  const missingColumns: BdnbStaged['missingColumns'] = {};
  const source = async (table: BdnbTable, empty: string) => {
    const file = files[table];
    if (!file) return empty;
    const { sql, mapping } = await stagingSql(table, file);
    if (mapping.missing.length) missingColumns[table] = mapping.missing;
    return sql;
  };
  const none = (cols: string) => `SELECT ${cols} WHERE false`;
  await run(conn, `CREATE OR REPLACE TEMP TABLE bdnb_groupe_raw AS ${await source('batiment_groupe', '')}`);
  await run(conn, `CREATE OR REPLACE TEMP TABLE bdnb_ffo_raw AS ${await source('batiment_groupe_ffo_bat', none(
    `NULL::VARCHAR AS batiment_groupe_id, NULL::INTEGER AS annee_construction, false AS unparsable_annee_construction,
     NULL::INTEGER AS nb_log, NULL::INTEGER AS nb_niveau, NULL::VARCHAR AS mat_mur_txt, NULL::VARCHAR AS mat_toit_txt,
     NULL::VARCHAR AS usage_niveau_1_txt`))}`);
  await run(conn, `CREATE OR REPLACE TEMP TABLE bdnb_dvf_raw AS ${await source('batiment_groupe_dvf_open_statistique', none(
    'NULL::VARCHAR AS batiment_groupe_id, NULL::INTEGER AS nb_mutation, NULL::DOUBLE AS prix_m2_local_median'))}`);
  await run(conn, `CREATE OR REPLACE TEMP TABLE bdnb_parcelles_raw AS ${await source('rel_batiment_groupe_parcelle', none(
    'NULL::VARCHAR AS batiment_groupe_id, NULL::VARCHAR AS parcelle_id, NULL::BOOLEAN AS parcelle_principale'))}`);
  // statement by statement (same effect as one call; a benchmark can then time each step)
  for (const statement of splitStatements(readSql('batiments.sql').replace('{{centroid.sql}}', () => readSql('centroid.sql')))) await run(conn, statement);
  const [counts] = await all<Record<string, number>>(conn, readSql('anomalies.sql'));
  const { rows_read: rowsRead, ...anomalies } = counts;
  return { rowsRead, anomalies, missingColumns };
}

/** The statements of a SQL script (each ends with `;` at the end of a line; comment-only chunks dropped). */
function splitStatements(sql: string): string[] {
  return sql.split(/;[ \t]*\n/).filter((s) => s.replace(/--.*$/gm, '').trim() !== '');
}

/** The tables of an imported part: next to its fetched batiment_groupe.csv (unzipped layout), or in the ZIP it came from. */
async function partTables(item: ImportItem, workDir: string): Promise<BdnbFiles> {
  const dir = path.dirname(item.file.path);
  const zip = path.join(dir, path.basename(item.part.relPath));
  if (item.file.path.endsWith('.zip')) return bdnbTableFiles(item.file.path, workDir);
  if (fs.existsSync(zip)) return bdnbTableFiles(zip, workDir, { batiment_groupe: item.file.path });
  return bdnbTableFiles(dir, workDir);
}

export const bdnbSource: Source = {
  ...bdnbDeclaration,

  parts(sel: Selection): Part[] {
    // The CLI's --source names the millésime (the BDNB publishes one archive set per millésime).
    const millesime = sel.format ?? BDNB_DEFAULT_MILLESIME;
    if (!/^\d{4}-\d{2}-[a-z]$/.test(millesime)) throw new Error(`BDNB millésime "${millesime}" is not like ${BDNB_DEFAULT_MILLESIME} (--source)`);
    const base = (sel.baseUrl ?? BDNB_BASE).replace(/\/$/, '');
    return sel.departements.map((dep) => {
      const relPath = bdnbArchivePath(millesime, dep);
      return {
        source: 'bdnb', key: dep, format: millesime, relPath, url: `${base}/${relPath}`, partitions: [{ code_departement: dep }],
        // The run extracts batiment_groupe.csv next to the archive; the other tables are taken from the archive at import.
        zipEntry: BDNB_TABLE_FILES.batiment_groupe,
        localAlternatives: [`${relPath.replace(/\.zip$/, '')}/${BDNB_TABLE_FILES.batiment_groupe}`],
      };
    });
  },

  // One département per pass: its archive is large, and the centroid staging uses temp tables of its own.
  batchKey: (part) => part.key,

  async importFiles(ctx: ImportContext, items: ImportItem[]): Promise<ImportResult[]> {
    const results: ImportResult[] = [];
    for (const item of items) {
      const dep = String(item.part.partitions[0].code_departement);
      const millesime = item.part.format;
      const work = ctx.lake.makeStagingDir();
      try {
        const files = await partTables(item, work);
        const staged = await stageBdnb(ctx.conn, files);
        for (const [table, cols] of Object.entries(staged.missingColumns)) ctx.log(`bdnb ${dep}: ${table} lacks ${cols.join(', ')} (left empty)`);
        const anomalies = Object.fromEntries(Object.entries(staged.anomalies).filter(([, n]) => n > 0));
        const columns = Object.keys(BDNB_SCHEMA).map((c) =>
          c === 'millesime' ? `${lit(millesime)} AS millesime` : c === 'imported_at' ? `${lit(ctx.now.toISOString())}::TIMESTAMP AS imported_at` : c);
        const record = await writeQueryPartition(ctx, {
          source: 'bdnb', partition: { code_departement: dep }, item, rowsRead: staged.rowsRead, anomalies,
          select: `SELECT ${columns.join(', ')} FROM bdnb_batiments`,
        });
        ctx.log(`bdnb ${dep} (${millesime}): ${record.rows_kept} building groups; ${Object.entries(anomalies).map(([k, n]) => `${k} ${n}`).join(', ') || 'no anomaly'}`);
        // The millésime is the vintage that matters to users (meta/sources), not the archive's Last-Modified date.
        results.push({ partitions: [{ ...record, vintage: millesime }], fileAnomalies: {} });
      } finally {
        fs.rmSync(work, { recursive: true, force: true });
        await run(ctx.conn, 'DROP TABLE IF EXISTS bdnb_groupe_raw; DROP TABLE IF EXISTS bdnb_ffo_raw; DROP TABLE IF EXISTS bdnb_dvf_raw; DROP TABLE IF EXISTS bdnb_parcelles_raw; DROP TABLE IF EXISTS bdnb_groupe; DROP TABLE IF EXISTS bdnb_centroids; DROP TABLE IF EXISTS bdnb_batiments; DROP TABLE IF EXISTS bdnb_parcelles;');
      }
    }
    return results;
  },
};
