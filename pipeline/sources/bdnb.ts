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
import { unzipEntries } from '../unzip';
import { writeQueryPartition } from './national';
import type { ImportContext, ImportItem, ImportResult, Part, Selection, Source } from './types';
import { fillSql, readSql as readSqlFile } from '../../lib/sql-file';

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
 * Every column each table is known to have (the BDNB API's field names, which are the tables'
 * column names). The full list matters for truncated headers: a 10-character name is only trusted when no
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

const readSql = (name: string) => readSqlFile(import.meta.url, path.join('bdnb', name));

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
 * The tables of one département: streamed out of its ZIP archive into workDir (the archive opened once, one entry at
 * a time, never the whole archive in memory), or found in an already unzipped folder (`…_csv/` holding
 * `csv/<table>.csv`). Only batiment_groupe is required; a missing optional table leaves its columns NULL.
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
    const wanted = tables.filter(([table]) => !out[table]);
    const extracted = await unzipEntries(file, wanted.map(([, entry]) => ({ name: entry, outPath: path.join(workDir, path.basename(entry)) })));
    wanted.forEach(([table], i) => {
      if (extracted[i]) out[table] = extracted[i];
    });
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

/** The temp tables stageBdnb leaves (dropped by dropBdnbTables). */
const TEMP_TABLES = ['bdnb_groupe_raw', 'bdnb_ffo_raw', 'bdnb_dvf_raw', 'bdnb_groupe_parcelles', 'bdnb_batiments'];

const GROUP_COLUMNS = 'rowid AS rid, batiment_groupe_id, code_commune_insee, libelle_commune_insee, code_iris, s_geom_groupe, geom_groupe IS NOT NULL AS has_geometry';

/**
 * Stages a département's tables into temp tables `bdnb_batiments` (the lake schema but millesime and imported_at, plus
 * `_`-prefixed helper columns) and `bdnb_groupe_parcelles` (batiment_groupe_id, parcelles_principales,
 * parcelles_secondaires). A table whose file is absent contributes NULLs (or no relation rows).
 * Five statements for the usual département (ids unique in every table): read batiment_groupe, ffo_bat and
 * dvf_open_statistique as typed rows, aggregate the parcel relation, then count and join; a repeated id costs one more.
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
  await run(conn, fillSql(readSql('parcelles.sql'), { rel: await source('rel_batiment_groupe_parcelle', none(
    'NULL::VARCHAR AS batiment_groupe_id, NULL::VARCHAR AS parcelle_id, NULL::BOOLEAN AS parcelle_principale')) }));

  const [raw] = await all<Record<string, number>>(conn, `SELECT count(*) AS rows_read,
      count(*) - count(batiment_groupe_id) AS missing_batiment_groupe_id,
      count(batiment_groupe_id) - count(DISTINCT batiment_groupe_id) AS duplicate_batiment_groupe_id,
      count(*) FILTER (unparsable_s_geom_groupe) AS unparsable_s_geom_groupe,
      count(*) FILTER (batiment_groupe_id IS NOT NULL AND geom_groupe IS NULL) AS missing_geometry
    FROM bdnb_groupe_raw`);
  const { rows_read: rowsRead, ...rawAnomalies } = raw;
  const groups = rowsRead - rawAnomalies.missing_batiment_groupe_id - rawAnomalies.duplicate_batiment_groupe_id;
  const build = (oneRowPerId: boolean) => run(conn, fillSql(readSql('batiments.sql'), {
    'centroid.sql': readSql('centroid.sql'),
    groups: `SELECT ${GROUP_COLUMNS} FROM bdnb_groupe_raw WHERE batiment_groupe_id IS NOT NULL${rawAnomalies.duplicate_batiment_groupe_id
      ? ' QUALIFY row_number() OVER (PARTITION BY batiment_groupe_id ORDER BY geom_groupe IS NULL, s_geom_groupe IS NULL) = 1' : ''}`,
    ffo: oneRowPerId
      ? 'SELECT unnest(arg_max(f, f.annee_construction IS NOT NULL)) FROM bdnb_ffo_raw f WHERE batiment_groupe_id IS NOT NULL GROUP BY batiment_groupe_id'
      : 'SELECT * FROM bdnb_ffo_raw WHERE batiment_groupe_id IS NOT NULL',
    dvf: oneRowPerId
      ? 'SELECT unnest(arg_max(d, coalesce(d.nb_mutation, -1))) FROM bdnb_dvf_raw d WHERE batiment_groupe_id IS NOT NULL GROUP BY batiment_groupe_id'
      : 'SELECT * FROM bdnb_dvf_raw WHERE batiment_groupe_id IS NOT NULL',
  }));
  await build(false);
  const [{ n }] = await all<{ n: number }>(conn, 'SELECT count(*) AS n FROM bdnb_batiments');
  if (n !== groups) await build(true); // some group has several ffo_bat or dvf rows
  const [counts] = await all<Record<string, number>>(conn, readSql('anomalies.sql'));
  // in the order the manifest has always listed them
  const anomalies = {
    missing_batiment_groupe_id: rawAnomalies.missing_batiment_groupe_id, duplicate_batiment_groupe_id: rawAnomalies.duplicate_batiment_groupe_id,
    unparsable_s_geom_groupe: rawAnomalies.unparsable_s_geom_groupe, missing_geometry: rawAnomalies.missing_geometry,
    unplaced_geometry: counts.unplaced_geometry, unparsable_annee_construction: counts.unparsable_annee_construction,
    missing_annee_construction: counts.missing_annee_construction, relation_unknown_group: counts.relation_unknown_group,
  };
  return { rowsRead, anomalies, missingColumns };
}

/** Drops the temp tables of stageBdnb. */
export async function dropBdnbTables(conn: DuckDBConnection): Promise<void> {
  await run(conn, TEMP_TABLES.map((t) => `DROP TABLE IF EXISTS ${t};`).join(' '));
}

