// The analytics endpoints (stats/trends, stats/compare, market-activity, market-score, market-overview) on the demo
// dataset (2019–2025), the clock just after it: the shared contract, their rules, and their figures recomputed in
// TypeScript from `ventes` rows read with a plain SELECT.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { direction } from '../../../api/sales/analytics';
import { bandLabel, SCORE_LABELS } from '../../../api/routes/market/score';
import { balanceOf, startTestApi, type TestApi } from '../../helpers/api';
import { describeContract } from '../../helpers/contract';
import { testData } from '../../helpers/data';
import { median2 } from '../../helpers/stats';

let api: TestApi;
let key: string;
beforeAll(async () => {
  api = await startTestApi({ dataRoot: await testData('demo'), now: '2026-02-15T12:00:00Z' });
  key = api.key({ balance: 1_000_000 });
});
afterAll(() => api.close());
const get = () => api;
const call = async (path: string) => {
  const r = await api.get(path, key);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
};
const locs = (v: unknown) => encodeURIComponent(JSON.stringify(v));

interface Sale { date: string; type: string; m2: number | null; price: number; cp: string | null; commune: string; clean: boolean }

/** Every sale of a département, read without any of the endpoints' SQL. */
async function salesOf(dep: string): Promise<Sale[]> {
  const rows = await api.ctx.db.query<Record<string, never>>(
    `select date_mutation::VARCHAR as date, type_local as type, prix_m2 as m2, valeur_fonciere as price, code_postal as cp,
       code_commune_actuel as commune, not (is_bulk_sale or is_outlier or is_vefa) as clean from ventes where code_departement = $dep`,
    { dep },
  );
  return rows as unknown as Sale[];
}

const pct = (a: number | null, b: number | null) => (a === null || b === null ? null : Math.round((a / b - 1) * 10000) / 100);

describeContract('GET /v1/stats/trends', get, {
  path: '/v1/stats/trends?code_postal=75015',
  cost: 10,
  withoutLocation: '/v1/stats/trends?granularity=year',
  invalid: { path: '/v1/stats/trends?code_postal=75015&granularity=week', param: 'granularity' },
});
describeContract('GET /v1/stats/compare', get, {
  path: `/v1/stats/compare?locations=${locs([{ code_postal: '75015' }, { code_postal: '75018' }])}`,
  cost: 10,
  withoutLocation: '/v1/stats/compare?type_local=Maison',
  invalid: { path: `/v1/stats/compare?locations=${locs([{ code_postal: '75015' }])}`, param: 'locations' },
});
describeContract('GET /v1/market-activity', get, {
  path: '/v1/market-activity?code_postal=75015',
  cost: 10,
  withoutLocation: '/v1/market-activity?months=12',
  invalid: { path: '/v1/market-activity?code_postal=75015&months=61', param: 'months' },
});
describeContract('GET /v1/market-score', get, {
  path: '/v1/market-score?code_postal=75015',
  cost: 10,
  withoutLocation: '/v1/market-score?type_local=Maison',
  invalid: { path: '/v1/market-score?code_postal=75015&type_local=Villa', param: 'type_local' },
});
describeContract('GET /v1/market-overview', get, {
  path: '/v1/market-overview?code_postal=75015',
  cost: 10,
  withoutLocation: '/v1/market-overview?type_local=Maison',
  invalid: { path: '/v1/market-overview?latitude=48.84', param: 'longitude' },
});

