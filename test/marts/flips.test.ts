// The flips rules pinned on hand-made sales: a tiny geo-DVF tree in the real format, run through the real pipeline and
// marts, then read from the flips mart and GET /v1/flips. Each case is two sales of one property (or of two
// neighbours) and says whether they must be paired, and by which method. Prices keep €/m² within 1,850–2,500 so that
// no sale is an outlier.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paths } from '../../lib/config';
import { buildMarts } from '../../marts/runner';
import { GEO_DVF_HEADER } from '../../pipeline/demo/generate';
import { runSource } from '../../pipeline/run';
import { startTestApi, type TestApi } from '../helpers/api';
import { queryParquet, tempDir, writeGeoFile } from '../helpers/samples';

const COMMUNE = { code: '33001', nom: 'Abzac', cp: '33230', dep: '33' };

interface Property {
  /** id_parcelle's section and plan, e.g. 'AB0001' (the commune and prefix are added). */
  parcel: string;
  numero: string;
  voie: string;
  type: 'Maison' | 'Appartement';
  surface: number;
  lot?: string;
}

interface Sale extends Property {
  date: string;
  price: number;
  /** More dwellings sold in the same deed (a multi-lot sale). */
  extra?: Property[];
}

interface Case {
  name: string;
  buy: Sale;
  sell: Sale;
  expect: 'cadastre' | 'adresse_surface' | null;
}

const house = (parcel: string, numero: string, surface: number, voie = 'RUE DES LILAS'): Property => ({ parcel, numero, voie, type: 'Maison', surface });
const flat = (parcel: string, lot: string, surface: number): Property => ({ parcel, numero: '3', voie: 'COURS DU PORT', type: 'Appartement', surface, lot });
const sale = (p: Property, date: string, price: number, extra?: Property[]): Sale => ({ ...p, date, price, extra });

const CASES: Case[] = [
  { name: 'exactly 18 months', buy: sale(house('AA0001', '1', 100), '2021-03-10', 200_000), sell: sale(house('AA0001', '1', 100), '2022-09-10', 230_000), expect: 'cadastre' },
  { name: '18 months minus a day', buy: sale(house('AA0002', '2', 100), '2021-03-10', 200_000), sell: sale(house('AA0002', '2', 100), '2022-09-09', 230_000), expect: null },
  { name: 'exactly 24 months', buy: sale(house('AA0003', '3', 100), '2021-03-10', 200_000), sell: sale(house('AA0003', '3', 100), '2023-03-10', 240_000), expect: 'cadastre' },
  { name: '24 months plus a day', buy: sale(house('AA0004', '4', 100), '2021-03-10', 200_000), sell: sale(house('AA0004', '4', 100), '2023-03-11', 240_000), expect: null },
  { name: '17 months', buy: sale(house('AA0005', '5', 90), '2021-04-12', 180_000), sell: sale(house('AA0005', '5', 90), '2022-09-12', 200_000), expect: null },
  { name: '25 months', buy: sale(house('AA0006', '6', 90), '2021-04-12', 180_000), sell: sale(house('AA0006', '6', 90), '2023-05-12', 210_000), expect: null },
  { name: '31 August + 18 months is 28 February', buy: sale(house('AA0007', '7', 80), '2021-08-31', 160_000), sell: sale(house('AA0007', '7', 80), '2023-02-28', 180_000), expect: 'cadastre' },
  { name: 'a house bought with a second house (bulk) never matches', buy: sale(house('AA0008', '8', 100), '2021-06-01', 300_000, [house('AA0009', '8', 60)]), sell: sale(house('AA0008', '8', 100), '2022-12-01', 220_000), expect: null },
  { name: 'a flat resold within a sale of two flats never matches', buy: sale(flat('AC0001', '5', 50), '2021-06-01', 150_000), sell: sale(flat('AC0001', '5', 50), '2023-01-05', 330_000, [flat('AC0001', '6', 55)]), expect: null },
  { name: 'same parcel and lot', buy: sale(flat('AC0002', '12', 45), '2021-05-03', 140_000), sell: sale(flat('AC0002', '12', 45), '2023-01-16', 165_000), expect: 'cadastre' },
  { name: 'two different lots of one building at one address are neighbours', buy: sale(flat('AC0003', '7', 50), '2021-05-04', 150_000), sell: sale(flat('AC0003', '8', 52), '2023-01-17', 170_000), expect: null },
  { name: 'same address, divided parcel of the section, surface +20 %', buy: sale(house('AB0010', '12', 100), '2021-05-03', 210_000), sell: sale(house('AB0011', '12', 120), '2023-01-05', 260_000), expect: 'adresse_surface' },
  { name: 'same address, surface -20 %', buy: sale(house('AB0012', '16', 100), '2021-05-03', 200_000), sell: sale(house('AB0013', '16', 80), '2023-01-05', 185_000), expect: 'adresse_surface' },
  { name: 'same address, surface +25 %', buy: sale(house('AB0014', '14', 100), '2021-05-03', 210_000), sell: sale(house('AB0015', '14', 125), '2023-01-05', 280_000), expect: null },
  { name: 'same address in another section', buy: sale(house('AB0016', '18', 100), '2021-05-03', 210_000), sell: sale(house('AD0017', '18', 100), '2023-01-05', 235_000), expect: null },
  { name: 'a house resold five years later (the latest sale: the window is 2022-12-17 to 2024-12-16)', buy: sale(house('AA0010', '30', 100), '2019-12-16', 200_000), sell: sale(house('AA0010', '30', 100), '2024-12-16', 240_000), expect: null },
  { name: 'same parcel, surface changed by 10 %', buy: sale(house('AB0018', '20', 100), '2021-05-03', 210_000), sell: sale(house('AB0018', '20', 110), '2023-01-05', 250_000), expect: 'adresse_surface' },
];

