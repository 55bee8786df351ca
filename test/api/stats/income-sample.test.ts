// Income endpoints on the real samples: DVF (Gironde 2021, Ain 2020) with the real INSEE Filosofi 2020 file and the
// real ANIL Lyon extracts imported by the pipeline; figures checked against the source files read independently.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paths } from '../../../lib/config';
import { startTestApi, type TestApi } from '../../helpers/api';
import { testData } from '../../helpers/data';
import { addIncomeSamples, ANIL_SAMPLES, FILOSOFI_SAMPLE } from '../../helpers/income';
import { queryParquet } from '../../helpers/samples';

let api: TestApi;
let key: string;
beforeAll(async () => {
  const dataRoot = await testData('sample', { writable: true });
  await addIncomeSamples(dataRoot, 2024);
  api = await startTestApi({ dataRoot, now: '2022-06-15T12:00:00Z' });
  key = api.key({ balance: 10_000 });
}, 120_000);
afterAll(() => api.close());

const filosofi = new Map(zlib.gunzipSync(fs.readFileSync(FILOSOFI_SAMPLE)).toString('utf8').trim().split('\n').map((l) => l.split(';')).map((c) => [c[0], c]));
const med20 = (code: string) => Number(filosofi.get(code)![3]);
const r2 = (v: number) => Math.round(v * 100) / 100;

describe('pouvoir-achat on the real samples', () => {
  it("divides the median price of Abzac's 2021 clean sales by Abzac's MED20", async () => {
    const r = await api.get('/v1/stats/pouvoir-achat?code_commune=33001&date_debut=2021-01-01&date_fin=2021-12-31', key);
    expect(r.status).toBe(200);
    const rows = await queryParquet(`select valeur_fonciere as v from read_parquet('${path.join(paths.marts(api.dataRoot), 'ventes.parquet')}')
      where code_commune_actuel = '33001' and type_local in ('Maison', 'Appartement') and not is_bulk_sale and not is_outlier and not is_vefa
      and date_mutation between '2021-01-01' and '2021-12-31' order by v`);
    const v = rows.map((x) => x.v as number);
    const m = v.length % 2 ? v[v.length >> 1] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    expect(v.length).toBeGreaterThan(0);
    expect(r.body).toMatchObject({
      count: v.length, prix_median: r2(m), code_commune: '33001', annee_reference: 2020, revenu_median_annuel_uc: med20('33001'),
      nb_menages_fiscaux: Number(filosofi.get('33001')![1]), ratio_prix_revenu: r2(r2(m) / med20('33001')), vintage_gap_years: 1,
    });
  });

  it('explains a null ratio for a commune under statistical secrecy in the real file', async () => {
    const secret = [...filosofi.values()].find((c) => c[0].startsWith('33') && c[3] === 's')![0];
    const r = await api.get(`/v1/stats/pouvoir-achat?code_commune=${secret}`, key);
    expect(r.body).toMatchObject({ ratio_prix_revenu: null, revenu_median_annuel_uc: null, annee_reference: 2020, code_commune: secret });
    expect(r.body.message).toMatch(/statistical secrecy/);
  });
});

describe('rendement-locatif on the real ANIL extracts', () => {
  it('serves the Lyon 8e house rent (commune level) as published, without a yield when there is no sale', async () => {
    const raw = fs.readFileSync(ANIL_SAMPLES.maison, 'utf8').split(/\r?\n/).map((l) => l.split(';')).find((c) => c[1] === '69388')!;
    const rent = Number(raw[6].replace(',', '.'));
    const r = await api.get('/v1/stats/rendement-locatif?code_insee=69388&type_local=Maison', key);
    expect(r.status).toBe(200);
    expect(r.body.rent).toMatchObject({
      loyer_m2_cc_estime: r2(rent), reference_surface_m2: 92, loyer_mensuel_cc_reference: r2(rent * 92), prediction_level: raw[9],
      nb_observations_commune: Number(raw[10]), source_vintage: 2024,
    });
    expect(r.body).toMatchObject({ rendement_brut_estime_pct: null, dvf: { transactions_count: 0, prix_m2_median: null } });
    expect(r.body.message).toMatch(/no clean DVF sale/);
    const flagged = await api.get('/v1/stats/rendement-locatif?code_insee=69381&type_local=Maison', key);
    expect(flagged.body.quality_flags).toEqual(['coarser_prediction_level', 'few_observations']);
  });
});
