// stats/pouvoir-achat, stats/rendement-locatif and stats/market's pouvoir_achat on the demo dataset (generated DVF,
// Filosofi and ANIL files through the real pipeline), checked against the demo's source files and ventes rows read
// independently; plus the shared contract of both endpoints.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { incomeCommune } from '../../../api/routes/stats/income';
import { resolveLocation } from '../../../api/location';
import { paths } from '../../../lib/config';
import { startTestApi, type TestApi } from '../../helpers/api';
import { describeContract } from '../../helpers/contract';
import { testData } from '../../helpers/data';
import { queryParquet } from '../../helpers/samples';
import { medianOrNull, r2 } from '../../helpers/stats';

let api: TestApi;
let key: string;
beforeAll(async () => {
  api = await startTestApi({ dataRoot: await testData('demo'), now: '2026-01-15T12:00:00Z' });
  key = api.key({ balance: 100_000 });
}, 120_000);
afterAll(() => api.close());

/** A `;` file of the demo source as objects (Windows-1252 for ANIL, read as latin1). */
function demoFile(rel: string): Map<string, Record<string, string>> {
  const [head, ...lines] = fs.readFileSync(path.join(paths.demoSource(api.dataRoot), rel), 'latin1').split(/\r?\n/).filter(Boolean).map((l) => l.split(';'));
  return new Map(lines.map((cells) => [cells[head.findIndex((h) => h === 'CODGEO' || h === 'INSEE_C')], Object.fromEntries(head.map((h, i) => [h, cells[i]]))]));
}
const income = (code: string) => Number(demoFile('cc_filosofi_2021_COM.csv').get(code)!.MED21);
const num = (s: string) => Number(s.replace(',', '.'));


/** Clean sales of the ventes mart (its Parquet copy), read without the API. */
async function cleanSales(code: string): Promise<Array<{ date: string; type_local: string; valeur_fonciere: number; prix_m2: number | null; pieces: number | null }>> {
  const rows = await queryParquet(`select strftime(date_mutation, '%Y-%m-%d') as date, type_local, valeur_fonciere, prix_m2, nombre_pieces_principales as pieces
    from read_parquet('${path.join(paths.marts(api.dataRoot), 'ventes.parquet')}')
    where code_commune_actuel = '${code}' and not is_bulk_sale and not is_outlier and not is_vefa`);
  return rows as never;
}

