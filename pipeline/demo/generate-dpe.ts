// Demo energy diagnostics (DPE) for the demo sales, in the published formats: data-fair CSV exports with the API
// field names for the post-July-2021 datasets (dpe03existant, dpe02neuf) and the legacy `dpe-france` columns before,
// one file per dataset and département under <outDir>/dpe/<dataset>/<dep>.csv.gz (the layout of --from-dir).
// Most clean house and flat sales get the diagnostic of the dwelling sold, established before the sale and located on
// or near its parcel; the sale's price is multiplied by its class's factor (G ≈ −15 %, A ≈ +10 % against D), so the
// premium endpoints have a known effect to recover. Factors are normalised so that the median price level is unchanged.
// Drawn from its own PRNG stream after the DVF sales are generated: the sales' own draws are untouched.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import proj4 from 'proj4';
import type { DemoMutation, Rng } from './generate';

export const DPE_CLASSES = ['A', 'B', 'C', 'D', 'E', 'F', 'G'] as const;
export type DpeClass = (typeof DPE_CLASSES)[number];

/** Price of a dwelling of each class relative to the same dwelling in class D (the planted effect). */
export const CLASS_EFFECT: Record<DpeClass, number> = { A: 1.1, B: 1.06, C: 1.03, D: 1, E: 0.96, F: 0.91, G: 0.85 };

// Class mix of the dwellings sold: rural houses are older and worse insulated than city flats.
const MIX_URBAN: Record<DpeClass, number> = { A: 0.03, B: 0.07, C: 0.2, D: 0.3, E: 0.22, F: 0.11, G: 0.07 };
const MIX_RURAL: Record<DpeClass, number> = { A: 0.02, B: 0.04, C: 0.12, D: 0.25, E: 0.25, F: 0.17, G: 0.15 };

/** Class factors divided by their geometric mean over a mix, so planting them leaves the median price level as it was. */
export function normalisedFactors(mix: Record<DpeClass, number>): Record<DpeClass, number> {
  const total = DPE_CLASSES.reduce((a, k) => a + mix[k], 0);
  const meanLog = DPE_CLASSES.reduce((a, k) => a + (mix[k] / total) * Math.log(CLASS_EFFECT[k]), 0);
  return Object.fromEntries(DPE_CLASSES.map((k) => [k, CLASS_EFFECT[k] / Math.exp(meanLog)])) as Record<DpeClass, number>;
}

// Upper bound of primary energy (kWh/m²/yr) of each class, 2021 scale; G is open-ended.
const CONSO_BAND: Record<DpeClass, [number, number]> = {
  A: [40, 70], B: [71, 110], C: [111, 180], D: [181, 250], E: [251, 330], F: [331, 420], G: [421, 650],
};
const GES_BAND: Record<DpeClass, [number, number]> = {
  A: [2, 6], B: [7, 11], C: [12, 30], D: [31, 50], E: [51, 70], F: [71, 100], G: [101, 140],
};

export const V2_HEADER = [
  'numero_dpe', 'date_etablissement_dpe', 'etiquette_dpe', 'etiquette_ges', 'conso_5_usages_par_m2_ep',
  'emission_ges_5_usages_par_m2', 'surface_habitable_logement', 'annee_construction', 'type_batiment', 'code_insee_ban',
  'code_postal_ban', 'code_departement_ban', 'identifiant_ban', 'adresse_ban', 'coordonnee_cartographique_x_ban',
  'coordonnee_cartographique_y_ban', '_geopoint', 'numero_dpe_remplace', 'version_dpe', 'methode_application_dpe',
  'modele_dpe', 'cad_parcelles',
] as const;

export const LEGACY_HEADER = [
  'numero_dpe', 'nom_methode_dpe', 'version_methode_dpe', 'date_etablissement_dpe', 'consommation_energie',
  'classe_consommation_energie', 'estimation_ges', 'classe_estimation_ges', 'annee_construction', 'surface_thermique_lot',
  'latitude', 'longitude', 'tr001_modele_dpe_type_libelle', 'tr002_type_batiment_description',
  'code_insee_commune_actualise', 'tv016_departement_code', 'geo_adresse', 'geo_score',
] as const;

