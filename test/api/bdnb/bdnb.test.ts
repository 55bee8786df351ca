// The BDNB endpoints on the demo dataset: each in the shared contract, the DVF × BDNB matching redone here in
// TypeScript from the demo's BDNB files (parcel relation, else brute-force nearest group within 200 m), and every
// statistic of age-stats, renovation-score and stats recomputed from those files and the clean rows of `ventes`.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paths } from '../../../lib/config';
import { balanceOf, startTestApi, type TestApi } from '../../helpers/api';
import { describeContract } from '../../helpers/contract';
import { testData } from '../../helpers/data';
import { queryParquet, splitCsv } from '../../helpers/samples';
import { mean, median, r2 } from '../../helpers/stats';

const TRANCHES = ['avant_1919', '1919_1945', '1946_1970', '1971_1990', '1991_2005', '2006_plus'] as const;
const trancheOf = (y: number) => (y < 1919 ? 0 : y <= 1945 ? 1 : y <= 1970 ? 2 : y <= 1990 ? 3 : y <= 2005 ? 4 : 5);

interface Sale { id: number; parcel: string | null; lat: number | null; lon: number | null; type: string; ppm2: number | null; clean: boolean; cp: string | null; dep: string; commune: string }
interface Group { id: string; dep: string; commune: string; lat: number; lon: number; year: number | null; nbLog: number | null; wall: string | null; usage: string | null }

let api: TestApi;
const sales: Sale[] = [];
const groups = new Map<string, Group>();
/** parcel → [group, main parcel?] from the demo's rel_batiment_groupe_parcelle. */
const rel = new Map<string, Array<[string, boolean]>>();
/** Sale id → [group id, method], computed here. */
const match = new Map<number, [string, 'parcelle' | 'distance']>();
/** Distance (m) of the distance matches, computed here. */
const distances: number[] = [];

function readCsv(file: string): Array<Record<string, string>> {
  const [head, ...lines] = fs.readFileSync(file, 'utf8').trim().split('\n');
  const header = splitCsv(head);
  return lines.map((l) => Object.fromEntries(splitCsv(l).map((v, i) => [header[i], v])));
}

function haversine(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const r = Math.PI / 180;
  const h = Math.sin(((lat2 - lat1) * r) / 2) ** 2 + Math.cos(lat1 * r) * Math.cos(lat2 * r) * Math.sin(((lon2 - lon1) * r) / 2) ** 2;
  return 2 * 6_371_008.8 * Math.asin(Math.sqrt(h));
}

