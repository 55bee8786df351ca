// Step "dpe" of the France bench dataset (lab/france-data/build.ts): energy diagnostics in ADEME's dpe03existant
// layout (API field names, the CSV the DPE plug-in reads under --from-dir: <dir>/dpe03existant/<dep>.csv.gz),
// generated in DuckDB SQL from the bench lake's DVF lines, one COPY per département, then imported with
// runSource('dpe') offline.
// About 0.65 diagnostic per sale (≈ 13 M for 20 M sales), placed so that DVF × DPE matching behaves as on real data:
// - 75 % at a sold house or flat: the lake's point with 2–8 m of jitter (BAN address point vs DVF parcel point), the
//   same kind of dwelling, a surface within ±10 % of the sold one (one in ten further off, up to −60 %/+80 %, which
//   the ±35 % rule rejects), dated 1–8 months before the sale; sales before the DPE v2 (July 2021) get a later one;
// - 25 % around the same towns, 100 m to 1.5 km from a sale, of any date since July 2021 (3 % whole buildings);
// - classes A–G in the mix of ADEME's observatory for existing dwellings (D and E most frequent, 8 % G), with energy
//   use per m² inside the class's band, and 1 in 2,000 outside A–G ("N"): the import counts it as an anomaly;
// - 3 % of the diagnostics at a sale replace an earlier one of the same dwelling (numero_dpe_remplace), which is
//   generated too and must be left out of statistics and matching.
// Lambert-93 X/Y are computed from the WGS84 point by the forward projection of lib/lambert93.ts (the inverse of the
// import's), so the import's conversion lands back on the point; overseas, where Lambert-93 does not apply, only
// data-fair's `_geopoint` is given.
import fs from 'node:fs';
import path from 'node:path';
import { all, lit, openMemory, run } from '../../lib/duck';
import { Lake } from '../../lib/lake';
import { wgs84ToLambert93Sql } from '../../lib/lambert93';
import { runSource } from '../../pipeline/run';
import { DPE_BENCH_COLUMNS } from '../bench/dpe-csv';
import type { LakeStep } from './build';

/** Diagnostics per wanted sale: ≈ 13 M v2 diagnostics of existing dwellings for ≈ 20 M sales over six years. */
export const DPE_PER_SALE = 0.65;
const AT_SALE = 0.75;
const REPLACED = 0.03;
const DATASET = 'dpe03existant';
/** The file's columns: the API fields of the bench's DPE knowledge (dpe-csv.ts), plus data-fair's computed point. */
const HEADER = [...Object.keys(DPE_BENCH_COLUMNS), '_geopoint'];
const V2_START = "DATE '2021-07-01'";

// Classes: cumulative shares and the band of primary energy use (kWh/m²/yr) each class spans.
const CLASSES = [
  { c: 'A', upTo: 0.02, lo: 40, hi: 70 }, { c: 'B', upTo: 0.06, lo: 70, hi: 110 }, { c: 'C', upTo: 0.23, lo: 110, hi: 180 },
  { c: 'D', upTo: 0.55, lo: 180, hi: 250 }, { c: 'E', upTo: 0.79, lo: 250, hi: 330 }, { c: 'F', upTo: 0.92, lo: 330, hi: 420 },
  { c: 'G', upTo: 1, lo: 420, hi: 600 },
];
const classIndexSql = (u: string) => `(${CLASSES.map((k, i) => (i < CLASSES.length - 1 ? `(${u} >= ${k.upTo})::INT` : '')).filter(Boolean).join(' + ')})`;
const pickSql = (list: string[], u: string) => `[${list.map(lit).join(', ')}][1 + floor(${u} * ${list.length})::INT]`;