export const DPE_DATASET_IDS = { existant: 'dpe03existant', neuf: 'dpe02neuf', legacy: 'dpe-france' } as const;
const REFORM = '2021-07-01';

proj4.defs('EPSG:2154', '+proj=lcc +lat_0=46.5 +lon_0=3 +lat_1=49 +lat_2=44 +x_0=700000 +y_0=6600000 +ellps=GRS80 +towgs84=0,0,0,0,0,0,0 +units=m +no_defs');

export interface DemoDpeTruth {
  /** Paths relative to the demo folder. */
  files: string[];
  diagnostics: Record<string, number>;
  /** Sales given the diagnostic of the dwelling sold (their price carries the class factor). */
  plantedSales: number;
  plantedByClass: Record<DpeClass, number>;
  /** Factor applied to the price of a sale, per class and commune kind (urban, rural). */
  factors: { urban: Record<DpeClass, number>; rural: Record<DpeClass, number> };
  /** Pairs (replaced, replacing) of the same dwelling: only the replacing one may be counted. */
  replacements: number;
}

interface Dpe {
  dataset: 'existant' | 'neuf' | 'legacy';
  dep: string;
  numero: string;
  date: string;
  cls: DpeClass | 'N';
  ges: DpeClass | 'N';
  conso: number;
  ges_m2: number;
  surface: number;
  annee: number | null;
  type: 'maison' | 'appartement';
  insee: string;
  cp: string;
  address: string;
  lat: number;
  lon: number;
  parcel: string;
  replaces: string;
}

