// Demo-dataset generator. Writes a synthetic DVF extract in the *real* Etalab geo-DVF format and tree
// (<outDir>/<annee>/departements/<dep>.csv.gz, 40-column header, one line per local/parcel) so that the
// pipeline, the marts and the API can be run and demoed end to end without downloading DVF, plus
// <outDir>/demo-truth.json describing what was planted (volumes, resales) so tests can check that the
// statistics recover it. The format quirks copied here are those of genuine geo-DVF files (an Abzac, 33,
// extract of 2021).
//
// Determinism: everything is drawn from one seeded PRNG (mulberry32) consumed in a fixed order
// (communes in code order, then years, then months), and gzip output carries no timestamp, so the same
// seed always yields byte-identical files. No Date.now / Math.random anywhere.
//
// Communes, INSEE codes, postal codes and centroids are real (centroids from the La Poste
// "base officielle des codes postaux", 2025-06-19); they are hard-coded because the demo must run
// offline, from the repository alone. Prices, surfaces, addresses and parcels are invented.

import { createWriteStream } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { buildingPriceFactor } from './generate-bdnb';
import { plantDpe, writeDpeFiles, type DemoDpeTruth } from './generate-dpe';

export interface PlantedResale {
  code_commune: string;
  type_local: string;
  id_parcelle: string;
  first_date: string;
  second_date: string;
  /** Difference in calendar months between the two sale months (the day of month is ignored). */
  months_apart: number;
  first_price: number;
  second_price: number;
}

export interface DemoTruth {
  seed: number;
  years: number[];
  /** Paths relative to outDir, '/'-separated, so the truth file itself is identical across output dirs. */
  files: string[];
  mutations: number;
  lines: number;
  /** Same property sold twice 18–24 calendar months apart (price +5 % to +25 %). */
  plantedResales: PlantedResale[];
  /** Same property sold twice 17 or 25 calendar months apart: must NOT be counted as 18–24-month resales. */
  nearMissResales: PlantedResale[];
  perCommune: Record<string, { mutations: number }>;
  /** Energy diagnostics planted on the sales (generate-dpe.ts). */
  dpe: DemoDpeTruth;
}

export const GEO_DVF_HEADER = [
  'id_mutation', 'date_mutation', 'numero_disposition', 'nature_mutation', 'valeur_fonciere',
  'adresse_numero', 'adresse_suffixe', 'adresse_nom_voie', 'adresse_code_voie', 'code_postal',
  'code_commune', 'nom_commune', 'code_departement', 'ancien_code_commune', 'ancien_nom_commune',
  'id_parcelle', 'ancien_id_parcelle', 'numero_volume', 'lot1_numero', 'lot1_surface_carrez',
  'lot2_numero', 'lot2_surface_carrez', 'lot3_numero', 'lot3_surface_carrez', 'lot4_numero',
  'lot4_surface_carrez', 'lot5_numero', 'lot5_surface_carrez', 'nombre_lots', 'code_type_local',
  'type_local', 'surface_reelle_bati', 'nombre_pieces_principales', 'code_nature_culture', 'nature_culture',
  'code_nature_culture_speciale', 'nature_culture_speciale', 'surface_terrain', 'longitude', 'latitude',
] as const;

// ---------------------------------------------------------------------------------------------
// Seeded randomness

export class Rng {
  private a: number;
  constructor(seed: number) {
    this.a = seed >>> 0;
  }
  /** mulberry32: tiny, fast, and good enough for synthetic data. */
  next(): number {
    this.a = (this.a + 0x6d2b79f5) >>> 0;
    let t = this.a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  uniform(lo: number, hi: number): number {
    return lo + this.next() * (hi - lo);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.next() * xs.length)];
  }
  weighted<T>(items: ReadonlyArray<readonly [T, number]>): T {
    let total = 0;
    for (const [, w] of items) total += w;
    let r = this.next() * total;
    for (const [v, w] of items) {
      r -= w;
      if (r < 0) return v;
    }
    return items[items.length - 1][0];
  }
  normal(): number {
    // Box–Muller without caching the second value keeps the consumption pattern trivially fixed.
    const u = 1 - this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.next());
  }
  /** Log-uniform: plot and land surfaces span orders of magnitude. */
  logUniform(lo: number, hi: number): number {
    return Math.exp(this.uniform(Math.log(lo), Math.log(hi)));
  }
}

// ---------------------------------------------------------------------------------------------
// Reference tables

type Kind = 'apt' | 'house' | 'commercial' | 'parking' | 'land';

interface Street {
  name: string;
  code: string;
  cp: string;
  /** Bordeaux streets where land plots are still sold (northern/eastern outskirts). */
  outskirts: boolean;
}

export interface Commune {
  code: string;
  name: string;
  dep: string;
  lat: number;
  lon: number;
  radiusKm: number;
  /** Mutations per year at scale 1. */
  volume: number;
  mix: ReadonlyArray<readonly [Kind, number]>;
  /** €/m² at the June-2022 peak of the trend. */
  aptPpm2: number;
  housePpm2: number;
  /** Share of all mutations that are VEFA, before/after 2021. */
  vefa: [number, number];
  rural: boolean;
  /** House plot range, m². */
  plot: [number, number];
  /** Price of a parking space / cellar at the peak, €. */
  parking: number;
  streets: Street[];
  sections: string[];
}

