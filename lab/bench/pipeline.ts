// `npm run bench -- pipeline [--rows 3500000 --keep DIR --repeat N --per-file --json FILE --seed S]`: pipeline
// throughput at France scale.
//
// 1. Generates one year (2024) of synthetic DVF in the real Etalab geo-DVF format and tree
//    (<dir>/source/2024/departements/<dep>.csv.gz, the exact 40-column header), `--rows` lines spread over the
//    97 départements DVF covers in proportion to a rough population factor. Generation is done by DuckDB SQL
//    (one COPY per département), timed separately, and is not part of the measured figures.
// 2. Measures, each phase in its own child process so that peak RSS (getrusage maxRSS) is the phase's own:
//    - pipeline: `runSource` over every département (fetch + sha256, one DuckDB pass: parse → normalise → ids →
//      Parquet partitions, manifest), wall time, rows/s = generated lines / seconds, and where the time goes (every
//      SQL statement the import sends to DuckDB is timed by wrapping DuckDBConnection.prototype.run / runAndReadAll
//      in that process);
//    - parse only: DuckDB read_csv of all files (a bare count, then the real staging SQL into a temp table);
//    - marts: `buildMarts` on the resulting lake (ventes mart + serving DuckDB file);
//    - with --per-file, a comparison: the same `dvfSource.importFiles` called once per file, as the pipeline did
//      before it imported a year in one pass (see phasePerFile).
// --repeat N runs the pipeline phase N times (fresh lake each time) and reports the median run.
// Without --keep the temporary folder is removed; with --keep DIR the data stays in DIR and a later run with the
// same --rows reuses the generated files (the lake is always rebuilt from scratch).
//
// `--dpe-csv SIZE` (e.g. 5GB) runs the other benchmark instead: the streaming template on one DPE-shaped CSV of that
// size (lab/bench/dpe-csv.ts), generated in `--dir` (default: a folder under /work or the OS temp folder, removed after).
// `--bdnb [--groups N] [--keep DIR]` runs the BDNB import benchmark instead (lab/bench/bdnb-pipeline.ts).
// `--dpe [--rows 13000000]` runs the DPE import benchmark: runSource over France-scale dpe03existant files in the
// data-fair CSV format (lab/bench/dpe-import.ts).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DuckDBConnection } from '@duckdb/node-api';
import { samplesDir } from '../../lib/config';
import { all, lit, openMemory, run } from '../../lib/duck';
import { buildMarts } from '../../marts/runner';
import { runSource, type PartOutcome } from '../../pipeline/run';
import { Lake } from '../../lib/lake';
import { DVF_DEPARTEMENTS, dvfSource } from '../../pipeline/sources/dvf';
import { BAD_SURFACE_EVERY, DPE_MEMORY_LIMIT, generateDpeCsv, importDpeCsv, parseSize, type DpeImportResult } from './dpe-csv';
import { dpeImportBench, generateDpeFiles, phaseDpePipeline } from './dpe-import';

const ANNEE = 2024;
const GENERATOR_VERSION = 1;
const TARGET_ROWS_PER_SECOND = 150_000;
const SELF = fileURLToPath(import.meta.url);
const STAGE_GEO_SQL = path.join(path.dirname(SELF), '..', '..', 'pipeline', 'sources', 'dvf', 'stage_geo.sql');

/** The exact header of the Etalab geo-DVF files (see /work/shared/data/dvf/geo-dvf_2021_33_extrait_abzac.csv). */
export const GEO_DVF_HEADER = [
  'id_mutation', 'date_mutation', 'numero_disposition', 'nature_mutation', 'valeur_fonciere', 'adresse_numero',
  'adresse_suffixe', 'adresse_nom_voie', 'adresse_code_voie', 'code_postal', 'code_commune', 'nom_commune',
  'code_departement', 'ancien_code_commune', 'ancien_nom_commune', 'id_parcelle', 'ancien_id_parcelle', 'numero_volume',
  'lot1_numero', 'lot1_surface_carrez', 'lot2_numero', 'lot2_surface_carrez', 'lot3_numero', 'lot3_surface_carrez',
  'lot4_numero', 'lot4_surface_carrez', 'lot5_numero', 'lot5_surface_carrez', 'nombre_lots', 'code_type_local',
  'type_local', 'surface_reelle_bati', 'nombre_pieces_principales', 'code_nature_culture', 'nature_culture',
  'code_nature_culture_speciale', 'nature_culture_speciale', 'surface_terrain', 'longitude', 'latitude',
] as const;

// ---------------------------------------------------------------------------------------------------------------
// Départements: rough population (thousands, INSEE orders of magnitude) → share of the lines, approximate centroid
// (coordinates are drawn around it), dwelling price level (€/m²) and share of flats among the sales.
// ---------------------------------------------------------------------------------------------------------------

export interface DepProfile { dep: string; pop: number; lat: number; lon: number; prixM2: number; appart: number; communes: number }

