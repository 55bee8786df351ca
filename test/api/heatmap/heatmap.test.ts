// GET /v1/heatmap: the shared contract, its rules on the demo data (statistics and centroids recomputed here in
// TypeScript from `ventes` rows), and one check on the real geo-DVF sample recomputed from the CSV itself.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { relativePosition } from '../../../api/routes/heatmap/heatmap';
import { buildMarts } from '../../../marts/runner';
import { runSource } from '../../../pipeline/run';
import { startTestApi, type TestApi } from '../../helpers/api';
import { describeContract } from '../../helpers/contract';
import { testData } from '../../helpers/data';
import { GEO_SAMPLE, splitCsv, tempDir, writeGeoFile } from '../../helpers/samples';
import { mean, median, r2 } from '../../helpers/stats';

let demo: TestApi;
let sample: TestApi;
beforeAll(async () => {
  [demo, sample] = await Promise.all([startTestApi({ dataRoot: await testData('demo'), now: '2025-12-31T12:00:00Z' }), startTestApi()]);
}, 120_000);
afterAll(async () => {
  await demo?.close();
  await sample?.close();
});

const WINDOW = 'date_debut=2024-01-01&date_fin=2024-12-31';

describeContract('GET /v1/heatmap', () => demo, {
  path: `/v1/heatmap?commune=PARIS&${WINDOW}`,
  cost: 15,
  withoutLocation: `/v1/heatmap?${WINDOW}`,
  invalid: { path: `/v1/heatmap?commune=PARIS&min_transactions=0`, param: 'min_transactions' },
});

/** Quantile with linear interpolation between closest ranks (DuckDB's median). */

interface Sale {
  zone: string;
  prix_m2: number;
  valeur_fonciere: number;
  latitude: number | null;
  longitude: number | null;
}

/** Expected zones from raw `ventes` rows, with the cleaning rules applied here rather than by the mart. */
async function expectedZones(api: TestApi, zoneColumn: 'code_postal' | 'code_commune_actuel', where: string, type?: string) {
  const rows = await api.ctx.db.query<Sale & { type_local: string; is_bulk_sale: boolean; is_outlier: boolean; is_vefa: boolean; date_mutation: string }>(
    `select ${zoneColumn} as zone, type_local, prix_m2, valeur_fonciere, latitude, longitude, is_bulk_sale, is_outlier, is_vefa, date_mutation::VARCHAR as date_mutation
     from ventes where ${where}`,
  );
  const kept = rows.filter(
    (r) => ['Maison', 'Appartement'].includes(r.type_local) && (!type || r.type_local === type) && r.prix_m2 !== null &&
      !r.is_bulk_sale && !r.is_outlier && !r.is_vefa && r.date_mutation >= '2024-01-01' && r.date_mutation <= '2024-12-31',
  );
  const byZone = new Map<string, Sale[]>();
  for (const s of kept) byZone.set(s.zone, [...(byZone.get(s.zone) ?? []), s]);
  return { kept, byZone };
}

function zoneStats(sales: Sale[]) {
  const located = sales.filter((s) => s.latitude !== null);
  return {
    stats: {
      transaction_count: sales.length,
      price_m2_median: r2(median(sales.map((s) => s.prix_m2))),
      price_m2_avg: r2(mean(sales.map((s) => s.prix_m2))),
      price_median: r2(median(sales.map((s) => s.valeur_fonciere))),
    },
    lat: mean(located.map((s) => s.latitude!)),
    lon: mean(located.map((s) => s.longitude!)),
  };
}