const URBAN_SECTIONS: string[] = [];
for (const a of 'ABCDEFGH') for (const b of 'ABCDEFGHIKLMNOPRSTVWXYZ') URBAN_SECTIONS.push(a + b);
// Rural cadastres mix old single-letter sections (left-padded with 0, as in 330010000D1323) and
// two-letter sections from land consolidation (ZA, ZB...).
const RURAL_SECTIONS = [
  ...'ABCDEFGHIK'.split('').map((l) => '0' + l),
  ...'ABCDEFGHIK'.split('').map((l) => 'A' + l),
  ...'ABCDEFGHIK'.split('').map((l) => 'Z' + l),
];

const CITY_MIX_PARIS = [['apt', 0.9], ['house', 0.005], ['commercial', 0.05], ['parking', 0.045]] as const;
const CITY_MIX_LYON = [['apt', 0.84], ['house', 0.07], ['commercial', 0.05], ['parking', 0.04]] as const;
const MIX_BORDEAUX = [['apt', 0.6], ['house', 0.28], ['commercial', 0.04], ['parking', 0.03], ['land', 0.05]] as const;
const MIX_CREUSE_TOWN = [['apt', 0.15], ['house', 0.6], ['commercial', 0.05], ['land', 0.2]] as const;
const MIX_CREUSE_VILLAGE = [['apt', 0.02], ['house', 0.68], ['commercial', 0.02], ['land', 0.28]] as const;

/** 'NAME|code[|cp][|o]' keeps the table readable; the code is the 4-char FANTOIR-like adresse_code_voie. */
function streets(defaultCp: string, specs: string[]): Street[] {
  return specs.map((s) => {
    const [name, code, cp, flag] = s.split('|');
    return { name, code, cp: cp || defaultCp, outskirts: flag === 'o' };
  });
}

function paris(code: string, n: number, lat: number, lon: number, aptPpm2: number, names: string[]): Commune {
  const cp = `750${String(n).padStart(2, '0')}`;
  return {
    code, name: `Paris ${n}e Arrondissement`, dep: '75', lat, lon, radiusKm: 0.3, volume: 600,
    mix: CITY_MIX_PARIS, aptPpm2, housePpm2: aptPpm2 * 1.1, vefa: [0.002, 0.003], rural: false,
    plot: [80, 300], parking: 28000, streets: streets(cp, names), sections: URBAN_SECTIONS,
  };
}

function lyon(n: number, lat: number, lon: number, aptPpm2: number, names: string[]): Commune {
  const cp = `6900${n}`;
  return {
    code: `6938${n}`, name: `Lyon ${n === 1 ? '1er' : `${n}e`} Arrondissement`, dep: '69', lat, lon,
    radiusKm: 1, volume: 250, mix: CITY_MIX_LYON, aptPpm2, housePpm2: aptPpm2 * 1.05, vefa: [0.02, 0.04],
    rural: false, plot: [200, 900], parking: 16000, streets: streets(cp, names), sections: URBAN_SECTIONS,
  };
}

function creuse(
  code: string, name: string, cp: string, lat: number, lon: number, volume: number, housePpm2: number,
  town: boolean, names: string[],
): Commune {
  return {
    code, name, dep: '23', lat, lon, radiusKm: town ? 1.5 : 2, volume,
    mix: town ? MIX_CREUSE_TOWN : MIX_CREUSE_VILLAGE, aptPpm2: housePpm2 * 0.85, housePpm2, vefa: [0, 0],
    rural: true, plot: [300, 4000], parking: 4000, streets: streets(cp, names), sections: RURAL_SECTIONS,
  };
}