beforeAll(async () => {
  const dataRoot = await testData('demo');
  api = await startTestApi({ dataRoot, now: '2026-01-15T12:00:00Z' });
  // The demo's BDNB files, read here (positions from the bdnb_batiments mart: the centroid has its own tests).
  const root = path.join(paths.demoSource(dataRoot), 'bdnb_millesime_2025-07-a');
  const positions = new Map((await queryParquet(`select batiment_groupe_id, latitude, longitude from '${path.join(dataRoot, 'marts', 'bdnb_batiments.parquet')}'`))
    .map((r) => [r.batiment_groupe_id as string, [r.latitude as number, r.longitude as number]]));
  for (const depDir of fs.readdirSync(root)) {
    const dir = path.join(root, depDir, fs.readdirSync(path.join(root, depDir))[0], 'csv');
    const ffo = new Map(readCsv(path.join(dir, 'batiment_groupe_ffo_bat.csv')).map((r) => [r.batiment_groupe_id, r]));
    for (const g of readCsv(path.join(dir, 'batiment_groupe.csv'))) {
      const f = ffo.get(g.batiment_groupe_id)!;
      const [lat, lon] = positions.get(g.batiment_groupe_id)!;
      groups.set(g.batiment_groupe_id, {
        id: g.batiment_groupe_id, dep: g.code_departement_insee, commune: g.code_commune_insee, lat, lon,
        year: f.annee_construction ? Number(f.annee_construction) : null, nbLog: f.nb_log ? Number(f.nb_log) : null,
        wall: f.mat_mur_txt || null, usage: f.usage_niveau_1_txt || null,
      });
    }
    for (const r of readCsv(path.join(dir, 'rel_batiment_groupe_parcelle.csv'))) {
      rel.set(r.parcelle_id, [...(rel.get(r.parcelle_id) ?? []), [r.batiment_groupe_id, r.parcelle_principale === 't']]);
    }
  }
  for (const r of await queryParquet(`select id, id_parcelle, latitude, longitude, type_local, prix_m2, code_postal, code_departement, code_commune_actuel,
      not (is_bulk_sale or is_outlier or is_vefa) and prix_m2 is not null as clean from '${path.join(dataRoot, 'marts', 'ventes.parquet')}'`)) {
    sales.push({
      id: r.id as number, parcel: r.id_parcelle as string | null, lat: r.latitude as number | null, lon: r.longitude as number | null, type: r.type_local as string,
      ppm2: r.prix_m2 as number | null, clean: r.clean as boolean, cp: r.code_postal as string | null, dep: r.code_departement as string, commune: r.code_commune_actuel as string,
    });
  }
  // The matching rule, brute force: the parcel's groups (main parcel first, then the larger footprint: every demo
  // parcel has one group), else the nearest group of the département within 200 m.
  const byDep = new Map<string, Group[]>();
  for (const g of groups.values()) byDep.set(g.dep, [...(byDep.get(g.dep) ?? []), g]);
  for (const s of sales) {
    const onParcel = (s.parcel ? rel.get(s.parcel) ?? [] : []).filter(([g]) => groups.has(g)).sort((a, b) => Number(b[1]) - Number(a[1]));
    if (onParcel.length) {
      match.set(s.id, [onParcel[0][0], 'parcelle']);
      continue;
    }
    if (s.lat === null || s.lon === null) continue;
    let best: [string, number] | null = null;
    for (const g of byDep.get(s.dep) ?? []) {
      const d = haversine(s.lat, s.lon, g.lat, g.lon);
      if (d <= 200 && (!best || d < best[1])) best = [g.id, d];
    }
    if (best) {
      match.set(s.id, [best[0], 'distance']);
      distances.push(best[1]);
    }
  }
}, 300_000);
afterAll(() => api?.close());
const get = () => api;

describe('DVF × BDNB matching', () => {
  it('matches every sale as the rule redone here does: most by parcel, some by distance, a few not at all', async () => {
    const mart = new Map((await queryParquet(`select id, batiment_groupe_id, match_method from '${path.join(api.dataRoot, 'marts', 'bdnb_ventes.parquet')}'`))
      .map((r) => [r.id as number, [r.batiment_groupe_id as string, r.match_method as string]]));
    expect(mart.size).toBe(match.size);
    let diff = 0;
    for (const [id, m] of match) if (mart.get(id)?.[0] !== m[0] || mart.get(id)?.[1] !== m[1]) diff++;
    expect(diff).toBe(0);
    const methods = [...match.values()].map((m) => m[1]);
    const byParcel = methods.filter((m) => m === 'parcelle').length / sales.length;
    const byDistance = methods.filter((m) => m === 'distance').length / sales.length;
    expect(byParcel).toBeGreaterThan(0.8);
    expect(byDistance).toBeGreaterThan(0.05);
    expect(sales.length - match.size).toBeGreaterThan(10);
    // both grids of the mart's distance search are exercised: matches within 50 m and beyond
    expect(distances.filter((d) => d <= 50).length).toBeGreaterThan(100);
    expect(distances.filter((d) => d > 50).length).toBeGreaterThan(100);
    expect((sales.length - match.size) / sales.length).toBeLessThan(0.01);
  });
});