const DEP_DATA: Array<[string, number, number, number]> = [
  ['01', 660, 46.1, 5.35], ['02', 530, 49.55, 3.6], ['03', 335, 46.4, 3.2], ['04', 165, 44.1, 6.25],
  ['05', 141, 44.65, 6.3], ['06', 1100, 43.9, 7.15], ['07', 330, 44.75, 4.4], ['08', 270, 49.6, 4.65],
  ['09', 155, 42.95, 1.5], ['10', 310, 48.3, 4.15], ['11', 375, 43.1, 2.4], ['12', 280, 44.3, 2.65],
  ['13', 2050, 43.5, 5.1], ['14', 700, 49.1, -0.35], ['15', 143, 45.05, 2.65], ['16', 350, 45.7, 0.2],
  ['17', 660, 45.8, -0.7], ['18', 300, 47.05, 2.5], ['19', 240, 45.35, 1.85], ['21', 535, 47.4, 4.75],
  ['22', 600, 48.45, -2.85], ['23', 115, 46.1, 2.0], ['24', 410, 45.1, 0.75], ['25', 545, 47.15, 6.35],
  ['26', 520, 44.7, 5.15], ['27', 600, 49.1, 1.0], ['28', 430, 48.4, 1.4], ['29', 920, 48.25, -4.05],
  ['30', 750, 44.0, 4.2], ['31', 1420, 43.35, 1.2], ['32', 190, 43.7, 0.45], ['33', 1650, 44.85, -0.6],
  ['34', 1200, 43.6, 3.4], ['35', 1100, 48.15, -1.65], ['36', 220, 46.8, 1.6], ['37', 610, 47.25, 0.7],
  ['38', 1280, 45.25, 5.6], ['39', 260, 46.75, 5.7], ['40', 420, 43.95, -0.8], ['41', 330, 47.6, 1.4],
  ['42', 765, 45.7, 4.2], ['43', 227, 45.1, 3.8], ['44', 1450, 47.35, -1.7], ['45', 680, 47.9, 2.3],
  ['46', 174, 44.6, 1.6], ['47', 330, 44.35, 0.45], ['48', 76, 44.5, 3.5], ['49', 820, 47.4, -0.55],
  ['50', 495, 49.1, -1.3], ['51', 565, 48.95, 4.25], ['52', 170, 48.1, 5.2], ['53', 307, 48.15, -0.65],
  ['54', 730, 48.8, 6.15], ['55', 183, 49.0, 5.4], ['56', 760, 47.85, -2.8], ['58', 200, 47.1, 3.5],
  ['59', 2600, 50.45, 3.2], ['60', 830, 49.4, 2.4], ['61', 280, 48.6, 0.1], ['62', 1460, 50.5, 2.3],
  ['63', 665, 45.7, 3.15], ['64', 690, 43.25, -0.75], ['65', 230, 43.05, 0.15], ['66', 480, 42.6, 2.5],
  ['69', 1880, 45.85, 4.6], ['70', 235, 47.65, 6.1], ['71', 550, 46.65, 4.55], ['72', 565, 48.0, 0.2],
  ['73', 440, 45.5, 6.4], ['74', 835, 46.05, 6.4], ['75', 2130, 48.857, 2.347], ['76', 1250, 49.65, 1.0],
  ['77', 1430, 48.6, 2.95], ['78', 1450, 48.8, 1.85], ['79', 375, 46.55, -0.3], ['80', 570, 49.95, 2.3],
  ['81', 390, 43.8, 2.15], ['82', 260, 44.05, 1.3], ['83', 1080, 43.45, 6.2], ['84', 560, 44.0, 5.15],
  ['85', 690, 46.65, -1.3], ['86', 440, 46.55, 0.45], ['87', 370, 45.9, 1.25], ['88', 360, 48.2, 6.4],
  ['89', 335, 47.85, 3.55], ['90', 140, 47.65, 6.9], ['91', 1300, 48.5, 2.25], ['92', 1630, 48.85, 2.25],
  ['93', 1650, 48.9, 2.48], ['94', 1400, 48.78, 2.47], ['95', 1250, 49.08, 2.15], ['2A', 160, 41.85, 8.95],
  ['2B', 180, 42.4, 9.2], ['971', 380, 16.2, -61.55], ['972', 355, 14.65, -61.0], ['973', 285, 4.0, -53.0],
  ['974', 870, -21.13, 55.5],
];

const PRIX_M2: Record<string, number> = {
  '75': 10000, '92': 7000, '94': 5200, '06': 5000, '74': 5000, '78': 4500, '93': 4000, '69': 4200, '33': 3800,
  '13': 3600, '83': 3900, '2A': 3800, '2B': 3200, '34': 3200, '31': 3000, '35': 3000, '44': 3200, '64': 3300,
  '17': 3000, '73': 3700, '91': 3200, '95': 3000, '77': 2900, '974': 2800, '971': 2500, '972': 2500,
};
const APPART: Record<string, number> = {
  '75': 0.95, '92': 0.8, '93': 0.7, '94': 0.72, '06': 0.75, '69': 0.6, '13': 0.58, '31': 0.55, '33': 0.48,
  '34': 0.55, '35': 0.45, '44': 0.45, '59': 0.35, '38': 0.45, '74': 0.55, '73': 0.6, '83': 0.5, '2A': 0.5,
  '91': 0.45, '95': 0.45, '78': 0.5, '77': 0.35, '974': 0.35, '971': 0.3, '972': 0.35,
};

export function depProfiles(): DepProfile[] {
  const byDep = new Map(DEP_DATA.map(([dep, pop, lat, lon]) => [dep, { pop, lat, lon }]));
  return DVF_DEPARTEMENTS.map((dep) => {
    const d = byDep.get(dep);
    if (!d) throw new Error(`no profile for département ${dep}`);
    const communes = dep === '75' ? 20 : dep.length === 3 ? 30 + Math.round(d.pop / 40) : 150 + Math.round(d.pop / 4);
    return { dep, ...d, prixM2: PRIX_M2[dep] ?? 2100, appart: APPART[dep] ?? 0.22, communes: Math.min(communes, 899) };
  });
}

/** Lines per département: proportional to population^0.9 (rural départements sell more land per inhabitant). */
export function allocateRows(total: number, deps: DepProfile[]): number[] {
  const w = deps.map((d) => Math.pow(d.pop, 0.9));
  const sum = w.reduce((a, b) => a + b, 0);
  const rows = w.map((x) => Math.max(1, Math.floor((total * x) / sum)));
  let rest = total - rows.reduce((a, b) => a + b, 0);
  for (let i = 0; rest > 0; i = (i + 1) % rows.length, rest--) rows[i]++; // rounding remainder
  return rows;
}

// ---------------------------------------------------------------------------------------------------------------
// Generation: one DuckDB COPY per département, everything derived from hash(seed, …) so runs are reproducible.
// ---------------------------------------------------------------------------------------------------------------

const sqlList = (xs: string[]) => `[${xs.map(lit).join(', ')}]`;
const STREETS = sqlList([
  'RUE DE LA REPUBLIQUE', 'RUE VICTOR HUGO', 'AVENUE JEAN JAURES', 'RUE DU MOULIN', 'CHEMIN DES VIGNES',
  'RUE PASTEUR', 'PLACE DE L EGLISE', 'RUE DES ECOLES', 'ALLEE DES CHENES', 'RUE DU CHATEAU', 'BOULEVARD GAMBETTA',
  'RUE JULES FERRY', 'IMPASSE DES LILAS', 'ROUTE DE BORDEAUX', 'RUE DE LA GARE', 'AVENUE DU GENERAL DE GAULLE',
  'RUE DU PETIT MOULIN', 'CHEMIN DU STADE', 'RUE DES ROSIERS', 'QUAI DES CHARTRONS', 'RUE SAINT MARTIN',
  'RESIDENCE LES PINS', 'RUE DE LA PAIX', 'COURS LAFAYETTE',
]);
const LIEUX_DITS = sqlList(['LES CHAPELLES', 'GRAND BOIS', 'AU BLEZOT', 'CHIENDENT', 'LE BOURG', 'LES LANDES OUEST', 'PAS DES LANDES', 'LA FONTAINE', 'LES GRANDS CHAMPS', 'TRIPOTEAU NORD']);
const NOM_A = sqlList(['Saint-', 'Sainte-', '', '', 'Le ', 'La ', 'Les ', 'Villeneuve-', 'Châtillon-', 'Montigny-']);
const NOM_B = sqlList(['Martin', 'Étienne', 'Aubin', 'Abzac', 'Chênes', 'Mont', 'Beaulieu', 'Rivière', 'Forêt', 'Genêts', 'Prés', 'Pierre', 'Hilaire', 'Laurent', 'Sauveur', 'Brûlon']);
const NOM_C = sqlList(['', '', '', '-sur-Mer', '-les-Bains', '-en-Forêt', '-sur-Loire', '-le-Château', '-d\'Aunis', '-du-Bois']);
const CULTURES = `[{'c': 'T', 'l': 'terres'}, {'c': 'P', 'l': 'prés'}, {'c': 'BT', 'l': 'taillis simples'}, {'c': 'VI', 'l': 'vignes'},
  {'c': 'J', 'l': 'jardins'}, {'c': 'L', 'l': 'landes'}, {'c': 'B', 'l': 'bois'}, {'c': 'AB', 'l': 'terrains a bâtir'},
  {'c': 'PA', 'l': 'pâtures'}, {'c': 'AG', 'l': 'terrains d''agrément'}, {'c': 'BS', 'l': 'taillis sous futaie'}, {'c': 'VE', 'l': 'vergers'}]`;
