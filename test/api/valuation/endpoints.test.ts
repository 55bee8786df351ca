// GET /v1/comparables and GET /v1/estimate on the demo dataset: the shared contract, the bounds, and the rules of the
// specification checked against an independent TypeScript computation over `ventes` rows read directly.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QueryTimeoutError } from '../../../api/db';
import { runBacktest } from '../../../lib/valuation/backtest';
import { calibrationFile } from '../../../lib/valuation/calibration';
import { MODEL } from '../../../lib/valuation/model';
import { balanceOf, startTestApi, type TestApi } from '../../helpers/api';
import { testData } from '../../helpers/data';
import { describeContract, withQuery, type Query } from '../../helpers/contract';
import { median } from '../../helpers/stats';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ dataRoot: await testData('demo', { writable: true }), now: '2026-01-15T12:00:00Z' });
}, 120_000);
afterAll(() => api.close());
const get = () => api;

const PARIS15 = 'latitude=48.8414&longitude=2.3003';
// No demo sale within 2 km of this point (Limousin countryside); Ahun (23001, 23150) is 100 km away.
const NOWHERE = 'latitude=45.3&longitude=1.2';

describeContract('GET /v1/comparables', get, {
  path: `/v1/comparables?${PARIS15}&type_local=Appartement&surface_min=30&surface_max=60`,
  cost: 10,
  withoutLocation: '/v1/comparables?type_local=Appartement&surface_min=30&surface_max=60',
  invalid: { path: `/v1/comparables?${PARIS15}&type_local=Appartement&surface_min=30&surface_max=60&radius_m=2001`, param: 'radius_m' },
});
describeContract('GET /v1/estimate', get, {
  path: `/v1/estimate?${PARIS15}&surface=45`,
  cost: 10,
  withoutLocation: '/v1/estimate?surface=45',
  invalid: { path: `/v1/estimate?${PARIS15}&surface=4`, param: 'surface' },
});

describe('parameter bounds', () => {
  const cases: Array<[string, string]> = [
    [`/v1/comparables?${PARIS15}&type_local=Appartement&surface_min=30&surface_max=60&radius_m=99`, 'radius_m'],
    [`/v1/comparables?${PARIS15}&type_local=Appartement&surface_min=30&surface_max=60&max_age_months=37`, 'max_age_months'],
    [`/v1/comparables?${PARIS15}&type_local=Appartement&surface_min=30&surface_max=60&max_age_months=0`, 'max_age_months'],
    [`/v1/comparables?${PARIS15}&type_local=Appartement&surface_min=30&surface_max=60&limit=21`, 'limit'],
    [`/v1/comparables?${PARIS15}&type_local=Terrain&surface_min=30&surface_max=60`, 'type_local'],
    [`/v1/comparables?${PARIS15}&type_local=Appartement&surface_min=60&surface_max=30`, 'surface_min'],
    [`/v1/comparables?${PARIS15}&surface_min=30&surface_max=60`, 'type_local'],
    [`/v1/comparables?${PARIS15}&type_local=Appartement&surface_max=60`, 'surface_min'],
    [`/v1/estimate?${PARIS15}&surface=5001`, 'surface'],
    [`/v1/estimate?${PARIS15}`, 'surface'],
    [`/v1/estimate?${PARIS15}&surface=45&max_age_months=25`, 'max_age_months'],
    [`/v1/estimate?${PARIS15}&surface=45&radius_m=2001`, 'radius_m'],
    [`/v1/estimate?${PARIS15}&surface=45&pieces=1.5`, 'pieces'],
    ['/v1/estimate?latitude=48.84&surface=45', 'longitude'],
    ['/v1/estimate?code_postal=75015&surface=45', 'latitude'],
  ];
  it.each(cases)('%s → invalid_params naming %s, not charged', async (path, param) => {
    const key = api.key({ balance: 100 });
    const r = await api.get(path, key);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('invalid_params');
    expect(r.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ param })]));
    expect(balanceOf(api, key)).toBe(100);
  });

  it('accepts the extreme values', async () => {
    const key = api.key({ balance: 100 });
    expect((await api.get(`/v1/estimate?${PARIS15}&surface=5&radius_m=100&max_age_months=1`, key)).status).toBe(200);
    expect((await api.get(`/v1/estimate?${PARIS15}&surface=5000&radius_m=2000&max_age_months=24`, key)).status).toBe(200);
  });
});