/** The tables of an imported part: the archive's entries, extracted into workDir, or the unzipped folder's files. */
async function partTables(item: ImportItem, workDir: string): Promise<BdnbFiles> {
  if (item.file.path.endsWith('.zip')) return bdnbTableFiles(item.file.path, workDir);
  return bdnbTableFiles(path.dirname(item.file.path), workDir);
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
        // The import extracts the archive's tables itself, the next département's while DuckDB stages the current one.
        keepArchive: true,
        localAlternatives: [`${relPath.replace(/\.zip$/, '')}/${BDNB_TABLE_FILES.batiment_groupe}`],
      };
    });
  },

  // Ten départements or so per batch (01–09, 10–19, …, 2A/2B with 20–29, 97x): one lake commit each, and the
  // extraction of the next archive overlaps the staging of the current one within a batch. A failing archive makes
  // its batch import again one file at a time (pipeline/run.ts), so batches stay small.
  batchKey: (part) => part.key.slice(0, 1),

  async importFiles(ctx: ImportContext, items: ImportItem[]): Promise<ImportResult[]> {
    const results: ImportResult[] = [];
    // Extraction (inflate on libuv's threads, writes) runs beside DuckDB's two threads: item i+1's while i stages.
    const extract = (item: ImportItem) => {
      const work = ctx.lake.makeStagingDir();
      const files = partTables(item, work);
      files.catch(() => {}); // raised where awaited
      return { work, files };
    };
    let next = items.length ? extract(items[0]) : undefined;
    try {
      for (let i = 0; i < items.length; i++) {
        const item = items[i];
        const current = next!;
        next = i + 1 < items.length ? extract(items[i + 1]) : undefined;
        const dep = String(item.part.partitions[0].code_departement);
        const millesime = item.part.format;
        try {
          const staged = await stageBdnb(ctx.conn, await current.files);
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
          await current.files.catch(() => {});
          fs.rmSync(current.work, { recursive: true, force: true });
          await dropBdnbTables(ctx.conn);
        }
      }
    } finally {
      // a failed item leaves the next extraction running: let it end, then remove what it wrote
      if (next) {
        await next.files.catch(() => {});
        fs.rmSync(next.work, { recursive: true, force: true });
      }
    }
    return results;
  },
};