const SPECIALES = `[{'c': 'GRAVE', 'l': 'Gravière'}, {'c': 'PATUR', 'l': 'Pâture plantée'}, {'c': 'FRICH', 'l': 'Friche'},
  {'c': 'ACACI', 'l': 'Acacias'}, {'c': 'ALLEE', 'l': 'Allée (no groupe)'}]`;

// Lines per mutation average 1.5–2.5 depending on the mix: provision for 1.3, cut at exactly `rows` (checked).
export const mutationsProvisioned = (rows: number) => Math.ceil(rows / 1.3) + 100;

/** SQL that yields exactly `rows` geo-DVF lines for one département, columns in the official order. */
export function departementSql(p: DepProfile, rows: number, idOffset: number, seed: number, annee = ANNEE): string {
  const dep = lit(p.dep);
  const mutations = mutationsProvisioned(rows);
  const isParis = p.dep === '75';
  const isDom = p.dep.length === 3;
  const cp = isParis
    ? `'750' || lpad(commune_num::VARCHAR, 2, '0')`
    : isDom
      ? `${dep} || lpad((((commune_num * 7) % 9) * 10)::VARCHAR, 2, '0')`
      : p.dep === '2A' || p.dep === '2B'
        ? `'20' || lpad((${p.dep === '2A' ? 0 : 200} + ((commune_num * 7) % 19) * 10)::VARCHAR, 3, '0')`
        : `${dep} || lpad((CASE WHEN commune_num = 1 THEN 0 ELSE (((commune_num * 37) % 99) + 1) * 10 END)::VARCHAR, 3, '0')`;
  const communeCode = isParis
    ? `'751' || lpad(commune_num::VARCHAR, 2, '0')`
    : `${dep} || lpad(commune_num::VARCHAR, ${5 - p.dep.length}, '0')`;
  const nomCommune = isParis
    ? `'Paris ' || commune_num || CASE WHEN commune_num = 1 THEN 'er' ELSE 'e' END || ' Arrondissement'`
    : `${NOM_A}[(1 + hash(${seed}, ${dep}, commune_num, 'a') % 10)::BIGINT] || ${NOM_B}[(1 + hash(${seed}, ${dep}, commune_num, 'b') % 16)::BIGINT]
       || ${NOM_C}[(1 + hash(${seed}, ${dep}, commune_num, 'c') % 10)::BIGINT]`;
  // u(k): uniform [0, 1) per mutation; v(k): per line (le = the line whose content this line carries); w(k): per parcel.
  const u = (k: number) => `((hash(${seed}, ${dep}, mi, ${k}) % 1000000) / 1000000.0)`;
  const v = (k: number) => `((hash(${seed}, ${dep}, mi, le, ${k}) % 1000000) / 1000000.0)`;
  const w = (k: number) => `((hash(${seed}, ${dep}, code_commune, section_num, plan, ${k}) % 1000000) / 1000000.0)`;
  const a = p.appart;
  return `
WITH mut0 AS (
  SELECT mi,
    CASE WHEN ${u(1)} < ${a * 0.9} THEN 'A' WHEN ${u(1)} < ${a * 0.9 + 0.03} THEN 'C' WHEN ${u(1)} < ${a * 0.9 + 0.08} THEN 'D'
         WHEN ${u(1)} < ${a * 0.9 + 0.08 + 0.005 + 0.12 * (1 - a)} THEN 'T' ELSE 'M' END AS profil,
    ${u(2)} AS r_nl
  FROM range(${mutations}) t(mi)
), mut1 AS (
  SELECT *, CASE profil
      WHEN 'A' THEN CASE WHEN r_nl < 0.55 THEN 1 WHEN r_nl < 0.85 THEN 2 WHEN r_nl < 0.95 THEN 3 ELSE 4 END
      WHEN 'M' THEN CASE WHEN r_nl < 0.50 THEN 1 WHEN r_nl < 0.75 THEN 2 WHEN r_nl < 0.88 THEN 3 WHEN r_nl < 0.95 THEN 4 WHEN r_nl < 0.98 THEN 5 ELSE 6 END
      WHEN 'T' THEN CASE WHEN r_nl < 0.35 THEN 1 WHEN r_nl < 0.55 THEN 2 WHEN r_nl < 0.70 THEN 3 WHEN r_nl < 0.82 THEN 4 WHEN r_nl < 0.92 THEN 5 ELSE 6 END
      WHEN 'D' THEN CASE WHEN r_nl < 0.80 THEN 1 ELSE 2 END
      ELSE CASE WHEN r_nl < 0.60 THEN 1 WHEN r_nl < 0.85 THEN 2 ELSE 3 END END AS nl0
  FROM mut0
), mut2 AS (
  SELECT *, coalesce(sum(nl0) OVER (ORDER BY mi ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS first_line
  FROM mut1
), mut AS (
  SELECT mi, profil, least(nl0, ${rows} - first_line)::INTEGER AS nl,
    DATE '${annee}-01-01' + floor(${u(3)} * ${(Date.UTC(annee + 1, 0, 1) - Date.UTC(annee, 0, 1)) / 86_400_000})::INTEGER AS date_mutation,
    CASE WHEN ${u(4)} < 0.88 THEN 'Vente'
         WHEN ${u(4)} < 0.955 THEN CASE WHEN profil IN ('A', 'M') THEN 'Vente en l''état futur d''achèvement' ELSE 'Vente' END
         WHEN ${u(4)} < 0.98 THEN CASE WHEN profil = 'T' THEN 'Vente terrain à bâtir' ELSE 'Vente' END
         WHEN ${u(4)} < 0.99 THEN 'Echange' WHEN ${u(4)} < 0.998 THEN 'Adjudication' ELSE 'Expropriation' END AS nature_mutation,
    1 + floor(${p.communes} * pow(${u(5)}, 2.2))::INTEGER AS commune_num,
    CASE profil WHEN 'A' THEN 14 + floor(pow(${u(6)}, 1.6) * 110) WHEN 'M' THEN 55 + floor(${u(6)} * 150)
         WHEN 'C' THEN 30 + floor(pow(${u(6)}, 2) * 600) ELSE 0 END::INTEGER AS surface,
    ${u(7)} AS r_prix,
    ${u(8)} < 0.03 AND nl0 >= 2 AS has_duplicate,   -- real files repeat some lines identically
    ${u(9)} < 0.01 AS two_dispositions,
    ${u(10)} AS r_adresse,
    floor(${u(11)} * 900)::INTEGER AS section_num,
    floor(${u(12)} * 2500)::INTEGER AS plan0
  FROM mut2 WHERE first_line < ${rows}
), mutp AS (
  SELECT *, ${communeCode} AS code_commune,
    CASE WHEN r_prix > 0.995 THEN NULL  -- a few sales without a price, as in the real files
         ELSE CASE profil
           WHEN 'A' THEN surface * ${p.prixM2} * (0.6 + 0.8 * r_prix)
           WHEN 'M' THEN surface * ${p.prixM2} * 0.8 * (0.6 + 0.8 * r_prix)
           WHEN 'C' THEN surface * ${p.prixM2} * 0.7 * (0.4 + 1.2 * r_prix)
           WHEN 'D' THEN 3000 + 40000 * r_prix * ${p.prixM2 / 2500}
           ELSE 500 + 120000 * pow(r_prix, 2) END END AS prix
  FROM mut
), lines AS (
  SELECT *, CASE WHEN has_duplicate AND li = nl - 1 AND li > 0 THEN li - 1 ELSE li END AS le
  FROM (SELECT *, unnest(range(nl)) AS li FROM mutp)
), typed AS (
  SELECT *,
    CASE profil
      WHEN 'A' THEN CASE WHEN le = 0 OR ${v(1)} >= 0.7 THEN 2 ELSE 3 END
      WHEN 'M' THEN CASE WHEN le = 0 OR ${v(1)} < 0.45 THEN 1 WHEN ${v(1)} < 0.7 THEN 3 END
      WHEN 'T' THEN NULL
      WHEN 'D' THEN 3
      ELSE CASE WHEN le = 0 OR ${v(1)} >= 0.6 THEN 4 ELSE 3 END END AS code_type_local,
    ${v(2)} AS r2, ${v(3)} AS r3, ${v(4)} AS r4
  FROM lines
), detailed AS (
  SELECT *,
    -- flats, their cellars and the premises of a sale share one condominium parcel; land lines spread over parcels
    CASE WHEN profil IN ('A', 'D', 'C') OR code_type_local IS NOT NULL THEN plan0 ELSE plan0 + le + (r4 < 0.2)::INTEGER END AS plan,
    CASE WHEN code_type_local = 2 THEN CASE WHEN le = 0 THEN surface ELSE 14 + floor(r2 * 90)::INTEGER END
         WHEN code_type_local = 1 THEN surface
         WHEN code_type_local = 4 THEN CASE WHEN le = 0 THEN surface ELSE 20 + floor(r2 * 200)::INTEGER END END AS srb,
    CASE WHEN code_type_local = 1 AND le = 0 THEN {'c': 'S', 'l': 'sols'}
         WHEN code_type_local = 1 THEN ${CULTURES}[CASE WHEN r3 < 0.5 THEN 5 WHEN r3 < 0.8 THEN 10 ELSE 2 END]
         WHEN code_type_local IS NULL THEN ${CULTURES}[1 + floor(r3 * 12)::INTEGER] END AS culture,
    CASE WHEN code_type_local IS NULL AND r4 < 0.08 THEN ${SPECIALES}[1 + floor(r2 * 5)::INTEGER] END AS speciale
  FROM typed
), located AS (
  -- coordinates are the parcel's (geo-DVF geocodes parcels): same parcel, same point; ~3 % without coordinates
  SELECT *, ${w(1)} AS r_geo, ${w(2)} AS r_x, ${w(3)} AS r_y FROM detailed
)
SELECT
  '${annee}-' || (${idOffset} + mi + 1) AS id_mutation,
  strftime(date_mutation, '%Y-%m-%d') AS date_mutation,
  CASE WHEN two_dispositions AND le > 0 THEN '000002' ELSE '000001' END AS numero_disposition,
  nature_mutation,
  CASE WHEN prix IS NULL THEN NULL WHEN r_prix < 0.02 THEN round(prix, 2)::VARCHAR
       ELSE (round(prix / 100) * 100)::BIGINT::VARCHAR END AS valeur_fonciere,
  CASE WHEN profil <> 'T' THEN (1 + floor(pow(r_adresse, 2) * 180)::INTEGER)::VARCHAR END AS adresse_numero,
  CASE WHEN profil <> 'T' AND r_adresse * 1000 % 1 < 0.04 THEN ['B', 'T', 'A'][1 + floor(r_adresse * 10000)::INTEGER % 3] END AS adresse_suffixe,
  CASE WHEN profil = 'T' THEN ${LIEUX_DITS}[1 + floor(r_adresse * 10)::INTEGER]
       ELSE ${STREETS}[1 + floor(r_adresse * 24)::INTEGER] END AS adresse_nom_voie,
  CASE WHEN profil = 'T' THEN 'B' || lpad((floor(r_adresse * 10) * 13)::INTEGER::VARCHAR, 3, '0')
       ELSE lpad((floor(r_adresse * 24) * 20 + 10)::INTEGER::VARCHAR, 4, '0') END AS adresse_code_voie,
  ${cp} AS code_postal,
  code_commune,
  ${nomCommune} AS nom_commune,
  ${dep} AS code_departement,
  NULL AS ancien_code_commune,
  NULL AS ancien_nom_commune,
  code_commune || '000' || CASE WHEN section_num < 26 THEN '0' || chr(65 + section_num)
       ELSE chr(65 + (section_num // 26) % 26) || chr(65 + section_num % 26) END || lpad(plan::VARCHAR, 4, '0') AS id_parcelle,
  NULL AS ancien_id_parcelle,
  NULL AS numero_volume,
  CASE WHEN code_type_local IN (2, 3) AND profil IN ('A', 'D') THEN (1 + floor(r2 * 400)::INTEGER)::VARCHAR END AS lot1_numero,
  CASE WHEN code_type_local = 2 AND r3 < 0.85 THEN round(srb * (0.9 + 0.1 * r4), 2)::VARCHAR END AS lot1_surface_carrez,
  CASE WHEN code_type_local = 2 AND r4 < 0.3 THEN (401 + floor(r3 * 200)::INTEGER)::VARCHAR END AS lot2_numero,
  NULL AS lot2_surface_carrez,
  CASE WHEN code_type_local = 2 AND r4 < 0.03 THEN (601 + floor(r2 * 100)::INTEGER)::VARCHAR END AS lot3_numero,
  NULL AS lot3_surface_carrez,
  NULL AS lot4_numero, NULL AS lot4_surface_carrez, NULL AS lot5_numero, NULL AS lot5_surface_carrez,
  (CASE WHEN code_type_local IN (2, 3) AND profil IN ('A', 'D') THEN 1 ELSE 0 END
    + CASE WHEN code_type_local = 2 AND r4 < 0.3 THEN 1 ELSE 0 END + CASE WHEN code_type_local = 2 AND r4 < 0.03 THEN 1 ELSE 0 END)::VARCHAR AS nombre_lots,
  code_type_local::VARCHAR AS code_type_local,
  CASE code_type_local WHEN 1 THEN 'Maison' WHEN 2 THEN 'Appartement' WHEN 3 THEN 'Dépendance'
       WHEN 4 THEN 'Local industriel. commercial ou assimilé' END AS type_local,
  srb::VARCHAR AS surface_reelle_bati,
  CASE code_type_local WHEN 1 THEN greatest(1, round(srb / 25))::INTEGER::VARCHAR WHEN 2 THEN greatest(1, round(srb / 22))::INTEGER::VARCHAR
       WHEN 3 THEN '0' WHEN 4 THEN '0' END AS nombre_pieces_principales,
  culture.c AS code_nature_culture,
  culture.l AS nature_culture,
  speciale.c AS code_nature_culture_speciale,
  speciale.l AS nature_culture_speciale,
  CASE WHEN culture IS NULL THEN NULL WHEN code_type_local = 1 AND le = 0 THEN 150 + floor(pow(r2, 1.5) * 2500)::INTEGER
       ELSE 50 + floor(pow(r2, 2) * 25000)::INTEGER END::VARCHAR AS surface_terrain,
  CASE WHEN r_geo > 0.03 THEN round(${p.lon} + ((hash(${seed}, ${dep}, commune_num, 'x') % 1000)::INTEGER - 500) / ${isDom ? 2500 : 1400}.0 + (r_x - 0.5) / 60, 6)::VARCHAR END AS longitude,
  CASE WHEN r_geo > 0.03 THEN round(${p.lat} + ((hash(${seed}, ${dep}, commune_num, 'y') % 1000)::INTEGER - 500) / ${isDom ? 3500 : 2000}.0 + (r_y - 0.5) / 90, 6)::VARCHAR END AS latitude
FROM located
ORDER BY mi, li`;
}