describe('fewer than 3 comparables', () => {
  it('estimate is null with a message suggesting radius_m or max_age_months, and the 10 credits are charged', async () => {
    const key = api.key({ balance: 100 });
    const r = await api.get(`/v1/estimate?${NOWHERE}&surface=90&type_local=Maison`, key);
    expect(r.status).toBe(200);
    expect(r.body.estimate).toBeNull();
    expect(r.body.message).toMatch(/radius_m/);
    expect(r.body.message).toMatch(/max_age_months/);
    expect(r.body._credits.used).toBe(10);
    expect(balanceOf(api, key)).toBe(90);
  });

  it('comparables: valuation_estimate is null and charged, with the comparables found', async () => {
    const key = api.key({ balance: 100 });
    const r = await api.get(`/v1/comparables?${NOWHERE}&type_local=Maison&surface_min=50&surface_max=150`, key);
    expect(r.status).toBe(200);
    expect(r.body.comparables).toEqual([]);
    expect(r.body.valuation_estimate).toBeNull();
    expect(balanceOf(api, key)).toBe(90);
  });

  it('falls back to code_postal, then commune, and flags it', async () => {
    const key = api.key({ balance: 100 });
    const byCp = await api.get(`/v1/estimate?${NOWHERE}&surface=90&type_local=Maison&code_postal=23150`, key);
    expect(byCp.body.estimate.confidence_factors.fallback_used).toBe(true);
    expect(byCp.body.estimate.confidence_factors.limiting_factors).toContain('fallback_code_postal');
    const byCommune = await api.get(`/v1/comparables?${NOWHERE}&type_local=Maison&surface_min=60&surface_max=120&commune=ahun`, key);
    expect(byCommune.body.valuation_estimate.confidence_factors.fallback_used).toBe(true);
    expect(byCommune.body.valuation_estimate.confidence_factors.limiting_factors).toContain('fallback_commune');
    expect(byCommune.body.comparables.length).toBeGreaterThanOrEqual(3);
    // Found in the commune, far beyond the radius: no distance credit in the similarity.
    for (const c of byCommune.body.comparables) if (c.distance_m !== null) expect(c.distance_m).toBeGreaterThan(500);
    const none = await api.get(`/v1/estimate?${PARIS15}&surface=45&code_postal=23150`, key);
    expect(none.body.estimate.confidence_factors.fallback_used).toBe(false);
  });

  // Second query: after the radius and its widened ring (one query), the postal code.
  it('keeps what it found, with a notice, when the fallback is interrupted by the budget', async () => {
    const key = api.key({ balance: 100 });
    const r = await withQuery(api, (q) => ((sql: string, params: never, opts: { timeoutMs?: number }) => (sql.includes('c.code_postal = $v_cp') ? Promise.reject(new QueryTimeoutError(opts.timeoutMs!)) : q(sql, params, opts))) as Query,
      () => api.get(`/v1/estimate?${NOWHERE}&surface=90&type_local=Maison&code_postal=23150`, key),
    );
    expect(r.status).toBe(200);
    expect(r.body.estimate).toBeNull();
    expect(r.body.notice).toMatch(/code_postal fallback was interrupted/);
    expect(balanceOf(api, key)).toBe(90);
  });
});