export const COMMUNES: Commune[] = [
  creuse('23001', 'Ahun', '23150', 46.0917141, 2.02400735, 40, 950, false, [
    'GRANDE RUE|0040', 'RTE DE GUERET|0120', 'RUE DES ECOLES|0060', 'LES COMBES|B015', 'PIGEROLLES|B042',
    // Etalab quotes such fields; keeping one lets consumers prove their CSV reader handles it.
    'LA VILLATTE, LES CHAMPS|B051',
  ]),
  creuse('23008', 'Aubusson', '23200', 45.94723395, 2.1700866, 70, 1000, true, [
    'GRANDE RUE|0045', 'RUE VIBRAC|0210', 'AV DE LA REPUBLIQUE|0150', 'RUE JULES SANDEAU|0095',
    'RUE DES DEPORTES|0070', 'QUAI DES TAPISSIERS|0140', 'LE MONTEIL|B031', 'LA CLIDE|B012',
  ]),
  creuse('23030', 'Bourganeuf', '23400', 45.9472099, 1.7466204, 50, 950, true, [
    'RUE DE LA MAIRIE|0100', 'AV DE LA LIBERATION|0020', 'RUE ZIZIM|0220', 'PL DU CHAMP DE FOIRE|0035',
    'MASBARAUD|B044', 'LA CHASSAGNE|B013',
  ]),
  creuse('23031', 'Boussac', '23600', 46.3482318, 2.22160715, 35, 900, false, [
    'RUE DU CHATEAU|0030', "PL DE L HOTEL DE VILLE|0080", 'RTE DE GOUZON|0110', 'LES GRANGES|B021',
    'LA CROIX, SUD|B018',
  ]),
  creuse('23070', 'Crozant', '23160', 46.386176, 1.61585595, 35, 1100, false, [
    'RUE DES RUINES|0090', "RTE D EGUZON|0060", 'VITRAT|B060', 'LA FOLIE|B025', 'LES CHAMPS, BAS|B009',
  ]),
  creuse('23079', 'Felletin', '23500', 45.8942542, 2.1870007, 40, 1000, false, [
    'GRANDE RUE|0050', 'RUE DE LA TOUR|0130', "RTE D AUBUSSON|0010", 'LE TRUCQ|B058', 'BEAUMONT, LE HAUT|B006',
  ]),
  creuse('23096', 'Guéret', '23000', 46.1584679, 1.8704749, 150, 1300, true, [
    'AV DE LA SENATORERIE|0260', 'RUE MAURICE ROLLINAT|0205', 'GRANDE RUE|0110', 'AV DU LIMOUSIN|0150',
    'RUE DE LA PAIX|0190', 'AV CHARLES DE GAULLE|0060', 'PL BONNYAUD|0180', 'LA CHAUMETTE|B020',
    'CHABANNES|B011',
  ]),
  creuse('23176', 'La Souterraine', '23300', 46.23076725, 1.47434965, 80, 1200, true, [
    'RUE DE LA GARE|0100', 'AV DU GENERAL DE GAULLE|0060', 'PL DE LA REPUBLIQUE|0170', 'RUE DE LIMOGES|0120',
    'RUE DES BOUCHERIES|0040', 'LE PEUX|B041', 'BRIDIERS|B010',
  ]),
  {
    code: '33063', name: 'Bordeaux', dep: '33', lat: 44.8624328, lon: -0.5847545, radiusKm: 2, volume: 1400,
    mix: MIX_BORDEAUX, aptPpm2: 4600, housePpm2: 4400, vefa: [0.02, 0.04], rural: false, plot: [120, 700],
    parking: 14000, sections: URBAN_SECTIONS,
    streets: streets('33000', [
      "COURS DE L INTENDANCE|2390|33000", 'RUE SAINTE CATHERINE|4810|33000', 'COURS VICTOR HUGO|5470|33000',
      'RUE JUDAIQUE|2445|33000', 'COURS DE LA MARNE|2210|33000', 'RUE DU PALAIS GALLIEN|3765|33000',
      'AV THIERS|5015|33100', 'RUE DE LA BENAUGE|0545|33100|o', 'QUAI DES QUEYRIES|4160|33100|o',
      'AV LOUIS BARTHOU|2980|33200', 'BD DU PRESIDENT WILSON|3960|33200', 'RUE DU CHALET|1035|33200',
      'RUE NOTRE DAME|3570|33300', 'COURS BALGUERIE STUTTENBERG|0400|33300', 'RUE ACHARD|0020|33300|o',
      'RUE LUCIEN FAURE|2925|33300|o', 'COURS DE LA SOMME|4705|33800', "COURS DE L YSER|5610|33800",
      'RUE SAUMENUDE|4645|33800', 'BD JEAN JACQUES BOSC|2565|33800|o',
    ]),
  },
  lyon(1, 45.770104, 4.826373, 5900, [
    'MONTEE DE LA GRANDE COTE|2340', 'RUE DE LA MARTINIERE|2615', 'RUE DU GARET|1890', 'QUAI SAINT VINCENT|3705',
    'RUE BURDEAU|0910', 'PL DES TERREAUX|3910', "RUE D ALGERIE|0085",
  ]),
  lyon(2, 45.7463702, 4.82649365, 6400, [
    'RUE DE LA CHARITE|0770', 'RUE VICTOR HUGO|4030', 'RUE MERCIERE|2600', 'COURS CHARLEMAGNE|0755',
    'RUE DE BREST|0870', 'RUE FRANKLIN|1735', 'RUE SALA|3640',
  ]),
  lyon(3, 45.75141265, 4.86847805, 5200, [
    'COURS GAMBETTA|1760', 'RUE PAUL BERT|2930', 'COURS LAFAYETTE|2270', 'AV FELIX FAURE|1600',
    'RUE DUGUESCLIN|1365', 'RUE DE LA VILLETTE|4060', 'RUE MONCEY|2665',
  ]),
  lyon(4, 45.7805037, 4.8259955, 5800, [
    'BD DE LA CROIX ROUSSE|1130', "RUE D AUSTERLITZ|0225", 'GRANDE RUE DE LA CROIX ROUSSE|1885',
    'RUE DENFERT ROCHEREAU|1215', 'RUE DE CUIRE|1180', 'RUE HERMANN SABRAN|1985',
  ]),
  lyon(5, 45.75602915, 4.80117485, 4700, [
    'RUE SAINT JEAN|3475', 'AV DU POINT DU JOUR|3070', 'RUE DES FARGES|1550', 'MONTEE DU GOURGUILLON|1845',
    'RUE DE TRION|3935', 'AV BARTHELEMY BUYER|0430',
  ]),
  lyon(6, 45.77524875, 4.8547908, 6500, [
    'BD DES BELGES|0485', 'AV FOCH|1680', 'RUE DUQUESNE|1390', 'COURS VITTON|4095', 'RUE DE SEZE|3720',
    'RUE GARIBALDI|1790', 'COURS FRANKLIN ROOSEVELT|1740',
  ]),
  lyon(7, 45.73211, 4.8393142, 5000, [
    'AV JEAN JAURES|2115', 'RUE DE MARSEILLE|2565', 'GRANDE RUE DE LA GUILLOTIERE|1890', 'RUE DE GERLAND|1810',
    'AV BERTHELOT|0555', 'RUE CHEVREUL|0815',
  ]),
  lyon(8, 45.7341969, 4.8695383, 4200, [
    'AV DES FRERES LUMIERE|1745', 'RUE DU PROFESSEUR BEAUVISAGE|3165', 'BD DES ETATS UNIS|1450',
    'RUE MARIUS BERLIET|2560', 'AV PAUL SANTY|2945', 'RUE BATAILLE|0440',
  ]),
  lyon(9, 45.7835498, 4.81278275, 4100, [
    'RUE DE BOURGOGNE|0830', 'GRANDE RUE DE VAISE|1895', 'AV SIDOINE APOLLINAIRE|3600', 'RUE MARIETTON|2570',
    'RUE DE LA CORDERIE|1055', 'AV DU PLATEAU|3055',
  ]),
  paris('75105', 5, 48.8454466, 2.35137235, 12800, [
    'RUE MOUFFETARD|6561', 'RUE SAINT JACQUES|8539', 'BD SAINT MICHEL|8554', 'RUE MONGE|6393',
    'RUE DES ECOLES|3107', 'RUE GAY LUSSAC|4029', 'RUE CLAUDE BERNARD|2000', 'QUAI DE LA TOURNELLE|9465',
    'RUE LACEPEDE|5128',
  ]),
  paris('75111', 11, 48.8600732, 2.3815596, 10500, [
    'RUE DE LA ROQUETTE|8256', 'BD VOLTAIRE|9941', 'RUE OBERKAMPF|6866', 'RUE DU FAUBOURG SAINT ANTOINE|3472',
    'AV PARMENTIER|7110', 'RUE DE CHARONNE|1867', 'RUE SAINT MAUR|8695', 'BD RICHARD LENOIR|8187',
  ]),
  paris('75115', 15, 48.84165435, 2.29371665, 10200, [
    'RUE DE VAUGIRARD|9747', 'RUE DE LA CONVENTION|2418', 'RUE DU COMMERCE|2207', 'RUE LECOURBE|5428',
    'AV FELIX FAURE|3590', 'RUE CAMBRONNE|1505', 'RUE DE LA CROIX NIVERT|2566', 'RUE BLOMET|1031',
  ]),
  paris('75118', 18, 48.89193575, 2.34869955, 9300, [
    'RUE ORDENER|6901', 'RUE LEPIC|5571', 'RUE MARCADET|5908', 'RUE CAULAINCOURT|1666', 'RUE DAMREMONT|2597',
    'BD BARBES|0765', 'RUE CHAMPIONNET|1776', 'RUE LAMARCK|5250',
  ]),
];

