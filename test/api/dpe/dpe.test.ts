// The energy-label (DPE) endpoints on the demo dataset: each in the shared contract, each with a statistic recomputed
// here in TypeScript from the marts' rows (not with the endpoints' SQL), and the class effect planted in the demo
// prices (pipeline/demo/generate-dpe.ts) recovered with its sign and roughly its size.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paths } from '../../../lib/config';
import { CLASS_EFFECT } from '../../../pipeline/demo/generate-dpe';
import { startTestApi, type TestApi } from '../../helpers/api';
import { testData } from '../../helpers/data';
import { describeContract } from '../../helpers/contract';
import { queryParquet } from '../../helpers/samples';
import { median, quantile } from '../../helpers/stats';

interface Matched { id: number; annee: number; type_local: string; prix_m2: number | null; code_postal: string; code_departement: string; code_commune_actuel: string; classe_energie: string | null; dpe_id: string; methode_match: string; distance_m: number; surface_gap_pct: number | null; avant_reforme_2021: boolean }
interface Diag { dpe_id: string; numero_dpe: string | null; classe_energie: string | null; code_postal: string | null; type_batiment: string | null; est_remplace: boolean; date: string }

let api: TestApi;
let matched: Matched[];
let near200: Array<Pick<Matched, 'id' | 'type_local' | 'prix_m2' | 'code_postal' | 'classe_energie'>>;
let diags: Diag[];
let cleanCount: (where: (s: { code_departement: string; type_local: string; annee: number }) => boolean) => number;

beforeAll(async () => {
  const root = await testData('demo');
  api = await startTestApi({ dataRoot: root, now: '2026-03-01T12:00:00Z' });
  const m = paths.marts(root);
  matched = (await queryParquet(`select * from read_parquet('${m}/dpe_ventes.parquet')`)) as unknown as Matched[];
  near200 = (await queryParquet(`select * from read_parquet('${m}/dpe_ventes_200m.parquet')`)) as unknown as typeof near200;
  diags = (await queryParquet(`select dpe_id, numero_dpe, classe_energie, code_postal, type_batiment, est_remplace,
    strftime(date_etablissement_dpe, '%Y-%m-%d') as date from read_parquet('${m}/dpe_diagnostics.parquet')`)) as unknown as Diag[];
  const clean = (await queryParquet(`select code_departement, type_local, annee from read_parquet('${m}/ventes.parquet')
    where type_local in ('Maison', 'Appartement') and not is_bulk_sale and not is_outlier and not is_vefa`)) as unknown as Array<{ code_departement: string; type_local: string; annee: number }>;
  cleanCount = (f) => clean.filter(f).length;
}, 240_000);
afterAll(() => api?.close());

const classes = ['A', 'B', 'C', 'D', 'E', 'F', 'G'] as const;
const r2 = (v: number) => Math.round(v * 100) / 100;