describe('dense_query_timeout', () => {
  it.each(['/v1/estimate?' + PARIS15 + '&surface=45', `/v1/comparables?${PARIS15}&type_local=Appartement&surface_min=30&surface_max=60`])(
    '%s answers 504 and refunds, with the configured budget given to the query',
    async (path) => {
      const key = api.key({ balance: 100 });
      const budgets: number[] = [];
      const r = await withQuery(api, () => ((_sql: string, _p: never, opts: { timeoutMs?: number }) => (budgets.push(opts.timeoutMs!), Promise.reject(new QueryTimeoutError(opts.timeoutMs!)))) as Query,
        () => api.get(path, key),
      );
      expect(r.status).toBe(504);
      expect(r.body.error.code).toBe('dense_query_timeout');
      expect(balanceOf(api, key)).toBe(100);
      expect(budgets[0]).toBeGreaterThan(0);
      expect(budgets[0]).toBeLessThanOrEqual(api.ctx.limits.denseQueryBudgetMs);
    },
  );

  it('a real query running past a tiny budget is interrupted: 504, refunded', async () => {
    const saved = api.ctx.limits.denseQueryBudgetMs;
    // Small against the 3 s default, but long enough for the query to have started when DuckDB is interrupted.
    api.ctx.limits.denseQueryBudgetMs = 200;
    try {
      const key = api.key({ balance: 100 });
      // The real search, made slow on purpose (a billion-row cross join that keeps nothing) so that only the budget can end it.
      const slow = (q: Query) => ((sql: string, p: never, o: never) => q(`select x.* from (${sql}) x, range(10000000000) r(i) where i < 0`, p, o)) as Query;
      const r = await withQuery(api, slow, () => api.get(`/v1/estimate?${PARIS15}&surface=45`, key));
      expect(r.status).toBe(504);
      expect(r.body.error.code).toBe('dense_query_timeout');
      expect(balanceOf(api, key)).toBe(100);
    } finally {
      api.ctx.limits.denseQueryBudgetMs = saved;
    }
  });
});

/** Haversine distance in metres, written here independently of the SQL. */
function haversine(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const rad = (d: number) => (d * Math.PI) / 180;
  const h = Math.sin(rad(lat2 - lat1) / 2) ** 2 + Math.cos(rad(lat1)) * Math.cos(rad(lat2)) * Math.sin(rad(lon2 - lon1) / 2) ** 2;
  return 2 * 6_371_008.8 * Math.asin(Math.sqrt(h));
}

const DAY = 86_400_000;

interface Subject { lat: number; lon: number; type: string; smin: number; smax: number; surface?: number; pieces?: number; radius: number; months: number; widened?: number }
interface Sale { id: number; d: string; prix_m2: number; surface: number; rooms: number | null; lat: number; lon: number; price: number; com: string | null; dep: string | null }

/** Clean single sales with coordinates, read directly from `ventes` (not from the estimator's mart). */
async function cleanSales(type: string, smin: number, smax: number): Promise<Sale[]> {
  return api.ctx.db.query<Sale>(
    `select id, date_mutation::VARCHAR as d, prix_m2, surface_reelle_bati as surface, nombre_pieces_principales as rooms,
       latitude as lat, longitude as lon, valeur_fonciere as price, code_commune_actuel as com, code_departement as dep
     from ventes where type_local = $t and not is_outlier and not is_vefa and not is_bulk_sale and prix_m2 is not null
       and latitude is not null and surface_reelle_bati between $smin and $smax`,
    { t: type, smin, smax },
  );
}

const monthOf = (d: string) => (Number(d.slice(0, 4)) - 2000) * 12 + Number(d.slice(5, 7)) - 1;

/**
 * The local monthly trend (docs/valuation.md) recomputed from `ventes`: per commune and per département, the
 * least-squares line through the monthly medians of ln(€/m²) of the 24 months before the reference month, weighted by
 * sales; a commune needs 120 sales and 12 months, a département 30 and 6; clamped to ±2 % a month. Returns the slope of
 * a comparable (its département's, or its commune's first with MODEL.trendLevel 'commune'; else 0).
 */