describe('GET /v1/stats/pouvoir-achat', () => {
  it("uses a Lyon arrondissement's own income line and divides the median price of its sales by it", async () => {
    const r = await api.get('/v1/stats/pouvoir-achat?commune=LYON%201&type_local=Appartement&date_debut=2024-01-01&date_fin=2024-12-31', key);
    expect(r.status).toBe(200);
    const sales = (await cleanSales('69381')).filter((s) => s.type_local === 'Appartement' && s.date >= '2024-01-01' && s.date <= '2024-12-31');
    const prix = medianOrNull(sales.map((s) => s.valeur_fonciere))!;
    expect(income('69381')).not.toBe(income('69123'));
    expect(r.body).toMatchObject({
      count: sales.length, prix_median: r2(prix), prix_bien_median: r2(prix), code_commune: '69381', annee_reference: 2021,
      revenu_median_annuel_uc: income('69381'), ratio_prix_revenu: r2(r2(prix) / income('69381')),
      dvf_period: { date_debut: '2024-01-01', date_fin: '2024-12-31' }, vintage_gap_years: 3,
    });
    expect(r.body.prix_m2_median).toBe(r2(medianOrNull(sales.map((s) => s.prix_m2!).filter((v) => v !== null))!));
    expect(r.body.vintage_note).toMatch(/2021/);
    expect(r.body.message).toBeUndefined();
    expect(r.body.notice).toBeUndefined();
  });

  it('caps the window of a large zone (the whole of Paris) to one year with a notice, and uses the city income line', async () => {
    const r = await api.get('/v1/stats/pouvoir-achat?commune=PARIS&date_debut=2020-01-01&date_fin=2025-06-30', key);
    expect(r.status).toBe(200);
    expect(r.body.dvf_period).toEqual({ date_debut: '2024-06-30', date_fin: '2025-06-30' });
    expect(r.body.notice).toMatch(/large zone.*2024-06-30/);
    expect(r.body.code_commune).toBe('75056');
    expect(r.body.revenu_median_annuel_uc).toBe(income('75056'));
    const small = await api.get('/v1/stats/pouvoir-achat?code_commune=23008&date_debut=2020-01-01&date_fin=2025-06-30', key);
    expect(small.body.dvf_period.date_debut).toBe('2020-01-01');
  });

  it("counts a postal code's sales and uses the income of the commune it serves", async () => {
    const r = await api.get('/v1/stats/pouvoir-achat?code_postal=23200&date_debut=2022-01-01&date_fin=2023-12-31', key);
    const [{ n }] = await queryParquet(`select count(*) as n from read_parquet('${path.join(paths.marts(api.dataRoot), 'ventes.parquet')}')
      where code_postal = '23200' and type_local in ('Maison', 'Appartement') and not is_bulk_sale and not is_outlier and not is_vefa
      and date_mutation between '2022-01-01' and '2023-12-31'`);
    expect(n).toBeGreaterThan(0);
    expect(r.body).toMatchObject({ count: n, code_commune: '23008', revenu_median_annuel_uc: income('23008') });
  });

  it('gives a null ratio and a message under statistical secrecy or without income data', async () => {
    expect(demoFile('cc_filosofi_2021_COM.csv').get('23070')!.MED21).toBe('s');
    const secret = await api.get('/v1/stats/pouvoir-achat?code_commune=23070', key);
    expect(secret.status).toBe(200);
    expect(secret.body).toMatchObject({ ratio_prix_revenu: null, revenu_median_annuel_uc: null, annee_reference: 2021 });
    expect(secret.body.count).toBeGreaterThan(0);
    expect(secret.body.message).toMatch(/statistical secrecy/);
    const none = await api.get('/v1/stats/pouvoir-achat?code_commune=01001', key);
    expect(none.body).toMatchObject({ ratio_prix_revenu: null, annee_reference: null, vintage_gap_years: null });
    expect(none.body.message).toMatch(/no income data/);
  });

  it('refuses a département alone and latitude/longitude (unsupported_location), and needs a location', async () => {
    for (const q of ['code_departement=69', 'latitude=45.76&longitude=4.83']) {
      const r = await api.get(`/v1/stats/pouvoir-achat?${q}`, key);
      expect([r.status, r.body.error.code]).toEqual([400, 'unsupported_location']);
    }
    const missing = await api.get('/v1/stats/pouvoir-achat?type_local=Maison', key);
    expect([missing.status, missing.body.error.code]).toEqual([400, 'missing_location']);
    const both = await api.get('/v1/stats/pouvoir-achat?commune=AHUN&code_commune=23001', key);
    expect(both.body.error.details).toEqual([{ param: 'code_commune', issue: 'give commune or code_commune, not both' }]);
    const unknown = await api.get('/v1/stats/pouvoir-achat?code_commune=99999', key);
    expect([unknown.status, unknown.body.error.details[0].param]).toEqual([400, 'code_commune']);
  });
});

