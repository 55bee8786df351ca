// The in-memory sales index (api/sales/memory.ts) against the SQL path (marketStatsSql, DuckDB over `ventes`): random
// zones (postal codes, communes, départements, their conjunctions, unknown codes), types, day-level windows (some on
// month boundaries, some inside one month, some past the data) and cleaning flags; every field of every answer equal.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveLocation, type LocationInput } from '../../../api/location';
import { marketStats, marketStatsSql, type SalesFilter } from '../../../api/sales/filter';
import { SALE_TYPES } from '../../../api/sales/memory';
import { monthlyStats, monthlyStatsSql, monthOf, typesOf } from '../../../api/sales/analytics';
import { periodRows, periodRowsSql } from '../../../api/routes/stats/trends';
import { yearMedians, yearMediansSql } from '../../../api/routes/market/score';
import type { Call } from '../../../api/platform';
import { startTestApi, type TestApi } from '../../helpers/api';
import { testData } from '../../helpers/data';

/** A deterministic pseudo-random sequence (mulberry32), so that a failure can be replayed. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);

async function compareRandomQueries(api: TestApi, n: number, seed: number): Promise<{ compared: number; nonEmpty: number; departements: number }> {
  const sales = api.ctx.db.sales;
  expect(sales, 'the serving file has its in-memory index').toBeDefined();
  expect(sales!.rows).toBeGreaterThan(0);
  const call = { ctx: api.ctx } as Call;
  const [zones] = await api.ctx.db.query<{ cps: string[]; communes: string[]; deps: string[]; first: string; last: string }>(
    `select list(distinct code_postal) filter (code_postal is not null) as cps, list(distinct commune) as communes,
       list(distinct code_departement) as deps, min(date_mutation)::VARCHAR as first, max(date_mutation)::VARCHAR as last from ventes`,
  );
  const rnd = random(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
  const first = Date.parse(`${zones.first}T00:00:00Z`) - 200 * 86_400_000;
  const last = Date.parse(`${zones.last}T00:00:00Z`) + 200 * 86_400_000;
  let nonEmpty = 0;
  let departements = 0;
  let periods = 0;
  for (let i = 0; i < n; i++) {
    const kind = pick(['code_postal', 'commune', 'code_departement', 'code_departement', 'code_postal+dep', 'commune+dep', 'unknown'] as const);
    const q: LocationInput = {};
    if (kind.startsWith('code_postal')) q.code_postal = pick(zones.cps);
    if (kind.startsWith('commune')) q.commune = pick(zones.communes);
    if (kind === 'code_departement' || kind.endsWith('+dep')) q.code_departement = rnd() < 0.9 ? pick(zones.deps) : pick(['2A', '971', '48']);
    if (kind === 'unknown') q.code_postal = pick(['00000', '99999', '75000']);
    let location;
    try {
      location = resolveLocation(q, { accept: ['code_postal', 'commune', 'code_departement'] });
    } catch {
      continue; // a commune unknown in a département the draw paired it with: refused before any statistic
    }
    // Windows: any two days; whole months (the département blocks alone); one month's days (partial months alone).
    let a = first + rnd() * (last - first);
    let b = first + rnd() * (last - first);
    const shape = rnd();
    if (shape < 0.3) {
      const d0 = new Date(Math.min(a, b));
      const d1 = new Date(Math.max(a, b));
      a = Date.UTC(d0.getUTCFullYear(), d0.getUTCMonth(), 1);
      b = Date.UTC(d1.getUTCFullYear(), d1.getUTCMonth() + 1, 0);
    } else if (shape < 0.45) {
      b = a + rnd() * 20 * 86_400_000;
    }
    const types = rnd() < 0.5 ? [pick(SALE_TYPES)] : SALE_TYPES.filter(() => rnd() < 0.6);
    const filter: SalesFilter = {
      location,
      types: types.length ? types : ['Maison'],
      date_debut: iso(Math.min(a, b)),
      date_fin: iso(Math.max(a, b)),
      exclude_bulk_sales: rnd() < 0.7,
      exclude_outliers: rnd() < 0.7,
      exclude_vefa: rnd() < 0.7,
    };
    const [fromMemory, fromSql] = [await marketStats(call, filter), await marketStatsSql(call, filter)];
    const what = JSON.stringify({ q, filter: { ...filter, location: undefined } });
    expect(fromMemory, what).toEqual(fromSql);
    // Every fifth draw: the same sales per period (stats/trends, market-overview), per month with the default
    // cleaning (market-activity, market-score; a département's from the ventes_mensuelles_departements mart) and the
    // market score's two yearly medians.
    if (i % 5 === 0) {
      const granularity = pick(['month', 'quarter', 'year'] as const);
      expect(await periodRows(call, filter, granularity), `${what} by ${granularity}`).toEqual(await periodRowsSql(call, filter, granularity));
      const m0 = monthOf(filter.date_debut);
      const m1 = monthOf(filter.date_fin);
      const byMonth = (rows: Array<{ mois: string }>) => [...rows].sort((x, y) => x.mois.localeCompare(y.mois));
      // The callers ask for one type or the default ones (typesOf), the two selections the mart holds.
      const types = typesOf(rnd() < 0.5 ? undefined : pick(SALE_TYPES));
      expect(await monthlyStats(call, location, types, m0, m1), `${what} monthly`).toEqual(byMonth(await monthlyStatsSql(call, location, types, m0, m1)));
      // market-score's two 12-month medians, ending with the window's last month.
      expect(await yearMedians(call, location, types, m1), `${what} year medians`).toEqual(await yearMediansSql(call, location, types, m1));
      periods++;
    }
    if (fromSql.count > 0) nonEmpty++;
    if (location.kind === 'code_departement' && fromSql.count > 0) departements++;
  }
  expect(periods).toBeGreaterThan(n / 10);
  return { compared: n, nonEmpty, departements };
}

describe('in-memory zone statistics equal the SQL path', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi({ dataRoot: await testData('demo') });
  });
  afterAll(() => api.close());

  it('on the demo data: 1,000 random queries over every zone kind', async () => {
    const r = await compareRandomQueries(api, 1000, 20261129);
    // The draw must exercise real answers, départements included, not only empty zones.
    expect(r.nonEmpty).toBeGreaterThan(400);
    expect(r.departements).toBeGreaterThan(100);
  });
});

describe('in-memory zone statistics on the real geo-DVF sample', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(() => api.close());

  it('equal the SQL path over 300 random queries', async () => {
    const r = await compareRandomQueries(api, 300, 7);
    expect(r.nonEmpty).toBeGreaterThan(40);
  });
});