async function fitTrends(type: string, refDay: string) {
  const clean = 'not is_outlier and not is_vefa and not is_bulk_sale and prix_m2 is not null and surface_reelle_bati > 0';
  const rows = await api.ctx.db.query<{ d: string; p: number; com: string | null; dep: string | null }>(
    `select date_mutation::VARCHAR as d, prix_m2 as p, code_commune_actuel as com, code_departement as dep from ventes
     where type_local = $t and ${clean}`,
    { t: type },
  );
  // the index covers the months up to the last clean sale of either type
  const [last] = await api.ctx.db.query<{ d: string }>(`select max(date_mutation)::VARCHAR as d from ventes where type_local in ('Maison', 'Appartement') and ${clean}`);
  const M = monthOf(refDay);
  const lastMonth = monthOf(last.d);
  const fit = (key: 'com' | 'dep', minSales: number, minMonths: number) => {
    const byZone = new Map<string, Map<number, number[]>>();
    for (const r of rows) {
      const m = monthOf(r.d);
      if (!r[key] || m < M - 24 || m >= M) continue;
      const z = byZone.get(r[key]!) ?? new Map<number, number[]>();
      byZone.set(r[key]!, z);
      z.set(m, [...(z.get(m) ?? []), Math.log(r.p)]);
    }
    const slopes = new Map<string, number>();
    const levels = new Map<string, number>();
    for (const [zone, months] of byZone) {
      let sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
      for (const [m, ls] of months) {
        const n = ls.length, y = median(ls);
        sw += n; sx += n * m; sy += n * y; sxx += n * m * m; sxy += n * m * y;
      }
      if (sw < minSales || months.size < minMonths || M > lastMonth) continue;
      const b = (sw * sxy - sx * sy) / (sw * sxx - sx * sx);
      slopes.set(zone, Math.max(-0.02, Math.min(0.02, b)));
      // the fitted line (unclamped) extrapolated to the reference month: the zone's indexed €/m²
      levels.set(zone, Math.exp((sy - b * sx) / sw + b * M));
    }
    return { slopes, levels };
  };
  return { communes: fit('com', 120, 12), deps: fit('dep', 30, 6) };
}

async function trendOf(type: string, refDay: string): Promise<{ slope: (com: string | null, dep: string | null) => number; level: (dep: string | null) => number | undefined }> {
  const fitted = await fitTrends(type, refDay);
  const communes = fitted.communes.slopes;
  const { slopes: deps, levels } = fitted.deps;
  const commune = (com: string | null) => (MODEL.trendLevel === 'commune' && com ? communes.get(com) : undefined);
  return { slope: (com, dep) => commune(com) ?? (dep ? deps.get(dep) : undefined) ?? 0, level: (dep) => (dep ? levels.get(dep) : undefined) };
}

/**
 * The documented estimate (docs/valuation.md) recomputed in TypeScript from the candidates: each €/m² brought to the
 * reference date along its zone's trend and to surface S by the type's elasticity, weighted by the distance, recency
 * and surface kernels; the weighted median (the smallest adjusted €/m² reaching half the weight) of the heaviest
 * MODEL.estimateK, shrunk toward the indexed level of the heaviest one's département, × exp(the type's published bias
 * correction). A sale at the subject's very location weighs exp(MODEL.sameLocation.logBoost) more. `radius` is the
 * subject's own (a comparable without coordinates would count as twice that away).
 */
async function expectedEstimate(candidates: Array<Sale & { dist: number; age: number }>, type: string, S: number, refDay: string, sameLocation = true) {
  const trend = await trendOf(type, refDay);
  const elasticity = MODEL.elasticity[type as 'Maison' | 'Appartement'];
  const k = MODEL.kernels[type as 'Maison' | 'Appartement'];
  const pool = candidates
    .map((c) => {
      const ls = Math.log(c.surface / S);
      return {
        c,
        adj: c.prix_m2 * Math.exp((trend.slope(c.com, c.dep) * c.age) / 30.44 + elasticity * ls),
        logw: -((c.dist / k.bandwidthM) ** 2) - c.age / (k.recencyMonths * 30.44) - (ls / k.surfaceLogBandwidth) ** 2 +
          (sameLocation && c.dist < MODEL.sameLocation.maxDistanceM ? MODEL.sameLocation.logBoost : 0),
      };
    })
    .sort((a, b) => b.logw - a.logw || (a.c.d < b.c.d ? 1 : a.c.d > b.c.d ? -1 : 0) || b.c.id - a.c.id)
    .slice(0, MODEL.estimateK);
  const top = pool[0].logw;
  const sorted = [...pool].sort((a, b) => a.adj - b.adj || a.c.id - b.c.id);
  const total = sorted.reduce((a, p) => a + Math.exp(p.logw - top), 0);
  let acc = 0;
  const weighted = sorted.find((p) => (acc += Math.exp(p.logw - top)) >= (total / 2) * (1 - 1e-12))!.adj;
  // shrunk toward the heaviest comparable's département level against the effective count (Σw)² / Σw²
  const nEff = total ** 2 / pool.reduce((a, p) => a + Math.exp(2 * (p.logw - top)), 0);
  const level = trend.level(pool[0].c.dep);
  const shrunk = level ? Math.exp((nEff * Math.log(weighted) + MODEL.shrinkage * Math.log(level)) / (nEff + MODEL.shrinkage)) : weighted;
  // the bias correction of the type published by the backtest (none without a calibration file)
  const file = calibrationFile(api.dataRoot);
  const bias = fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')).log_bias?.[type]?.value ?? 0) : 0;
  return { count: pool.length, median: shrunk * Math.exp(bias) };
}