describe('GET /v1/stats/market with include_pouvoir_achat', () => {
  it('adds the ratio of the market median to the commune income, ignores it for a radius, and never fails the response', async () => {
    const r = await api.get('/v1/stats/market?commune=LYON%201&include_pouvoir_achat=true', key);
    expect(r.status).toBe(200);
    expect(r.body.pouvoir_achat).toEqual({
      available: true, ratio_prix_revenu: r2(r.body.price.median / income('69381')), revenu_median_annuel_uc: income('69381'),
      annee_reference: 2021, code_commune: '69381',
    });
    const radius = await api.get('/v1/stats/market?latitude=45.77&longitude=4.8264&include_pouvoir_achat=true', key);
    expect(radius.status).toBe(200);
    expect(radius.body.pouvoir_achat).toBeUndefined();

    const db = api.ctx.db;
    const original = db.query.bind(db);
    db.query = ((sql: string, ...rest: unknown[]) =>
      sql.includes('revenus_communes') ? Promise.reject(new Error('disk error')) : (original as (...a: unknown[]) => unknown)(sql, ...rest)) as typeof db.query;
    try {
      const failed = await api.get('/v1/stats/market?commune=LYON%202&include_pouvoir_achat=true', key);
      expect(failed.status).toBe(200);
      expect(failed.body.count).toBeGreaterThan(0);
      expect(failed.body.pouvoir_achat).toMatchObject({ available: false, ratio_prix_revenu: null, code_commune: '69382' });
      expect(failed.body.pouvoir_achat.message).toMatch(/could not be read/);
    } finally {
      delete (db as Partial<{ query: unknown }>).query;
    }
  });
});

describe('GET /v1/stats/rendement-locatif', () => {
  /** Window and €/m² median of the clean sales of a commune, computed here from the ventes rows. */
  async function dvfSide(code: string, keep: (s: { type_local: string; pieces: number | null }) => boolean) {
    const sales = (await cleanSales(code)).filter((s) => s.prix_m2 !== null && (s.type_local === 'Appartement' || s.type_local === 'Maison'));
    const fin = sales.map((s) => s.date).sort().at(-1)!;
    const [y, m, d] = fin.split('-').map(Number);
    const lastDay = new Date(Date.UTC(y - 2, m, 0)).getUTCDate(); // 24 months earlier, day clamped to the month's end
    const start = new Date(Date.UTC(y - 2, m - 1, Math.min(d, lastDay) + 1)).toISOString().slice(0, 10);
    const inWindow = sales.filter((s) => s.date >= start && s.date <= fin && keep(s));
    return { date_debut: start, date_fin: fin, count: inWindow.length, median: medianOrNull(inWindow.map((s) => s.prix_m2!))! };
  }

  it('divides the annual rent of the reference T3+ flat by the DVF median of the 24 months before the latest sale', async () => {
    const r = await api.get('/v1/stats/rendement-locatif?code_insee=69383&appartement_profile=t3_plus', key);
    expect(r.status).toBe(200);
    const dvf = await dvfSide('69383', (s) => s.type_local === 'Appartement' && (s.pieces ?? 0) >= 3);
    const rent = demoFile('2024/pred-app3-mef-dhup.csv').get('69383')!;
    const loyer = num(rent.loypredm2);
    expect(r.body).toMatchObject({
      code_insee: '69383', commune: 'LYON 3E ARRONDISSEMENT', type_local: 'Appartement', profile: 'appartement_t3_plus',
      dvf: { transactions_count: dvf.count, prix_m2_median: r2(dvf.median), date_debut: dvf.date_debut, date_fin: dvf.date_fin },
      rent: {
        loyer_m2_cc_estime: r2(loyer), loyer_m2_cc_interval: { lower: r2(num(rent['lwr.IPm2'])), upper: r2(num(rent['upr.IPm2'])) },
        reference_surface_m2: 72, loyer_mensuel_cc_reference: r2(loyer * 72), loyer_annuel_cc_reference: r2(loyer * 72 * 12),
        prediction_level: rent.TYPPRED, nb_observations_commune: Number(rent.nbobs_com), source_vintage: 2024, reference_quarter: '2024-Q3',
      },
      rendement_brut_estime_pct: r2(((loyer * 12) / dvf.median) * 100),
      quality_flags: [],
    });
    expect(r.body.attribution).toMatch(/ANIL.*leboncoin.*SeLoger/);
  });

  it('flags a coarser prediction level, few listings and a low R² as the rent file says', async () => {
    const r = await api.get('/v1/stats/rendement-locatif?code_insee=23001&type_local=Maison', key);
    const rent = demoFile('2024/pred-mai-mef-dhup.csv').get('23001')!;
    const expected = [
      ...(rent.TYPPRED !== 'commune' ? ['coarser_prediction_level'] : []),
      ...(Number(rent.nbobs_com) < 30 ? ['few_observations'] : []),
      ...(num(rent.R2_adj) < 0.5 ? ['low_r2'] : []),
    ];
    expect(expected).toHaveLength(3);
    expect(r.body.quality_flags).toEqual(expected);
    expect(r.body.rent.reference_surface_m2).toBe(92);
    const dvf = await dvfSide('23001', (s) => s.type_local === 'Maison');
    expect(r.body.rendement_brut_estime_pct).toBe(r2(((num(rent.loypredm2) * 12) / dvf.median) * 100));
  });

  it('accepts Corsican codes, requires code_insee, and refuses a flat profile for houses', async () => {
    const corsica = await api.get('/v1/stats/rendement-locatif?code_insee=2A004', key);
    expect(corsica.status).toBe(200);
    expect(corsica.body).toMatchObject({ code_insee: '2A004', rent: null, rendement_brut_estime_pct: null });
    expect(corsica.body.message).toMatch(/no ANIL rent/);
    const missing = await api.get('/v1/stats/rendement-locatif?type_local=Maison', key);
    expect([missing.status, missing.body.error.code]).toEqual([400, 'missing_location']);
    const bad = await api.get('/v1/stats/rendement-locatif?code_insee=23001&type_local=Maison&appartement_profile=t1_t2', key);
    expect(bad.body.error.details).toEqual([{ param: 'appartement_profile', issue: 'applies to type_local=Appartement only' }]);
  });
});