describe('GET /v1/dpe/prix-par-classe', () => {
  it('gives per-class €/m² quartiles, coverage and the gaps to D like a computation over the matched sales', async () => {
    const res = await api.get('/v1/dpe/prix-par-classe?code_departement=69&type_local=Appartement&annee_min=2021', api.key());
    expect(res.status).toBe(200);
    const mine = matched.filter((x) => x.code_departement === '69' && x.type_local === 'Appartement' && x.annee >= 2021 && x.classe_energie && x.prix_m2 !== null);
    expect(res.body.nb_transactions_avec_dpe).toBe(mine.length);
    expect(res.body.nb_transactions_total).toBe(cleanCount((s) => s.code_departement === '69' && s.type_local === 'Appartement' && s.annee >= 2021));
    expect(res.body.taux_couverture_dpe).toBeCloseTo(mine.length / res.body.nb_transactions_total, 4);
    for (const c of classes) {
      const v = mine.filter((x) => x.classe_energie === c).map((x) => x.prix_m2!).sort((a, b) => a - b);
      expect(res.body.par_classe[c].nb).toBe(v.length);
      expect(res.body.par_classe[c].statistically_fragile).toBe(v.length < 30);
      if (v.length) {
        expect(res.body.par_classe[c].prix_m2_median).toBeCloseTo(median(v), 1);
        expect(res.body.par_classe[c].prix_m2_p25).toBeCloseTo(quantile(v, 0.25), 1);
      }
    }
    const d = median(mine.filter((x) => x.classe_energie === 'D').map((x) => x.prix_m2!));
    const g = median(mine.filter((x) => x.classe_energie === 'G').map((x) => x.prix_m2!));
    expect(res.body.prime_verte.G_vs_D).toBeCloseTo(g / d - 1, 3);
  });

  it('recovers the planted class effect: A above D, G below, about the planted size', async () => {
    const res = await api.get('/v1/dpe/prix-par-classe?code_departement=75', api.key());
    const pv = res.body.prime_verte;
    // Matching a neighbour's diagnostic dilutes the effect; its sign and order of magnitude survive.
    expect(pv.A_vs_D).toBeGreaterThan((CLASS_EFFECT.A - 1) * 0.3);
    expect(pv.A_vs_D).toBeLessThan((CLASS_EFFECT.A - 1) * 1.6);
    expect(pv.G_vs_D).toBeLessThan((CLASS_EFFECT.G - 1) * 0.3);
    expect(pv.G_vs_D).toBeGreaterThan((CLASS_EFFECT.G - 1) * 1.6);
    expect(pv.F_vs_D).toBeLessThan(0);
    expect(pv.B_vs_D).toBeGreaterThan(0);
  });

  it('gives prime_verte null below 30 class-D sales, and refuses a radius search', async () => {
    const small = matched.filter((x) => x.classe_energie === 'D' && x.prix_m2 !== null);
    const byCp = new Map<string, number>();
    for (const x of small) byCp.set(x.code_postal, (byCp.get(x.code_postal) ?? 0) + 1);
    const cp = [...byCp].find(([, n]) => n < 30 && n > 0)?.[0];
    if (cp) expect((await api.get(`/v1/dpe/prix-par-classe?code_postal=${cp}`, api.key())).body.prime_verte).toBeNull();
    const radius = await api.get('/v1/dpe/prix-par-classe?latitude=48.84&longitude=2.30', api.key());
    expect(radius.status).toBe(400);
    expect(radius.body.error.code).toBe('unsupported_location');
  });
});

describe('GET /v1/stats/dpe-premium', () => {
  it('compares each class median with the median of all crossed sales (nearest diagnostic within 200 m)', async () => {
    const res = await api.get('/v1/stats/dpe-premium?code_postal=75015', api.key());
    expect(res.status).toBe(200);
    const mine = near200.filter((x) => x.code_postal === '75015' && x.prix_m2 !== null);
    const overall = median(mine.map((x) => x.prix_m2!));
    for (const c of classes) {
      const v = mine.filter((x) => x.classe_energie === c).map((x) => x.prix_m2!);
      expect(res.body.classes[c].count).toBe(v.length);
      if (v.length) expect(res.body.classes[c].vs_median_pct).toBeCloseTo((median(v) / overall - 1) * 100, 1);
    }
    expect(res.body.summary).toMatch(/sales crossed/);
    // The planted effect survives the looser crossing in a commune of one price level (Bordeaux), diluted.
    const bx = (await api.get('/v1/stats/dpe-premium?commune=BORDEAUX', api.key())).body.classes;
    expect(bx.A.vs_median_pct).toBeGreaterThan(0);
    expect(bx.G.vs_median_pct).toBeLessThan(0);
    expect(bx.A.vs_median_pct - bx.G.vs_median_pct).toBeGreaterThan(5);
    const dep = await api.get('/v1/stats/dpe-premium?code_departement=75', api.key());
    expect(dep.status).toBe(400);
    expect(dep.body.error.code).toBe('unsupported_location');
  });
});

describe('GET /v1/dpe/stats', () => {
  it('counts the classes of the non-replaced diagnostics of a postal code, by building type and date', async () => {
    const res = await api.get('/v1/dpe/stats?code_postal=75011&type_batiment=appartement&date_debut=2022-01-01', api.key());
    expect(res.status).toBe(200);
    const mine = diags.filter((d) => d.code_postal === '75011' && d.type_batiment === 'appartement' && d.date >= '2022-01-01' && !d.est_remplace && d.classe_energie);
    expect(res.body.count).toBe(mine.length);
    for (const c of classes) {
      const n = mine.filter((d) => d.classe_energie === c).length;
      expect(res.body.distribution[c]).toBe(n);
      expect(res.body.pct[c]).toBeCloseTo(r2((n / mine.length) * 100), 2);
    }
    // Replaced diagnostics exist in the demo and are left out.
    expect(diags.some((d) => d.est_remplace)).toBe(true);
  });
});

