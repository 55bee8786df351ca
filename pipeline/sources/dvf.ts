// DVF source: both published formats (Etalab geo-DVF per département and year, DGFiP raw national file per year)
// parsed by DuckDB into one normalised line schema, deduplicated, keyed, and written as (département, year) partitions.
import fs from 'node:fs';
import path from 'node:path';
import { all, lit, run } from '../../lib/duck';
import type { PartitionRecord } from '../lake';
import type { ImportContext, ImportResult, LocalFile, Part, Selection, Source } from './types';

export const GEO_DVF_BASE = 'https://files.data.gouv.fr/geo-dvf/latest/csv';
// The DGFiP publishes each release in a new dated folder: pass the release folder with --base-url.
export const DGFIP_BASE = 'https://static.data.gouv.fr/resources/demandes-de-valeurs-foncieres/20251018-234902';

/** Départements DVF covers: Alsace-Moselle (57, 67, 68) and Mayotte (976) are absent by construction. */
export const DVF_DEPARTEMENTS = [
  ...Array.from({ length: 95 }, (_, i) => String(i + 1).padStart(2, '0')).filter(
    (d) => !['20', '57', '67', '68'].includes(d),
  ),
  '2A', '2B', '971', '972', '973', '974',
];

// Cadastral culture codes → the labels geo-DVF carries (the raw file only has the codes).
const NATURE_CULTURE: Record<string, string> = {
  AB: 'terrains a bâtir', AG: "terrains d'agrément", B: 'bois', BF: 'futaies feuillues', BM: 'futaies mixtes',
  BO: 'oseraies', BP: 'peupleraies', BR: 'futaies résineuses', BS: 'taillis sous futaie', BT: 'taillis simples',
  CA: 'carrières', CH: 'chemin de fer', E: 'eaux', J: 'jardins', L: 'landes', LB: 'landes boisées', P: 'prés',
  PA: 'pâtures', PC: 'pacages', PE: "prés d'embouche", PH: 'herbages', PP: 'prés plantes', S: 'sols', T: 'terres',
  TP: 'terres plantées', VE: 'vergers', VI: 'vignes',
};

/** Lake columns, in file order. `code_departement` and `annee` live in the partition path. */
export const LAKE_COLUMNS = [
  'id', 'mutation_key', 'id_mutation', 'date_mutation', 'numero_disposition', 'nature_mutation', 'valeur_fonciere',
  'adresse_numero', 'adresse_suffixe', 'adresse_nom_voie', 'adresse_code_voie', 'code_postal', 'code_commune',
  'nom_commune', 'ancien_code_commune', 'id_parcelle', 'prefixe_section', 'section', 'no_plan', 'numero_volume',
  'lot1_numero', 'lot1_surface_carrez', 'lot2_numero', 'lot2_surface_carrez', 'lot3_numero', 'lot3_surface_carrez',
  'lot4_numero', 'lot4_surface_carrez', 'lot5_numero', 'lot5_surface_carrez', 'nombre_lots', 'code_type_local',
  'type_local', 'surface_reelle_bati', 'nombre_pieces_principales', 'code_nature_culture', 'nature_culture',
  'code_nature_culture_speciale', 'nature_culture_speciale', 'surface_terrain', 'longitude', 'latitude',
  'line_occurrence', 'source_format', 'imported_at',
] as const;

const sqlDir = path.join(path.dirname(new URL(import.meta.url).pathname), 'dvf');
const readSql = (name: string) => fs.readFileSync(path.join(sqlDir, name), 'utf8');
const fill = (sql: string, vars: Record<string, string>) =>
  sql.replace(/\{\{(\w+)\}\}/g, (_, k: string) => {
    if (!(k in vars)) throw new Error(`missing SQL template variable ${k}`);
    return vars[k];
  });

function stagingSql(format: string, file: string): string {
  if (format === 'geo-dvf') return fill(readSql('stage_geo.sql'), { path: lit(file) });
  if (format === 'dgfip') {
    const values = Object.entries(NATURE_CULTURE).map(([c, l]) => `(${lit(c)}, ${lit(l)})`).join(', ');
    return fill(readSql('stage_raw.sql'), { path: lit(file), nature_culture_values: values });
  }
  throw new Error(`unknown DVF format ${format} (expected geo-dvf or dgfip)`);
}