/** One département's file: SELECT over its DVF lake lines (files = the partition files, all years). */
function departementSql(dep: string, depIndex: number, files: string[], p: number, seed: number): string {
  // u(k): a uniform number in [0, 1) fixed by the line (national key: the serial is only unique in its département)
  // and a salt, so a rerun writes the same file.
  const u = (k: number) => `((hash(serial + ${depIndex * 100_000_000}, ${k}, ${seed}) >> 11)::DOUBLE / 9007199254740992)`;
  const overseas = dep.startsWith('97');
  const l93 = wgs84ToLambert93Sql('lat', 'lon');
  const [x, y] = [`round(${l93.x}, 2)`, `round(${l93.y}, 2)`];
  const cols: Record<string, string> = {
    numero_dpe: `strftime(d, '%y') || ${lit(dep)} || 'E' || lpad(serial::VARCHAR, 8, '0') || suffix`,
    date_reception_dpe: `d + floor(4 * ${u(20)})::INT`,
    date_etablissement_dpe: 'd',
    date_fin_validite_dpe: `(d + INTERVAL 10 YEAR)::DATE`,
    modele_dpe: `'DPE 3CL 2021 méthode logement'`,
    numero_dpe_remplace: 'remplace',
    version_dpe: `CASE WHEN d < DATE '2022-07-01' THEN '2.1' WHEN d < DATE '2023-07-01' THEN '2.2' WHEN d < DATE '2024-07-01' THEN '2.3' ELSE '2.4' END`,
    etiquette_dpe: `CASE WHEN ${u(21)} < 0.0005 THEN 'N' ELSE ${lit(CLASSES.map((k) => k.c).join(''))}[ci + 1] END`,
    etiquette_ges: `${lit(CLASSES.map((k) => k.c).join(''))}[greatest(1, least(7, ci + floor(3 * ${u(22)})::INT))]`,
    type_batiment: 'kind',
    annee_construction: 'annee_c',
    periode_construction: `CASE WHEN annee_c < 1948 THEN 'avant 1948' WHEN annee_c < 1975 THEN '1948-1974' WHEN annee_c < 1978 THEN '1975-1977'
      WHEN annee_c < 1983 THEN '1978-1982' WHEN annee_c < 1989 THEN '1983-1988' WHEN annee_c < 2001 THEN '1989-2000'
      WHEN annee_c < 2006 THEN '2001-2005' WHEN annee_c < 2013 THEN '2006-2012' ELSE '2013-2021' END`,
    hauteur_sous_plafond: `round(2.4 + 0.5 * ${u(23)}, 2)`,
    nombre_appartement: `CASE kind WHEN 'maison' THEN 1 ELSE 4 + floor(60 * ${u(24)})::INT END`,
    nombre_niveau_logement: `CASE kind WHEN 'maison' THEN 1 + floor(2 * ${u(25)})::INT ELSE 1 END`,
    surface_habitable_immeuble: `CASE kind WHEN 'immeuble' THEN round(surf * (4 + floor(60 * ${u(24)})), 1) END`,
    surface_habitable_logement: `CASE WHEN kind <> 'immeuble' THEN round(surf, 1) END`,
    typologie_logement: `CASE WHEN kind <> 'immeuble' THEN 'T' || greatest(1, least(6, round(surf / 22)::INT)) END`,
    code_insee_ban: 'code_commune',
    code_postal_ban: 'code_postal',
    code_departement_ban: lit(dep),
    nom_commune_ban: 'nom_commune',
    adresse_ban: `concat_ws(' ', adresse_numero, adresse_nom_voie, code_postal, nom_commune)`,
    identifiant_ban: `code_commune || '_' || coalesce(lower(adresse_code_voie), 'xxxx') || '_' || lpad(coalesce(adresse_numero, '0'), 5, '0')`,
    score_ban: `round(0.55 + 0.44 * ${u(26)}, 2)`,
    statut_geocodage: `'adresse géocodée ban à l''adresse'`,
    coordonnee_cartographique_x_ban: overseas ? 'NULL' : x,
    coordonnee_cartographique_y_ban: overseas ? 'NULL' : y,
    conso_5_usages_ef: 'round(ep / 1.9, 1)',
    conso_5_usages_par_m2_ep: 'round(ep, 1)',
    emission_ges_5_usages_par_m2: `round(ep * (0.02 + 0.2 * ${u(27)}), 1)`,
    cout_total_5_usages: 'round(ep * surf * 0.11, 2)',
    type_energie_n1: 'energie',
    type_energie_principale_chauffage: 'energie',
    qualite_isolation_enveloppe: `['très bonne', 'très bonne', 'bonne', 'moyenne', 'moyenne', 'insuffisante', 'insuffisante'][ci + 1]`,
    ubat_w_m2_k: `round(0.25 + 0.22 * ci + 0.2 * ${u(28)}, 3)`,
    _geopoint: `printf('%.6f,%.6f', lat, lon)`,
  };
  const bands = (f: (k: (typeof CLASSES)[number]) => number) => `[${CLASSES.map(f).join(', ')}]`;
  return `
    WITH lines AS (
      SELECT (annee - 2019) * 10000000 + file_row_number AS serial, date_mutation, type_local, surface_reelle_bati AS surface,
        latitude, longitude, code_commune, code_postal, nom_commune, adresse_numero, adresse_nom_voie, adresse_code_voie
      FROM read_parquet([${files.map(lit).join(', ')}], hive_partitioning = true, file_row_number = true)
      WHERE type_local IN ('Maison', 'Appartement') AND latitude IS NOT NULL AND longitude IS NOT NULL AND surface_reelle_bati > 0
    ),
    drawn AS (
      SELECT *, ${u(1)} < ${AT_SALE} AS at_sale FROM lines WHERE ${u(0)} < ${p}
    ),
    placed AS (
      SELECT *,
        CASE WHEN at_sale THEN 2 + 6 * ${u(2)} ELSE 100 + 1400 * ${u(2)} END AS r_m, 2 * pi() * ${u(3)} AS angle,
        CASE WHEN NOT at_sale AND ${u(4)} < 0.03 THEN 'immeuble' WHEN type_local = 'Maison' THEN 'maison' ELSE 'appartement' END AS kind,
        CASE WHEN at_sale AND ${u(5)} < 0.9 THEN surface * (0.9 + 0.2 * ${u(6)})
             WHEN at_sale THEN surface * (0.4 + 1.4 * ${u(6)})
             WHEN type_local = 'Maison' THEN 60 + 120 * ${u(6)} ELSE 18 + 100 * ${u(6)} END AS surf,
        date_mutation - (7 + floor(240 * ${u(7)}))::INT AS before_sale,
        ${classIndexSql(u(8))} AS ci,
        1850 + floor(172 * ${u(9)})::INT AS annee_c,
        ${pickSql(['Électricité', 'Électricité', 'Gaz naturel', 'Gaz naturel', 'Fioul domestique', 'Bois – Bûches', 'Réseau de Chauffage urbain'], u(10))} AS energie,
        at_sale AND ${u(11)} < ${REPLACED} AS replaces
      FROM drawn
    ),
    dated AS (
      SELECT *,
        latitude + r_m * sin(angle) / 111320 AS lat,
        longitude + r_m * cos(angle) / (111320 * cos(radians(latitude))) AS lon,
        CASE WHEN at_sale AND before_sale >= ${V2_START} THEN before_sale
             ELSE ${V2_START} + floor(1640 * ${u(12)})::INT END AS d0
      FROM placed
    ),
    rows AS (
      -- the diagnostic, and for 3 % of those at a sale the earlier one it replaces (a worse class, weeks to months before)
      SELECT *, d0 AS d, ci AS ci0, ${pickSql([...'ABCDEFGHJK'], u(13))} AS suffix,
        CASE WHEN replaces THEN strftime(greatest(${V2_START}, d0 - (20 + floor(300 * ${u(14)}))::INT), '%y') || ${lit(dep)} || 'E' || lpad(serial::VARCHAR, 8, '0') || 'X' END AS remplace
      FROM dated
      UNION ALL
      SELECT *, greatest(${V2_START}, d0 - (20 + floor(300 * ${u(14)}))::INT) AS d, least(6, ci + 1) AS ci0, 'X' AS suffix, NULL AS remplace
      FROM dated WHERE replaces
    ),
    classed AS (
      SELECT * REPLACE (ci0 AS ci),
        ${bands((k) => k.lo)}[ci0 + 1] + (${bands((k) => k.hi)}[ci0 + 1] - ${bands((k) => k.lo)}[ci0 + 1]) * ${u(15)} AS ep
      FROM rows
    )
    SELECT ${HEADER.map((h) => `${cols[h] ?? 'NULL'} AS "${h}"`).join(', ')} FROM classed`;
}