/** The documented ranking (docs/valuation.md) recomputed in TypeScript; `widened` searches further, scoring as `radius`. */
function rank(sales: Sale[], s: Subject, today: string) {
  const ref = new Date(`${today}T00:00:00Z`);
  // Calendar months back, the day clamped to the target month's length (2025-12-31 − 6 months = 2025-06-30).
  const lastDay = new Date(Date.UTC(ref.getUTCFullYear(), ref.getUTCMonth() - s.months + 1, 0)).getUTCDate();
  const since = new Date(Date.UTC(ref.getUTCFullYear(), ref.getUTCMonth() - s.months, Math.min(ref.getUTCDate(), lastDay)));
  const horizon = (ref.getTime() - since.getTime()) / DAY;
  const S = s.surface ?? (s.smin + s.smax) / 2;
  return sales
    .map((r) => ({ ...r, dist: haversine(s.lat, s.lon, r.lat, r.lon), age: (ref.getTime() - new Date(`${r.d}T00:00:00Z`).getTime()) / DAY }))
    .filter((r) => r.dist <= (s.widened ?? s.radius) && r.age >= 0 && new Date(`${r.d}T00:00:00Z`) >= since)
    .filter((r) => s.pieces === undefined || (r.rooms !== null && Math.abs(r.rooms - s.pieces) <= 1))
    .map((r) => ({
      ...r,
      score:
        0.4 * Math.max(0, 1 - Math.abs(r.surface - S) / S) +
        0.3 * Math.max(0, 1 - r.dist / s.radius) +
        0.2 * Math.max(0, 1 - r.age / horizon) +
        0.1 * (s.pieces === undefined ? 1 : Math.max(0, 1 - Math.abs(r.rooms! - s.pieces) / 2)),
    }))
    .sort((a, b) => b.score - a.score || (a.d < b.d ? 1 : a.d > b.d ? -1 : 0) || b.id - a.id);
}

const expectedComparables = async (s: Subject, today: string) => rank(await cleanSales(s.type, s.smin, s.smax), s, today);

/** The horizon's end (docs/decisions.md): the département's latest loaded sale when earlier than `today`. */
async function referenceDay(dep: string, today: string): Promise<string> {
  const [row] = await api.ctx.db.query<{ d: string }>('select max(date_mutation)::VARCHAR as d from ventes where code_departement = $dep', { dep });
  return row.d < today ? row.d : today;
}

