// The analytics endpoints on the real DVF samples (geo-DVF Abzac 33 2021, DGFiP Ain 01 January 2020), checked against
// figures recomputed here in TypeScript from the `ventes` rows (read with a plain SELECT: no filter, grouping or
// median of the endpoints' SQL).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../../helpers/api';
import { median2 } from '../../helpers/stats';

let api: TestApi;
let key: string;
interface Sale { date: string; type: string; m2: number | null; price: number; cp: string | null; dep: string; clean: boolean }
let sales: Sale[];

beforeAll(async () => {
  api = await startTestApi({ now: '2022-01-15T12:00:00Z' });
  key = api.key({ balance: 100_000 });
  sales = (await api.ctx.db.query(
    `select date_mutation::VARCHAR as date, type_local as type, prix_m2 as m2, valeur_fonciere as price, code_postal as cp,
       code_departement as dep, not (is_bulk_sale or is_outlier or is_vefa) as clean from ventes`,
  )) as unknown as Sale[];
});
afterAll(() => api.close());

const call = async (path: string) => {
  const r = await api.get(path, key);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
};
/** The default sales of the analytics endpoints: clean, every type except land. */
const defaults = (s: Sale) => s.clean && s.type !== 'Terrain';

describe('analytics endpoints on the real DVF samples', () => {
  it('stats/trends per month equals the recomputation (Abzac, 2021)', async () => {
    const b = await call('/v1/stats/trends?code_postal=33230&granularity=month&date_debut=2021-01-01&date_fin=2021-12-31');
    const abzac = sales.filter((s) => s.cp === '33230' && defaults(s));
    expect(abzac.length).toBeGreaterThan(20);
    const months = [...new Set(abzac.map((s) => s.date.slice(0, 7)))].sort();
    expect(b.trends.map((t: { period: string }) => t.period)).toEqual(months);
    for (const t of b.trends) {
      const inM = abzac.filter((s) => s.date.startsWith(t.period));
      expect(t.transaction_count).toBe(inM.length);
      expect(t.price.median).toBe(median2(inM.map((s) => s.price)));
      expect(t.price.avg).toBe(Math.round((inM.reduce((a, s) => a + s.price, 0) / inM.length) * 100) / 100);
      expect(t.price_per_m2.median).toBe(median2(inM.filter((s) => s.m2 !== null).map((s) => s.m2!)));
      expect(t.yoy_change).toEqual({ price_median_pct: null, price_m2_pct: null }); // one year of data only
    }
    expect(b.summary.total_transactions).toBe(abzac.length);
  });

  it('market-activity and market-score count the months up to the data horizon', async () => {
    const last = sales.map((s) => s.date).sort().at(-1)!;
    expect(last < '2022-01-01').toBe(true);
    const b = await call('/v1/market-activity?commune=ABZAC&code_departement=33&months=12');
    expect(b.period.date_fin.slice(0, 7)).toBe(last.slice(0, 7));
    const abzac = sales.filter((s) => s.dep === '33' && s.cp === '33230' && defaults(s));
    for (const d of b.monthly_data) {
      const inM = abzac.filter((s) => s.date.startsWith(d.month));
      expect(d.count, d.month).toBe(inM.length);
      expect(d.prix_m2_median).toBe(median2(inM.filter((s) => s.m2 !== null).map((s) => s.m2!)));
    }
    const s = await call('/v1/market-score?commune=ABZAC&code_departement=33');
    const from = b.monthly_data.at(0).month;
    expect(s.transaction_count_12m).toBe(abzac.filter((x) => x.date.slice(0, 7) >= from).length);
    expect(s.median_price_m2).toBe(median2(abzac.filter((x) => x.date.slice(0, 7) >= from && x.m2 !== null).map((x) => x.m2!)));
    // No sale in the 36 months before: volume starts from nothing; no earlier €/m²: a neutral price trend.
    expect(s.components.volume_score).toBe(100);
    expect(s.components.price_trend_score).toBe(50);
    expect(s.price_trend_pct).toBeNull();
  });

  it('stats/compare ranks the two samples’ zones by recomputed median €/m²', async () => {
    const ain = sales.filter((s) => s.dep === '01' && s.type === 'Maison' && s.clean && s.cp !== null);
    const cp01 = [...new Set(ain.map((s) => s.cp!))].sort((a, b) => ain.filter((s) => s.cp === b).length - ain.filter((s) => s.cp === a).length)[0];
    const locations = encodeURIComponent(JSON.stringify([{ code_postal: '33230' }, { code_postal: cp01 }]));
    const b = await call(`/v1/stats/compare?locations=${locations}&type_local=Maison&date_debut=2020-01-01`);
    const m2 = (cp: string) => median2(sales.filter((s) => s.cp === cp && s.type === 'Maison' && s.clean && s.m2 !== null && s.date >= '2020-01-01').map((s) => s.m2!));
    const expected = [m2('33230'), m2(cp01)];
    expect(b.comparisons.map((c: { metrics: { price_m2_median: number } }) => c.metrics.price_m2_median)).toEqual(expected);
    const cheap = expected[0]! <= expected[1]! ? '33230' : cp01;
    expect(b.winner_price_m2).toEqual({ code_postal: cheap, label: cheap });
    expect(b.comparisons.find((c: { location: { code_postal: string } }) => c.location.code_postal === cheap).rank_price_m2).toBe(2);
  });
});