describe('GET /v1/heatmap on the demo data', () => {
  it('commune=PARIS lists every arrondissement postal code, with statistics and centroids recomputed from ventes', async () => {
    const r = await demo.get(`/v1/heatmap?commune=PARIS&${WINDOW}&min_transactions=1`, demo.key());
    expect(r.status).toBe(200);
    const { kept, byZone } = await expectedZones(demo, 'code_postal', `code_commune_actuel like '751%'`);
    expect(byZone.size).toBeGreaterThanOrEqual(4);
    expect(r.body.zones.map((z: { code_postal: string }) => z.code_postal)).toEqual([...byZone.keys()].sort());
    const scopeMedian = median(kept.map((s) => s.prix_m2));
    expect(r.body.scope_average).toEqual({ price_m2_median: r2(scopeMedian), total_transactions: kept.length });
    for (const z of r.body.zones) {
      const want = zoneStats(byZone.get(z.code_postal)!);
      expect(z.stats).toEqual(want.stats);
      expect(z.centroid.lat).toBeCloseTo(want.lat, 6);
      expect(z.centroid.lon).toBeCloseTo(want.lon, 6);
      expect(z.name).toMatch(/^PARIS \d+E ARRONDISSEMENT$/);
      const gap = median(byZone.get(z.code_postal)!.map((s) => s.prix_m2)) / scopeMedian - 1;
      expect(z.relative_position).toBe(gap > 0.1 ? 'expensive' : gap < -0.1 ? 'affordable' : 'average');
      expect(Math.abs(Math.abs(gap) - 0.1)).toBeGreaterThan(1e-4); // no zone sits on a threshold
    }
    // The demo's Paris spans a wide price range: both ends of the scale are present.
    expect(new Set(r.body.zones.map((z: { relative_position: string }) => z.relative_position))).toEqual(new Set(['expensive', 'average', 'affordable']));
    expect(r.body.scope).toEqual({ department: null, commune: 'PARIS', group_by: 'code_postal' });
    expect(r.body.period).toEqual({ start: '2024-01-01', end: '2024-12-31' });
    expect(r.body.notice).toBeUndefined();
  });

  it('group_by=commune groups by INSEE code; type_local restricts the sales', async () => {
    const r = await demo.get(`/v1/heatmap?commune=lyon&${WINDOW}&group_by=commune&type_local=Appartement&min_transactions=1`, demo.key());
    expect(r.status).toBe(200);
    const { byZone } = await expectedZones(demo, 'code_commune_actuel', `code_commune_actuel like '6938%'`, 'Appartement');
    expect(r.body.zones.map((z: { code_commune: string }) => z.code_commune)).toEqual([...byZone.keys()].sort());
    expect(r.body.zones).toHaveLength(9);
    for (const z of r.body.zones) {
      expect(z.code_postal).toBeNull();
      expect(z.stats).toEqual(zoneStats(byZone.get(z.code_commune)!).stats);
    }
    expect(r.body.property_type).toBe('Appartement');
    expect(r.body.zones[0].name).toBe('LYON 1ER ARRONDISSEMENT');
  });

  it('leaves out zones below min_transactions and says how many, keeping their sales in scope_average', async () => {
    const all = await demo.get(`/v1/heatmap?code_departement=23&${WINDOW}&group_by=commune&min_transactions=1`, demo.key());
    const counts = all.body.zones.map((z: { stats: { transaction_count: number } }) => z.stats.transaction_count).sort((a: number, b: number) => a - b);
    expect(counts.length).toBeGreaterThanOrEqual(3);
    const threshold = counts[Math.floor(counts.length / 2)];
    const below = counts.filter((n: number) => n < threshold).length;
    expect(below).toBeGreaterThan(0);
    const r = await demo.get(`/v1/heatmap?code_departement=23&${WINDOW}&group_by=commune&min_transactions=${threshold}`, demo.key());
    expect(r.body.zones).toHaveLength(counts.length - below);
    expect(r.body.zones.every((z: { stats: { transaction_count: number } }) => z.stats.transaction_count >= threshold)).toBe(true);
    expect(r.body.notice).toBe(`${below} zone${below > 1 ? 's' : ''} with fewer than ${threshold} sales left out (their sales still count in scope_average).`);
    expect(r.body.scope_average).toEqual(all.body.scope_average);
  });

  it('answers an empty scope with 200, zones [] and a notice', async () => {
    const r = await demo.get('/v1/heatmap?code_departement=33&date_debut=2010-01-01&date_fin=2010-12-31', demo.key());
    expect(r.status).toBe(200);
    expect(r.body.zones).toEqual([]);
    expect(r.body.scope_average).toEqual({ price_m2_median: null, total_transactions: 0 });
    expect(r.body.notice).toMatch(/no sale in this scope/);
  });

  it('defaults to the year before today, with a notice, and is cached 24 h', async () => {
    const key = demo.key();
    const r = await demo.get('/v1/heatmap?code_departement=33', key);
    expect(r.body.period).toEqual({ start: '2024-12-31', end: '2025-12-31' });
    expect(r.body.notice).toMatch(/window starts 1 year before date_fin, on 2024-12-31/);
    expect(r.body.cache).toEqual({ hit: false, ttl_seconds: 86400 });
    const again = await demo.get('/v1/heatmap?code_departement=33', key);
    expect(again.body.cache.hit).toBe(true);
    expect(again.body._credits.used).toBe(15);
  });

  it('validates its parameters', async () => {
    const key = demo.key();
    const bad = async (q: string, param: string) => {
      const r = await demo.get(`/v1/heatmap?${q}`, key);
      expect(r.status).toBe(400);
      expect(r.body.error.details).toEqual([expect.objectContaining({ param })]);
    };
    await bad('code_departement=33&min_transactions=1001', 'min_transactions');
    await bad('code_departement=33&min_transactions=2.5', 'min_transactions');
    await bad('code_departement=33&group_by=departement', 'group_by');
    await bad('code_departement=33&type_local=Terrain', 'type_local');
    // code_postal is not a heatmap scope: without commune or code_departement the location is missing.
    const cp = await demo.get('/v1/heatmap?code_postal=75015', key);
    expect(cp.status).toBe(400);
    expect(cp.body.error).toMatchObject({ code: 'missing_location', message: expect.stringContaining('commune, code_departement') });
  });

  it('places a zone relative to the scope median with ±10 % thresholds (boundaries are average)', () => {
    expect(relativePosition(110, 100)).toBe('average');
    expect(relativePosition(110.01, 100)).toBe('expensive');
    expect(relativePosition(90, 100)).toBe('average');
    expect(relativePosition(89.99, 100)).toBe('affordable');
  });
});

