// Demo SIRENE files in the real published formats, for the demo's communes: géo-SIRENE establishment files laid out
// laid out like files.data.gouv.fr (`geo-sirene/last/dep/geo_siret_<dep>.csv.gz`, Paris per arrondissement
// `geo_siret_751xx`) with the 2019 StockEtablissement + geocoding header, and `insee-sirene/StockUniteLegale_utf8.csv`.
// Realistic mix: the seven business types, networks with branches, sole traders (some partially diffusible, their
// values written `[ND]` as INSEE does), closed establishments and other activities (which give each commune its
// reference point). Deterministic (seeded); names and addresses are invented.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { NAF_BY_TYPE, type BusinessType } from '../../lib/sirene';
import { GEO_SIRENE_DIR, UNITES_LEGALES_REL } from '../sources/sirene';
import { COMMUNES, Rng, type Commune } from './generate';

/** The géo-SIRENE header (StockEtablissement v3 + geocoding), as in the published 2019 files. */
export const GEO_SIRENE_HEADER = [
  'siren', 'nic', 'siret', 'statutDiffusionEtablissement', 'dateCreationEtablissement', 'trancheEffectifsEtablissement',
  'anneeEffectifsEtablissement', 'activitePrincipaleRegistreMetiersEtablissement', 'dateDernierTraitementEtablissement',
  'etablissementSiege', 'nombrePeriodesEtablissement', 'complementAdresseEtablissement', 'numeroVoieEtablissement',
  'indiceRepetitionEtablissement', 'typeVoieEtablissement', 'libelleVoieEtablissement', 'codePostalEtablissement',
  'libelleCommuneEtablissement', 'libelleCommuneEtrangerEtablissement', 'distributionSpecialeEtablissement',
  'codeCommuneEtablissement', 'codeCedexEtablissement', 'libelleCedexEtablissement', 'codePaysEtrangerEtablissement',
  'libellePaysEtrangerEtablissement', 'complementAdresse2Etablissement', 'numeroVoie2Etablissement',
  'indiceRepetition2Etablissement', 'typeVoie2Etablissement', 'libelleVoie2Etablissement', 'codePostal2Etablissement',
  'libelleCommune2Etablissement', 'libelleCommuneEtranger2Etablissement', 'distributionSpeciale2Etablissement',
  'codeCommune2Etablissement', 'codeCedex2Etablissement', 'libelleCedex2Etablissement', 'codePaysEtranger2Etablissement',
  'libellePaysEtranger2Etablissement', 'dateDebut', 'etatAdministratifEtablissement', 'enseigne1Etablissement',
  'enseigne2Etablissement', 'enseigne3Etablissement', 'denominationUsuelleEtablissement', 'activitePrincipaleEtablissement',
  'nomenclatureActivitePrincipaleEtablissement', 'caractereEmployeurEtablissement', 'longitude', 'latitude', 'geo_score',
  'geo_type', 'geo_adresse', 'geo_id', 'geo_ligne', 'geo_l4', 'geo_l5',
];

/** The StockUniteLegale header, as in the published 2019 stock. */
export const UNITE_LEGALE_HEADER = [
  'siren', 'statutDiffusionUniteLegale', 'unitePurgeeUniteLegale', 'dateCreationUniteLegale', 'sigleUniteLegale',
  'sexeUniteLegale', 'prenom1UniteLegale', 'prenom2UniteLegale', 'prenom3UniteLegale', 'prenom4UniteLegale',
  'prenomUsuelUniteLegale', 'pseudonymeUniteLegale', 'identifiantAssociationUniteLegale', 'trancheEffectifsUniteLegale',
  'anneeEffectifsUniteLegale', 'dateDernierTraitementUniteLegale', 'nombrePeriodesUniteLegale', 'categorieEntreprise',
  'anneeCategorieEntreprise', 'dateDebut', 'etatAdministratifUniteLegale', 'nomUniteLegale', 'nomUsageUniteLegale',
  'denominationUniteLegale', 'denominationUsuelle1UniteLegale', 'denominationUsuelle2UniteLegale',
  'denominationUsuelle3UniteLegale', 'categorieJuridiqueUniteLegale', 'activitePrincipaleUniteLegale',
  'nomenclatureActivitePrincipaleUniteLegale', 'nicSiegeUniteLegale', 'economieSocialeSolidaireUniteLegale',
  'caractereEmployeurUniteLegale',
];