describe('comparables against an independent computation', () => {
  const subjects: Array<Subject & { dep: string }> = [
    { dep: '75', lat: 48.8414, lon: 2.3003, type: 'Appartement', smin: 30, smax: 60, radius: 300, months: 18 },
    { dep: '75', lat: 48.8414, lon: 2.3003, type: 'Appartement', smin: 50, smax: 90, pieces: 3, radius: 500, months: 6 },
    { dep: '33', lat: 44.8378, lon: -0.5792, type: 'Maison', smin: 80, smax: 140, radius: 2000, months: 36 },
    { dep: '69', lat: 45.7578, lon: 4.832, type: 'Appartement', smin: 20, smax: 45, radius: 800, months: 12 },
  ];
  it.each(subjects)('%o: same ranked sales, radius and horizon respected, mid = weighted median of adjusted €/m² × surface', async (s) => {
    const key = api.key({ balance: 100 });
    const q = `latitude=${s.lat}&longitude=${s.lon}&type_local=${s.type}&surface_min=${s.smin}&surface_max=${s.smax}&radius_m=${s.radius}` +
      `&max_age_months=${s.months}&limit=20${s.pieces ? `&pieces=${s.pieces}` : ''}`;
    const r = await api.get(`/v1/comparables?${q}`, key);
    expect(r.status).toBe(200);
    const got = r.body.comparables as Array<{ distance_m: number; age_days: number; similarity_score: number; property: Record<string, number & string> }>;
    const ref = await referenceDay(s.dep, '2026-01-15');
    expect(r.body.reference_date).toBe(ref);
    const want = (await expectedComparables(s, ref)).slice(0, 20);
    expect(got.length).toBeGreaterThanOrEqual(3);
    expect(got.map((c) => [c.property.date, c.property.price, c.property.surface])).toEqual(want.map((w) => [w.d, w.price, w.surface]));
    got.forEach((c, i) => {
      expect(c.similarity_score).toBeCloseTo(want[i].score, 3);
      expect(c.similarity_score).toBeGreaterThanOrEqual(0);
      expect(c.similarity_score).toBeLessThanOrEqual(1);
      if (i > 0) expect(c.similarity_score).toBeLessThanOrEqual(got[i - 1].similarity_score);
      expect(c.distance_m).toBeLessThanOrEqual(s.radius);
      expect(c.age_days).toBeLessThanOrEqual(s.months * 31);
      if (s.pieces) expect(Math.abs(c.property.rooms - s.pieces)).toBeLessThanOrEqual(1);
    });
    const est = r.body.valuation_estimate;
    expect(est.confidence_factors.fallback_used).toBe(false);
    const surface = (s.smin + s.smax) / 2;
    const expected = await expectedEstimate(await expectedComparables(s, ref), s.type, surface, ref);
    expect(est.based_on_count).toBe(expected.count);
    expect(est.price_per_m2.used_surface).toBe(surface);
    expect(est.price_per_m2.median).toBeCloseTo(expected.median, 1);
    expect(Math.abs(est.price_range.mid - expected.median * surface)).toBeLessThanOrEqual(1);
    expect(est.price_range.low).toBeLessThan(est.price_range.mid);
    expect(est.price_range.high).toBeGreaterThan(est.price_range.mid);
    expect(est.price_range.low).toBeCloseTo(est.price_range.mid * est.interval.ratio_low, -1);
  });

  it('estimate: mid = weighted median of the adjusted €/m² (surface within ×/÷ 1.5) × surface', async () => {
    const key = api.key({ balance: 100 });
    const e = await api.get(`/v1/estimate?${PARIS15}&surface=45&type_local=Appartement`, key);
    const ref = await referenceDay('75', '2026-01-15');
    expect(e.body.reference_date).toBe(ref);
    const candidates = await expectedComparables({ lat: 48.8414, lon: 2.3003, type: 'Appartement', smin: 30, smax: 67.5, surface: 45, radius: 500, months: 18 }, ref);
    const expected = await expectedEstimate(candidates, 'Appartement', 45, ref);
    expect(e.body.estimate.based_on_count).toBe(expected.count);
    expect(e.body.estimate.price_range.mid).toBe(Math.round(expected.median * 45));
    expect(e.body.input).toEqual({ latitude: 48.8414, longitude: 2.3003, surface: 45, type_local: 'Appartement', pieces: null, classe_dpe: null, annee_construction: null });
  });
});

describe('same location', () => {
  it('a sale at the very point of the subject (same parcel in geo-DVF) weighs e^logBoost more in the estimate', async () => {
    const ref = await referenceDay('75', '2026-01-15');
    const subject = { lat: 48.8414, lon: 2.3003, type: 'Appartement', smin: 30, smax: 67.5, surface: 45, radius: 500, months: 18 };
    const around = await expectedComparables(subject, ref);
    // subjects placed exactly on a comparable's point, until one whose estimate the boost changes
    let checked = 0;
    for (const sale of around.slice(0, 40)) {
      const at = { ...subject, lat: sale.lat, lon: sale.lon };
      const candidates = await expectedComparables(at, ref);
      const boosted = await expectedEstimate(candidates, 'Appartement', 45, ref);
      const plain = await expectedEstimate(candidates, 'Appartement', 45, ref, false);
      if (Math.abs(boosted.median - plain.median) * 45 < 2) continue;
      const e = await api.get(`/v1/estimate?latitude=${sale.lat}&longitude=${sale.lon}&surface=45&type_local=Appartement`, api.key({ balance: 100 }));
      expect(e.body.estimate.price_range.mid).toBe(Math.round(boosted.median * 45));
      checked++;
      if (checked === 3) break;
    }
    expect(checked).toBe(3);
  });
});

