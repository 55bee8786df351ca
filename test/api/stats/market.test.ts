// GET /v1/stats/market on the real geo-DVF sample (Abzac, 33, 2021), checked against an independent computation
// written here in TypeScript from the CSV itself, not with the marts' SQL.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildMarts } from '../../../marts/runner';
import { GEO_SAMPLE, splitCsv } from '../../helpers/samples';
import { startTestApi, type TestApi } from '../../helpers/api';
import { testData } from '../../helpers/data';
import { quantile, r2 } from '../../helpers/stats';

let api: TestApi;
beforeAll(async () => {
  // Writable: a test rebuilds the marts on it.
  api = await startTestApi({ dataRoot: await testData('sample', { writable: true }) });
});
afterAll(() => api.close());


function summary(values: number[]) {
  const s = [...values].sort((a, b) => a - b);
  return { median: r2(quantile(s, 0.5)), avg: r2(s.reduce((a, b) => a + b, 0) / s.length), min: r2(s[0]), max: r2(s[s.length - 1]) };
}

/** Single-house sales of the sample: one Maison (however many culture lines repeat it), one disposition. */
function singleHouseSales() {
  const [header, ...lines] = fs.readFileSync(GEO_SAMPLE, 'utf8').trim().split('\n');
  const cols = splitCsv(header);
  const rows = lines.map((l) => Object.fromEntries(splitCsv(l).map((v, i) => [cols[i], v])));
  const byMutation = new Map<string, Record<string, string>[]>();
  for (const r of rows) byMutation.set(r.id_mutation, [...(byMutation.get(r.id_mutation) ?? []), r]);
  const sales: { price: number; surface: number; date: string }[] = [];
  for (const group of byMutation.values()) {
    const first = group[0];
    if (first.nature_mutation !== 'Vente') continue;
    const built = group.filter((r) => ['Maison', 'Appartement'].includes(r.type_local) || r.code_type_local === '4');
    // One property appears once per culture of its parcel; fully identical lines are distinct identical properties.
    const perProperty = new Map<string, Map<string, number>>();
    for (const r of built) {
      const key = [r.id_parcelle, r.type_local, r.surface_reelle_bati, r.nombre_pieces_principales, r.lot1_numero].join('|');
      const whole = Object.values(r).join('|');
      const copies = perProperty.get(key) ?? new Map<string, number>();
      copies.set(whole, (copies.get(whole) ?? 0) + 1);
      perProperty.set(key, copies);
    }
    const properties = [...perProperty.values()].reduce((n, copies) => n + Math.max(...copies.values()), 0);
    const dispositions = new Set(group.map((r) => r.numero_disposition)).size;
    if (properties !== 1 || dispositions !== 1 || built[0].type_local !== 'Maison') continue;
    const surface = Number(built[0].surface_reelle_bati);
    const price = Number(first.valeur_fonciere);
    if (surface > 0 && price > 0) sales.push({ price, surface, date: first.date_mutation });
  }
  return sales;
}