describe('GET /v1/transactions/:id/bdnb', () => {
  const saleMatchedBy = (method: string) => sales.find((s) => match.get(s.id)?.[1] === method && s.lat !== null)!;

  it('returns the building matched by parcel or by distance, with the Building fields', async () => {
    for (const method of ['parcelle', 'distance']) {
      const s = saleMatchedBy(method);
      const g = groups.get(match.get(s.id)![0])!;
      const r = await api.get(`/v1/transactions/${s.id}/bdnb`, api.key());
      expect(r.status).toBe(200);
      expect(r.body.transaction_id).toBe(String(s.id));
      expect(r.body.building).toMatchObject({
        batiment_groupe_id: g.id, annee_construction: g.year, nb_logements: g.nbLog, materiaux_murs: g.wall, usage_niveau_1: g.usage, match_method: method,
      });
      expect(Object.keys(r.body.building).sort()).toEqual(['annee_construction', 'batiment_groupe_id', 'dvf_nb_mutations', 'dvf_prix_m2_median', 'match_distance_m',
        'match_method', 'materiaux_murs', 'materiaux_toit', 'nb_etages', 'nb_logements', 'usage_niveau_1', 'usage_principal'].sort());
      expect(Math.abs(r.body.building.match_distance_m - haversine(s.lat!, s.lon!, g.lat, g.lon))).toBeLessThan(0.1);
      if (method === 'distance') expect(r.body.building.match_distance_m).toBeLessThanOrEqual(200);
    }
  });

  it('answers 404 not_found for a sale without a building, and refunds the 2 credits', async () => {
    const s = sales.find((x) => !match.has(x.id))!;
    const key = api.key({ balance: 10 });
    const r = await api.get(`/v1/transactions/${s.id}/bdnb`, key);
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe('not_found');
    expect(balanceOf(api, key)).toBe(10);
  });
});

/** The clean sales of a zone and types, with their building's year (matched here). */
function zoneSales(inZone: (s: Sale) => boolean, types: string[]) {
  const zone = sales.filter((s) => s.clean && types.includes(s.type) && inZone(s));
  const dated = zone.flatMap((s) => {
    const m = match.get(s.id);
    const g = m && groups.get(m[0]);
    return g && g.year !== null ? [{ ppm2: s.ppm2!, year: g.year, wall: g.wall }] : [];
  });
  return { zone, dated, zoneMedian: median(zone.map((s) => s.ppm2!)) };
}

describe('GET /v1/bdnb/age-stats', () => {
  it.each([
    ['code_postal=75011&type_local=Appartement', (s: Sale) => s.cp === '75011', ['Appartement']],
    ['code_departement=23', (s: Sale) => s.dep === '23', ['Maison', 'Appartement']],
    ['commune=Lyon%203e%20Arrondissement&type_local=Appartement', (s: Sale) => s.commune === '69383', ['Appartement']],
  ] as const)('%s: each bracket’s count, median, mean and gap to the zone median as recomputed here', async (query, inZone, types) => {
    const { dated, zoneMedian } = zoneSales(inZone, [...types]);
    const r = await api.get(`/v1/bdnb/age-stats?${query}`, api.key());
    expect(r.status).toBe(200);
    expect(r.body.prix_m2_median_zone).toBe(r2(zoneMedian));
    expect(r.body.nb_total).toBe(dated.length);
    expect(r.body.tranches.map((t: { tranche: string }) => t.tranche)).toEqual(TRANCHES);
    TRANCHES.forEach((tranche, i) => {
      const xs = dated.filter((d) => trancheOf(d.year) === i).map((d) => d.ppm2);
      const t = r.body.tranches[i];
      expect(t.nb).toBe(xs.length);
      expect(t.statistically_fragile).toBe(xs.length < 30);
      if (!xs.length) return expect(t).toMatchObject({ prix_m2_median: null, prix_m2_moyen: null, vs_zone_pct: null });
      expect(t.prix_m2_median).toBe(r2(median(xs)));
      expect(Math.abs(t.prix_m2_moyen - mean(xs))).toBeLessThan(0.006);
      expect(Math.abs(t.vs_zone_pct - (median(xs) / zoneMedian - 1) * 100)).toBeLessThan(0.006);
    });
  });

  it('recovers the planted age effect in Paris: the brackets in the planted order around the zone median', async () => {
    const r = await api.get('/v1/bdnb/age-stats?code_departement=75&type_local=Appartement', api.key());
    const pct = Object.fromEntries(r.body.tranches.map((t: { tranche: string; vs_zone_pct: number }) => [t.tranche, t.vs_zone_pct]));
    // planted factors: 1946–1970 × 0.80 < pre-1919 × 0.86 < 1991–2005 × 1 < 2006+ × 1.08 (the zone median sits among them)
    expect(pct['1946_1970']).toBeLessThan(pct.avant_1919);
    expect(pct.avant_1919).toBeLessThan(-3);
    expect(pct['1991_2005']).toBeGreaterThan(3);
    expect(pct['2006_plus']).toBeGreaterThan(pct['1991_2005']);
  });

  it('refuses latitude/longitude with unsupported_location, without charging', async () => {
    const key = api.key({ balance: 100 });
    const r = await api.get('/v1/bdnb/age-stats?latitude=48.85&longitude=2.35', key);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('unsupported_location');
    expect(balanceOf(api, key)).toBe(100);
  });
});