describe('GET /v1/stats/trends', () => {
  it('equals a recomputation per quarter, with year-over-year changes', async () => {
    const b = await call('/v1/stats/trends?commune=GUERET&type_local=Maison&date_debut=2021-01-01&date_fin=2025-12-31');
    const sales = (await salesOf('23')).filter((s) => s.commune === '23096' && s.type === 'Maison' && s.clean && s.date <= '2025-12-31' && s.date >= '2021-01-01');
    const quarter = (d: string) => `${d.slice(0, 4)}-Q${Math.ceil(Number(d.slice(5, 7)) / 3)}`;
    const periods = [...new Set(sales.map((s) => quarter(s.date)))].sort();
    expect(b.trends.map((t: { period: string }) => t.period)).toEqual(periods);
    const m2Of = (p: string) => median2(sales.filter((s) => quarter(s.date) === p && s.m2 !== null).map((s) => s.m2!));
    for (const t of b.trends) {
      const inP = sales.filter((s) => quarter(s.date) === t.period);
      expect(t.transaction_count).toBe(inP.length);
      expect(t.price.median).toBe(median2(inP.map((s) => s.price)));
      expect(t.price_per_m2.median).toBe(m2Of(t.period));
      const before = `${Number(t.period.slice(0, 4)) - 1}${t.period.slice(4)}`;
      expect(t.yoy_change.price_m2_pct).toBe(t.period < '2022' ? null : pct(m2Of(t.period), m2Of(before)));
    }
    expect(b.summary.total_transactions).toBe(sales.length);
    expect(b.summary.total_change_pct).toBe(pct(m2Of(periods.at(-1)!), m2Of(periods[0])));
    expect(b.summary.overall_trend).toBe(direction(b.summary.total_change_pct));
    expect(b.notice).toBeUndefined();
  });

  it('summarises over the periods entirely inside the window: a period the window cuts is listed, not compared', async () => {
    const b = await call('/v1/stats/trends?code_postal=33000&type_local=Appartement&date_debut=2024-11-15&date_fin=2025-08-15');
    expect(b.trends.map((t: { period: string }) => t.period)).toEqual(['2024-Q4', '2025-Q1', '2025-Q2', '2025-Q3']);
    const m2 = (p: string) => b.trends.find((t: { period: string }) => t.period === p).price_per_m2.median;
    expect(b.summary.total_change_pct).toBe(pct(m2('2025-Q2'), m2('2025-Q1')));
    expect(b.summary.overall_trend).toBe(direction(b.summary.total_change_pct));
    const cut = await call('/v1/stats/trends?code_postal=33000&date_debut=2025-01-15&date_fin=2025-05-15');
    expect(cut.trends).toHaveLength(2);
    expect(cut.summary).toMatchObject({ total_change_pct: null, overall_trend: null });
  });

  it('labels months, quarters and years', async () => {
    const q = 'code_postal=33000&date_debut=2024-11-01&date_fin=2025-02-28';
    expect((await call(`/v1/stats/trends?${q}&granularity=month`)).trends.map((t: { period: string }) => t.period)).toEqual(['2024-11', '2024-12', '2025-01', '2025-02']);
    expect((await call(`/v1/stats/trends?${q}`)).trends.map((t: { period: string }) => t.period)).toEqual(['2024-Q4', '2025-Q1']);
    expect((await call(`/v1/stats/trends?${q}&granularity=year`)).trends.map((t: { period: string }) => t.period)).toEqual(['2024', '2025']);
  });

  it('defaults to 5 years, capped at 3 for départements, Paris and 75015–75020, with a notice', async () => {
    const small = await call('/v1/stats/trends?code_postal=75011');
    expect(small.location).toMatchObject({ date_debut: '2021-02-15', date_fin: '2026-02-15' });
    expect(small.notice).toMatch(/5 years.*2021-02-15/);
    for (const q of ['code_departement=23', 'commune=PARIS%2005', 'commune=PARIS', 'code_postal=75015', 'code_postal=75018', 'code_postal=75020']) {
      const b = await call(`/v1/stats/trends?${q}`);
      expect(b.location.date_debut, q).toBe('2023-02-15');
      expect(b.notice, q).toMatch(/limited to 3 years.*2023-02-15/);
    }
    const asked = await call('/v1/stats/trends?code_departement=23&date_debut=2019-01-01&date_fin=2024-12-31');
    expect(asked.location).toMatchObject({ date_debut: '2021-12-31', date_fin: '2024-12-31' });
    expect(asked.notice).toMatch(/2021-12-31/);
    const within = await call('/v1/stats/trends?code_postal=75015&date_debut=2023-06-01');
    expect(within.location.date_debut).toBe('2023-06-01');
    // No cap: what the notice says is only where the data ends (2025) and the quarter compared with a cut one
    // (2023-Q2 starts before the window: docs/decisions.md, data horizon).
    expect(within.notice).not.toMatch(/limited to/);
    expect(within.notice).toMatch(/^yoy_change is null for 2024-Q2: .* The loaded sales of département 75 end on 2025-12-31/);
  });

  it('answers an empty zone with no periods, and a null overall_trend below 2 periods', async () => {
    const empty = await call('/v1/stats/trends?code_postal=13001');
    expect(empty.trends).toEqual([]);
    expect(empty.summary).toEqual({ total_transactions: 0, overall_trend: null, total_change_pct: null });
    const one = await call('/v1/stats/trends?code_postal=33000&date_debut=2025-01-01&date_fin=2025-03-31');
    expect(one.trends).toHaveLength(1);
    expect(one.summary.overall_trend).toBeNull();
    expect(one.summary.total_transactions).toBeGreaterThan(0);
  });

  it('applies the ±2 % thresholds', () => {
    expect([direction(2.01), direction(2), direction(0), direction(-2), direction(-2.01), direction(null)]).toEqual(['increasing', 'stable', 'stable', 'stable', 'decreasing', null]);
  });
});