interface GenerateResult { seconds: number; files: number; lines: number; bytes: number }

async function generate(sourceDir: string, rows: number, seed: number): Promise<GenerateResult> {
  const deps = depProfiles();
  const perDep = allocateRows(rows, deps);
  const outDir = path.join(sourceDir, String(ANNEE), 'departements');
  fs.rmSync(sourceDir, { recursive: true, force: true });
  fs.mkdirSync(outDir, { recursive: true });
  const started = performance.now();
  const { instance, conn } = await openMemory({ threads: os.cpus().length, memoryLimit: '8GB' });
  let idOffset = 0;
  let bytes = 0;
  try {
    for (let i = 0; i < deps.length; i++) {
      const file = path.join(outDir, `${deps[i].dep}.csv.gz`);
      const sql = departementSql(deps[i], perDep[i], idOffset, seed);
      const [written] = await all<{ Count: number }>(conn, `COPY (${sql}) TO ${lit(file)} (FORMAT csv, HEADER, DELIMITER ',', QUOTE '"', COMPRESSION gzip)`);
      if (written.Count !== perDep[i]) throw new Error(`${deps[i].dep}: generated ${written.Count} lines instead of ${perDep[i]}`);
      // ids follow a national sequence, as in the real files (with gaps where a département's provision was cut)
      idOffset += mutationsProvisioned(perDep[i]);
      bytes += fs.statSync(file).size;
    }
    const header = (await all<{ h: string }>(conn, `SELECT column_name AS h FROM (DESCRIBE SELECT * FROM read_csv(${lit(path.join(outDir, '75.csv.gz'))}, header = true, all_varchar = true))`)).map((r) => r.h);
    if (header.join(',') !== GEO_DVF_HEADER.join(',')) throw new Error(`generated header differs from geo-DVF: ${header.join(',')}`);
    const sample = path.join(samplesDir, 'dvf', 'geo-dvf_2021_33_extrait_abzac.csv');
    if (fs.existsSync(sample) && fs.readFileSync(sample, 'utf8').split('\n')[0].trim() !== GEO_DVF_HEADER.join(',')) {
      throw new Error(`the header of ${sample} differs from GEO_DVF_HEADER`);
    }
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
  const seconds = (performance.now() - started) / 1000;
  return { seconds, files: deps.length, lines: rows, bytes };
}

// ---------------------------------------------------------------------------------------------------------------
// Phases (each in a child process)
// ---------------------------------------------------------------------------------------------------------------

interface Phase { seconds: number; cores: number; maxRssMiB: number }
interface PipelinePhase extends Phase {
  loadBefore?: number;
  files: number; failed: string[]; rowsRead: number; rowsKept: number; mutations: number;
  statements: Record<string, { count: number; seconds: number }>;
}
interface Timed { seconds: number; cores: number }
interface ParsePhase extends Phase { count: Timed; stage: Timed; stagePerFile: Timed; rows: number }
interface PerFilePhase extends Phase { partitions: number; rowsKept: number; statements: Record<string, { count: number; seconds: number }> }
interface MartsPhase extends Phase { models: Array<{ name: string; rows: number | null; seconds: number }>; servingMiB: number }

const maxRssMiB = () => process.resourceUsage().maxRSS / 1024;

/** Wall time of `f` and the CPU it used, in cores (user + system CPU seconds / wall seconds). */
async function timed<T>(f: () => Promise<T>): Promise<Timed & { value: T }> {
  const r0 = process.resourceUsage();
  const t0 = performance.now();
  const value = await f();
  const seconds = (performance.now() - t0) / 1000;
  const r1 = process.resourceUsage();
  const cpu = (r1.userCPUTime + r1.systemCPUTime - r0.userCPUTime - r0.systemCPUTime) / 1e6;
  return { value, seconds, cores: cpu / seconds };
}

/** Which step of the import a SQL statement is, from its text (see pipeline/sources/dvf.ts). */
function classify(sql: string): string {
  if (/TEMP TABLE staged AS/i.test(sql)) return '1 stage: read_csv of all files + normalise (stage_geo.sql)';
  if (/invalid_date/.test(sql)) return '2 outside-partition count';
  if (/TEMP TABLE occurrences AS/i.test(sql)) return '3 identical lines: numbering of repeated hashes';
  if (/duplicate_lines/.test(sql)) return '4 anomaly stats (regexps)';
  if (/TEMP TABLE mutations AS/i.test(sql)) return '5 ids: assign_ids.sql (group, md5, windows)';
  if (/^\s*COPY/i.test(sql)) return '6 COPY join → Parquet zstd PARTITION_BY';
  if (/new_mutations/.test(sql)) return '7 mutation counts';
  if (/^\s*DROP/i.test(sql)) return '8 DROP temp tables';
  return '9 other (settings, views, reference geography)';
}

/** Times every statement sent through this process's DuckDB connections, grouped by `classifyStatement`. */
export function instrumentDuckDB(classifyStatement: (sql: string) => string = classify): Record<string, { count: number; seconds: number; cpuSeconds: number }> {
  const stats: Record<string, { count: number; seconds: number; cpuSeconds: number }> = {};
  const cpu = () => {
    const r = process.resourceUsage();
    return (r.userCPUTime + r.systemCPUTime) / 1e6;
  };
  const proto = DuckDBConnection.prototype as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  let depth = 0; // runAndReadAll calls run internally: time the outermost call only (the pipeline is sequential)
  for (const method of ['run', 'runAndReadAll']) {
    const original = proto[method];
    proto[method] = async function (this: unknown, ...args: unknown[]) {
      const t0 = performance.now();
      const c0 = depth === 0 ? cpu() : 0;
      depth++;
      try {
        return await original.apply(this, args);
      } finally {
        if (--depth === 0) {
          const s = (stats[classifyStatement(String(args[0]))] ??= { count: 0, seconds: 0, cpuSeconds: 0 });
          s.count++;
          s.seconds += (performance.now() - t0) / 1000;
          s.cpuSeconds += cpu() - c0; // the process's CPU (DuckDB's threads included) while the statement ran
        }
      }
    };
  }
  return stats;
}

async function phasePipeline(dir: string): Promise<PipelinePhase> {
  const dataRoot = path.join(dir, 'data');
  fs.rmSync(dataRoot, { recursive: true, force: true });
  const deps = DVF_DEPARTEMENTS;
  const statements = instrumentDuckDB();
  const { value: outcomes, seconds, cores } = await timed<PartOutcome[]>(() => runSource({
    source: 'dvf', format: 'geo-dvf', fromDir: path.join(dir, 'source'), annees: [ANNEE], departements: deps,
    dataRoot, force: true, now: new Date('2025-01-01T00:00:00Z'),
  }));
  const manifest = JSON.parse(fs.readFileSync(path.join(dataRoot, 'lake', 'manifest.json'), 'utf8')) as {
    sources: { dvf: { partitions: Record<string, { count: number }> } };
  };
  return {
    seconds, cores, maxRssMiB: maxRssMiB(), files: outcomes.length,
    failed: outcomes.filter((o) => o.status !== 'imported').map((o) => `${o.part.key}: ${o.status} ${o.error ?? ''}`),
    rowsRead: outcomes.reduce((a, o) => a + o.rowsRead, 0), rowsKept: outcomes.reduce((a, o) => a + o.rowsKept, 0),
    mutations: Object.values(manifest.sources.dvf.partitions).reduce((a, p) => a + p.count, 0),
    statements,
  };
}

/**
 * Comparison (--per-file): the same import code, `dvfSource.importFiles`, called once per file, which is how the
 * pipeline imported before it took a year in one pass. Written to a separate lake and without the manifest.
 */
async function phasePerFile(dir: string): Promise<PerFilePhase> {
  const lake = new Lake(path.join(dir, 'data-per-file'));
  fs.rmSync(path.dirname(lake.root), { recursive: true, force: true });
  const statements = instrumentDuckDB();
  const { instance, conn } = await openMemory();
  try {
    const parts = dvfSource.parts({ format: 'geo-dvf', annees: [ANNEE], departements: DVF_DEPARTEMENTS, fromDir: path.join(dir, 'source') });
    const ctx = { lake: lake.transaction(), conn, now: new Date('2025-01-01T00:00:00Z'), log: () => {} };
    const { value, seconds, cores } = await timed(async () => {
      const results = [];
      for (const part of parts) {
        const file = { path: path.join(dir, 'source', part.relPath), sha256: '', vintage: '', url: '' };
        results.push(...(await dvfSource.importFiles(ctx, [{ part, file }])));
      }
      return results;
    });
    const partitions = value.flatMap((r) => r.partitions);
    return { seconds, cores, maxRssMiB: maxRssMiB(), partitions: partitions.length, rowsKept: partitions.reduce((a, p) => a + p.rows_kept, 0), statements };
  } finally {
    conn.closeSync();
    instance.closeSync();
    fs.rmSync(path.dirname(lake.root), { recursive: true, force: true });
  }
}

async function phaseParse(dir: string): Promise<ParsePhase> {
  const files = fs.readdirSync(path.join(dir, 'source', String(ANNEE), 'departements')).filter((f) => f.endsWith('.csv.gz')).sort()
    .map((f) => path.join(dir, 'source', String(ANNEE), 'departements', f));
  const stageSql = (list: string) => fs.readFileSync(STAGE_GEO_SQL, 'utf8').replace('{{files}}', () => list);
  const { instance, conn } = await openMemory(); // same settings as the pipeline: 2 threads, 4 GB
  try {
    const count = await timed(() => all<{ n: number }>(conn,
      `SELECT count(*) AS n FROM read_csv(${sqlList(files)}, header = true, all_varchar = true, delim = ',', quote = '"', escape = '"')`));
    const stage = await timed(() => run(conn, `CREATE TEMP TABLE staged AS ${stageSql(sqlList(files))}`));
    await run(conn, 'DROP TABLE staged');
    const stagePerFile = await timed(async () => {
      for (const f of files) await run(conn, `CREATE OR REPLACE TEMP TABLE staged AS ${stageSql(sqlList([f]))}`);
    });
    const t = ({ seconds, cores }: Timed) => ({ seconds, cores });
    return {
      seconds: count.seconds + stage.seconds + stagePerFile.seconds, cores: 0, maxRssMiB: maxRssMiB(),
      count: t(count), stage: t(stage), stagePerFile: t(stagePerFile), rows: count.value[0].n,
    };
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

async function phaseMarts(dir: string): Promise<MartsPhase> {
  const dataRoot = path.join(dir, 'data');
  const { value: report, seconds, cores } = await timed(() => buildMarts({ dataRoot }));
  return {
    seconds, cores, maxRssMiB: maxRssMiB(), models: report.models.map(({ name, rows, seconds: s }) => ({ name, rows, seconds: s })),
    servingMiB: fs.statSync(report.servingFile).size / 2 ** 20,
  };
}

/** Runs `phase` in a child process of `script` (this one by default), which writes its result to the --result file. */
export function runChild<T>(phase: string, args: Record<string, string>, script = SELF): Promise<T> {
  const resultFile = path.join(os.tmpdir(), `bench-pipeline-${process.pid}-${phase}.json`);
  const argv = [...process.execArgv, script, '--phase', phase, '--result', resultFile, ...Object.entries(args).flatMap(([k, v]) => [`--${k}`, v])];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, argv, { stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`phase ${phase} exited with code ${code}`));
      try {
        resolve(JSON.parse(fs.readFileSync(resultFile, 'utf8')) as T);
      } catch (e) {
        reject(e);
      } finally {
        fs.rmSync(resultFile, { force: true });
      }
    });
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------------------------

/**
 * The options (usage: --rows N --keep DIR --repeat N --per-file --json FILE, or --dpe-csv SIZE [--dir DIR] [--json FILE],
 * or --dpe [--rows N --keep DIR --gzip --json FILE], or --bdnb [--groups N] [--keep DIR]; --phase, --result and the
 * phase's own options are what runChild passes to a child), as strings: a flag given is 'yes'.
 */
function options(argv: string[]): Record<string, string> {
  const text = { type: 'string' } as const;
  const flag = { type: 'boolean' } as const;
  const { values } = parseArgs({
    args: argv,
    options: {
      rows: text, keep: text, repeat: text, json: text, seed: text, dir: text, 'dpe-csv': text, groups: text,
      phase: text, result: text, bytes: text, compress: text, departements: text,
      'per-file': flag, dpe: flag, gzip: flag, bdnb: flag,
    },
  });
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined && v !== false).map(([k, v]) => [k, v === true ? 'yes' : String(v)]));
}