describe('GET /v1/bdnb/renovation-score', () => {
  it.each([
    ['code_departement=75&type_local=Appartement', (s: Sale) => s.dep === '75', ['Appartement']],
    ['code_postal=33000', (s: Sale) => s.cp === '33000', ['Maison', 'Appartement']],
  ] as const)('%s: opportunities, medians, mean year, main wall material and score as recomputed here', async (query, inZone, types) => {
    const { zone, dated, zoneMedian } = zoneSales(inZone, [...types]);
    const old = dated.filter((d) => d.year < 1975);
    const opp = old.filter((d) => d.ppm2 < zoneMedian);
    const walls = new Map<string, number>();
    for (const o of opp) if (o.wall) walls.set(o.wall, (walls.get(o.wall) ?? 0) + 1);
    const wall = [...walls].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]?.[0] ?? null;
    const decote = r2((median(old.map((d) => d.ppm2)) / zoneMedian - 1) * 100);
    const r = await api.get(`/v1/bdnb/renovation-score?${query}`, api.key());
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      nb_opportunites: opp.length, prix_m2_median_vieux: r2(median(old.map((d) => d.ppm2))), prix_m2_median_zone: r2(zoneMedian),
      materiaux_murs_principal: wall, decote_vs_zone_pct: decote, total_transactions_zone: zone.length,
    });
    expect(Math.abs(r.body.annee_construction_moy - mean(opp.map((o) => o.year)))).toBeLessThan(0.006);
    // docs/methods.md: score = clamp(round(−decote_vs_zone_pct × 4), 0, 100), from the published figures
    expect(r.body.score).toBe(Math.min(100, Math.max(0, Math.round(-r.body.decote_vs_zone_pct * 4))));
    // the zone median is age-stats' own
    const ages = await api.get(`/v1/bdnb/age-stats?${query}`, api.key());
    expect(ages.body.prix_m2_median_zone).toBe(r.body.prix_m2_median_zone);
  });

  it('finds the planted discount of old Paris flats significant, and computes no score below 10 opportunities', async () => {
    const paris = await api.get('/v1/bdnb/renovation-score?code_departement=75&type_local=Appartement', api.key());
    expect(paris.body.decote_vs_zone_pct).toBeLessThan(0);
    expect(paris.body.score).toBeGreaterThan(0);
    const small = sales.filter((s) => s.clean && s.type === 'Appartement' && s.cp === '23150');
    expect(small.length).toBeLessThan(10);
    const r = await api.get('/v1/bdnb/renovation-score?code_postal=23150&type_local=Appartement', api.key());
    expect(r.status).toBe(200);
    expect(r.body.nb_opportunites).toBeLessThan(10);
    expect(r.body.score).toBeNull();
    expect(r.body.message).toMatch(/fewer than 10/);
  });
});