describe('GET /v1/dpe/passoires-thermiques', () => {
  it('gives the share of F and G among matched sales from 2022, per type and year', async () => {
    const res = await api.get('/v1/dpe/passoires-thermiques?code_departement=23', api.key());
    expect(res.status).toBe(200);
    const mine = matched.filter((x) => x.code_departement === '23' && x.annee >= 2022 && x.classe_energie);
    const fg = (xs: Matched[]) => xs.filter((x) => x.classe_energie === 'F' || x.classe_energie === 'G').length;
    expect(res.body.total_transactions_avec_dpe).toBe(mine.length);
    expect(res.body.nb_passoires).toBe(fg(mine));
    expect(res.body.pct_passoires).toBeCloseTo((fg(mine) / mine.length) * 100, 2);
    const houses = mine.filter((x) => x.type_local === 'Maison');
    expect(res.body.par_type.Maison).toEqual({ nb: fg(houses), pct: r2((fg(houses) / houses.length) * 100) });
    expect(res.body.par_annee.map((y: { annee: number }) => y.annee)).toEqual([...new Set(mine.map((x) => x.annee))].sort());
    // Rural Creuse: planted with more F and G than the cities.
    const paris = await api.get('/v1/dpe/passoires-thermiques?code_departement=75', api.key());
    expect(res.body.pct_passoires).toBeGreaterThan(paris.body.pct_passoires);
  });
});

describe('GET /v1/dpe/evolution-prime-verte', () => {
  it('gives the yearly A+B vs F+G gap with the exclusion rule and the pre-reform note', async () => {
    const res = await api.get('/v1/dpe/evolution-prime-verte?commune=BORDEAUX', api.key());
    expect(res.status).toBe(200);
    const mine = matched.filter((x) => x.code_commune_actuel === '33063' && x.annee >= 2018 && x.prix_m2 !== null);
    const expected = [...new Set(mine.map((x) => x.annee))].sort().flatMap((y) => {
      const ab = mine.filter((x) => x.annee === y && (x.classe_energie === 'A' || x.classe_energie === 'B'));
      const fg = mine.filter((x) => x.annee === y && (x.classe_energie === 'F' || x.classe_energie === 'G'));
      if (ab.length < 10 || fg.length < 10) return [];
      const mab = median(ab.map((x) => x.prix_m2!));
      const mfg = median(fg.map((x) => x.prix_m2!));
      const pre = [...ab, ...fg].some((x) => x.avant_reforme_2021);
      return [{ annee: y, nb_AB: ab.length, nb_FG: fg.length, gap_pct: r2(((mab - mfg) / mfg) * 100), methodology_note: pre ? 'pre-reform DPE' : null }];
    });
    expect(expected.length).toBeGreaterThan(0);
    expect(res.body.series.map((s: Record<string, unknown>) => ({ annee: s.annee, nb_AB: s.nb_AB, nb_FG: s.nb_FG, gap_pct: s.gap_pct, methodology_note: s.methodology_note }))).toEqual(expected);
    expect(res.body.trend === null).toBe(expected.length < 3);
    const dep = await api.get('/v1/dpe/evolution-prime-verte?code_departement=33', api.key());
    expect(dep.status).toBe(400);
    expect(dep.body.error.code).toBe('unsupported_location');
  });
});

describe('GET /v1/dpe/commune-stats', () => {
  it('lists the communes of a département with 30 crossings or more, with their class prices', async () => {
    const res = await api.get('/v1/dpe/commune-stats?code_departement=69', api.key());
    expect(res.status).toBe(200);
    const counts = new Map<string, number>();
    for (const x of matched) if (x.code_departement === '69' && x.prix_m2 !== null) counts.set(x.code_commune_actuel, (counts.get(x.code_commune_actuel) ?? 0) + 1);
    const expected = [...counts].filter(([, n]) => n >= 30).map(([c]) => c).sort();
    expect(res.body.results.map((r: { code_commune: string }) => r.code_commune)).toEqual(expected);
    const first = res.body.results[0];
    const c = matched.filter((x) => x.code_commune_actuel === first.code_commune && x.prix_m2 !== null && x.classe_energie === 'C').map((x) => x.prix_m2!);
    expect(first.prix_m2_par_classe.C.nb).toBe(c.length);
    expect(first.prix_m2_par_classe.C.prix_m2_median).toBeCloseTo(median(c), 1);
    expect(first.computed_at).toMatch(/^\d{4}-\d{2}-\d{2}T/);
  });
});