describe('GET /v1/meta/sources', () => {
  it('lists Filosofi and ANIL as available with their vintage years and row counts', async () => {
    const r = await api.get('/v1/meta/sources', key);
    const bySource = Object.fromEntries(r.body.sources.map((s: { source: string }) => [s.source, s]));
    expect(bySource.filosofi).toMatchObject({ available: true, annees: [2021], rows: demoFile('cc_filosofi_2021_COM.csv').size, served_rows: demoFile('cc_filosofi_2021_COM.csv').size });
    const anilRows = ['app', 'app12', 'app3', 'mai'].reduce((a, s) => a + demoFile(`2024/pred-${s}-mef-dhup.csv`).size, 0);
    expect(bySource.anil).toMatchObject({ available: true, annees: [2024], rows: anilRows, served_rows: anilRows, partitions: 4 });
  });
});

describe('OpenAPI', () => {
  it('documents both endpoints', async () => {
    const doc = await api.get('/v1/openapi.json');
    expect(Object.keys(doc.body.paths)).toEqual(expect.arrayContaining(['/v1/stats/pouvoir-achat', '/v1/stats/rendement-locatif']));
  });
});

const get = () => api;
describeContract('GET /v1/stats/pouvoir-achat', get, {
  path: '/v1/stats/pouvoir-achat?commune=AUBUSSON',
  cost: 5,
  withoutLocation: '/v1/stats/pouvoir-achat?type_local=Maison',
  invalid: { path: '/v1/stats/pouvoir-achat?code_commune=ABC', param: 'code_commune' },
});
describeContract('GET /v1/stats/rendement-locatif', get, {
  path: '/v1/stats/rendement-locatif?code_insee=33063',
  cost: 10,
  withoutLocation: '/v1/stats/rendement-locatif?type_local=Maison',
  invalid: { path: '/v1/stats/rendement-locatif?code_insee=33063&appartement_profile=t4', param: 'appartement_profile' },
});

describe('the income line of a postal code', () => {
  it('is that of the most populous commune it serves, within code_departement when one is given', () => {
    // 75016 serves Paris 16e (75116) and Boulogne-Billancourt (92012).
    const all = incomeCommune(resolveLocation({ code_postal: '75016' }, { accept: ['code_postal', 'code_departement'] }));
    expect(all.code).toBe('75116');
    expect(all.notice).toMatch(/serves 2 communes/);
    const in92 = incomeCommune(resolveLocation({ code_postal: '75016', code_departement: '92' }, { accept: ['code_postal', 'code_departement'] }));
    expect(in92).toEqual({ code: '92012' });
  });
});