describe('GET /v1/heatmap on the real geo-DVF sample', () => {
  it('equals a computation from the CSV: single houses, Tukey fences on ln €/m², mean coordinates', async () => {
    const [header, ...lines] = fs.readFileSync(GEO_SAMPLE, 'utf8').trim().split('\n');
    const cols = splitCsv(header);
    const byMutation = new Map<string, Record<string, string>[]>();
    for (const l of lines) {
      const r = Object.fromEntries(splitCsv(l).map((v, i) => [cols[i], v]));
      byMutation.set(r.id_mutation, [...(byMutation.get(r.id_mutation) ?? []), r]);
    }
    const houses: Array<{ cp: string; price: number; m2: number; lat: number | null; lon: number | null }> = [];
    for (const group of byMutation.values()) {
      const built = group.filter((r) => ['Maison', 'Appartement'].includes(r.type_local) || r.code_type_local === '4');
      // One house repeated once per culture of its parcel is still one house; a second distinct local makes a bulk sale.
      const distinct = new Set(built.map((r) => [r.id_parcelle, r.type_local, r.surface_reelle_bati, r.lot1_numero].join('|')));
      const identical = built.length > 1 && new Set(built.map((r) => Object.values(r).join('|'))).size < built.length;
      if (group[0].nature_mutation !== 'Vente' || distinct.size !== 1 || identical || built[0].type_local !== 'Maison') continue;
      if (new Set(group.map((r) => r.numero_disposition)).size !== 1) continue;
      const surface = Number(built[0].surface_reelle_bati);
      const price = Number(group[0].valeur_fonciere);
      if (!(surface > 0 && price > 0)) continue;
      const lat = built[0].latitude ? Number(built[0].latitude) : null;
      houses.push({ cp: built[0].code_postal, price, m2: price / surface, lat, lon: lat === null ? null : Number(built[0].longitude) });
    }
    const logs = houses.map((h) => Math.log(h.m2)).sort((a, b) => a - b);
    expect(logs.length).toBeGreaterThanOrEqual(20);
    const q = (p: number) => {
      const pos = (logs.length - 1) * p;
      const lo = Math.floor(pos);
      return logs[lo] + (logs[Math.min(lo + 1, logs.length - 1)] - logs[lo]) * (pos - lo);
    };
    const [q1, q3] = [q(0.25), q(0.75)];
    const kept = houses.filter((h) => h.price >= 1000 && h.m2 >= 100 && h.m2 <= 60000 && Math.log(h.m2) >= q1 - 1.5 * (q3 - q1) && Math.log(h.m2) <= q3 + 1.5 * (q3 - q1));

    const r = await sample.get('/v1/heatmap?code_departement=33&type_local=Maison&date_debut=2021-01-01&date_fin=2021-12-31&min_transactions=1', sample.key());
    expect(r.status).toBe(200);
    expect(r.body.zones).toHaveLength(1);
    const [z] = r.body.zones;
    expect(z.code_postal).toBe('33230');
    expect(z.name).toBe('ABZAC');
    expect(z.stats).toEqual({
      transaction_count: kept.length,
      price_m2_median: r2(median(kept.map((h) => h.m2))),
      price_m2_avg: r2(mean(kept.map((h) => h.m2))),
      price_median: r2(median(kept.map((h) => h.price))),
    });
    const located = kept.filter((h) => h.lat !== null);
    expect(z.centroid.lat).toBeCloseTo(mean(located.map((h) => h.lat!)), 6);
    expect(z.centroid.lon).toBeCloseTo(mean(located.map((h) => h.lon!)), 6);
    expect(z.relative_position).toBe('average');
  });
});