const DAY = 86_400_000;
const addDays = (iso: string, days: number) => new Date(Date.parse(`${iso}T00:00:00Z`) + days * DAY).toISOString().slice(0, 10);
const iso = (y: number, m: number, d: number) => `${y}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;

/** A point `dist` metres from (lat, lon) in a random direction. */
function offset(rng: Rng, lat: number, lon: number, dist: number): [number, number] {
  const a = 2 * Math.PI * rng.next();
  return [lat + (dist * Math.sin(a)) / 111_320, lon + (dist * Math.cos(a)) / (111_320 * Math.cos((lat * Math.PI) / 180))];
}

const csv = (v: string | number | null) => {
  const s = v === null ? '' : String(v);
  return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};

/**
 * Plants a diagnostic on most clean dwelling sales (multiplying their price by the class factor) and draws the other
 * diagnostics of the same buildings; returns the files' content by relative path, and the truth.
 */
export function plantDpe(muts: DemoMutation[], rng: Rng): { files: Map<string, string>; truth: DemoDpeTruth } {
  const factors = { urban: normalisedFactors(MIX_URBAN), rural: normalisedFactors(MIX_RURAL) };
  const out: Dpe[] = [];
  const counter = new Map<string, number>();
  const numero = (date: string, dep: string, kind: 'E' | 'N' | 'V') => {
    const key = `${date.slice(2, 4)}${dep.slice(0, 2)}${kind}`;
    const n = (counter.get(key) ?? 0) + 1;
    counter.set(key, n);
    return `${key}${String(n).padStart(7, '0')}${String.fromCharCode(65 + (n % 26))}`;
  };
  // A resale shares its lines with the first sale: its prices are recorded in the truth, so it is left alone.
  const seen = new Map<unknown, number>();
  for (const mu of muts) seen.set(mu.lines, (seen.get(mu.lines) ?? 0) + 1);
  const plantedByClass = Object.fromEntries(DPE_CLASSES.map((k) => [k, 0])) as Record<DpeClass, number>;
  let plantedSales = 0;
  let replacements = 0;

  const draw = (mix: Record<DpeClass, number>) => rng.weighted(DPE_CLASSES.map((k) => [k, mix[k]] as const));
  const make = (mu: DemoMutation, cls: DpeClass, date: string, surface: number, type: 'maison' | 'appartement', lat: number, lon: number, kind: Dpe['dataset']): Dpe => {
    const site = mu.lines[0].site;
    const dataset = kind === 'existant' && date < REFORM ? 'legacy' : kind;
    const ges = DPE_CLASSES[Math.max(0, Math.min(6, DPE_CLASSES.indexOf(cls) + rng.int(-1, 1)))];
    const [clo, chi] = CONSO_BAND[cls];
    const [glo, ghi] = GES_BAND[ges];
    return {
      dataset, dep: mu.commune.dep, numero: numero(date, mu.commune.dep, dataset === 'legacy' ? 'V' : dataset === 'neuf' ? 'N' : 'E'), date, cls, ges,
      conso: Math.round(rng.uniform(clo, chi)), ges_m2: Math.round(rng.uniform(glo, ghi) * 10) / 10, surface: Math.round(surface * 10) / 10,
      annee: kind === 'neuf' ? Number(date.slice(0, 4)) : rng.int(1850, 2012), type, insee: mu.commune.code, cp: site.street.cp,
      address: `${site.numero}${site.suffixe ? ` ${site.suffixe}` : ''} ${site.street.name} ${site.street.cp} ${mu.commune.name}`.trim(),
      lat, lon, parcel: site.parcel, replaces: '',
    };
  };

  for (const mu of muts) {
    const dwellings = mu.lines.filter((l) => l.codeType === '1' || l.codeType === '2');
    const site = mu.lines[0]?.site;
    if (dwellings.length !== 1 || !site || site.lat === '' || mu.lines[0] !== dwellings[0]) continue;
    const saleDate = iso(mu.y, mu.m, mu.d);
    const type = dwellings[0].codeType === '1' ? 'maison' : 'appartement';
    const surface = Number(dwellings[0].surf);
    const [lat0, lon0] = [Number(site.lat), Number(site.lon)];
    if (mu.nature !== 'Vente') {
      // New builds sold off-plan get their diagnostic at completion, a year or two after the sale: never matched.
      if (mu.nature.startsWith('Vente en') && rng.chance(0.5)) {
        const cls = rng.chance(0.6) ? 'A' : 'B';
        out.push(make(mu, cls, addDays(saleDate, rng.int(300, 700)), surface * rng.uniform(0.95, 1.02), type, lat0, lon0, 'neuf'));
      }
      continue;
    }
    if (seen.get(mu.lines)! > 1 || !rng.chance(0.75)) continue;
    const rural = mu.commune.rural;
    const cls = draw(rural ? MIX_RURAL : MIX_URBAN);
    // Established for the sale, months before the deed mostly; sometimes an older one still valid; a few just after
    // the deed date (established for the promise, registered late) and a few long after (the next occupant's).
    const r = rng.next();
    const date = r < 0.8 ? addDays(saleDate, -rng.int(20, 180)) : r < 0.9 ? addDays(saleDate, -rng.int(181, 1500))
      : r < 0.97 ? addDays(saleDate, rng.int(1, 60)) : addDays(saleDate, rng.int(200, 500));
    const d = rng.next();
    const dist = d < 0.85 ? rng.uniform(0, 20) : d < 0.95 ? rng.uniform(20, 45) : rng.uniform(80, 200);
    const [lat, lon] = offset(rng, lat0, lon0, dist);
    const dpe = make(mu, cls, date, surface * rng.uniform(0.92, 1.05), type, lat, lon, 'existant');
    out.push(dpe);
    // An earlier diagnostic of the same dwelling, replaced (numero_dpe_remplace) by the one above.
    if (dpe.dataset === 'existant' && rng.chance(0.03)) {
      const old = make(mu, draw(MIX_URBAN), addDays(date, -rng.int(5, 60)), dpe.surface, type, lat, lon, 'existant');
      if (old.dataset === 'existant') {
        dpe.replaces = old.numero;
        out.push(old);
        replacements++;
      }
    }
    // Other flats of the same building: same point, clearly different surfaces (never the dwelling sold).
    if (type === 'appartement' && rng.chance(0.4)) {
      for (let i = rng.int(1, 2); i > 0; i--) {
        const other = surface * (rng.chance(0.5) ? rng.uniform(0.3, 0.55) : rng.uniform(1.6, 2.5));
        out.push(make(mu, draw(MIX_URBAN), addDays(saleDate, -rng.int(0, 900)), other, type, lat, lon, 'existant'));
      }
    }
    if (mu.price >= 1000) mu.price = Math.round((mu.price * factors[rural ? 'rural' : 'urban'][cls]) / 10) * 10;
    plantedByClass[cls]++;
    plantedSales++;
  }
  // Legacy diagnostics with no class ("N": non applicable), as in the real dpe-france base.
  for (const dpe of out.filter((x) => x.dataset === 'legacy' && rng.chance(0.03))) dpe.cls = 'N';

  const files = new Map<string, string>();
  const rows = new Map<string, string[]>();
  for (const x of out) {
    const rel = `dpe/${DPE_DATASET_IDS[x.dataset]}/${x.dep}.csv.gz`;
    if (!rows.has(rel)) rows.set(rel, [(x.dataset === 'legacy' ? LEGACY_HEADER : V2_HEADER).join(',')]);
    rows.get(rel)!.push(x.dataset === 'legacy' ? legacyRow(x) : v2Row(x, rng));
  }
  for (const rel of [...rows.keys()].sort()) files.set(rel, rows.get(rel)!.join('\n') + '\n');
  const diagnostics: Record<string, number> = {};
  for (const x of out) diagnostics[DPE_DATASET_IDS[x.dataset]] = (diagnostics[DPE_DATASET_IDS[x.dataset]] ?? 0) + 1;
  return { files, truth: { files: [...files.keys()], diagnostics, plantedSales, plantedByClass, factors, replacements } };
}

function v2Row(x: Dpe, rng: Rng): string {
  const [X, Y] = proj4('WGS84', 'EPSG:2154', [x.lon, x.lat]);
  const banId = `${x.insee}_${x.parcel.slice(8, 10).toLowerCase()}${x.parcel.slice(10)}`;
  return [
    x.numero, x.date, x.cls, x.ges, x.conso, x.ges_m2, x.surface, x.annee, x.type, x.insee, x.cp, x.dep, banId, x.address,
    X.toFixed(2), Y.toFixed(2), `${x.lat.toFixed(7)},${x.lon.toFixed(7)}`, x.replaces || null, x.dataset === 'neuf' ? '2.4' : '2.3',
    x.dataset === 'neuf' ? `dpe issu d'une étude thermique réglementaire RT2012 bâtiment : ${x.type}` : `dpe ${x.type} individuel`,
    x.dataset === 'neuf' ? 'DPE NEUF logement : RT2012' : 'DPE 3CL 2021 méthode logement',
    // BAN's parcel relation, joined on identifiant_ban as in ADEME re-exports; unknown for part of the addresses.
    rng.chance(0.6) ? x.parcel : null,
  ].map(csv).join(',');
}

function legacyRow(x: Dpe): string {
  const noClass = x.cls === 'N';
  return [
    x.numero, '3CL', '3CL-DPE, version 1.3', x.date, noClass ? 0 : x.conso, x.cls, noClass ? 0 : x.ges_m2, noClass ? 'N' : x.ges, x.annee,
    x.surface, x.lat.toFixed(7), x.lon.toFixed(7), 'Vente', x.type === 'maison' ? 'Maison Individuelle' : 'Logement', x.insee, x.dep,
    x.address, 0.9,
  ].map(csv).join(',');
}

/** Writes the planted files under outDir. */
export async function writeDpeFiles(outDir: string, files: Map<string, string>, write: (path: string, content: string) => Promise<void>): Promise<void> {
  for (const [rel, content] of files) {
    await mkdir(join(outDir, rel, '..'), { recursive: true });
    await write(join(outDir, rel), content);
  }
}