describe('local price index (valuation_indice_prix)', () => {
  it('equals the independent fit on the 24 months before each month, per commune and département, without later sales', async () => {
    const [{ last }] = await api.ctx.db.query<{ last: string }>('select max(mois)::VARCHAR as last from valuation_indice_prix');
    // and the months whose window starts at the first month with sales (it must count: a grid starting one month
    // later once left each zone's first month out of every window)
    const [{ early, later }] = await api.ctx.db.query<{ early: string; later: string }>(
      `select (date_trunc('month', min(date_mutation)) + interval 6 month)::DATE::VARCHAR as early,
        (date_trunc('month', min(date_mutation)) + interval 12 month)::DATE::VARCHAR as later from valuation_ventes`,
    );
    const months = [last, `${Number(last.slice(0, 4)) - 1}${last.slice(4)}`, early, later];
    let compared = 0;
    for (const type of ['Appartement', 'Maison']) {
      for (const mois of months) {
        const want = await fitTrends(type, mois);
        const got = await api.ctx.db.query<{ niveau: string; zone: string; pente_mensuelle: number; prix_m2_tendance: number }>(
          'select niveau, zone, pente_mensuelle, prix_m2_tendance from valuation_indice_prix where type_local = $t and mois = $m::DATE',
          { t: type, m: mois },
        );
        for (const [niveau, fit] of [['commune', want.communes], ['departement', want.deps]] as const) {
          const rows = got.filter((r) => r.niveau === niveau);
          expect(rows.map((r) => r.zone).sort()).toEqual([...fit.slopes.keys()].sort());
          for (const r of rows) {
            expect(r.pente_mensuelle).toBeCloseTo(fit.slopes.get(r.zone)!, 8);
            expect(r.prix_m2_tendance / fit.levels.get(r.zone)!).toBeCloseTo(1, 8);
            compared++;
          }
        }
      }
    }
    // the demo has départements (and communes) with enough sales: the comparison is not empty
    expect(compared).toBeGreaterThan(10);
  });
});

describe('interval calibration', () => {
  it('is global and flagged uncalibrated without a backtest, then calibrated once one is published', async () => {
    // The demo build publishes a calibration, as every pipeline run does: start from a data folder without one.
    fs.rmSync(calibrationFile(api.dataRoot));
    const key = api.key({ balance: 100 });
    const before = (await api.get(`/v1/estimate?${PARIS15}&surface=45`, key)).body.estimate;
    expect(before.interval.basis).toBe('global');
    expect(before.interval.calibration_generated_at).toBeNull();
    expect(before.confidence_factors.limiting_factors).toContain('interval_uncalibrated');
    expect(before.interval.contract_version).toBe('valuation-comparables-v1');
    await runBacktest({ dataRoot: api.dataRoot, maxTargets: 1500, now: new Date('2026-01-10T00:00:00Z') });
    const after = (await api.get(`/v1/estimate?${PARIS15}&surface=45`, key)).body.estimate;
    expect(after.interval.calibration_generated_at).toBe('2026-01-10T00:00:00.000Z');
    expect(after.confidence_factors.limiting_factors).not.toContain('interval_uncalibrated');
    // the published calibration also carries the type's bias correction, which moves the mid by exactly that factor
    const bias = JSON.parse(fs.readFileSync(calibrationFile(api.dataRoot), 'utf8')).log_bias.Appartement.value;
    expect(bias).not.toBe(0);
    expect(after.price_per_m2.median / before.price_per_m2.median).toBeCloseTo(Math.exp(bias), 5);
    expect(after.interval.cohort_eligible_n).toBeGreaterThan(0);
  }, 60_000);
});