describe('GET /v1/stats/compare', () => {
  it('ranks zones by median €/m² (1 = most expensive), names the cheapest, and shows Paris arrondissements by postal code', async () => {
    const b = await call(`/v1/stats/compare?locations=${locs([{ commune: 'bordeaux' }, { commune: 'PARIS 15' }, { code_postal: '75018' }, { code_postal: '13001' }])}&date_debut=2025-01-01`);
    expect(b.period).toEqual({ date_debut: '2025-01-01', date_fin: '2026-02-15' });
    expect(b.type_local).toBe('Appartement');
    const [bdx, p15, p18, none] = b.comparisons;
    expect(p15.location.code_postal).toBe('75015');
    expect(p15.location.commune).toMatch(/^PARIS 15/);
    expect([p15.rank_price_m2, p18.rank_price_m2, bdx.rank_price_m2, none.rank_price_m2]).toEqual([1, 2, 3, null]);
    expect(b.winner_price_m2).toEqual({ code_postal: null, label: 'BORDEAUX' });
    expect(none.metrics).toEqual({ count: 0, price_m2_median: null, price_m2_avg: null, price_median: null });

    const sales = (await salesOf('33')).filter((s) => s.commune === '33063' && s.type === 'Appartement' && s.clean);
    const inWin = (from: string, to: string) => sales.filter((s) => s.date >= from && s.date <= to && s.m2 !== null).map((s) => s.m2!);
    expect(bdx.metrics.count).toBe(sales.filter((s) => s.date >= '2025-01-01' && s.date <= '2026-02-15').length);
    expect(bdx.metrics.price_m2_median).toBe(median2(inWin('2025-01-01', '2026-02-15')));
    expect(bdx.metrics.yoy_price_change_pct).toBe(pct(median2(inWin('2025-01-01', '2026-02-15')), median2(inWin('2024-01-01', '2025-02-15'))));
  });

  it('refuses bad locations with invalid_params naming locations, without charging', async () => {
    const k = api.key({ balance: 100 });
    const bad = ['not-json', locs({ code_postal: '75015' }), locs([{ code_postal: '75015' }]), locs(Array(6).fill({ code_postal: '75015' })),
      locs([{ code_postal: '75015' }, { code_departement: '33' }]), locs([{ code_postal: '75015' }, 'PARIS']), locs([{ code_postal: '7501' }, { commune: 'LYON' }]),
      locs([{ code_postal: '75015' }, { commune: 'NOWHERE-SUR-RIEN' }])];
    for (const l of bad) {
      const r = await api.get(`/v1/stats/compare?locations=${l}`, k);
      expect(r.status, l).toBe(400);
      expect(r.body.error.code).toBe('invalid_params');
      expect(r.body.error.details).toEqual([{ param: 'locations', issue: expect.any(String) }]);
    }
    expect(balanceOf(api, k)).toBe(100);
  });
});

