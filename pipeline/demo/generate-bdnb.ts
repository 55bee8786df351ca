// Demo BDNB: building groups for the demo communes in the layout of the CSTB's per-département CSV archive once
// unzipped (`bdnb_millesime_{M}/millesime_{M}_dep{dd}/open_data_millesime_{M}_dep{dd}_csv/csv/<table>.csv`), built
// from the generated geo-DVF files so that they agree with the demo sales:
// - every parcel holding a built property gets a building group whose footprint is centred on the sale's point;
// - most are linked to that parcel in rel_batiment_groupe_parcelle (a sale matches by parcel), some to another
//   parcel id only (renumbered since: the sale matches by distance), and a few parcels have no building at all
//   (their sales match a neighbour within 200 m, or nothing);
// - as many unsold buildings again stand around each commune (stock statistics count every building).
// A building's construction year is a pure function of its parcel id, so generate.ts can plant the age effect in
// the sale prices (`buildingPriceFactor`) without consuming its random sequence.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import proj4 from 'proj4';
import { all, lit, openMemory } from '../../lib/duck';
import { BDNB_DEFAULT_MILLESIME } from '../../lib/sources/bdnb';
import { bdnbArchivePath } from '../sources/bdnb';

proj4.defs('EPSG:2154', '+proj=lcc +lat_0=46.5 +lon_0=3 +lat_1=49 +lat_2=44 +x_0=700000 +y_0=6600000 +ellps=GRS80 +towgs84=0,0,0,0,0,0,0 +units=m +no_defs');

export const DEMO_BDNB_VINTAGE = BDNB_DEFAULT_MILLESIME;

/** Uniform [0, 1) from a string: FNV-1a, then a murmur finaliser (no shared random state). */
function hashUnit(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return (h >>> 0) / 4294967296;
}

export const TRANCHES = ['avant_1919', '1919_1945', '1946_1970', '1971_1990', '1991_2005', '2006_plus'] as const;
const TRANCHE_YEARS: Record<(typeof TRANCHES)[number], [number, number]> = {
  avant_1919: [1780, 1918], '1919_1945': [1919, 1945], '1946_1970': [1946, 1970], '1971_1990': [1971, 1990],
  '1991_2005': [1991, 2005], '2006_plus': [2006, 2023],
};
/** Price factor planted per construction-age bracket: pre-1919 and post-war blocks sell cheaper, new ones dearer. */
export const AGE_PRICE_FACTOR: Record<(typeof TRANCHES)[number], number> = {
  avant_1919: 0.86, '1919_1945': 0.95, '1946_1970': 0.8, '1971_1990': 0.93, '1991_2005': 1, '2006_plus': 1.08,
};
/** Share of buildings per bracket, by département (Paris is mostly 19th century, the Creuse old farmhouses). */
const AGE_MIX: Record<string, number[]> = {
  '75': [0.5, 0.12, 0.14, 0.12, 0.06, 0.06],
  '69': [0.32, 0.12, 0.2, 0.16, 0.1, 0.1],
  '33': [0.3, 0.1, 0.2, 0.18, 0.1, 0.12],
  '23': [0.42, 0.1, 0.16, 0.16, 0.1, 0.06],
};

export type ParcelFate = 'linked' | 'renumbered' | 'none';

/** What the BDNB says about a parcel's building: 88 % linked, 9 % linked to a renumbered parcel only, 3 % absent. */
export function parcelFate(parcel: string): ParcelFate {
  const u = hashUnit(`fate:${parcel}`);
  return u < 0.03 ? 'none' : u < 0.12 ? 'renumbered' : 'linked';
}

/** Construction year of the building on a parcel (null for the 2 % the Fichiers fonciers leave blank). */
export function constructionYear(parcel: string): number | null {
  if (hashUnit(`null-year:${parcel}`) < 0.02) return null;
  const mix = AGE_MIX[parcel.slice(0, 2)] ?? AGE_MIX['33'];
  let u = hashUnit(`tranche:${parcel}`);
  let i = 0;
  while (i < mix.length - 1 && u >= mix[i]) u -= mix[i++];
  const [lo, hi] = TRANCHE_YEARS[TRANCHES[i]];
  return lo + Math.floor(hashUnit(`year:${parcel}`) * (hi - lo + 1));
}

export function trancheOf(year: number): (typeof TRANCHES)[number] {
  return year < 1919 ? 'avant_1919' : year <= 1945 ? '1919_1945' : year <= 1970 ? '1946_1970' : year <= 1990 ? '1971_1990' : year <= 2005 ? '1991_2005' : '2006_plus';
}