export const dvfSource: Source = {
  name: 'dvf',

  parts(sel: Selection): Part[] {
    const format = sel.format ?? 'geo-dvf';
    if (format === 'geo-dvf') {
      const base = (sel.baseUrl ?? GEO_DVF_BASE).replace(/\/$/, '');
      return sel.annees.flatMap((annee) =>
        sel.departements.map((dep) => {
          const relPath = `${annee}/departements/${dep}.csv.gz`;
          return { source: 'dvf', key: `${dep}/${annee}`, format, relPath, url: `${base}/${relPath}`, annee, departements: [dep] };
        }),
      );
    }
    if (format === 'dgfip') {
      const base = (sel.baseUrl ?? DGFIP_BASE).replace(/\/$/, '');
      return sel.annees.map((annee) => {
        const relPath = `valeursfoncieres-${annee}.txt.zip`;
        return { source: 'dvf', key: `dgfip/${annee}`, format, relPath, url: `${base}/${relPath}`, annee, departements: sel.departements };
      });
    }
    throw new Error(`unknown DVF format ${format} (expected geo-dvf or dgfip)`);
  },

  async importFile(ctx: ImportContext, part: Part, file: LocalFile): Promise<ImportResult> {
    const { conn, lake } = ctx;
    const owned = `code_departement IN (${part.departements.map(lit).join(', ')}) AND year(date_mutation) = ${part.annee}`;
    await run(conn, `CREATE OR REPLACE TEMP TABLE staged AS ${stagingSql(part.format, file.path)}`);

    const [outside] = await all<{ invalid_date: number; outside_partition: number }>(conn, `
      SELECT count(*) FILTER (date_mutation IS NULL) AS invalid_date,
             count(*) FILTER (date_mutation IS NOT NULL AND NOT (${owned})) AS outside_partition
      FROM staged`);
    const stats = await all<Record<string, number> & { code_departement: string; annee: number }>(conn, `
      SELECT code_departement, year(date_mutation) AS annee, count(*) AS rows_read,
        count(*) - count(DISTINCT line_hash) AS duplicate_lines,
        count(*) FILTER (valeur_fonciere IS NULL AND coalesce(trim(raw_valeur_fonciere), '') = '') AS missing_valeur_fonciere,
        count(*) FILTER (valeur_fonciere IS NULL AND trim(raw_valeur_fonciere) <> '') AS unparsable_valeur_fonciere,
        count(*) FILTER (latitude IS NULL OR longitude IS NULL) AS missing_coordinates,
        count(*) FILTER (code_commune IS NULL OR NOT regexp_full_match(code_commune, '[0-9][0-9AB][0-9]{3}')) AS invalid_code_commune,
        count(*) FILTER (code_postal IS NULL) AS missing_code_postal,
        count(*) FILTER (code_postal IS NOT NULL AND NOT regexp_full_match(code_postal, '[0-9]{5}')) AS invalid_code_postal,
        count(*) FILTER (surface_reelle_bati IS NULL AND trim(raw_surface_reelle_bati) <> '') AS unparsable_surface_reelle_bati,
        count(*) FILTER (surface_terrain IS NULL AND trim(raw_surface_terrain) <> '') AS unparsable_surface_terrain,
        count(*) FILTER (lot1_surface_carrez IS NULL AND lot2_surface_carrez IS NULL AND lot3_surface_carrez IS NULL
          AND lot4_surface_carrez IS NULL AND lot5_surface_carrez IS NULL AND raw_carrez <> '') AS unparsable_surface_carrez
      FROM staged WHERE ${owned} GROUP BY ALL ORDER BY ALL`);

    // Identical lines are kept, numbered: open DVF has no property identifier, so a repeated line can be a second
    // identical property of the same sale (two 56 m² flats, two garages). The marts decide; the lake loses nothing.
    await run(conn, `CREATE OR REPLACE TEMP TABLE lines AS
      SELECT * EXCLUDE (raw_valeur_fonciere, raw_surface_reelle_bati, raw_surface_terrain, raw_carrez),
        row_number() OVER (PARTITION BY line_hash) AS line_occurrence
      FROM staged WHERE ${owned}`);
    await run(conn, 'DROP TABLE staged');

    const previousFiles = lake.existingPartitionFiles('dvf', (d, y) => y === part.annee && part.departements.includes(d));
    const previous = previousFiles.length
      ? `SELECT DISTINCT mutation_key, id, imported_at, code_departement, annee FROM read_parquet([${previousFiles.map(lit).join(', ')}],
           hive_partitioning = true, hive_types = {'code_departement': VARCHAR, 'annee': INTEGER})`
      : `SELECT NULL::VARCHAR AS mutation_key, NULL::BIGINT AS id, NULL::TIMESTAMP AS imported_at,
           NULL::VARCHAR AS code_departement, NULL::INTEGER AS annee WHERE false`;
    await run(conn, fill(readSql('assign_ids.sql'), { previous, now: lit(ctx.now.toISOString()) }));

    const staging = lake.makeStagingDir();
    try {
      const select = LAKE_COLUMNS.map((c) => {
        if (c === 'id' || c === 'mutation_key' || c === 'imported_at') return `m.${c}`;
        if (c === 'id_mutation') return `coalesce(l.id_mutation, 'DGFIP-' || m.id) AS id_mutation`;
        if (c === 'prefixe_section') return `substr(l.id_parcelle, 6, 3) AS prefixe_section`;
        if (c === 'section') return `ltrim(substr(l.id_parcelle, 9, 2), '0') AS section`;
        if (c === 'no_plan') return `substr(l.id_parcelle, 11, 4) AS no_plan`;
        return `l.${c}`;
      });
      await run(conn, `COPY (
          SELECT ${select.join(', ')}, l.code_departement, m.annee
          FROM lines l JOIN mutations m USING (code_departement, mutation_group)
          ORDER BY l.code_departement, m.annee, l.date_mutation, m.id, l.numero_disposition, l.id_parcelle, l.type_local, l.line_occurrence
        ) TO ${lit(staging)} (FORMAT parquet, PARTITION_BY (code_departement, annee), COMPRESSION zstd, ROW_GROUP_SIZE 122880)`);
      const counts = await all<{ code_departement: string; annee: number; mutations: number; new_mutations: number }>(conn, `
        SELECT code_departement, annee, count(*) AS mutations, count(*) FILTER (is_new) AS new_mutations
        FROM mutations GROUP BY ALL`);

      const partitions: PartitionRecord[] = [];
      for (const s of stats) {
        const dir = path.join(staging, `code_departement=${s.code_departement}`, `annee=${s.annee}`);
        const files = fs.readdirSync(dir).filter((f) => f.endsWith('.parquet'));
        if (files.length !== 1) throw new Error(`expected one Parquet file in ${dir}, found ${files.length}`);
        const rel = lake.publishPartition(path.join(dir, files[0]), 'dvf', s.code_departement, s.annee);
        const c = counts.find((x) => x.code_departement === s.code_departement && x.annee === s.annee);
        const { code_departement, annee, rows_read: inPartition, ...anomalies } = s;
        // A geo-DVF file maps to one partition: its unplaceable lines are that partition's anomalies.
        const single = part.departements.length === 1;
        if (single) Object.assign(anomalies, outside);
        const rows_read = inPartition + (single ? outside.invalid_date + outside.outside_partition : 0);
        partitions.push({
          code_departement, annee, file: rel, source_url: file.url, source_format: part.format, vintage: file.vintage,
          sha256: file.sha256, rows_read, rows_kept: inPartition,
          mutations: c?.mutations ?? 0, new_mutations: c?.new_mutations ?? 0, anomalies, imported_at: ctx.now.toISOString(),
        });
      }
      return { partitions, fileAnomalies: { ...outside } };
    } finally {
      fs.rmSync(staging, { recursive: true, force: true });
      await run(conn, 'DROP TABLE IF EXISTS lines; DROP TABLE IF EXISTS mutations;');
    }
  },
};
