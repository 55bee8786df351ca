// DVF source: both published formats (Etalab geo-DVF per département and year, DGFiP raw national file per year)
// parsed by DuckDB into one normalised line schema, deduplicated, keyed, and written as (département, year) partitions.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { all, lit, run } from '../../lib/duck';
import { normaliseGeoDvfFile } from '../../lib/geo-dvf-files';
import { DVF_DEPARTEMENTS, DVF_SCHEMA, dvfDeclaration } from '../../lib/sources/dvf';
import type { ImportContext, ImportItem, ImportResult, Part, Selection, Source } from './types';
import { fillSql, readSql as readSqlFile } from '../../lib/sql-file';

export const GEO_DVF_BASE = 'https://files.data.gouv.fr/geo-dvf/latest/csv';
// The DGFiP publishes each release in a new dated folder: pass the release folder with --base-url.
export const DGFIP_BASE = 'https://static.data.gouv.fr/resources/demandes-de-valeurs-foncieres/20251018-234902';

export { DVF_DEPARTEMENTS };

// Cadastral culture codes → the labels geo-DVF carries (the raw file only has the codes).
const NATURE_CULTURE: Record<string, string> = {
  AB: 'terrains a bâtir', AG: "terrains d'agrément", B: 'bois', BF: 'futaies feuillues', BM: 'futaies mixtes',
  BO: 'oseraies', BP: 'peupleraies', BR: 'futaies résineuses', BS: 'taillis sous futaie', BT: 'taillis simples',
  CA: 'carrières', CH: 'chemin de fer', E: 'eaux', J: 'jardins', L: 'landes', LB: 'landes boisées', P: 'prés',
  PA: 'pâtures', PC: 'pacages', PE: "prés d'embouche", PH: 'herbages', PP: 'prés plantes', S: 'sols', T: 'terres',
  TP: 'terres plantées', VE: 'vergers', VI: 'vignes',
};

/** Lake columns, in file order (declared in lib/sources/dvf.ts). `code_departement` and `annee` live in the partition path. */
export const LAKE_COLUMNS = Object.keys(DVF_SCHEMA) as Array<keyof typeof DVF_SCHEMA>;

const readSql = (name: string) => readSqlFile(import.meta.url, path.join('dvf', name));

function stagingSql(format: string, files: string[]): string {
  const list = `[${files.map(lit).join(', ')}]`;
  if (format === 'geo-dvf') return fillSql(readSql('stage_geo.sql'), { files: list });
  if (format === 'dgfip') {
    const values = Object.entries(NATURE_CULTURE).map(([c, l]) => `(${lit(c)}, ${lit(l)})`).join(', ');
    return fillSql(readSql('stage_raw.sql'), { files: list, nature_culture_values: values });
  }
  throw new Error(`unknown DVF format ${format} (expected geo-dvf or dgfip)`);
}

/** Départements whose partitions a DVF file owns. */
const departementsOf = (part: Part) => part.partitions.map((p) => String(p.code_departement));