const TYPE_LABEL: Record<string, string> = {
  '1': 'Maison',
  '2': 'Appartement',
  '3': 'Dépendance',
  '4': 'Local industriel. commercial ou assimilé',
};

const CULTURE_LABEL: Record<string, string> = {
  S: 'sols', T: 'terres', P: 'prés', AB: 'terrains a bâtir', J: 'jardins', BT: 'taillis simples', B: 'bois',
  L: 'landes', AG: "terrains d'agrément",
};
const CULTURE_SPE_LABEL: Record<string, string> = { POTAG: 'Jardin potager', PATUR: 'Pâture plantée', ETANG: 'Etang' };

// Seasonality of the number of sales: summer peak, August and January troughs.
const MONTH_WEIGHT = [0.78, 0.86, 0.98, 1.0, 1.12, 1.2, 1.22, 0.72, 1.0, 1.05, 0.98, 1.09];
const MONTH_WEIGHT_SUM = MONTH_WEIGHT.reduce((a, b) => a + b, 0);

/** Price index relative to June 2022: +4 %/year before, −3 %/year after (the post-rate-hike correction). */
function trend(y: number, m: number): number {
  const months = (y - 2022) * 12 + (m - 6);
  return months < 0 ? Math.pow(1.04, months / 12) : Math.pow(0.97, months / 12);
}

// Base of the national per-year id_mutation counter at each département (the national file numbers
// mutations département by département).
const ID_BASE: Record<string, number> = { '23': 241001, '33': 527001, '69': 1012001, '75': 1384001 };

// ---------------------------------------------------------------------------------------------
// Model

interface Site {
  parcel: string;
  numero: string;
  suffixe: string;
  street: Street;
  lon: string;
  lat: string;
  /** Next free copropriété lot number when the site is a building. */
  nextLot: number;
}

interface Line {
  site: Site;
  lots: Array<[string, string]>;
  codeType: '' | '1' | '2' | '3' | '4';
  surf: string;
  pieces: string;
  culture: string;
  cultureSpe: string;
  terrain: string;
}

export interface DemoMutation {
  commune: Commune;
  y: number;
  m: number;
  d: number;
  seq: number;
  nature: string;
  price: number;
  lines: Line[];
  id?: string;
}

interface Pending {
  lines: Line[];
  d: number;
  price: number;
  record: PlantedResale;
  near: boolean;
}

const NATURE_VENTE = 'Vente';
const NATURE_VEFA = "Vente en l'état futur d'achèvement";

function fmtDecimal(x: number, decimals: number): string {
  return String(Number(x.toFixed(decimals)));
}