describe('GET /v1/market-activity', () => {
  it('counts every month of the window, zero-sale months included, ending at the data horizon', async () => {
    const b = await call('/v1/market-activity?commune=AHUN&type_local=Appartement&months=60');
    // Today is 2026-02-15 but the data ends in December 2025: the window ends there.
    expect(b.period).toEqual({ months: 60, date_debut: '2021-01-01', date_fin: '2025-12-31' });
    expect(b.monthly_data).toHaveLength(60);
    expect(b.monthly_data[0].month).toBe('2021-01');
    expect(b.monthly_data.at(-1).month).toBe('2025-12');
    const sales = (await salesOf('23')).filter((s) => s.commune === '23001' && s.type === 'Appartement' && s.clean);
    for (const d of b.monthly_data) expect(d.count, d.month).toBe(sales.filter((s) => s.date.startsWith(d.month)).length);
    const zero = b.monthly_data.filter((d: { count: number }) => d.count === 0);
    expect(zero.length).toBeGreaterThan(0);
    expect(zero.every((d: { activity_level: string; vs_average_pct: number }) => d.activity_level === 'low' && d.vs_average_pct === -100)).toBe(true);
    expect(b.monthly_data.some((d: { activity_level: string }) => d.activity_level === 'high')).toBe(true);
    expect(b.total_transactions).toBe(sales.filter((s) => s.date >= '2021-01-01').length);
  });

  it('gives a whole département the same counts and exact medians (read from its monthly mart)', async () => {
    const sales = (await salesOf('23')).filter((s) => s.clean && s.date >= '2023-01-01' && s.date <= '2025-12-31');
    for (const [q, keep] of [['', (s: Sale) => s.type !== 'Terrain'], ['&type_local=Maison', (s: Sale) => s.type === 'Maison']] as const) {
      const b = await call(`/v1/market-activity?code_departement=23&months=36${q}`);
      expect(b.location).toEqual({ code_postal: null, commune: null, code_departement: '23' });
      for (const d of b.monthly_data) {
        const inM = sales.filter((s) => keep(s) && s.date.startsWith(d.month));
        expect(d.count, `${q} ${d.month}`).toBe(inM.length);
        expect(d.prix_m2_median, `${q} ${d.month}`).toBe(median2(inM.filter((s) => s.m2 !== null).map((s) => s.m2!)));
      }
    }
  });

  it('levels months at ±30 % of the monthly average and names the seasons in French', async () => {
    const b = await call('/v1/market-activity?code_postal=75015');
    expect(b.period).toMatchObject({ months: 24, date_debut: '2024-01-01', date_fin: '2025-12-31' });
    expect(b.monthly_average).toBe(Math.round((b.total_transactions / 24) * 100) / 100);
    for (const d of b.monthly_data) {
      const vs = (d.count / (b.total_transactions / 24) - 1) * 100;
      expect(d.vs_average_pct).toBe(Math.round(vs * 100) / 100);
      expect(d.activity_level).toBe(vs > 30 ? 'high' : vs < -30 ? 'low' : 'normal');
    }
    expect(b.seasonality.least_active_months[0]).toBe('août');
    const byName = (name: string) => b.monthly_data.filter((d: { month: string }) => ['janvier', 'février', 'mars', 'avril', 'mai', 'juin', 'juillet', 'août', 'septembre', 'octobre', 'novembre', 'décembre'][Number(d.month.slice(5)) - 1] === name).reduce((n: number, d: { count: number }) => n + d.count, 0);
    expect(b.seasonality.most_active_months).toHaveLength(3);
    expect(byName(b.seasonality.most_active_months[0])).toBeGreaterThan(byName(b.seasonality.least_active_months[0]));
    const empty = await call('/v1/market-activity?code_postal=13001&months=6');
    expect(empty.monthly_data.map((d: { count: number; activity_level: string }) => [d.count, d.activity_level])).toEqual(Array(6).fill([0, 'normal']));
    expect(empty.seasonality).toEqual({ most_active_months: [], least_active_months: [] });
  });

  it('ends at the last complete month before today when the data goes further', async () => {
    api.clock.set('2024-06-15T12:00:00Z');
    try {
      expect((await call('/v1/market-activity?code_postal=75011&months=6')).period).toEqual({ months: 6, date_debut: '2023-12-01', date_fin: '2024-05-31' });
    } finally {
      api.clock.set('2026-02-15T12:00:00Z');
    }
    expect((await api.get('/v1/market-activity?latitude=48.84&longitude=2.3', key)).body.error.code).toBe('unsupported_location');
    expect((await api.get('/v1/market-activity?code_postal=75011&months=5', key)).body.error.details).toEqual([{ param: 'months', issue: 'must be between 6 and 60' }]);
  });
});