describe('GET /v1/transactions/:id/dpe', () => {
  it('returns the matched diagnostic as the DPE record, with the method, distance and surface gap', async () => {
    for (const method of ['cadastre', 'proximity']) {
      const m = matched.find((x) => x.methode_match === method)!;
      const res = await api.get(`/v1/transactions/${m.id}/dpe`, api.key());
      expect(res.status).toBe(200);
      const d = diags.find((x) => x.dpe_id === m.dpe_id)!;
      // A string, as /v1/transactions/:id/bdnb's (the specification spells that one).
      expect(res.body.transaction_id).toBe(String(m.id));
      expect(res.body.dpe).toMatchObject({ numero_dpe: d.numero_dpe, classe_energie: d.classe_energie, date_etablissement_dpe: d.date });
      expect(Object.keys(res.body.dpe).sort()).toEqual(['address', 'annee_construction', 'classe_energie', 'classe_ges', 'code_insee', 'code_postal',
        'conso_energie_kwh_m2_an', 'date_etablissement_dpe', 'emission_ges_kg_m2_an', 'latitude', 'longitude', 'methode', 'numero_dpe', 'surface_habitable', 'type_batiment']);
      expect(res.body.match).toEqual({ method, distance_m: m.distance_m, surface_gap_pct: m.surface_gap_pct });
    }
  });
});

describe('GET /v1/meta/sources', () => {
  it('lists the DPE with its départements, rows and the served diagnostics', async () => {
    const res = await api.get('/v1/meta/sources', api.key());
    const dpe = res.body.sources.find((s: { source: string }) => s.source === 'dpe');
    expect(dpe).toMatchObject({ available: true, departements: ['23', '33', '69', '75'], served_rows: diags.length, rows: diags.length });
    expect(dpe.date_min).toBe([...diags.map((d) => d.date)].sort()[0]);
  });
});

// A matched sale's id is only known once the demo is built: the contract reads `path` when its tests run.
describeContract('GET /v1/transactions/:id/dpe', () => api, {
  get path() {
    return `/v1/transactions/${matched.find((x) => x.methode_match === 'proximity')!.id}/dpe`;
  },
  cost: 2,
  notFound: '/v1/transactions/999999999/dpe',
});
describeContract('GET /v1/dpe/stats', () => api, { path: '/v1/dpe/stats?code_postal=75015', cost: 10, withoutLocation: '/v1/dpe/stats?type_batiment=maison', invalid: { path: '/v1/dpe/stats?code_postal=75015&type_batiment=chateau', param: 'type_batiment' } });
describeContract('GET /v1/stats/dpe-premium', () => api, { path: '/v1/stats/dpe-premium?code_postal=75015', cost: 10, withoutLocation: '/v1/stats/dpe-premium?type_local=Maison', invalid: { path: '/v1/stats/dpe-premium?code_postal=75015&type_local=Terrain', param: 'type_local' } });
describeContract('GET /v1/dpe/prix-par-classe', () => api, { path: '/v1/dpe/prix-par-classe?code_postal=75015', cost: 10, withoutLocation: '/v1/dpe/prix-par-classe?type_local=Maison', invalid: { path: '/v1/dpe/prix-par-classe?code_postal=75015&annee_min=abc', param: 'annee_min' } });
describeContract('GET /v1/dpe/passoires-thermiques', () => api, { path: '/v1/dpe/passoires-thermiques?code_postal=75015', cost: 10, withoutLocation: '/v1/dpe/passoires-thermiques', invalid: { path: '/v1/dpe/passoires-thermiques?code_postal=7501', param: 'code_postal' } });
describeContract('GET /v1/dpe/evolution-prime-verte', () => api, { path: '/v1/dpe/evolution-prime-verte?code_postal=75015', cost: 10, withoutLocation: '/v1/dpe/evolution-prime-verte?type_local=Maison', invalid: { path: '/v1/dpe/evolution-prime-verte?code_postal=75015&type_local=Villa', param: 'type_local' } });
describeContract('GET /v1/dpe/commune-stats', () => api, { path: '/v1/dpe/commune-stats?code_departement=75', cost: 5, withoutLocation: '/v1/dpe/commune-stats', invalid: { path: '/v1/dpe/commune-stats?code_departement=999', param: 'code_departement' } });