const fmt = (x: number, d = 0) => x.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d }).replace(/,/g, ' ');

async function main() {
  const args = options(process.argv.slice(2));
  const seed = Number(args.seed ?? 20240);
  if (args.phase) {
    const dir = args.dir;
    const result = args.phase === 'generate' ? await generate(path.join(dir, 'source'), Number(args.rows), seed)
      : args.phase === 'pipeline' ? await phasePipeline(dir)
      : args.phase === 'parse' ? await phaseParse(dir)
      : args.phase === 'marts' ? await phaseMarts(dir)
      : args.phase === 'per-file' ? await phasePerFile(dir)
      : args.phase === 'dpe-generate' ? await generateDpeCsv(path.join(dir, 'dpe.csv'), Number(args.bytes), seed)
      : args.phase === 'dpe-import' ? await importDpeCsv(path.join(dir, 'dpe.csv'), dir)
      : args.phase === 'dpe-generate-dir' ? await generateDpeFiles(path.join(dir, 'source'), Number(args.rows), seed, args.compress === 'gzip')
      : args.phase === 'dpe-pipeline' ? await phaseDpePipeline(dir, instrumentDuckDB)
      : undefined;
    if (!result) throw new Error(`unknown phase ${args.phase}`);
    fs.writeFileSync(args.result, JSON.stringify(result));
    return;
  }

  if (args['dpe-csv']) return dpeCsvBench(args);
  // the BDNB import at France scale (bdnb-pipeline.ts; imported lazily: it imports this module)
  if (args.bdnb) return (await import('./bdnb-pipeline')).bdnbPipelineBench(args);
  if (args.dpe) return dpeImportBench(args, runChild);

  const rows = Number(args.rows ?? 3_500_000);
  if (!Number.isInteger(rows) || rows < 1000) throw new Error('--rows must be an integer ≥ 1000');
  const dir = args.keep ? path.resolve(args.keep) : fs.mkdtempSync(path.join(os.tmpdir(), 'foncier-bench-'));
  fs.mkdirSync(dir, { recursive: true });
  const cpus = os.cpus();
  console.log(`Pipeline benchmark: ${fmt(rows)} geo-DVF lines (${ANNEE}), ${DVF_DEPARTEMENTS.length} départements, in ${dir}`);
  console.log(`Machine: ${cpus.length} CPUs (${cpus[0]?.model.trim() ?? '?'}), ${fmt(os.totalmem() / 2 ** 30, 1)} GiB RAM, Node ${process.version}, ${os.platform()} ${os.release()}`);
  try {
    const metaFile = path.join(dir, 'source', 'bench-meta.json');
    const wanted = { generator: GENERATOR_VERSION, rows, seed, annee: ANNEE };
    let gen: GenerateResult;
    const previous = fs.existsSync(metaFile) ? (JSON.parse(fs.readFileSync(metaFile, 'utf8')) as typeof wanted & { result: GenerateResult }) : undefined;
    if (previous && JSON.stringify({ ...previous, result: undefined }) === JSON.stringify({ ...wanted, result: undefined })) {
      gen = previous.result;
      console.log(`\nGeneration: reusing ${gen.files} files of ${dir}/source (generated earlier in ${fmt(gen.seconds, 1)} s)`);
    } else {
      console.log('\nGenerating (not measured)…');
      gen = await runChild<GenerateResult>('generate', { dir, rows: String(rows), seed: String(seed) });
      fs.writeFileSync(metaFile, JSON.stringify({ ...wanted, result: gen }, null, 2));
      console.log(`Generation: ${gen.files} files, ${fmt(gen.lines)} lines, ${fmt(gen.bytes / 2 ** 20, 1)} MiB gzip, ${fmt(gen.seconds, 1)} s`);
    }

    const repeat = Number(args.repeat ?? 1);
    if (!Number.isInteger(repeat) || repeat < 1) throw new Error('--repeat must be a positive integer');
    const runs: PipelinePhase[] = [];
    for (let i = 1; i <= repeat; i++) {
      console.log(`\nMeasuring the pipeline (runSource, all départements, fresh lake)${repeat > 1 ? ` — run ${i}/${repeat}` : ''}…`);
      // The machine may be shared: the 1-minute load average before the run tells whether other work competed with it.
      const loadBefore = os.loadavg()[0];
      const r = await runChild<PipelinePhase>('pipeline', { dir });
      if (r.failed.length) throw new Error(`pipeline failures: ${r.failed.join('; ')}`);
      runs.push({ ...r, loadBefore });
    }
    // the median run is the reported one (shared machines are noisy); all runs are listed below the table
    const pipe = [...runs].sort((a, b) => a.seconds - b.seconds)[Math.floor((runs.length - 1) / 2)];
    let perFile: PerFilePhase | undefined;
    if (args['per-file']) {
      console.log('Measuring the comparison: one importFiles call per file (--per-file)…');
      perFile = await runChild<PerFilePhase>('per-file', { dir });
    }
    console.log('Measuring parse only (DuckDB read_csv)…');
    const parse = await runChild<ParsePhase>('parse', { dir });
    console.log('Measuring the marts (buildMarts)…');
    const marts = await runChild<MartsPhase>('marts', { dir });

    const rate = (s: number) => fmt(rows / s);
    const table: string[][] = [
      ['end to end: runSource (parse → lake + manifest)', fmt(rows), fmt(pipe.seconds, 1), rate(pipe.seconds), fmt(pipe.cores, 2), fmt(pipe.maxRssMiB)],
      ['parse only: read_csv count(*), one glob', fmt(parse.rows), fmt(parse.count.seconds, 1), rate(parse.count.seconds), fmt(parse.count.cores, 2), ''],
      ['parse only: stage_geo.sql → temp table, one glob', fmt(parse.rows), fmt(parse.stage.seconds, 1), rate(parse.stage.seconds), fmt(parse.stage.cores, 2), ''],
      ['parse only: stage_geo.sql → temp table, per file', fmt(parse.rows), fmt(parse.stagePerFile.seconds, 1), rate(parse.stagePerFile.seconds), fmt(parse.stagePerFile.cores, 2), fmt(parse.maxRssMiB)],
      ['marts: buildMarts (ventes + serving file)', fmt(rows), fmt(marts.seconds, 1), rate(marts.seconds), fmt(marts.cores, 2), fmt(marts.maxRssMiB)],
    ];
    if (perFile) {
      table.splice(1, 0, ['comparison: importFiles file by file (no manifest)', fmt(perFile.rowsKept), fmt(perFile.seconds, 1), rate(perFile.seconds), fmt(perFile.cores, 2), fmt(perFile.maxRssMiB)]);
    }
    const head = ['step', 'lines', 'seconds', 'lines/s', 'CPU cores', 'peak RSS MiB'];
    const widths = head.map((h, i) => Math.max(h.length, ...table.map((r) => r[i].length)));
    const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
    console.log(`\n${line(head)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}`);
    for (const r of table) console.log(line(r));
    console.log('(CPU cores = user + system CPU time / wall time of the step; peak RSS = getrusage maxRSS of the phase\'s process)');

    const e2e = rows / pipe.seconds;
    console.log(`\nTarget: ≥ ${fmt(TARGET_ROWS_PER_SECOND)} rows/s end to end on 2 cores → ${fmt(e2e)} rows/s: ${e2e >= TARGET_ROWS_PER_SECOND ? 'MET' : 'NOT MET'}`
      + (cpus.length !== 2 ? ` (this machine has ${cpus.length} CPUs; DuckDB is capped at 2 threads by lib/duck.ts)` : ''));
    console.log(`Pipeline runs: ${runs.map((r) => `${fmt(r.seconds, 1)} s at ${fmt(r.cores, 2)} cores (load ${fmt(r.loadBefore ?? 0, 1)} before)`).join(', ')}`
      + `${runs.length > 1 ? ' (median reported)' : ''}; CPU cores well under 2 mean that other processes competed for them`);
    console.log(`Lake: ${fmt(pipe.rowsKept)} lines kept of ${fmt(pipe.rowsRead)} read, ${fmt(pipe.mutations)} mutations in ${pipe.files} partitions`);

    const breakdown = (title: string, statements: Record<string, { count: number; seconds: number }>, total: number, rest: string) => {
      console.log(`\n${title}`);
      const sqlTotal = Object.values(statements).reduce((a, s) => a + s.seconds, 0);
      const row = (k: string, s: number, count?: number) =>
        console.log(`  ${k.padEnd(58)} ${fmt(s, 1).padStart(6)} s  ${fmt((100 * s) / total, 0).padStart(3)} %${count ? `  (${count}×)` : ''}`);
      for (const [k, s] of Object.entries(statements).sort()) row(k, s.seconds, s.count);
      row(rest, total - sqlTotal);
    };
    breakdown('Where the pipeline time goes (SQL statements timed inside runSource):', pipe.statements, pipe.seconds,
      '10 outside SQL (sha256 of each file, manifest, fs)');
    if (perFile) breakdown('Comparison, file by file:', perFile.statements, perFile.seconds, '10 outside SQL (fs)');
    console.log(`Marts: ${marts.models.map((m) => `${m.name} ${m.rows === null ? 'view' : `${fmt(m.rows)} rows`} ${fmt(m.seconds, 1)} s`).join(', ')}; serving file ${fmt(marts.servingMiB, 0)} MiB`);

    if (args.json) {
      fs.writeFileSync(args.json, JSON.stringify({
        machine: { cpus: cpus.length, model: cpus[0]?.model, totalMemGiB: os.totalmem() / 2 ** 30, node: process.version },
        rows, generation: gen, pipeline: pipe, pipelineRuns: runs.map((r) => r.seconds), perFile, parse, marts, rowsPerSecond: e2e, target: TARGET_ROWS_PER_SECOND,
      }, null, 2));
    }
  } finally {
    if (!args.keep) fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The streaming-template benchmark: generate (not measured), then import in a child process of its own. */
async function dpeCsvBench(args: Record<string, string>) {
  const bytes = parseSize(args['dpe-csv']);
  const dir = fs.mkdtempSync(path.join(args.dir ? path.resolve(args.dir) : os.tmpdir(), 'foncier-bench-dpe-'));
  const cpus = os.cpus();
  console.log(`Streaming template benchmark: a ${fmt(bytes / 2 ** 30, 2)} GiB DPE CSV (220 label-style columns) in ${dir}`);
  console.log(`Machine: ${cpus.length} CPUs (${cpus[0]?.model.trim() ?? '?'}), ${fmt(os.totalmem() / 2 ** 30, 1)} GiB RAM, Node ${process.version}; load average ${os.loadavg().map((l) => fmt(l, 2)).join(' ')}`);
  try {
    console.log('\nGenerating (not measured)…');
    const gen = await runChild<{ rows: number; bytes: number; seconds: number; badSurfaces: number }>('dpe-generate', { dir, bytes: String(bytes), seed: args.seed ?? '2024' });
    console.log(`Generation: ${fmt(gen.rows)} rows, ${fmt(gen.bytes / 2 ** 20)} MiB, ${fmt(gen.seconds, 1)} s`);
    const loadBefore = os.loadavg()[0];
    console.log(`\nMeasuring the import (stageFile → TEMP table → Parquet, DuckDB memory_limit ${DPE_MEMORY_LIMIT}, 2 threads; load ${fmt(loadBefore, 2)} before)…`);
    const r = await runChild<DpeImportResult>('dpe-import', { dir });
    const seconds = r.stageSeconds + r.copySeconds;
    console.log(`Rows read ${fmt(r.rowsRead)}, staged ${fmt(r.rowsStaged)}; anomalies ${JSON.stringify(r.anomalies)}; ${r.unmappedColumns} published columns not kept`);
    console.log(`stage (read_csv → typed TEMP table): ${fmt(r.stageSeconds, 1)} s, ${fmt(r.rowsRead / r.stageSeconds)} rows/s, ${fmt(gen.bytes / 2 ** 20 / r.stageSeconds)} MiB/s`);
    console.log(`copy (TEMP table → Parquet zstd, ${fmt(r.parquetMiB)} MiB): ${fmt(r.copySeconds, 1)} s`);
    console.log(`end to end: ${fmt(seconds, 1)} s, ${fmt(r.rowsRead / seconds)} rows/s, ${fmt(r.cpuSeconds / seconds, 2)} CPU cores (${fmt(r.rowsRead / r.cpuSeconds)} rows per CPU-second); peak RSS (VmHWM) ${fmt(r.peakRssMiB)} MiB → ${r.peakRssMiB < 2048 ? 'under' : 'OVER'} 2 GiB`);
    console.log(`load average after: ${os.loadavg().map((l) => fmt(l, 2)).join(' ')}`);
    const expectedBad = gen.badSurfaces;
    if ((r.anomalies.unparsable_surface_habitable_logement ?? 0) !== expectedBad || r.rowsRead !== gen.rows) {
      throw new Error(`counts differ from the generator: ${gen.rows} rows and ${expectedBad} bad surfaces (one in ${BAD_SURFACE_EVERY}) generated`);
    }
    if (args.json) fs.writeFileSync(args.json, JSON.stringify({ generation: gen, import: r, loadBefore, loadAfter: os.loadavg() }, null, 2));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// only when run as a script: lab/france-data/build.ts imports the generator from this module
if (path.resolve(process.argv[1] ?? '') === SELF) {
  main().catch((e: Error) => {
    console.error(`bench pipeline failed: ${e.stack ?? e.message}`);
    process.exit(1);
  });
}