/** Factor applied to a built sale's price by the demo generator: that of its parcel's building, 1 without one. */
export function buildingPriceFactor(parcel: string): number {
  if (parcelFate(parcel) === 'none') return 1;
  const year = constructionYear(parcel);
  return year === null ? 1 : AGE_PRICE_FACTOR[trancheOf(year)];
}

/** A group id in the post-2023 nano-id form `bdnb-bg-XXXX-XXXX-XXXX`. */
function groupId(key: string): string {
  const h = crypto.createHash('sha1').update(key).digest('hex').toUpperCase();
  return `bdnb-bg-${h.slice(0, 4)}-${h.slice(4, 8)}-${h.slice(8, 12)}`;
}

interface Site {
  parcel: string;
  commune: string;
  nomCommune: string;
  types: Set<string>;
  lon: number | null;
  lat: number | null;
  /** Sales of a house or flat before mid-2021 (the BDNB's DVF statistics stop there) and their median €/m². */
  pastMutations: number;
  pastPpm2: number | null;
}

interface Building {
  id: string;
  dep: string;
  commune: string;
  nomCommune: string;
  x: number;
  y: number;
  usage: string;
  year: number | null;
  parcel: string;
  /** Parcel id written in the relation table (the site's, a renumbered one, or a stock building's own). */
  relParcel: string;
  site?: Site;
}

const USAGE_BY_TYPE: Array<[string, string]> = [['2', 'Résidentiel collectif'], ['1', 'Résidentiel individuel'], ['4', 'Commercial et services'], ['3', 'Dépendance']];

function usageOf(types: Set<string>, key: string): string {
  // A block of flats with shops on its ground floor is sometimes recorded as mixed.
  if (types.has('2') && types.has('4') && hashUnit(`mixte:${key}`) < 0.5) return 'Mixte';
  return USAGE_BY_TYPE.find(([t]) => types.has(t))?.[1] ?? 'Dépendance';
}

const WALLS: Record<string, string[]> = {
  old: ['PIERRE', 'PIERRE', 'MEULIERE', 'BRIQUES'],
  mid: ['BRIQUES', 'BETON', 'BETON', 'AGGLOMERE'],
  new: ['BETON', 'AGGLOMERE', 'BOIS', 'BETON'],
};
const ROOFS: Record<string, string[]> = {
  old: ['TUILES', 'ARDOISES', 'ZINC ALUMINIUM'],
  mid: ['TUILES', 'BETON', 'ZINC ALUMINIUM'],
  new: ['BETON', 'TUILES', 'AUTRES'],
};

function pick<T>(xs: T[], key: string): T {
  return xs[Math.floor(hashUnit(key) * xs.length)];
}

/** Rectangle footprint (with a courtyard for large blocks) centred on (x, y): its area centroid is exactly (x, y). */
function footprint(b: Building): { wkt: string; area: number } {
  const u = (k: string) => hashUnit(`${k}:${b.id}`);
  const [w, d] = b.usage === 'Résidentiel individuel' ? [8 + 6 * u('w'), 7 + 4 * u('d')]
    : b.usage === 'Dépendance' ? [3 + 3 * u('w'), 3 + 2 * u('d')]
      : [14 + 16 * u('w'), 10 + 8 * u('d')];
  const angle = Math.PI * u('a');
  const rect = (hw: number, hd: number, reverse: boolean) => {
    const corners = [[-hw, -hd], [hw, -hd], [hw, hd], [-hw, hd]];
    if (reverse) corners.reverse();
    const pts = [...corners, corners[0]].map(([a, c]) => [
      b.x + a * Math.cos(angle) - c * Math.sin(angle),
      b.y + a * Math.sin(angle) + c * Math.cos(angle),
    ]);
    return `(${pts.map(([px, py]) => `${px.toFixed(2)} ${py.toFixed(2)}`).join(',')})`;
  };
  const court = w > 24;
  const rings = [rect(w / 2, d / 2, false), ...(court ? [rect(w / 6, d / 6, true)] : [])];
  // GDAL's WKT spelling, as in the published CSV export (EPSG:2154).
  return { wkt: `MULTIPOLYGON ((${rings.join(',')}))`, area: w * d * (court ? 1 - 1 / 9 : 1) };
}

function csvLine(fields: Array<string | number | null>): string {
  return fields.map((v) => {
    const s = v === null ? '' : String(v);
    return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  }).join(',');
}

export interface BdnbDemoTruth {
  vintage: string;
  /** Relative paths of the written tables. */
  files: string[];
  groups: number;
  stockGroups: number;
  parcels: Record<ParcelFate, number>;
}

/**
 * Writes the demo BDNB for the départements of the geo-DVF files under `dvfDir` (`{annee}/departements/{dep}.csv.gz`)
 * into `outDir`. Communes are located by their sales; stock buildings are drawn around them.
 */