const fmt = (x: number) => x.toLocaleString('en-US', { maximumFractionDigits: 0 });

export const dpeStep: LakeStep = {
  name: 'dpe',
  source: 'dpe',
  inputs: ({ sales, seed }) => JSON.stringify({ sales, seed, DPE_PER_SALE, HEADER, code: fs.readFileSync(new URL(import.meta.url), 'utf8') }),

  async build({ dataDir, dir, sales, seed, log }) {
    const lake = new Lake(dataDir);
    const manifest = lake.readManifest();
    const deps = [...new Set(Object.values(manifest.sources.dvf?.partitions ?? {}).map((p) => String(p.partition.code_departement)))].sort();
    const filesOf = (dep: string) => lake.partitionFiles('dvf', (p) => String(p.code_departement) === dep, manifest);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(path.join(dir, DATASET), { recursive: true });
    const { instance, conn } = await openMemory({ threads: 2, memoryLimit: '2GB' });
    let written = 0;
    let bytes = 0;
    const started = performance.now();
    try {
      await run(conn, `SET temp_directory = ${lit(path.join(dir, 'duckdb-tmp'))}`);
      // The share of dwelling lines that get a diagnostic, so that the total is DPE_PER_SALE × the wanted sales.
      const all_ = lake.partitionFiles('dvf', undefined, manifest);
      const [{ n }] = await all<{ n: number }>(conn, `SELECT count(*)::BIGINT AS n FROM read_parquet([${all_.map(lit).join(', ')}])
        WHERE type_local IN ('Maison', 'Appartement') AND latitude IS NOT NULL AND longitude IS NOT NULL AND surface_reelle_bati > 0`);
      const p = Math.min(1, (DPE_PER_SALE * sales) / (Number(n) * (1 + AT_SALE * REPLACED)));
      log(`  dpe: generating ${DATASET} files for ${deps.length} départements (${(p * 100).toFixed(1)} % of ${fmt(Number(n))} house and flat lines)…`);
      for (const [i, dep] of deps.entries()) {
        const files = filesOf(dep);
        if (!files.length) continue;
        const file = path.join(dir, DATASET, `${dep}.csv.gz`);
        const [r] = await all<{ Count: number }>(conn, `COPY (${departementSql(dep, i, files, p, seed)}) TO ${lit(file)} (FORMAT csv, HEADER, COMPRESSION gzip)`);
        written += Number(r.Count);
        bytes += fs.statSync(file).size;
        if ((i + 1) % 20 === 0 || i === deps.length - 1) {
          log(`    ${i + 1}/${deps.length} départements, ${fmt(written)} diagnostics, ${fmt(bytes / 2 ** 20)} MiB, ${fmt((performance.now() - started) / 1000)} s`);
        }
      }
    } finally {
      conn.closeSync();
      instance.closeSync();
      fs.rmSync(path.join(dir, 'duckdb-tmp'), { recursive: true, force: true });
    }
    const generated = (performance.now() - started) / 1000;
    log(`  dpe: importing with runSource…`);
    const t1 = performance.now();
    let done = 0;
    const outcomes = await runSource({ source: 'dpe', format: DATASET, fromDir: dir, annees: [], departements: deps, dataRoot: dataDir, force: true }, {
      onPartDone: (o) => {
        if (++done % 20 === 0 || o.status === 'failed') log(`    ${done}/${deps.length} départements imported, ${fmt((performance.now() - t1) / 1000)} s${o.status === 'failed' ? ` — ${o.part.key} FAILED: ${o.error}` : ''}`);
      },
    });
    const failed = outcomes.filter((o) => o.status === 'failed');
    if (failed.length) throw new Error(`DPE import failed: ${failed.slice(0, 5).map((o) => `${o.part.key}: ${o.error}`).join('; ')}`);
    const kept = outcomes.reduce((a, o) => a + o.rowsKept, 0);
    const imported = (performance.now() - t1) / 1000;
    return {
      figures: { diagnostics: written, kept, generateSeconds: Math.round(generated), importSeconds: Math.round(imported) },
      summary: `${fmt(written)} diagnostics generated (${fmt(bytes / 2 ** 20)} MiB of gzip, ${fmt(generated)} s), ${fmt(kept)} imported (${fmt(imported)} s)`,
    };
  },
};