describe('GET /v1/heatmap with sales that have no postal code', () => {
  let blank: TestApi;
  beforeAll(async () => {
    // The real geo-DVF sample with every postal code removed: no sale can be put in a postal-code zone.
    const [header, ...lines] = fs.readFileSync(GEO_SAMPLE, 'utf8').trim().split('\n');
    const cp = splitCsv(header).indexOf('code_postal');
    const csv = [header, ...lines.map((l) => splitCsv(l).map((v, i) => (i === cp ? '' : /[",]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v)).join(','))].join('\n');
    const tree = tempDir('foncier-tree-');
    writeGeoFile(tree, 2021, '33', `${csv}\n`);
    const dataRoot = tempDir('foncier-api-');
    await runSource({ source: 'dvf', fromDir: tree, annees: [2021], departements: ['33'], dataRoot });
    await buildMarts({ dataRoot });
    blank = await startTestApi({ dataRoot });
  });
  afterAll(() => blank?.close());

  it('lists no zone and says how many sales belong to none; they still make the scope average', async () => {
    const r = await blank.get('/v1/heatmap?commune=ABZAC&code_departement=33&date_debut=2021-01-01&date_fin=2021-12-31&min_transactions=1', blank.key());
    expect(r.status).toBe(200);
    expect(r.body.zones).toEqual([]);
    const n = r.body.scope_average.total_transactions;
    expect(n).toBeGreaterThan(10);
    expect(r.body.notice).toBe(`${n} sales without a postal code belong to no zone (they count in scope_average).`);
    // Grouped by commune, the same sales do form a zone.
    const byCommune = await blank.get('/v1/heatmap?commune=ABZAC&code_departement=33&date_debut=2021-01-01&date_fin=2021-12-31&min_transactions=1&group_by=commune', blank.key());
    expect(byCommune.body.zones.map((z: { stats: { transaction_count: number } }) => z.stats.transaction_count)).toEqual([n]);
  });
});