describe('GET /v1/stats/market on the real geo-DVF sample', () => {
  it('equals an independent computation (single houses, outliers by Tukey fences on ln €/m²)', async () => {
    const sales = singleHouseSales();
    // The outlier reference is every single priced house of the commune (at least 20 of them here).
    const logs = sales.map((s) => Math.log(s.price / s.surface)).sort((a, b) => a - b);
    expect(logs.length).toBeGreaterThanOrEqual(20);
    const q1 = quantile(logs, 0.25);
    const q3 = quantile(logs, 0.75);
    const kept = sales.filter((s) => {
      const m2 = s.price / s.surface;
      return s.price >= 1000 && m2 >= 100 && m2 <= 60000 && Math.log(m2) >= q1 - 1.5 * (q3 - q1) && Math.log(m2) <= q3 + 1.5 * (q3 - q1);
    });

    const key = api.key();
    const r = await api.get('/v1/stats/market?code_postal=33230&type_local=Maison&date_debut=2021-01-01&date_fin=2021-12-31', key);
    expect(r.status).toBe(200);
    expect(r.body.count).toBe(kept.length);
    expect(r.body.price).toEqual(summary(kept.map((s) => s.price)));
    expect(r.body.price_per_m2).toEqual(summary(kept.map((s) => s.price / s.surface)));
    expect(r.body.surface).toEqual(summary(kept.map((s) => s.surface)));
    expect(r.body.notice).toBeUndefined();

    const raw = await api.get('/v1/stats/market?code_postal=33230&type_local=Maison&date_debut=2021-01-01&date_fin=2021-12-31&exclude_outliers=false', key);
    expect(raw.body.count).toBe(sales.length);
    expect(raw.body.price).toEqual(summary(sales.map((s) => s.price)));
  });

  it('applies the 3-year default window with a notice, and echoes the filters', async () => {
    const r = await api.get('/v1/stats/market?commune=abzac&code_departement=33', api.key());
    expect(r.status).toBe(200);
    expect(r.body.filters).toMatchObject({ commune: 'ABZAC', code_departement: '33', date_debut: '2019-06-15', date_fin: '2022-06-15', exclude_bulk_sales: true, exclude_outliers: true, exclude_vefa: true, include_terrain: false });
    expect(r.body.notice).toMatch(/3 years.*2019-06-15/);
    api.clock.set('2025-06-15T12:00:00Z');
    const later = await api.get('/v1/stats/market?commune=abzac&code_departement=33', api.key());
    api.clock.set('2022-06-15T12:00:00Z');
    expect(later.body.count).toBe(0); // 2021 sales are outside 2022-06-15 … 2025-06-15
    expect(later.body.price).toEqual({ median: null, avg: null, min: null, max: null });
  });

  it('finds the same sales by radius as by postal code when the circle covers the commune', async () => {
    const key = api.key();
    const q = '&type_local=Maison&date_debut=2021-01-01&date_fin=2021-12-31';
    const byCp = await api.get(`/v1/stats/market?code_postal=33230${q}`, key);
    const wide = await api.get(`/v1/stats/market?latitude=45.02&longitude=-0.13&radius_m=2000${q}`, key);
    const narrow = await api.get(`/v1/stats/market?latitude=45.02&longitude=-0.13&radius_m=100${q}`, key);
    expect(wide.body.count).toBeGreaterThan(narrow.body.count);
    expect(wide.body.count).toBeLessThanOrEqual(byCp.body.count);
    expect(wide.body.filters).toMatchObject({ latitude: 45.02, longitude: -0.13, radius_m: 2000 });
  });

  it('answers pouvoir_achat {available: false} until income data exists, and ignores it for radius searches', async () => {
    const key = api.key();
    const r = await api.get('/v1/stats/market?code_postal=33230&include_pouvoir_achat=true', key);
    expect(r.status).toBe(200);
    expect(r.body.pouvoir_achat).toMatchObject({ available: false, ratio_prix_revenu: null });
    const radius = await api.get('/v1/stats/market?latitude=45.02&longitude=-0.13&include_pouvoir_achat=true', key);
    expect(radius.body.pouvoir_achat).toBeUndefined();
  });

  it('serves a repeated request from the cache (still charged) until its lifetime ends or the data changes', async () => {
    const key = api.key({ balance: 100 });
    const path = '/v1/stats/market?code_departement=01&date_debut=2020-01-01';
    api.ctx.cache.clear();
    const first = await api.get(path, key);
    const second = await api.get(path, key);
    expect(first.body.cache).toEqual({ hit: false, ttl_seconds: 3600 });
    expect(second.body.cache.hit).toBe(true);
    expect(second.body.count).toBe(first.body.count);
    expect(second.body._credits).toEqual({ used: 5, remaining: 90 });
    api.clock.advance(3601_000);
    expect((await api.get(path, key)).body.cache.hit).toBe(false);
    api.clock.set('2022-06-15T12:00:00Z');
    expect((await api.get(path, key)).body.cache.hit).toBe(true);
    // A rebuild publishes a new serving file: every cached answer of the old one is unreachable.
    const before = api.ctx.db.file;
    await buildMarts({ dataRoot: api.dataRoot });
    await api.ctx.db.refresh();
    expect(api.ctx.db.file).not.toBe(before);
    expect((await api.get(path, key)).body.cache.hit).toBe(false);
  });
});