export const dvfSource: Source = {
  ...dvfDeclaration,

  parts(sel: Selection): Part[] {
    const format = sel.format ?? 'geo-dvf';
    if (format === 'geo-dvf') {
      const base = (sel.baseUrl ?? GEO_DVF_BASE).replace(/\/$/, '');
      return sel.annees.flatMap((annee) =>
        sel.departements.map((dep) => {
          const relPath = `${annee}/departements/${dep}.csv.gz`;
          return { source: 'dvf', key: `${dep}/${annee}`, format, relPath, url: `${base}/${relPath}`, annee, partitions: [{ code_departement: dep, annee }] };
        }),
      );
    }
    if (format === 'dgfip') {
      const base = (sel.baseUrl ?? DGFIP_BASE).replace(/\/$/, '');
      return sel.annees.map((annee) => {
        const relPath = `valeursfoncieres-${annee}.txt.zip`;
        return { source: 'dvf', key: `dgfip/${annee}`, format, relPath, url: `${base}/${relPath}`, annee, partitions: sel.departements.map((d) => ({ code_departement: d, annee })) };
      });
    }
    throw new Error(`unknown DVF format ${format} (expected geo-dvf or dgfip)`);
  },

  batchKey: (part) => `${part.format}/${part.annee}`,

  async importFiles(ctx: ImportContext, items: ImportItem[]): Promise<ImportResult[]> {
    const { conn, lake } = ctx;
    const { format } = items[0].part;
    const annee = items[0].part.annee!;
    if (items.some(({ part }) => part.format !== format || part.annee !== annee)) throw new Error('a DVF batch holds one format and one year');
    const owners = new Map<string, ImportItem>(); // département → the file that owns its partition of the year
    for (const item of items) {
      for (const d of departementsOf(item.part)) {
        if (owners.has(d)) throw new Error(`partition ${d}/${annee} is owned by both ${owners.get(d)!.part.key} and ${item.part.key}`);
        owners.set(d, item);
      }
    }
    const steps = ['read and normalise', 'count anomalies', 'assign ids', 'write Parquet', 'publish'];
    const step = (name: string) => ctx.progress?.(name, steps.indexOf(name), steps.length);

    // All the files in one read_csv: DuckDB parses them on every core. Each line keeps the index of its file, and
    // `owned` says whether that file owns the line's partition (its département and year).
    step('read and normalise');
    const fileOwns = items.map(({ part }, i) => `(${i}::UBIGINT, [${departementsOf(part).map(lit).join(', ')}])`).join(', ');
    // A geo-DVF file re-saved by a spreadsheet or a dataframe is rewritten in the published form first (a file whose
    // header is not geo-DVF's is refused, naming the file); published files are read as they are.
    const tmp = format === 'geo-dvf' ? fs.mkdtempSync(path.join(os.tmpdir(), 'foncier-dvf-resave-')) : undefined;
    try {
      const paths = tmp ? await Promise.all(items.map((i) => normaliseGeoDvfFile(i.file.path, tmp))) : items.map((i) => i.file.path);
      await run(conn, `CREATE OR REPLACE TEMP TABLE staged AS
        SELECT s.*, coalesce(list_contains(f.departements, s.code_departement) AND year(s.date_mutation) = ${annee}, false) AS owned
        FROM (${stagingSql(format, paths)}) s JOIN (VALUES ${fileOwns}) f(file_index, departements) USING (file_index)`);
    } finally {
      if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
    }
    await run(conn, 'CREATE OR REPLACE TEMP VIEW lines AS SELECT rowid AS rid, * FROM staged WHERE owned');

    step('count anomalies');
    const outside = await all<{ file_index: number; invalid_date: number; outside_partition: number }>(conn, `
      SELECT file_index, count(*) FILTER (date_mutation IS NULL) AS invalid_date,
             count(*) FILTER (date_mutation IS NOT NULL AND NOT owned) AS outside_partition
      FROM staged GROUP BY ALL`);
    // Identical lines are kept, numbered: open DVF has no property identifier, so a repeated line can be a second
    // identical property of the same sale (two 56 m² flats, two garages). The marts decide; the lake loses nothing.
    // Only lines whose hash repeats are numbered (a few %), the others are line 1; identical lines share their
    // département and sale, which are in the window too so that a 64-bit hash collision cannot number two sales.
    await run(conn, `CREATE OR REPLACE TEMP TABLE occurrences AS
      SELECT rid, code_departement, row_number() OVER (PARTITION BY line_hash, code_departement, mutation_group) AS line_occurrence
      FROM lines WHERE line_hash IN (SELECT line_hash FROM lines GROUP BY line_hash HAVING count(*) > 1)`);
    const stats = await all<Record<string, number> & { code_departement: string; annee: number }>(conn, `
      SELECT code_departement, year(date_mutation) AS annee, count(*) AS rows_read,
        coalesce(any_value(d.duplicate_lines), 0) AS duplicate_lines,
        count(*) FILTER (valeur_fonciere IS NULL AND NOT unparsable_valeur_fonciere) AS missing_valeur_fonciere,
        count(*) FILTER (unparsable_valeur_fonciere) AS unparsable_valeur_fonciere,
        count(*) FILTER (latitude IS NULL OR longitude IS NULL) AS missing_coordinates,
        count(*) FILTER (code_commune IS NULL OR NOT regexp_full_match(code_commune, '[0-9][0-9AB][0-9]{3}')) AS invalid_code_commune,
        count(*) FILTER (code_postal IS NULL) AS missing_code_postal,
        count(*) FILTER (code_postal IS NOT NULL AND NOT regexp_full_match(code_postal, '[0-9]{5}')) AS invalid_code_postal,
        count(*) FILTER (unparsable_surface_reelle_bati) AS unparsable_surface_reelle_bati,
        count(*) FILTER (unparsable_surface_terrain) AS unparsable_surface_terrain,
        count(*) FILTER (unparsable_surface_carrez) AS unparsable_surface_carrez
      FROM staged LEFT JOIN (
        SELECT code_departement, count(*) FILTER (line_occurrence > 1) AS duplicate_lines FROM occurrences GROUP BY ALL
      ) d USING (code_departement)
      WHERE owned GROUP BY ALL ORDER BY ALL`);

    step('assign ids');
    const previousFiles = lake.existingPartitionFiles('dvf', (p) => p.annee === annee && owners.has(String(p.code_departement)));
    const previous = previousFiles.length
      ? `SELECT DISTINCT mutation_key, id, imported_at, code_departement, annee FROM read_parquet([${previousFiles.map(lit).join(', ')}],
           hive_partitioning = true, hive_types = {'code_departement': VARCHAR, 'annee': INTEGER})`
      : `SELECT NULL::VARCHAR AS mutation_key, NULL::BIGINT AS id, NULL::TIMESTAMP AS imported_at,
           NULL::VARCHAR AS code_departement, NULL::INTEGER AS annee WHERE false`;
    await run(conn, fillSql(readSql('assign_ids.sql'), { previous, now: lit(ctx.now.toISOString()) }));

    step('write Parquet');
    const staging = lake.makeStagingDir();
    try {
      const select = LAKE_COLUMNS.map((c) => {
        if (c === 'id' || c === 'mutation_key' || c === 'imported_at') return `m.${c}`;
        if (c === 'id_mutation') return `coalesce(l.id_mutation, 'DGFIP-' || m.id) AS id_mutation`;
        if (c === 'prefixe_section') return `substr(l.id_parcelle, 6, 3) AS prefixe_section`;
        if (c === 'section') return `ltrim(substr(l.id_parcelle, 9, 2), '0') AS section`;
        if (c === 'no_plan') return `substr(l.id_parcelle, 11, 4) AS no_plan`;
        if (c === 'line_occurrence') return `coalesce(o.line_occurrence, 1) AS line_occurrence`;
        if (c === 'source_format') return `${lit(format)} AS source_format`;
        return `l.${c}`;
      });
      // One file per partition: DuckDB would split a partition in two past its open-files limit (default 100).
      // No ORDER BY: DuckDB does not keep it through PARTITION_BY (duckdb/duckdb#14349), so it cost a sort for an
      // order the files did not have; rows of a partition come in no particular order (docs/decisions.md).
      // Row groups of 16,384 rows are written while rows stream in, on both cores; with 122,880 (more than most
      // partitions) the encoding waited for the end of the statement and ran on one core (measured: 8.2 s → 6.6 s).
      // Bloom filters cost ~10 % of the write for little: a partition file is one département and one year, and
      // its min/max statistics already prune.
      await run(conn, `SET partitioned_write_max_open_files = ${Math.max(100, owners.size)}`);
      await run(conn, `COPY (
          SELECT ${select.join(', ')}, l.code_departement, m.annee
          FROM lines l JOIN mutations m USING (code_departement, mutation_group) LEFT JOIN occurrences o USING (rid)
        ) TO ${lit(staging)} (FORMAT parquet, PARTITION_BY (code_departement, annee), COMPRESSION zstd, COMPRESSION_LEVEL 1, WRITE_BLOOM_FILTER false, ROW_GROUP_SIZE 16384)`);
      const counts = await all<{ code_departement: string; annee: number; mutations: number; new_mutations: number }>(conn, `
        SELECT code_departement, annee, count(*) AS mutations, count(*) FILTER (is_new) AS new_mutations
        FROM mutations GROUP BY ALL`);

      step('publish');
      const results = new Map<ImportItem, ImportResult>(items.map((item, i) => {
        const o = outside.find((x) => x.file_index === i);
        return [item, { partitions: [], fileAnomalies: { invalid_date: o?.invalid_date ?? 0, outside_partition: o?.outside_partition ?? 0 } }];
      }));
      for (const s of stats) {
        const item = owners.get(s.code_departement)!;
        const { part, file } = item;
        const result = results.get(item)!;
        const dir = path.join(staging, `code_departement=${s.code_departement}`, `annee=${s.annee}`);
        const files = fs.readdirSync(dir).filter((f) => f.endsWith('.parquet'));
        if (files.length !== 1) throw new Error(`expected one Parquet file in ${dir}, found ${files.length}`);
        const rel = lake.publishPartition(path.join(dir, files[0]), 'dvf', { code_departement: s.code_departement, annee: s.annee });
        const c = counts.find((x) => x.code_departement === s.code_departement && x.annee === s.annee);
        const { code_departement, annee: year, rows_read: inPartition, ...anomalies } = s;
        // A geo-DVF file maps to one partition: its unplaceable lines are that partition's anomalies.
        const single = part.partitions.length === 1;
        if (single) Object.assign(anomalies, result.fileAnomalies);
        const rows_read = inPartition + (single ? result.fileAnomalies.invalid_date + result.fileAnomalies.outside_partition : 0);
        result.partitions.push({
          partition: { code_departement, annee: year }, file: rel, source_url: file.url, source_format: part.format, vintage: file.vintage,
          sha256: file.sha256, rows_read, rows_kept: inPartition,
          count: c?.mutations ?? 0, new_count: c?.new_mutations ?? 0, anomalies, imported_at: ctx.now.toISOString(),
        });
      }
      return items.map((item) => results.get(item)!);
    } finally {
      fs.rmSync(staging, { recursive: true, force: true });
      await run(conn, 'DROP VIEW IF EXISTS lines; DROP TABLE IF EXISTS staged; DROP TABLE IF EXISTS occurrences; DROP TABLE IF EXISTS mutations;');
    }
  },
};
