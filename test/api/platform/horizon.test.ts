// The data horizon (api/horizon.ts, docs/decisions.md "Data horizon"): a window past the zone's loaded sales gets the
// one shared notice on every endpoint, checked against the loaded sales read here from the marts' Parquet files; a
// source with no data for the zone answers 200, names the source and charges nothing (the key's balance read apart).
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { horizonNotice, monthsBetween } from '../../../api/horizon';
import { balanceOf, startTestApi, type TestApi } from '../../helpers/api';
import { testData } from '../../helpers/data';
import { queryParquet } from '../../helpers/samples';

const NOW = '2026-11-28T12:00:00Z';
let demo: TestApi;
let sample: TestApi;
/** Last loaded sale per département of the demo, read from the mart's file. */
const lastSale = new Map<string, string>();

beforeAll(async () => {
  const demoRoot = await testData('demo');
  [demo, sample] = await Promise.all([startTestApi({ dataRoot: demoRoot, now: NOW }), startTestApi({ now: NOW })]);
  const rows = await queryParquet(
    `select code_departement, max(date_mutation)::VARCHAR as last from '${path.join(demoRoot, 'marts', 'ventes.parquet')}' group by 1`,
  );
  for (const r of rows) lastSale.set(r.code_departement as string, r.last as string);
}, 600_000);
afterAll(async () => {
  await demo?.close();
  await sample?.close();
});

/** Months between two days counted by calendar arithmetic (whole months plus the fraction of the last one). */
function monthsApart(a: string, b: string): number {
  const [ya, ma, da] = a.split('-').map(Number);
  const [yb, mb, db] = b.split('-').map(Number);
  const daysInMonth = new Date(Date.UTC(yb, mb, 0)).getUTCDate();
  return Math.round((yb - ya) * 12 + (mb - ma) + (db - da + 1) / daysInMonth);
}

describe('the shared wording', () => {
  it('says the last loaded day and the months of the window that hold data (the decision’s example)', () => {
    const notice = horizonNotice(['83'], { first: '2014-01-02', last: '2024-12-31' }, { date_debut: '2023-11-28', date_fin: '2026-11-28' });
    expect(notice).toBe("The loaded sales of département 83 end on 2024-12-31: 13 of the window's 36 months hold data.");
  });
  it('says when the window starts before the first loaded sale, and nothing for a window inside the data', () => {
    expect(horizonNotice(['33'], { first: '2021-01-04', last: '2021-12-31' }, { date_debut: '2020-01-01', date_fin: '2021-06-30' }))
      .toBe("The loaded sales of département 33 start on 2021-01-04: 6 of the window's 18 months hold data.");
    expect(horizonNotice(['33'], { first: '2021-01-04', last: '2021-12-31' }, { date_debut: '2020-07-01', date_fin: '2022-06-30' }))
      .toBe("The loaded sales of département 33 start on 2021-01-04 and end on 2021-12-31: 12 of the window's 24 months hold data.");
    expect(horizonNotice(['33'], { first: '2021-01-04', last: '2021-12-31' }, { date_debut: '2021-02-01', date_fin: '2021-06-30' })).toBeUndefined();
    // The months of the window all hold sales, though not its first and last days.
    expect(horizonNotice(['33'], { first: '2021-01-06', last: '2021-12-29' }, { date_debut: '2021-01-01', date_fin: '2021-12-31' })).toBeUndefined();
  });
  it('counts months as the calendar does', () => {
    for (const [a, b] of [['2023-11-28', '2024-12-31'], ['2024-01-01', '2024-12-31'], ['2025-11-28', '2026-11-28'], ['2021-01-04', '2021-06-30']]) {
      expect(monthsBetween(a, b)).toBe(monthsApart(a, b));
    }
  });
});

describe('every windowed endpoint says where the zone’s sales end', () => {
  const expected = (dep: string, date_debut: string, date_fin: string) => {
    const last = lastSale.get(dep)!;
    return `The loaded sales of département ${dep} end on ${last}: ${monthsApart(date_debut, last)} of the window's ${monthsApart(date_debut, date_fin)} months hold data.`;
  };
  const cases: Array<[string, string, (b: any) => [string, string]]> = [
    ['/v1/stats/market?code_postal=75015', '75', (b) => [b.filters.date_debut, b.filters.date_fin]],
    ['/v1/stats/trends?commune=BORDEAUX', '33', (b) => [b.location.date_debut, b.location.date_fin]],
    ['/v1/heatmap?commune=LYON', '69', () => ['2025-11-28', '2026-11-28']],
    ['/v1/stats/pouvoir-achat?code_postal=75015', '75', (b) => [b.dvf_period.date_debut, b.dvf_period.date_fin]],
    ['/v1/market-overview?code_postal=75015', '75', () => ['2023-11-28', '2026-11-28']],
  ];
  for (const [url, dep, windowOf] of cases) {
    it(url, async () => {
      const key = demo.key();
      const r = await demo.get(url, key);
      expect(r.status).toBe(200);
      const [from, to] = windowOf(r.body);
      expect(r.body.notice).toContain(expected(dep, from, to));
      expect(r.body._credits.used).toBeGreaterThan(0);
    });
  }
  it('stats/compare names the départements of its zones', async () => {
    const r = await demo.get(`/v1/stats/compare?locations=${encodeURIComponent(JSON.stringify([{ code_postal: '75015' }, { commune: 'BORDEAUX' }]))}`, demo.key());
    expect(r.status).toBe(200);
    expect(r.body.notice).toContain('The loaded sales of départements 33, 75 end on');
  });
  it('a window inside the loaded sales gets no horizon notice', async () => {
    const r = await demo.get('/v1/stats/market?code_postal=75015&date_debut=2024-01-01&date_fin=2024-12-31', demo.key());
    expect(r.status).toBe(200);
    expect(r.body.notice).toBeUndefined();
  });
});