describe('GET /v1/market-score and /v1/market-overview', () => {
  it('has components recomputable from market-activity and stats/market (docs/methods.md)', async () => {
    for (const zone of ['code_postal=75015', 'commune=GUERET', 'code_departement=23&type_local=Maison']) {
      const s = await call(`/v1/market-score?${zone}`);
      const counts: number[] = (await call(`/v1/market-activity?${zone}&months=48`)).monthly_data.map((d: { count: number }) => d.count);
      const sum = (from: number, to: number) => counts.slice(from, to).reduce((a, b) => a + b, 0);
      const ratio = (now: number, before: number) => (before === 0 ? (now > 0 ? 100 : 0) : Math.round(Math.min(100, (50 * now) / before)));
      const n12 = sum(36, 48);
      const now = await call(`/v1/stats/market?${zone}&date_debut=2025-01-01&date_fin=2025-12-31`);
      const before = await call(`/v1/stats/market?${zone}&date_debut=2024-01-01&date_fin=2024-12-31`);
      const trend = pct(now.price_per_m2.median, before.price_per_m2.median);
      expect(s.transaction_count_12m, zone).toBe(n12);
      expect(now.count).toBe(n12);
      expect(s.median_price_m2).toBe(now.price_per_m2.median);
      expect(s.price_trend_pct).toBe(trend);
      expect(s.components).toEqual({
        volume_score: ratio(n12, sum(0, 36) / 3),
        price_trend_score: Math.round(Math.min(100, Math.max(0, 50 + 5 * (trend ?? 0)))),
        days_on_market_score: n12 === 0 ? 0 : Math.round(Math.min(100, Math.max(0, (100 * Math.log(30 / Math.max(1, 365 / n12))) / Math.log(30)))),
        supply_demand_score: ratio(sum(42, 48), sum(30, 36)),
      });
      const c = s.components;
      expect(s.score).toBe(Math.round((c.volume_score + c.price_trend_score + c.days_on_market_score + c.supply_demand_score) / 4));
      expect(s.label).toBe(bandLabel(s.score, SCORE_LABELS));
    }
  });

  it('labels the score bands', () => {
    expect([0, 30, 31, 60, 61, 80, 81, 100].map((v) => bandLabel(v, SCORE_LABELS))).toEqual(['Peu actif', 'Peu actif', 'Modéré', 'Modéré', 'Actif', 'Actif', 'Très dynamique', 'Très dynamique']);
  });

  it('scores an empty zone without failing', async () => {
    const s = await call('/v1/market-score?code_postal=13001');
    expect(s).toMatchObject({ transaction_count_12m: 0, price_trend_pct: null, median_price_m2: null, score: 13, label: 'Peu actif' });
  });

  it('combines stats/market, stats/trends and market-score with their defaults', async () => {
    const o = await call('/v1/market-overview?code_postal=75015&type_local=Appartement');
    expect(o.stats).toEqual((({ count, price, price_per_m2, surface }) => ({ count, price, price_per_m2, surface }))(await call('/v1/stats/market?code_postal=75015&type_local=Appartement')));
    const t = await call('/v1/stats/trends?code_postal=75015&type_local=Appartement');
    expect(o.trend.overall_change_pct).toBe(t.summary.total_change_pct);
    expect(o.trend.direction).toBe(t.summary.overall_trend);
    expect(o.trend.last_period).toBe(t.trends.at(-1).period);
    const years = await call('/v1/stats/trends?code_postal=75015&type_local=Appartement&granularity=year&date_debut=2024-01-01&date_fin=2025-12-31');
    expect(o.trend.change_1y_pct).toBe(years.trends.find((y: { period: string }) => y.period === '2025').yoy_change.price_m2_pct);
    const s = await call('/v1/market-score?code_postal=75015&type_local=Appartement');
    expect(o.health.score).toBe(s.score);
    expect(o.health.label).toBe({ 'Peu actif': 'Calme', Modéré: 'Modéré', Actif: 'Dynamique', 'Très dynamique': 'Très actif' }[s.label as string]);
    const m = await call('/v1/market-activity?code_postal=75015&type_local=Appartement&months=6');
    expect(o.health.data_quality).toEqual({ count_6m: m.total_transactions, sufficient: m.total_transactions >= 30 });
  });

  it('answers health null for a latitude/longitude search, and maps Local industriel to Local commercial', async () => {
    const o = await call('/v1/market-overview?latitude=44.84&longitude=-0.57&radius_m=1000');
    expect(o.health).toBeNull();
    expect(o.location).toEqual({ code_postal: null, commune: null, code_departement: null, latitude: 44.84, longitude: -0.57, radius_m: 1000 });
    expect(o.stats.count).toBeGreaterThan(0);
    const ind = await call('/v1/market-overview?code_postal=33000&type_local=Local%20industriel');
    const com = await call('/v1/market-overview?code_postal=33000&type_local=Local%20commercial');
    expect(ind.property_type).toBe('Local industriel');
    expect(ind.stats).toEqual(com.stats);
  });
});