/** One geo-DVF line per property of a sale, in the published 40-column layout. */
function lines(id: string, s: Sale): string[] {
  return [s, ...(s.extra ?? [])].map((p) => {
    const f: Record<string, string> = {
      id_mutation: id, date_mutation: s.date, numero_disposition: '000001', nature_mutation: 'Vente', valeur_fonciere: String(s.price),
      adresse_numero: p.numero, adresse_nom_voie: p.voie, adresse_code_voie: '0100', code_postal: COMMUNE.cp, code_commune: COMMUNE.code,
      nom_commune: COMMUNE.nom, code_departement: COMMUNE.dep, id_parcelle: `${COMMUNE.code}000${p.parcel}`,
      lot1_numero: p.lot ?? '', lot1_surface_carrez: p.lot ? String(p.surface) : '', nombre_lots: p.lot ? String(1 + (s.extra?.length ?? 0)) : '0',
      code_type_local: p.type === 'Maison' ? '1' : '2', type_local: p.type, surface_reelle_bati: String(p.surface), nombre_pieces_principales: '4',
      code_nature_culture: p.type === 'Maison' ? 'S' : '', nature_culture: p.type === 'Maison' ? 'sols' : '', surface_terrain: p.type === 'Maison' ? '600' : '',
      longitude: '-0.14', latitude: '45.02',
    };
    return GEO_DVF_HEADER.map((c) => f[c] ?? '').join(',');
  });
}

let api: TestApi;
let pairs: Array<{ date_achat: string; date_revente: string; achat: string; revente: string; methode: string; marge_brute: number; duree_detention_jours: number }>;
const sales = CASES.flatMap((c) => [c.buy, c.sell]);

beforeAll(async () => {
  const tree = tempDir('foncier-flips-tree-');
  const years = [...new Set(sales.map((s) => Number(s.date.slice(0, 4))))];
  for (const y of years) {
    const rows = sales.flatMap((s, i) => (s.date.startsWith(`${y}-`) ? lines(`${y}-${i + 1}`, s) : []));
    writeGeoFile(tree, y, COMMUNE.dep, [GEO_DVF_HEADER.join(','), ...rows].join('\n') + '\n');
  }
  const dataRoot = tempDir('foncier-flips-');
  await runSource({ source: 'dvf', fromDir: tree, annees: years, departements: [COMMUNE.dep], dataRoot });
  await buildMarts({ dataRoot });
  const marts = paths.marts(dataRoot);
  pairs = (await queryParquet(
    `select strftime(f.date_achat, '%Y-%m-%d') as date_achat, strftime(f.date_revente, '%Y-%m-%d') as date_revente,
       a.id_parcelle as achat, r.id_parcelle as revente, f.methode, f.marge_brute, f.duree_detention_jours
     from read_parquet('${path.join(marts, 'flips.parquet')}') f
     join read_parquet('${path.join(marts, 'ventes.parquet')}') a on a.id = f.id_achat
     join read_parquet('${path.join(marts, 'ventes.parquet')}') r on r.id = f.id_revente`,
  )) as typeof pairs;
  api = await startTestApi({ dataRoot, now: '2026-03-01T12:00:00Z' });
}, 120_000);
afterAll(() => api?.close());

const pid = (p: Property) => `${COMMUNE.code}000${p.parcel}`;
const pairOf = (c: Case) => pairs.find((p) => p.achat === pid(c.buy) && p.date_achat === c.buy.date && p.revente === pid(c.sell) && p.date_revente === c.sell.date);

describe('flips mart rules on hand-made sales', () => {
  it.each(CASES.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const p = pairOf(c);
    expect(p?.methode ?? null).toBe(c.expect);
    if (p) {
      expect(p.marge_brute).toBe(c.sell.price - c.buy.price);
      expect(p.duree_detention_jours).toBe((Date.parse(c.sell.date) - Date.parse(c.buy.date)) / 86_400_000);
    }
  });

  it('pairs nothing the cases do not expect', () => {
    expect(pairs.length).toBe(CASES.filter((c) => c.expect).length);
  });
});

describe('GET /v1/flips on hand-made sales', () => {
  it('counts the flips whose resale falls in the 24 months ending at the commune’s latest sale', async () => {
    const r = await api.get(`/v1/flips?code_insee=${COMMUNE.code}`, api.key());
    expect(r.status).toBe(200);
    const date_fin = sales.map((s) => s.date).sort().at(-1)!;
    // the window's first day: date_fin − 24 months + 1 day
    const [y, m, d] = date_fin.split('-').map(Number);
    const date_debut = new Date(Date.UTC(y - 2, m - 1, d + 1)).toISOString().slice(0, 10);
    const inside = (s: Sale) => s.date >= date_debut && s.date <= date_fin;
    // clean sales of houses: a sale of two houses is bulk and does not count
    const houses = sales.filter((s) => s.type === 'Maison' && !s.extra && inside(s)).length;
    const flips = CASES.filter((c) => c.expect && c.sell.type === 'Maison' && inside(c.sell));
    expect(flips.length).toBeGreaterThan(0);
    expect(flips.length).toBeLessThan(CASES.filter((c) => c.expect && c.sell.type === 'Maison').length);
    expect(r.body).toMatchObject({
      periode: { date_debut, date_fin, mois: 24 },
      transactions_revente: houses,
      flips_detectes: flips.length,
      taux_de_flip: Math.round((flips.length / houses) * 10000) / 100,
      methodes_detection: {
        cadastre: flips.filter((c) => c.expect === 'cadastre').length,
        adresse_surface: flips.filter((c) => c.expect === 'adresse_surface').length,
      },
    });
  });
});