describe('a source with no data for the zone: 200, named, not charged', () => {
  // The sample dataset holds DVF for départements 33 and 01 only: no DPE, BDNB or SIRENE anywhere.
  const cases: Array<[string, RegExp]> = [
    ['/v1/dpe/stats?code_departement=33', /No DPE \(energy diagnostics\) data is loaded for département 33 \(see GET \/v1\/meta\/sources\)/],
    ['/v1/bdnb/stats?code_departement=33', /No BDNB \(buildings\) data is loaded for département 33/],
    ['/v1/stats/market?code_departement=83', /No DVF \(sales\) data is loaded for département 83/],
  ];
  for (const [url, message] of cases) {
    it(url, async () => {
      const key = sample.key();
      const before = balanceOf(sample, key);
      const r = await sample.get(url, key);
      expect(r.status).toBe(200);
      expect(r.body.notice).toMatch(message);
      expect(r.body._credits.used).toBe(0);
      expect(balanceOf(sample, key)).toBe(before);
    });
  }
  it('/v1/businesses/search at a sold place of département 33', async () => {
    const [sale] = await queryParquet(
      `select latitude, longitude from '${path.join(sample.dataRoot, 'marts', 'ventes.parquet')}' where code_departement = '33' and latitude is not null order by id limit 1`,
    );
    const key = sample.key();
    const before = balanceOf(sample, key);
    const r = await sample.get(`/v1/businesses/search?latitude=${sale.latitude}&longitude=${sale.longitude}`, key);
    expect(r.status).toBe(200);
    expect(r.body.businesses).toEqual([]);
    expect(r.body.notice).toMatch(/No SIRENE \(businesses\) data is loaded for département 33/);
    expect(r.body._credits.used).toBe(0);
    expect(balanceOf(sample, key)).toBe(before);
  });
  it('a loaded zone without matching sales is charged', async () => {
    const key = sample.key();
    const before = balanceOf(sample, key);
    const r = await sample.get('/v1/stats/market?code_departement=33&date_debut=2021-03-01&date_fin=2021-03-31&prix_min=1', key);
    expect(r.status).toBe(200);
    expect(r.body._credits.used).toBe(5);
    expect(balanceOf(sample, key)).toBe(before - 5);
  });
});

describe('meta/sources never shows a future date', () => {
  it('date_max is the latest served date up to today, read from the mart', async () => {
    const today = '2025-06-30';
    demo.clock.set(`${today}T12:00:00Z`);
    try {
      const file = path.join(demo.dataRoot, 'marts', 'dpe_diagnostics.parquet');
      const [row] = await queryParquet(
        `select max(date_etablissement_dpe)::VARCHAR as all_max, max(date_etablissement_dpe) filter (date_etablissement_dpe <= DATE '${today}')::VARCHAR as max_today from '${file}'`,
      );
      // The demo holds diagnostics dated after this day (those that follow their sale), so the rule is exercised.
      expect(String(row.all_max) > today).toBe(true);
      const r = await demo.get('/v1/meta/sources', demo.key());
      const dpe = r.body.sources.find((s: { source: string }) => s.source === 'dpe');
      expect(dpe.date_max).toBe(row.max_today);
    } finally {
      demo.clock.set(NOW);
    }
  });
});

describe('stats/trends: no change against a period that is not whole', () => {
  it('yearly: the year the default window cuts gives no change to the next one, and the notice says which', async () => {
    const key = demo.key();
    const r = await demo.get('/v1/stats/trends?commune=BORDEAUX&granularity=year', key);
    expect(r.status).toBe(200);
    // The window starts on 2021-11-28: 2021 holds five weeks of it, so 2022 is not compared with it.
    expect(r.body.location.date_debut).toBe('2021-11-28');
    const year = (y: string) => r.body.trends.find((t: { period: string }) => t.period === y);
    expect(year('2021')).toBeDefined();
    expect(year('2022').yoy_change).toEqual({ price_median_pct: null, price_m2_pct: null });
    expect(year('2023').yoy_change.price_m2_pct).not.toBeNull();
    expect(r.body.notice).toContain('yoy_change is null for 2022:');
    // The same years inside a window that holds them whole are compared.
    const whole = await demo.get('/v1/stats/trends?commune=BORDEAUX&granularity=year&date_debut=2021-01-01&date_fin=2023-12-31', key);
    const y2022 = whole.body.trends.find((t: { period: string }) => t.period === '2022');
    expect(y2022.yoy_change.price_m2_pct).not.toBeNull();
    expect(whole.body.notice).toBeUndefined();
  });
});