function isoDate(y: number, m: number, d: number): string {
  return `${y}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
}

function daysInMonth(y: number, m: number): number {
  return new Date(Date.UTC(y, m, 0)).getUTCDate();
}

function weekdays(y: number, m: number, lo = 1, hi = 31): number[] {
  const out: number[] = [];
  const n = Math.min(hi, daysInMonth(y, m));
  for (let d = lo; d <= n; d++) {
    const wd = new Date(Date.UTC(y, m - 1, d)).getUTCDay();
    // Notarial deeds are practically never signed at weekends.
    if (wd !== 0 && wd !== 6) out.push(d);
  }
  return out;
}

function addMonths(y: number, m: number, k: number): [number, number] {
  const idx = y * 12 + (m - 1) + k;
  return [Math.floor(idx / 12), (idx % 12) + 1];
}

function roundPrice(rng: Rng, v: number): number {
  if (v < 1000) return Math.max(1, Math.round(v));
  const r = rng.next();
  const step = v >= 100000 ? (r < 0.6 ? 1000 : r < 0.9 ? 500 : 100) : r < 0.5 ? 500 : 100;
  return Math.max(step, Math.round(v / step) * step);
}

class CommuneState {
  private lastPlan = new Map<string, number>();
  readonly buildings: Site[] = [];
  readonly programmes: Site[] = [];
  readonly pending = new Map<number, Pending[]>();
  carry = 0.5;

  constructor(readonly c: Commune, readonly rng: Rng) {}

  /** Plans only ever increase inside a section, so every allocated id_parcelle is new. */
  parcel(section?: string): { id: string; section: string } {
    const { rng, c } = this;
    for (;;) {
      const s = section ?? rng.pick(c.sections);
      const plan = (this.lastPlan.get(s) ?? 0) + rng.int(1, section ? 3 : 12);
      if (plan > 9999) {
        section = undefined;
        continue;
      }
      this.lastPlan.set(s, plan);
      return { id: `${c.code}000${s}${String(plan).padStart(4, '0')}`, section: s };
    }
  }

  coords(near?: Site, spreadKm?: number): [string, string] {
    const { rng, c } = this;
    // ~1.5 % of parcels are not found in the cadastre: Etalab leaves both coordinates empty.
    if (rng.chance(0.015)) return ['', ''];
    let lat = c.lat;
    let lon = c.lon;
    let radius = spreadKm ?? c.radiusKm;
    if (near && near.lat !== '') {
      lat = Number(near.lat);
      lon = Number(near.lon);
      radius = spreadKm ?? 0.08;
    }
    const dist = radius * Math.sqrt(rng.next());
    const angle = 2 * Math.PI * rng.next();
    const dLat = (dist * Math.sin(angle)) / 111.32;
    const dLon = (dist * Math.cos(angle)) / (111.32 * Math.cos((lat * Math.PI) / 180));
    return [fmtDecimal(lon + dLon, 6), fmtDecimal(lat + dLat, 6)];
  }

  site(opts: { street?: Street; noNumber?: boolean; near?: Site; section?: string } = {}): Site {
    const { rng, c } = this;
    const street = opts.street ?? rng.pick(c.streets);
    const lieuDit = street.code.startsWith('B');
    const { id } = this.parcel(opts.section);
    const [lon, lat] = this.coords(opts.near);
    let numero = '';
    let suffixe = '';
    if (!opts.noNumber && !(lieuDit && rng.chance(0.5))) {
      numero = String(lieuDit ? rng.int(1, 40) : Math.floor(rng.logUniform(1, 220)));
      const r = rng.next();
      suffixe = r < 0.04 ? 'B' : r < 0.05 ? 'T' : '';
    }
    return { parcel: id, numero, suffixe, street, lon, lat, nextLot: rng.int(1, 20) };
  }

  building(): Site {
    const { rng } = this;
    // Several sales land in the same building over the years; lot numbers keep the flats apart.
    if (this.buildings.length > 0 && rng.chance(0.3)) {
      const from = Math.max(0, this.buildings.length - 200);
      return this.buildings[rng.int(from, this.buildings.length - 1)];
    }
    const b = this.site();
    this.buildings.push(b);
    return b;
  }

  programme(): Site {
    const { rng } = this;
    const last = this.programmes[this.programmes.length - 1];
    if (last && last.nextLot < 120 && rng.chance(0.8)) return last;
    const p = this.site();
    this.programmes.push(p);
    return p;
  }

  lot(b: Site): string {
    const n = b.nextLot;
    b.nextLot += this.rng.int(1, 6);
    return String(n);
  }
}

// ---------------------------------------------------------------------------------------------
// Property builders: each returns the lines and the "fair" price before noise on the deal itself.

const APT_ROOMS_PARIS = [[1, 0.3], [2, 0.32], [3, 0.22], [4, 0.11], [5, 0.05]] as const;
const APT_ROOMS = [[1, 0.18], [2, 0.3], [3, 0.3], [4, 0.15], [5, 0.07]] as const;
const APT_SURFACE: Record<number, [number, number]> = { 1: [18, 30], 2: [30, 50], 3: [48, 75], 4: [70, 100], 5: [90, 140] };
const HOUSE_ROOMS = [[3, 0.22], [4, 0.32], [5, 0.26], [6, 0.13], [7, 0.07]] as const;
const HOUSE_SURFACE: Record<number, [number, number]> = { 3: [60, 90], 4: [75, 115], 5: [95, 140], 6: [115, 170], 7: [140, 200] };

function apartmentLine(st: CommuneState, b: Site, vefa: boolean): { line: Line; surface: number } {
  const { rng, c } = st;
  const rooms = rng.weighted(c.dep === '75' ? APT_ROOMS_PARIS : APT_ROOMS);
  const [lo, hi] = APT_SURFACE[rooms];
  const surface = rng.int(lo, hi);
  const lots: Array<[string, string]> = [];
  // Carrez excludes walls, stairs and low ceilings, hence a few % below the built surface; flats merged
  // from two lots carry two Carrez surfaces.
  const carrezMissing = !vefa && rng.chance(0.08);
  if (!vefa && rng.chance(0.15)) {
    const share = rng.uniform(0.6, 0.8);
    lots.push([st.lot(b), carrezMissing ? '' : fmtDecimal(surface * share * rng.uniform(0.93, 0.99), 2)]);
    lots.push([st.lot(b), carrezMissing ? '' : fmtDecimal(surface * (1 - share) * rng.uniform(0.93, 0.99), 2)]);
  } else {
    lots.push([st.lot(b), carrezMissing ? '' : fmtDecimal(surface * rng.uniform(vefa ? 0.97 : 0.93, 0.99), 2)]);
  }
  const line: Line = {
    site: b, lots, codeType: '2', surf: String(surface), pieces: String(rooms),
    culture: c.rural ? 'S' : '', cultureSpe: '', terrain: c.rural ? String(rng.int(150, 900)) : '',
  };
  return { line, surface };
}

function dependanceLine(st: CommuneState, b: Site, withLot: boolean, like?: Line): Line {
  return {
    site: b, lots: withLot ? [[st.lot(b), '']] : [], codeType: '3', surf: '', pieces: '0',
    culture: like?.culture ?? (st.c.rural ? 'S' : ''), cultureSpe: '', terrain: like?.terrain ?? '',
  };
}

// ---------------------------------------------------------------------------------------------
// Generation

interface Ctx {
  rng: Rng;
  /** Probability, per eligible sale, of planting each kind of near miss (17 and 25 months). */
  nearP: number;
  yearSet: Set<number>;
  planted: PlantedResale[];
  nearMiss: PlantedResale[];
}

function ppmNoise(rng: Rng, sigma: number): number {
  return Math.exp(sigma * rng.normal());
}

function genMutation(ctx: Ctx, st: CommuneState, y: number, m: number, seq: number): DemoMutation {
  const { rng } = ctx;
  const c = st.c;
  const t = trend(y, m);
  const vefaRate = y >= 2021 ? c.vefa[1] : c.vefa[0];
  const r = rng.next();
  let nature = NATURE_VENTE;
  let kind: Kind;
  let vefa = false;
  if (r < vefaRate) {
    nature = NATURE_VEFA;
    kind = 'apt';
    vefa = true;
  } else {
    kind = rng.weighted(c.mix);
    const r2 = rng.next();
    if (kind === 'apt' || kind === 'house') {
      if (r2 < 0.004) nature = 'Echange';
      else if (r2 < (c.rural ? 0.014 : 0.01)) nature = 'Adjudication';
    }
  }

  const lines: Line[] = [];
  let price = 0;
  let resaleable: 'Appartement' | 'Maison' | null = null;

  if (kind === 'apt') {
    const b = vefa ? st.programme() : st.building();
    const multi = !vefa && rng.chance(0.02);
    const n = multi ? rng.int(2, 6) : 1;
    const sigma = c.rural ? 0.25 : 0.16;
    for (let i = 0; i < n; i++) {
      const { line, surface } = apartmentLine(st, b, vefa);
      lines.push(line);
      // Small flats sell for more per m².
      price += surface * c.aptPpm2 * Math.pow(40 / surface, 0.08) * t * ppmNoise(rng, sigma) * (vefa ? 1.2 : 1);
    }
    if (multi) price *= rng.uniform(0.8, 0.92); // bulk discount: one price for the whole lot of flats
    // ~25 % of flat sales come with a cellar or a parking space: same mutation, not a bulk sale.
    if (rng.chance(vefa ? 0.5 : 0.25)) {
      lines.push(dependanceLine(st, b, true, lines[0]));
      price += rng.chance(0.3) || vefa ? c.parking * t * rng.uniform(0.7, 1.3) : rng.uniform(0, 3000);
    }
    if (!multi && !vefa) resaleable = 'Appartement';
  } else if (kind === 'house') {
    const rooms = rng.weighted(HOUSE_ROOMS);
    const [lo, hi] = HOUSE_SURFACE[rooms];
    const surface = rng.int(lo, hi);
    const [plo, phi] = c.plot;
    const terrain = Math.round(rng.logUniform(plo, phi));
    const s = st.site();
    const house: Line = {
      site: s, lots: [], codeType: '1', surf: String(surface), pieces: String(rooms), culture: 'S',
      cultureSpe: '', terrain: String(terrain),
    };
    lines.push(house);
    price = surface * c.housePpm2 * t * ppmNoise(rng, c.rural ? 0.28 : 0.2);
    if (rng.chance(0.2)) lines.push(dependanceLine(st, s, false, house));
    // Gardens and fields next to the house are separate parcels sold in the same deed.
    const extraP = c.rural ? 0.35 : c.dep === '33' ? 0.1 : 0.05;
    if (rng.chance(extraP)) {
      const code = c.rural ? rng.weighted([['J', 3], ['T', 2], ['P', 2], ['AG', 1]] as const) : 'J';
      const area = code === 'J' || code === 'AG' ? rng.int(80, 900) : rng.int(800, 12000);
      const nextTo = st.site({ street: s.street, noNumber: true, near: s, section: s.parcel.slice(8, 10) });
      lines.push({
        site: nextTo, lots: [], codeType: '', surf: '', pieces: '', culture: code,
        cultureSpe: code === 'J' && rng.chance(0.2) ? 'POTAG' : '', terrain: String(area),
      });
      price += area * (code === 'J' || code === 'AG' ? rng.uniform(2, 10) : rng.uniform(0.3, 1.2));
    }
    resaleable = 'Maison';
  } else if (kind === 'commercial') {
    const surface = Math.round(rng.logUniform(25, 400));
    // Shops on the ground floor of city buildings are copropriété lots; elsewhere they stand alone.
    const inCopro = !c.rural && rng.chance(0.5);
    const b = inCopro ? st.building() : st.site();
    lines.push({
      site: b, lots: inCopro ? [[st.lot(b), fmtDecimal(surface * rng.uniform(0.9, 0.98), 2)]] : [], codeType: '4',
      surf: String(surface), pieces: '0', culture: c.rural ? 'S' : '', cultureSpe: '',
      terrain: c.rural ? String(rng.int(surface, surface * 4)) : '',
    });
    price = surface * (c.rural ? c.housePpm2 * 0.5 : c.aptPpm2 * 0.65) * t * ppmNoise(rng, 0.35);
  } else if (kind === 'parking') {
    const b = st.building();
    lines.push(dependanceLine(st, b, true));
    price = c.parking * t * ppmNoise(rng, 0.3);
  } else {
    // Land only: fields and woods in Creuse, building plots on the outskirts of Bordeaux.
    const street = c.rural ? rng.pick(c.streets) : rng.pick(c.streets.filter((s) => s.outskirts));
    const n = c.rural ? rng.int(1, 4) : rng.int(1, 2);
    let first: Site | undefined;
    for (let i = 0; i < n; i++) {
      const s = st.site({ street, noNumber: true, near: first, section: first?.parcel.slice(8, 10) });
      first ??= s;
      const code = c.rural
        ? rng.weighted([['T', 4], ['P', 4], ['BT', 2], ['B', 2], ['L', 1], ['AB', 1], ['J', 1]] as const)
        : 'AB';
      let area: number;
      let ppm2: number;
      if (code === 'AB') {
        area = Math.round(rng.logUniform(c.rural ? 600 : 200, c.rural ? 2500 : 700));
        ppm2 = c.rural ? rng.uniform(8, 25) : rng.uniform(250, 500) * t;
      } else if (code === 'J') {
        area = rng.int(100, 800);
        ppm2 = rng.uniform(2, 8);
      } else {
        area = Math.round(rng.logUniform(1000, 30000));
        ppm2 = rng.uniform(0.3, 1.2);
      }
      const spe = code === 'P' && rng.chance(0.1) ? 'PATUR' : code === 'L' && rng.chance(0.2) ? 'ETANG' : '';
      lines.push({ site: s, lots: [], codeType: '', surf: '', pieces: '', culture: code, cultureSpe: spe, terrain: String(area) });
      price += area * ppm2;
    }
    price = Math.max(price, 300);
  }

  if (nature === 'Adjudication') price *= rng.uniform(0.65, 0.85);
  price = roundPrice(rng, price);
  // Construction-age effect of the sale's building (demo BDNB): a pure function of the parcel, no random draw.
  if (['1', '2', '4'].includes(lines[0].codeType)) price = Math.round((price * buildingPriceFactor(lines[0].site.parcel)) / 100) * 100;

  // ~1 % of outliers as in the real files: symbolic prices and a few ×10 typos.
  let outlier = false;
  const ro = rng.next();
  if (ro < 0.006) {
    price = rng.pick([1, 1, 10, 15, 100, 150]);
    outlier = true;
  } else if (ro < 0.01) {
    price *= 10;
    outlier = true;
  }

  // Planted resales and near misses are only taken from plain, clean single-property sales so that
  // their two prices are meaningful.
  let plant: { k: number; near: boolean } | null = null;
  if (resaleable && nature === NATURE_VENTE && !outlier) {
    const rp = rng.next();
    // 1.3 % of eligible sales are drawn; ~1/4 of them fall beyond the last year and are dropped,
    // which leaves ~1 % of house and flat sales resold.
    if (rp < 0.013) plant = { k: rng.int(18, 24), near: false };
    else if (rp < 0.013 + ctx.nearP) plant = { k: 17, near: true };
    else if (rp < 0.013 + 2 * ctx.nearP) plant = { k: 25, near: true };
    if (plant) {
      const [y2] = addMonths(y, m, plant.k);
      if (!ctx.yearSet.has(y2)) plant = null;
    }
  }

  let d: number;
  if (plant) {
    // Day kept inside 6..23 so the resale day can be shifted by up to 5 days without leaving the month.
    d = rng.pick(weekdays(y, m, 6, 23));
    // The day shift makes every reasonable month-difference definition agree: in-window pairs
    // are never shorter than 18 nor longer than 24 months, near misses never inside the window.
    const { k, near } = plant;
    const shift = near
      ? k === 17 ? -rng.int(2, 5) : rng.int(2, 5)
      : k === 18 ? rng.int(2, 5) : k === 24 ? -rng.int(2, 5) : rng.int(-5, 5);
    const [y2, m2] = addMonths(y, m, k);
    const secondPrice = Math.ceil((price * rng.uniform(1.05, 1.25)) / 100) * 100;
    const record: PlantedResale = {
      code_commune: c.code, type_local: resaleable!, id_parcelle: lines[0].site.parcel,
      first_date: isoDate(y, m, d), second_date: isoDate(y2, m2, d + shift), months_apart: k,
      first_price: price, second_price: secondPrice,
    };
    const key = y2 * 12 + (m2 - 1);
    const list = st.pending.get(key) ?? [];
    list.push({ lines, d: d + shift, price: secondPrice, record, near });
    st.pending.set(key, list);
  } else {
    d = rng.pick(weekdays(y, m));
    // A few lines are exact duplicates, as in Etalab's files.
    if (rng.chance(0.003)) lines.push(lines[rng.int(0, lines.length - 1)]);
  }

  return { commune: c, y, m, d, seq, nature, price, lines };
}

function csvField(v: string): string {
  return /[",\n\r]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

function toRows(mu: DemoMutation): string[] {
  const c = mu.commune;
  const nombreLots = [...new Set(mu.lines)].reduce((n, l) => n + l.lots.length, 0);
  return mu.lines.map((l) => {
    const lots: string[] = [];
    for (let i = 0; i < 5; i++) lots.push(l.lots[i]?.[0] ?? '', l.lots[i]?.[1] ?? '');
    const fields = [
      mu.id!, isoDate(mu.y, mu.m, mu.d), '000001', mu.nature, String(mu.price),
      l.site.numero, l.site.suffixe, l.site.street.name, l.site.street.code, l.site.street.cp,
      c.code, c.name, c.dep, '', '',
      l.site.parcel, '', '', ...lots,
      String(l.lots.length > 0 ? nombreLots : 0), l.codeType, l.codeType ? TYPE_LABEL[l.codeType] : '',
      l.surf, l.pieces, l.culture, l.culture ? CULTURE_LABEL[l.culture] : '',
      l.cultureSpe, l.cultureSpe ? CULTURE_SPE_LABEL[l.cultureSpe] : '', l.terrain, l.site.lon, l.site.lat,
    ];
    return fields.map(csvField).join(',');
  });
}

async function writeGzip(path: string, content: string): Promise<void> {
  const tmp = `${path}.tmp-${process.pid}`;
  await pipeline(Readable.from([Buffer.from(content, 'utf8')]), createGzip({ level: 6 }), createWriteStream(tmp));
  await rename(tmp, path);
}

export async function generateDemo(
  outDir: string,
  opts: { seed?: number; years?: number[]; scale?: number } = {},
): Promise<DemoTruth> {
  const seed = opts.seed ?? 42;
  const years = [...new Set(opts.years ?? [2019, 2020, 2021, 2022, 2023, 2024, 2025])].sort((a, b) => a - b);
  const scale = opts.scale ?? 1;
  if (!(scale > 0)) throw new Error(`generateDemo: scale must be > 0 (got ${scale})`);
  if (years.length === 0) throw new Error('generateDemo: no years');

  // Near misses are edge cases for tests, not statistics: keep roughly the same handful at any scale.
  const nearP = Math.min(0.002, 0.00015 / scale);
  const ctx: Ctx = { rng: new Rng(seed), nearP, yearSet: new Set(years), planted: [], nearMiss: [] };
  const communes = [...COMMUNES].sort((a, b) => a.code.localeCompare(b.code));
  const byYearDep = new Map<string, DemoMutation[]>();
  const perCommune: Record<string, { mutations: number }> = {};
  const allMuts: DemoMutation[] = [];

  for (const c of communes) {
    const st = new CommuneState(c, ctx.rng);
    const muts: DemoMutation[] = [];
    let seq = 0;
    // All 12 months of 2025 are generated even though the real file lags publication by ~6 months:
    // full years keep the demo statistics (annual medians, YoY) simple to read and to test.
    for (const y of years) {
      for (let m = 1; m <= 12; m++) {
        st.carry += (c.volume * scale * MONTH_WEIGHT[m - 1]) / MONTH_WEIGHT_SUM;
        const n = Math.floor(st.carry);
        st.carry -= n;
        for (let i = 0; i < n; i++) muts.push(genMutation(ctx, st, y, m, seq++));
        for (const p of st.pending.get(y * 12 + (m - 1)) ?? []) {
          muts.push({ commune: c, y, m, d: p.d, seq: seq++, nature: NATURE_VENTE, price: p.price, lines: p.lines });
          (p.near ? ctx.nearMiss : ctx.planted).push(p.record);
        }
      }
    }
    perCommune[c.code] = { mutations: muts.length };
    allMuts.push(...muts);
    for (const mu of muts) {
      const key = `${mu.y}/${c.dep}`;
      const list = byYearDep.get(key) ?? [];
      list.push(mu);
      byYearDep.set(key, list);
    }
  }

  // Diagnostics come after every sale is drawn, from their own stream: the sales' draws are the same with or without.
  const dpe = plantDpe(allMuts, new Rng((seed ^ 0x5dbe0e) >>> 0));
  const deps = [...new Set(communes.map((c) => c.dep))].sort();
  const files: string[] = [];
  let mutations = 0;
  let lines = 0;
  for (const y of years) {
    await mkdir(join(outDir, String(y), 'departements'), { recursive: true });
    for (const dep of deps) {
      // The Etalab files are ordered by commune, then date; ids follow that order.
      const muts = (byYearDep.get(`${y}/${dep}`) ?? []).sort(
        (a, b) => a.commune.code.localeCompare(b.commune.code) || a.m - b.m || a.d - b.d || a.seq - b.seq,
      );
      let counter = ID_BASE[dep];
      const rows: string[] = [GEO_DVF_HEADER.join(',')];
      for (const mu of muts) {
        mu.id = `${y}-${counter++}`;
        for (const row of toRows(mu)) rows.push(row);
      }
      mutations += muts.length;
      lines += rows.length - 1;
      const rel = `${y}/departements/${dep}.csv.gz`;
      await writeGzip(join(outDir, rel), rows.join('\n') + '\n');
      files.push(rel);
    }
  }

  await writeDpeFiles(outDir, dpe.files, writeGzip);

  const byFirst = (a: PlantedResale, b: PlantedResale) =>
    a.first_date.localeCompare(b.first_date) || a.id_parcelle.localeCompare(b.id_parcelle);
  const truth: DemoTruth = {
    seed, years, files, mutations, lines,
    plantedResales: ctx.planted.sort(byFirst), nearMissResales: ctx.nearMiss.sort(byFirst), perCommune, dpe: dpe.truth,
  };
  const truthPath = join(outDir, 'demo-truth.json');
  await writeFile(`${truthPath}.tmp-${process.pid}`, JSON.stringify(truth, null, 2) + '\n');
  await rename(`${truthPath}.tmp-${process.pid}`, truthPath);
  return truth;
}