describe('GET /v1/bdnb/stats', () => {
  const usageClass = (u: string | null) => {
    const k = (u ?? '').normalize('NFD').replace(/[\u0300-\u036f]/g, '').toLowerCase();
    return k.startsWith('residentiel') ? 'residentiel' : k.includes('mixte') ? 'mixte' : /commercial|tertiaire|bureau/.test(k) ? 'tertiaire' : 'autre';
  };

  it.each([
    ['code_commune_insee=75111', (g: Group) => g.commune === '75111', false],
    ['code_departement=23', (g: Group) => g.dep === '23', false],
    ['commune=Bordeaux', (g: Group) => g.commune === '33063', false],
    ['code_postal=75011', (g: Group) => g.dep === '75', true],
  ] as const)('%s: every building of the zone, sold or not, as counted here', async (query, inZone, notice) => {
    const zone = [...groups.values()].filter(inZone);
    const dated = zone.filter((g) => g.year !== null);
    const r = await api.get(`/v1/bdnb/stats?${query}`, api.key());
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      nb_batiments: zone.length,
      nb_avec_annee: dated.length,
      nb_logements_total: zone.reduce((a, g) => a + (g.nbLog ?? 0), 0),
      par_tranche: Object.fromEntries(TRANCHES.map((t, i) => [t, dated.filter((g) => trancheOf(g.year!) === i).length])),
      par_usage: Object.fromEntries(['residentiel', 'tertiaire', 'mixte', 'autre'].map((u) => [u, zone.filter((g) => usageClass(g.usage) === u).length])),
      pct_vieux: r2((100 * dated.filter((g) => g.year! < 1975).length) / dated.length),
    });
    expect(Math.abs(r.body.annee_construction_median - median(dated.map((g) => g.year!)))).toBeLessThan(0.006);
    // more buildings than sold ones: the stock counts unsold buildings too
    expect(zone.length).toBeGreaterThan(new Set([...match.values()].map((m) => m[0]).filter((id) => inZone(groups.get(id)!))).size);
    if (notice) expect(r.body.notice).toMatch(/département 75/);
    else expect(r.body.notice).toBeUndefined();
  });
});

describe('GET /v1/meta/sources', () => {
  it('lists the BDNB millésime, its départements and its buildings', async () => {
    const r = await api.get('/v1/meta/sources', api.key());
    expect(r.body.sources.find((x: { source: string }) => x.source === 'bdnb')).toMatchObject({
      available: true, vintage: '2025-07-a', served_rows: groups.size, departements: ['23', '33', '69', '75'],
    });
  });
});

describeContract('GET /v1/transactions/:id/bdnb', get, {
  // the demo's first Paris sale (ids are deterministic), matched by parcel
  path: '/v1/transactions/201907500000001/bdnb',
  cost: 2,
  notFound: '/v1/transactions/999999999999/bdnb',
  invalid: { path: '/v1/transactions/abc/bdnb', param: 'id' },
});
describeContract('GET /v1/bdnb/age-stats', get, {
  path: '/v1/bdnb/age-stats?code_postal=75011&type_local=Appartement',
  cost: 10,
  withoutLocation: '/v1/bdnb/age-stats?type_local=Appartement',
  invalid: { path: '/v1/bdnb/age-stats?code_postal=75011&type_local=Terrain', param: 'type_local' },
});
describeContract('GET /v1/bdnb/renovation-score', get, {
  path: '/v1/bdnb/renovation-score?code_departement=75',
  cost: 10,
  withoutLocation: '/v1/bdnb/renovation-score?type_local=Maison',
  invalid: { path: '/v1/bdnb/renovation-score?code_departement=75&type_local=Villa', param: 'type_local' },
});
describeContract('GET /v1/bdnb/stats', get, {
  path: '/v1/bdnb/stats?code_commune_insee=75111',
  cost: 5,
  withoutLocation: '/v1/bdnb/stats',
  invalid: { path: '/v1/bdnb/stats?code_commune_insee=7511', param: 'code_commune_insee' },
});