/** The stock's date: the newest processing day of its lines (INSEE's stock of 1 November holds October's updates). */
export const DEMO_SIRENE_SNAPSHOT = '2025-10-31';
/** Under --from-dir the plug-in takes the bare CSV instead of the published ZIP. */
export const UNITE_LEGALE_FILE = UNITES_LEGALES_REL.replace(/\.zip$/, '.csv');
export const geoSireneRelPath = (fileDep: string) => `${GEO_SIRENE_DIR}/geo_siret_${fileDep}.csv.gz`;

const TYPE_WEIGHTS: ReadonlyArray<readonly [BusinessType, number]> = [
  ['agence', 0.34], ['gestionnaire', 0.12], ['notaire', 0.1], ['bailleur', 0.14], ['marchand', 0.08], ['promoteur', 0.08], ['courtier', 0.14],
];
const NAME_PATTERNS: Record<BusinessType, string[]> = {
  agence: ['AGENCE {w}', '{w} IMMOBILIER', 'CABINET {w}', '{w} TRANSACTIONS'],
  notaire: ['OFFICE NOTARIAL {w}', 'SCP {n} ET {n} NOTAIRES', 'NOTAIRES {w}'],
  promoteur: ['{w} PROMOTION', '{w} HABITAT', 'RESIDENCES {w}'],
  gestionnaire: ['{w} GESTION', 'SYNDIC {w}', 'ADMINISTRATION DE BIENS {w}'],
  marchand: ['{w} INVEST', '{w} PATRIMOINE', 'FONCIERE {w}'],
  courtier: ['{w} COURTAGE', '{w} FINANCEMENT', 'CREDIT {w}'],
  bailleur: ['SCI {w}', 'SCI DU {w}', '{w} LOCATION'],
};
const WORDS = ['DU PARC', 'DES TILLEULS', 'HORIZON', 'ATLANTIQUE', 'DU CENTRE', 'LES ORMES', 'SAINT ROCH', 'DU MARCHE', 'LUMIERE', 'DES QUAIS',
  'BELLEVUE', 'DU VIEUX PORT', 'ARCADE', 'DES CEDRES', 'LE BEFFROI', 'VAUBAN', 'DE LA GARE', 'DU PLATEAU', 'CAPITOLE', 'DES ARTS'];
const LAST_NAMES = ['MARTIN', 'BERNARD', 'DUBOIS', 'THOMAS', 'ROBERT', 'RICHARD', 'PETIT', 'DURAND', 'LEROY', 'MOREAU', 'SIMON',
  'LAURENT', 'LEFEBVRE', 'MICHEL', 'GARCIA', 'DAVID', 'BERTRAND', 'ROUX', 'VINCENT', 'FOURNIER', 'MOREL', 'GIRARD', 'ANDRE', 'MERCIER'];
const FIRST_NAMES = ['MARIE', 'JEAN', 'NATHALIE', 'PIERRE', 'ISABELLE', 'MICHEL', 'SYLVIE', 'PHILIPPE', 'CATHERINE', 'NICOLAS', 'SOPHIE', 'LAURENT'];
/** Other activities of a town centre (they are dropped, but place each commune's reference point). */
const OTHER_NAF = ['56.10A', '10.71C', '47.11B', '86.21Z', '69.20Z', '47.73Z', '68.20B'];
const VOIE_CODES = new Set(['AV', 'BD', 'RUE', 'PL', 'QUAI', 'COURS', 'RTE', 'MONTEE', 'GRANDE', 'IMP', 'ALL', 'CHE']);