export async function generateBdnb(dvfDir: string, outDir: string, opts: { years: number[]; vintage?: string }): Promise<BdnbDemoTruth> {
  const vintage = opts.vintage ?? DEMO_BDNB_VINTAGE;
  const sites = new Map<string, Site>();
  const dvfFiles = opts.years.flatMap((y) => {
    const dir = path.join(dvfDir, String(y), 'departements');
    return fs.readdirSync(dir).filter((n) => n.endsWith('.csv.gz')).sort().map((n) => path.join(dir, n));
  });
  // DuckDB reads the geo-DVF files (as the pipeline does); one row per parcel holding a built property.
  const { instance, conn } = await openMemory({ threads: 2, memoryLimit: '1GB' });
  try {
    const rows = await all<{ parcel: string; commune: string; nom: string; types: string[]; lon: number | null; lat: number | null; past: number; ppm2: number | null }>(conn, `
      WITH lines AS (
        SELECT id_mutation, date_mutation, id_parcelle, code_commune, nom_commune, code_type_local, valeur_fonciere,
          surface_reelle_bati, longitude, latitude
        FROM read_csv([${dvfFiles.map(lit).join(', ')}], header = true, all_varchar = true)
        WHERE code_type_local IN ('1', '2', '3', '4')
      ),
      -- the BDNB's DVF statistics stop in mid-2021: €/m² of each earlier sale of a house or flat on the parcel
      past AS (
        SELECT id_parcelle, id_mutation, any_value(valeur_fonciere)::DOUBLE / sum(surface_reelle_bati::DOUBLE) AS ppm2
        FROM lines
        WHERE date_mutation < '2021-07-01' AND code_type_local IN ('1', '2') AND surface_reelle_bati::DOUBLE > 0
        GROUP BY ALL
      )
      SELECT l.id_parcelle AS parcel, any_value(code_commune) AS commune, any_value(nom_commune) AS nom,
        list(DISTINCT code_type_local ORDER BY code_type_local) AS types,
        max(longitude)::DOUBLE AS lon, max(latitude)::DOUBLE AS lat,
        coalesce(any_value(p.n), 0)::INTEGER AS past, any_value(p.ppm2) AS ppm2
      FROM lines l
      LEFT JOIN (SELECT id_parcelle, count(*) AS n, median(ppm2) AS ppm2 FROM past GROUP BY ALL) p USING (id_parcelle)
      GROUP BY l.id_parcelle
      ORDER BY l.id_parcelle`);
    for (const r of rows) {
      sites.set(r.parcel, { parcel: r.parcel, commune: r.commune, nomCommune: r.nom, types: new Set(r.types), lon: r.lon, lat: r.lat, pastMutations: r.past, pastPpm2: r.ppm2 });
    }
  } finally {
    conn.closeSync();
    instance.closeSync();
  }

  // Commune centre and spread, from its located sales.
  const communes = new Map<string, { name: string; xs: number[]; ys: number[]; n: number }>();
  const toL93 = (lon: number, lat: number) => proj4('WGS84', 'EPSG:2154', [lon, lat]) as [number, number];
  const located = new Map<string, [number, number]>();
  for (const s of sites.values()) {
    const c = communes.get(s.commune) ?? { name: s.nomCommune, xs: [], ys: [], n: 0 };
    communes.set(s.commune, c);
    c.n++;
    if (s.lon === null || s.lat === null) continue;
    const p = toL93(s.lon, s.lat);
    located.set(s.parcel, p);
    c.xs.push(p[0]);
    c.ys.push(p[1]);
  }
  const geometryOf = (code: string) => {
    const c = communes.get(code)!;
    const cx = c.xs.reduce((a, b) => a + b, 0) / c.xs.length;
    const cy = c.ys.reduce((a, b) => a + b, 0) / c.ys.length;
    const r = Math.sqrt(c.xs.reduce((a, x, i) => a + (x - cx) ** 2 + (c.ys[i] - cy) ** 2, 0) / c.xs.length) * 1.2;
    return { cx, cy, r };
  };

  const buildings: Building[] = [];
  const parcels: Record<ParcelFate, number> = { linked: 0, renumbered: 0, none: 0 };
  for (const s of [...sites.values()].sort((a, b) => a.parcel.localeCompare(b.parcel))) {
    const fate = parcelFate(s.parcel);
    parcels[fate]++;
    if (fate === 'none') continue;
    let p = located.get(s.parcel);
    if (!p) {
      // Etalab found no coordinates for the parcel; the building still stands somewhere in the commune.
      const g = geometryOf(s.commune);
      const a = 2 * Math.PI * hashUnit(`angle:${s.parcel}`);
      const d = g.r * Math.sqrt(hashUnit(`dist:${s.parcel}`));
      p = [g.cx + d * Math.cos(a), g.cy + d * Math.sin(a)];
    }
    // A renumbered parcel keeps its section and gets a plan number beyond any the demo uses.
    const relParcel = fate === 'linked' ? s.parcel : `${s.parcel.slice(0, 10)}9${s.parcel.slice(11)}`;
    buildings.push({
      id: groupId(s.parcel), dep: s.commune.slice(0, 2), commune: s.commune, nomCommune: s.nomCommune, x: p[0], y: p[1],
      usage: usageOf(s.types, s.parcel), year: constructionYear(s.parcel), parcel: s.parcel, relParcel, site: s,
    });
  }
  // Unsold stock: as many buildings again per commune, in a section ('YY') no demo sale uses.
  let stockGroups = 0;
  for (const [code, c] of [...communes.entries()].sort()) {
    const g = geometryOf(code);
    for (let i = 0; i < c.n; i++) {
      const parcel = `${code}000YY${String(i + 1).padStart(4, '0')}`;
      const a = 2 * Math.PI * hashUnit(`angle:${parcel}`);
      const d = g.r * Math.sqrt(hashUnit(`dist:${parcel}`));
      const usage = pick(code.startsWith('23') ? ['Résidentiel individuel', 'Résidentiel individuel', 'Dépendance', 'Agricole', 'Commercial et services']
        : ['Résidentiel collectif', 'Résidentiel collectif', 'Résidentiel individuel', 'Commercial et services', 'Dépendance', 'Industriel'], `usage:${parcel}`);
      buildings.push({
        id: groupId(parcel), dep: code.slice(0, 2), commune: code, nomCommune: c.name, x: g.cx + d * Math.cos(a), y: g.cy + d * Math.sin(a),
        usage, year: constructionYear(parcel), parcel, relParcel: parcel,
      });
      stockGroups++;
    }
  }

  const files: string[] = [];
  for (const dep of [...new Set(buildings.map((b) => b.dep))].sort()) {
    const rel = path.join(bdnbArchivePath(vintage, dep).replace(/\.zip$/, ''), 'csv');
    const dir = path.join(outDir, rel);
    fs.mkdirSync(dir, { recursive: true });
    const mine = buildings.filter((b) => b.dep === dep);
    const write = (table: string, header: string[], rows: Array<Array<string | number | null>>) => {
      fs.writeFileSync(path.join(dir, `${table}.csv`), [header.join(','), ...rows.map(csvLine)].join('\n') + '\n');
      files.push(path.join(rel, `${table}.csv`).split(path.sep).join('/'));
    };
    write('batiment_groupe', ['batiment_groupe_id', 'code_departement_insee', 'code_commune_insee', 'libelle_commune_insee', 's_geom_groupe', 'contient_fictive_geom_groupe', 'geom_groupe'],
      mine.map((b) => {
        const f = footprint(b);
        return [b.id, dep, b.commune, b.nomCommune, Math.round(f.area), 'f', f.wkt];
      }));
    write('batiment_groupe_ffo_bat', ['batiment_groupe_id', 'code_departement_insee', 'annee_construction', 'usage_niveau_1_txt', 'nb_log', 'nb_niveau', 'mat_mur_txt', 'mat_toit_txt'],
      mine.map((b) => {
        const era = b.year === null ? 'mid' : b.year < 1946 ? 'old' : b.year < 1991 ? 'mid' : 'new';
        const collective = b.usage === 'Résidentiel collectif' || b.usage === 'Mixte';
        const levels = collective ? 3 + Math.floor(hashUnit(`levels:${b.id}`) * (dep === '75' ? 5 : 6)) : b.usage === 'Dépendance' ? 1 : 1 + Math.floor(hashUnit(`levels:${b.id}`) * 2);
        const logements = collective ? levels * (2 + Math.floor(hashUnit(`perlevel:${b.id}`) * 4)) : b.usage === 'Résidentiel individuel' ? 1 : 0;
        return [b.id, dep, b.year, b.usage, logements, levels, pick(WALLS[era], `wall:${b.id}`), pick(ROOFS[era], `roof:${b.id}`)];
      }));
    write('rel_batiment_groupe_parcelle', ['batiment_groupe_id', 'code_departement_insee', 'parcelle_id', 'parcelle_principale'],
      mine.map((b) => [b.id, dep, b.relParcel, 't']));
    write('batiment_groupe_dvf_open_statistique', ['batiment_groupe_id', 'code_departement_insee', 'nb_mutation', 'prix_m2_local_median'],
      mine.filter((b) => b.site?.pastMutations).map((b) => [b.id, dep, b.site!.pastMutations, Number(b.site!.pastPpm2!.toFixed(2))]));
  }
  return { vintage, files, groups: buildings.length, stockGroups, parcels };
}