describe('geographic fallback', () => {
  it('widens a radius that gives fewer than 3 comparables to twice its size, flagged and with a notice', async () => {
    const sales = await cleanSales('Maison', 60, 135);
    const ref = await referenceDay('23', '2026-01-15');
    const base = { type: 'Maison', smin: 60, smax: 135, surface: 90, radius: 100, months: 18 };
    // A Creuse house whose 100 m holds fewer than 3 comparables and whose 200 m holds at least 3.
    const spot = sales
      .filter((h) => h.lat > 45.9 && h.lat < 46.4 && h.lon > 1.3 && h.lon < 2.6)
      .map((h) => ({ ...base, lat: h.lat, lon: h.lon }))
      .find((p) => rank(sales, p, ref).length < 3 && rank(sales, { ...p, widened: 200 }, ref).length >= 3);
    expect(spot).toBeDefined();
    const key = api.key({ balance: 100 });
    const r = await api.get(`/v1/estimate?latitude=${spot!.lat}&longitude=${spot!.lon}&surface=90&type_local=Maison&radius_m=100`, key);
    expect(r.body.estimate.confidence_factors.fallback_used).toBe(true);
    expect(r.body.estimate.confidence_factors.limiting_factors).toContain('fallback_radius');
    expect(r.body.notice).toMatch(/widened to 200 m/);
    const expected = await expectedEstimate(rank(sales, { ...spot!, widened: 200 }, ref), 'Maison', 90, ref);
    expect(r.body.estimate.based_on_count).toBe(expected.count);
    expect(r.body.estimate.price_range.mid).toBe(Math.round(expected.median * 90));
  });
});

describe('reference date (valuation horizon)', () => {
  it('ends at the département\'s latest loaded sale when the data lags: the estimate still answers, with a notice', async () => {
    const key = api.key({ balance: 100 });
    const ref = await referenceDay('75', '2026-01-15');
    // Two years after the data ends: a horizon ending today would hold no sale at all.
    api.clock.set('2027-12-01T12:00:00Z');
    try {
      const r = await api.get(`/v1/estimate?${PARIS15}&surface=45&max_age_months=6`, key);
      expect(r.status).toBe(200);
      expect(r.body.reference_date).toBe(ref);
      expect(r.body.estimate).not.toBeNull();
      expect(r.body.notice).toContain(`end on ${ref}`);
      const candidates = await expectedComparables({ lat: 48.8414, lon: 2.3003, type: 'Appartement', smin: 30, smax: 67.5, surface: 45, radius: 500, months: 6 }, ref);
      expect(r.body.estimate.price_range.mid).toBe(Math.round((await expectedEstimate(candidates, 'Appartement', 45, ref)).median * 45));
      const c = await api.get(`/v1/comparables?${PARIS15}&type_local=Appartement&surface_min=30&surface_max=60&max_age_months=6`, key);
      expect(c.body.reference_date).toBe(ref);
      expect(c.body.comparables.length).toBeGreaterThanOrEqual(3);
    } finally {
      api.clock.set('2026-01-15T12:00:00Z');
    }
  });

  it('is today, without a notice, when the data reaches today', async () => {
    const key = api.key({ balance: 100 });
    const ref = await referenceDay('75', '2026-01-15');
    api.clock.set(`${ref}T12:00:00Z`);
    try {
      const r = await api.get(`/v1/estimate?${PARIS15}&surface=45`, key);
      expect(r.body.reference_date).toBe(ref);
      expect(r.body.notice ?? '').not.toMatch(/reference_date/);
    } finally {
      api.clock.set('2026-01-15T12:00:00Z');
    }
  });

  it('uses the postal-code fallback\'s département far from any sale', async () => {
    const key = api.key({ balance: 100 });
    api.clock.set('2027-12-01T12:00:00Z');
    try {
      const r = await api.get(`/v1/estimate?${NOWHERE}&surface=90&type_local=Maison&code_postal=23150&max_age_months=12`, key);
      expect(r.body.reference_date).toBe(await referenceDay('23', '2027-12-01'));
      expect(r.body.estimate).not.toBeNull();
    } finally {
      api.clock.set('2026-01-15T12:00:00Z');
    }
  });
});