/** Check digit making `body + d` pass the Luhn test (SIREN: 8 + 1 digits; SIRET: 13 + 1). */
export function luhnComplete(body: string): string {
  for (let d = 0; d <= 9; d++) {
    const s = body + d;
    let sum = 0;
    for (let i = 0; i < s.length; i++) {
      let x = Number(s[s.length - 1 - i]);
      if (i % 2 === 1) x = x * 2 > 9 ? x * 2 - 9 : x * 2;
      sum += x;
    }
    if (sum % 10 === 0) return s;
  }
  throw new Error('unreachable');
}

interface Unit {
  siren: string;
  partial: boolean;
  soleTrader: boolean;
  denomination: string;
  nom: string;
  prenom: string;
  naf: string;
  created: string;
  nicSiege: string;
  active: boolean;
}

type Row = Record<string, string>;

export interface SireneDemoTruth {
  snapshot: string;
  files: string[];
  /** Establishment lines written, all activities and states. */
  lines: number;
  /** Active establishments of the seven business types (what the search can return), and of those partially diffusible. */
  kept: number;
  partial: number;
  byType: Record<BusinessType, number>;
}

/** Where a demo commune's establishments are written: Paris per arrondissement, as Etalab splits it. */
const fileDepOf = (c: Commune) => (c.dep === '75' ? c.code : c.dep);

function establishmentsPerCommune(c: Commune): number {
  if (c.dep === '75') return 30;
  if (c.dep === '69') return 14;
  if (c.code === '33063') return 60;
  return Math.max(3, Math.round(c.volume / 15));
}

export async function generateSirene(outDir: string, seed = 7_2025): Promise<SireneDemoTruth> {
  const rng = new Rng(seed);
  const units: Unit[] = [];
  const rows = new Map<string, Row[]>();
  const truth: SireneDemoTruth = {
    snapshot: DEMO_SIRENE_SNAPSHOT, files: [], lines: 0, kept: 0, partial: 0,
    byType: Object.fromEntries(Object.keys(NAF_BY_TYPE).map((t) => [t, 0])) as Record<BusinessType, number>,
  };
  let serial = 0;
  const newSiren = () => luhnComplete(String(31_000_000 + serial++ * 7919).padStart(8, '0').slice(-8));
  const date = (from: number, to: number) => `${rng.int(from, to)}-${String(rng.int(1, 12)).padStart(2, '0')}-${String(rng.int(1, 28)).padStart(2, '0')}`;
  const fill = (pattern: string) => pattern.replace(/\{w\}/g, () => rng.pick(WORDS)).replace(/\{n\}/g, () => rng.pick(LAST_NAMES));
  // Networks: a few firms with a head office in one city and branches in the others.
  const networks: Unit[] = ['AGENCE DU CENTRE', 'SYNDIC HORIZON', 'ATLANTIQUE COURTAGE'].map((name, i) => ({
    siren: newSiren(), partial: false, soleTrader: false, denomination: name, nom: '', prenom: '',
    naf: ['68.31Z', '68.32A', '66.12Z'][i], created: date(1985, 2005), nicSiege: '', active: true,
  }));
  units.push(...networks);
  const networkNics = new Map<string, number>();

  const communes = [...COMMUNES].sort((a, b) => a.code.localeCompare(b.code));
  for (const c of communes) {
    const out = rows.get(fileDepOf(c)) ?? [];
    rows.set(fileDepOf(c), out);
    const place = () => {
      const street = rng.pick(c.streets);
      const [first, ...rest] = street.name.split(' ');
      const typed = VOIE_CODES.has(first) && first !== 'GRANDE';
      const angle = rng.uniform(0, 2 * Math.PI);
      const dist = c.radiusKm * 1.4 * Math.sqrt(rng.next());
      const lat = c.lat + (dist * Math.sin(angle)) / 111.32;
      const lon = c.lon + (dist * Math.cos(angle)) / (111.32 * Math.cos((c.lat * Math.PI) / 180));
      return {
        numero: String(rng.int(1, 120)), indice: rng.chance(0.05) ? 'B' : '', typeVoie: typed ? first : '',
        libelle: typed ? rest.join(' ') : street.name, cp: street.cp, lat: lat.toFixed(6), lon: lon.toFixed(6),
      };
    };
    const line = (u: Unit, opts: { naf: string; siege: boolean; nic: string; etat: string; enseigne?: string }) => {
      const p = place();
      const siret = luhnComplete(u.siren + opts.nic);
      const nd = u.partial;
      const commune = c.dep === '75' ? `PARIS ${Number(c.code.slice(3))}` : c.dep === '69' ? `LYON ${Number(c.code.slice(3))}` : c.name.toUpperCase();
      const street = [p.numero + p.indice, p.typeVoie, p.libelle].filter(Boolean).join(' ');
      const row: Row = {
        siren: u.siren, nic: siret.slice(9), siret, statutDiffusionEtablissement: nd ? 'P' : 'O',
        dateCreationEtablissement: opts.siege ? u.created : date(2006, 2024), trancheEffectifsEtablissement: nd ? '' : rng.pick(['NN', '01', '02', '03', '11']),
        dateDernierTraitementEtablissement: truth.lines === 0 ? `${DEMO_SIRENE_SNAPSHOT}T23:10:00` : `${date(2019, 2024)}T10:${String(rng.int(10, 59))}:00`, etablissementSiege: String(opts.siege),
        nombrePeriodesEtablissement: String(rng.int(1, 4)), numeroVoieEtablissement: nd ? '[ND]' : p.numero,
        indiceRepetitionEtablissement: nd ? '[ND]' : p.indice, typeVoieEtablissement: nd ? '[ND]' : p.typeVoie,
        libelleVoieEtablissement: nd ? '[ND]' : p.libelle, codePostalEtablissement: p.cp, libelleCommuneEtablissement: commune,
        codeCommuneEtablissement: c.code, dateDebut: date(2008, 2024), etatAdministratifEtablissement: opts.etat,
        enseigne1Etablissement: nd ? '[ND]' : opts.enseigne ?? '', activitePrincipaleEtablissement: opts.naf,
        nomenclatureActivitePrincipaleEtablissement: 'NAFRev2', caractereEmployeurEtablissement: rng.pick(['O', 'N']),
        longitude: nd ? '[ND]' : p.lon, latitude: nd ? '[ND]' : p.lat, geo_score: nd ? '' : rng.uniform(0.55, 0.98).toFixed(2),
        geo_type: nd ? 'municipality' : 'housenumber', geo_adresse: nd ? '' : `${street} ${p.cp} ${commune}`,
      };
      out.push(row);
      truth.lines++;
      return row;
    };

    const n = establishmentsPerCommune(c);
    for (let i = 0; i < n; i++) {
      const type = rng.weighted(TYPE_WEIGHTS);
      const codes = NAF_BY_TYPE[type];
      const naf = codes[rng.int(0, codes.length - 1)];
      // INSEE writes the dot; one line in eight of the demo does not, as some re-publications.
      const written = rng.chance(0.125) ? naf : `${naf.slice(0, 2)}.${naf.slice(2)}`;
      const active = rng.chance(0.9);
      const network = type !== 'notaire' && type !== 'bailleur' && rng.chance(0.08) ? networks.find((u) => u.naf.replace('.', '') === naf) : undefined;
      if (network) {
        const k = (networkNics.get(network.siren) ?? 0) + 1;
        networkNics.set(network.siren, k);
        const siege = !network.nicSiege;
        const nic = String(k * 10).padStart(4, '0');
        if (siege) network.nicSiege = luhnComplete(network.siren + nic).slice(9);
        line(network, { naf: written, siege, nic, etat: 'A', enseigne: rng.chance(0.5) ? `${network.denomination} ${c.name.toUpperCase()}` : '' });
        truth.kept++;
        truth.byType[type]++;
        continue;
      }
      const soleTrader = type !== 'notaire' && type !== 'promoteur' && rng.chance(0.2);
      const partial = soleTrader && rng.chance(0.4);
      const u: Unit = {
        siren: newSiren(), partial, soleTrader, denomination: soleTrader ? '' : fill(rng.pick(NAME_PATTERNS[type])),
        nom: soleTrader ? rng.pick(LAST_NAMES) : '', prenom: soleTrader ? rng.pick(FIRST_NAMES) : '', naf: written,
        created: date(1975, 2024), nicSiege: '', active,
      };
      units.push(u);
      const nic = '0001';
      u.nicSiege = luhnComplete(u.siren + nic).slice(9);
      // A sole trader's shop sign is often their own name: exactly what partial diffusion must not reveal.
      const enseigne = soleTrader ? `${u.prenom} ${u.nom} IMMOBILIER` : rng.chance(0.15) ? fill(rng.pick(NAME_PATTERNS[type])) : '';
      line(u, { naf: written, siege: true, nic, etat: active ? 'A' : 'F', enseigne });
      if (active) {
        truth.kept++;
        truth.byType[type]++;
        if (partial) truth.partial++;
      }
    }
    // Other activities, all fully diffusible and active: the commune's reference point.
    for (let i = 0; i < Math.max(3, Math.round(n / 2)); i++) {
      const u: Unit = {
        siren: newSiren(), partial: false, soleTrader: false, denomination: `${rng.pick(['CAFE', 'BOULANGERIE', 'PHARMACIE', 'CABINET'])} ${rng.pick(WORDS)}`,
        nom: '', prenom: '', naf: rng.pick(OTHER_NAF), created: date(1980, 2024), nicSiege: '', active: true,
      };
      units.push(u);
      u.nicSiege = luhnComplete(u.siren + '0001').slice(9);
      line(u, { naf: u.naf, siege: true, nic: '0001', etat: 'A' });
    }
  }

  const cell = (v: string) => (/[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
  const csv = (header: string[], list: Row[]) => [header.join(','), ...list.map((r) => header.map((h) => cell(r[h] ?? '')).join(','))].join('\n') + '\n';
  // Paris is published per arrondissement: all twenty files exist, those outside the demo hold only the header.
  const fileDeps = new Set([...rows.keys(), ...Array.from({ length: 20 }, (_, i) => `751${String(i + 1).padStart(2, '0')}`)]);
  for (const fd of [...fileDeps].sort()) {
    const rel = geoSireneRelPath(fd);
    await mkdir(join(outDir, GEO_SIRENE_DIR), { recursive: true });
    await writeFile(join(outDir, rel), gzipSync(csv(GEO_SIRENE_HEADER, rows.get(fd) ?? [])));
    truth.files.push(rel);
  }
  const ulRows = units.map((u): Row => ({
    siren: u.siren, statutDiffusionUniteLegale: u.partial ? 'P' : 'O', dateCreationUniteLegale: u.created,
    sexeUniteLegale: u.soleTrader ? (u.partial ? '[ND]' : rng.pick(['M', 'F'])) : '',
    prenom1UniteLegale: u.partial ? '[ND]' : u.prenom, prenomUsuelUniteLegale: u.partial ? '[ND]' : u.prenom,
    dateDernierTraitementUniteLegale: `${date(2019, 2024)}T08:00:00`, nombrePeriodesUniteLegale: '1', dateDebut: u.created,
    etatAdministratifUniteLegale: u.active ? 'A' : 'C', nomUniteLegale: u.partial ? '[ND]' : u.nom, denominationUniteLegale: u.denomination,
    categorieJuridiqueUniteLegale: u.soleTrader ? '1000' : rng.pick(['5499', '5710', '6540', '5720']), activitePrincipaleUniteLegale: u.naf,
    nomenclatureActivitePrincipaleUniteLegale: 'NAFRev2', nicSiegeUniteLegale: u.nicSiege, caractereEmployeurUniteLegale: 'N',
  }));
  await mkdir(join(outDir, 'insee-sirene'), { recursive: true });
  await writeFile(join(outDir, UNITE_LEGALE_FILE), csv(UNITE_LEGALE_HEADER, ulRows.sort((a, b) => a.siren.localeCompare(b.siren))));
  truth.files.push(UNITE_LEGALE_FILE);
  return truth;
}
