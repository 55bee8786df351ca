// GET /v1/flips and the flips marts on the demo dataset: the planted resales of demo-truth.json are found and its
// near misses are not; pairs and per-commune figures are checked against a computation written here in TypeScript
// from the clean rows of `ventes`, not with the marts' SQL.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paths } from '../../../lib/config';
import { codeMappings, getCommune } from '../../../lib/geo';
import type { DemoTruth, PlantedResale } from '../../../pipeline/demo/generate';
import { balanceOf, startTestApi, type TestApi } from '../../helpers/api';
import { describeContract } from '../../helpers/contract';
import { testData } from '../../helpers/data';
import { queryParquet } from '../../helpers/samples';
import { median2 } from '../../helpers/stats';

interface Sale {
  id: number;
  date: string;
  type: string;
  price: number;
  surface: number | null;
  commune: string;
  parcel: string | null;
  lot: string | null;
  address: string | null;
  clean: boolean;
}

interface Pair {
  id_achat: number;
  id_revente: number;
  code_commune_actuel: string;
  type_local: string;
  date_revente: string;
  marge_brute: number;
  marge_pct: number;
  duree_detention_jours: number;
  methode: string;
}

let api: TestApi;
let truth: DemoTruth;
let sales: Sale[];
let pairs: Pair[];

beforeAll(async () => {
  const root = await testData('demo');
  api = await startTestApi({ dataRoot: root, now: '2026-03-01T12:00:00Z' });
  truth = JSON.parse(fs.readFileSync(path.join(paths.demoSource(root), 'demo-truth.json'), 'utf8'));
  const marts = paths.marts(root);
  sales = (await queryParquet(
    `select id, strftime(date_mutation, '%Y-%m-%d') as date, type_local as type, valeur_fonciere as price, surface_reelle_bati as surface,
       code_commune_actuel as commune, id_parcelle as parcel, lots[1] as lot,
       case when adresse_numero is not null and adresse_nom_voie is not null
            then adresse_numero || '|' || coalesce(adresse_suffixe, '') || '|' || upper(adresse_nom_voie) end as address,
       not is_bulk_sale and not is_outlier as clean
     from read_parquet('${marts}/ventes.parquet')`,
  )) as unknown as Sale[];
  pairs = (await queryParquet(`select *, strftime(date_revente, '%Y-%m-%d') as date_revente from read_parquet('${marts}/flips.parquet')`)) as unknown as Pair[];
}, 120_000);
afterAll(() => api?.close());

/** The same day `k` months later, clamped to the end of a shorter month (2021-08-31 + 18 months = 2023-02-28). */
function addMonths(day: string, k: number): string {
  const [y, m, d] = day.split('-').map(Number);
  const idx = y * 12 + (m - 1) + k;
  const last = new Date(Date.UTC(Math.floor(idx / 12), (idx % 12) + 1, 0)).getUTCDate();
  return new Date(Date.UTC(Math.floor(idx / 12), idx % 12, Math.min(d, last))).toISOString().slice(0, 10);
}

const pairKey = (a: number, r: number) => `${a}>${r}`;

/** Every pair either method accepts, by brute force over the clean single-dwelling sales. */
function candidatePairs(): Map<string, 'cadastre' | 'adresse_surface'> {
  const eligible = sales.filter((s) => s.clean && (s.type === 'Maison' || s.type === 'Appartement'));
  const bounds = new Map(eligible.map((s) => [s.id, [addMonths(s.date, 18), addMonths(s.date, 24)]]));
  const section = (s: Sale) => s.parcel?.slice(0, 10) ?? null;
  const groups = new Map<string, Sale[]>();
  const add = (k: string, s: Sale) => groups.set(k, [...(groups.get(k) ?? []), s]);
  for (const s of eligible) {
    if (s.parcel) add(`p|${s.parcel}|${s.type}`, s);
    if (s.address) add(`a|${s.commune}|${s.address}|${s.type}`, s);
  }
  const out = new Map<string, 'cadastre' | 'adresse_surface'>();
  for (const [g, list] of groups) {
    for (const a of list) {
      const [from, to] = bounds.get(a.id)!;
      for (const r of list) {
        if (r.date < from || r.date > to) continue;
        if (g.startsWith('p|') && a.lot === r.lot && (a.lot !== null || (a.surface !== null && a.surface === r.surface))) out.set(pairKey(a.id, r.id), 'cadastre');
        const lotsAgree = a.lot === null || r.lot === null || a.lot === r.lot;
        const close = a.surface !== null && a.surface > 0 && r.surface !== null && Math.abs(r.surface - a.surface) <= 0.2 * a.surface;
        if (g.startsWith('a|') && close && section(a) === section(r) && lotsAgree && !out.has(pairKey(a.id, r.id))) out.set(pairKey(a.id, r.id), 'adresse_surface');
      }
    }
  }
  return out;
}

function saleOf(r: PlantedResale, date: string): Sale | undefined {
  return sales.find((s) => s.parcel === r.id_parcelle && s.date === date && s.type === r.type_local);
}

describe('flips mart on the demo data', () => {
  it('finds, under cadastre, every planted resale whose two sales are clean, and nothing else by cadastre', () => {
    const expected = new Set<string>();
    for (const r of truth.plantedResales) {
      const a = saleOf(r, r.first_date);
      const b = saleOf(r, r.second_date);
      expect(a && b, `planted resale ${r.id_parcelle} ${r.first_date} is in ventes`).toBeTruthy();
      if (a!.clean && b!.clean) expected.add(pairKey(a!.id, b!.id));
    }
    // the cleaning rules (outliers) drop a few, not most
    expect(expected.size).toBeGreaterThan(truth.plantedResales.length * 0.9);
    const found = new Set(pairs.filter((p) => p.methode === 'cadastre').map((p) => pairKey(p.id_achat, p.id_revente)));
    expect([...found].sort()).toEqual([...expected].sort());
  });

  it('never matches the near misses (17 and 25 months apart)', () => {
    expect(truth.nearMissResales.map((r) => r.months_apart).sort()).toContain(17);
    expect(truth.nearMissResales.map((r) => r.months_apart)).toContain(25);
    const found = new Set(pairs.map((p) => pairKey(p.id_achat, p.id_revente)));
    for (const r of truth.nearMissResales) {
      const a = saleOf(r, r.first_date);
      const b = saleOf(r, r.second_date);
      expect(a && b).toBeTruthy();
      expect(found.has(pairKey(a!.id, b!.id))).toBe(false);
    }
  });

  it('keeps only pairs one of the two rules accepts, once per sale, and every unambiguous candidate', () => {
    const candidates = candidatePairs();
    for (const p of pairs) expect(candidates.get(pairKey(p.id_achat, p.id_revente)), pairKey(p.id_achat, p.id_revente)).toBe(p.methode);
    expect(new Set(pairs.map((p) => p.id_achat)).size).toBe(pairs.length);
    expect(new Set(pairs.map((p) => p.id_revente)).size).toBe(pairs.length);
    // a candidate sharing no sale with another candidate has nothing to compete with: it must be kept
    const uses = new Map<string, number>();
    for (const k of candidates.keys()) for (const id of k.split('>').map((x, i) => `${i}:${x}`)) uses.set(id, (uses.get(id) ?? 0) + 1);
    const kept = new Set(pairs.map((p) => pairKey(p.id_achat, p.id_revente)));
    const unambiguous = [...candidates.keys()].filter((k) => k.split('>').every((x, i) => uses.get(`${i}:${x}`) === 1));
    expect(unambiguous.length).toBeGreaterThan(300);
    for (const k of unambiguous) expect(kept.has(k), k).toBe(true);
  });
});


/** The figures of a zone (a list of current commune codes) for houses, computed from ventes rows and the pairs. */
function expectedFigures(communes: string[]) {
  const zone = sales.filter((s) => communes.includes(s.commune));
  const date_fin = zone.map((s) => s.date).sort().at(-1)!;
  const date_debut = new Date(Date.parse(`${addMonths(date_fin, -24)}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
  const inside = (d: string) => d >= date_debut && d <= date_fin;
  const n = zone.filter((s) => s.clean && s.type === 'Maison' && inside(s.date)).length;
  const f = pairs.filter((p) => communes.includes(p.code_commune_actuel) && p.type_local === 'Maison' && inside(p.date_revente));
  return {
    periode: { date_debut, date_fin, mois: 24 },
    transactions_revente: n,
    flips_detectes: f.length,
    taux_de_flip: n ? Math.round((f.length / n) * 10000) / 100 : null,
    marge_brute_mediane: median2(f.map((p) => p.marge_brute)),
    marge_mediane_pct: median2(f.map((p) => p.marge_pct)),
    duree_detention_mediane_jours: median2(f.map((p) => p.duree_detention_jours)),
    methodes_detection: { cadastre: f.filter((p) => p.methode === 'cadastre').length, adresse_surface: f.filter((p) => p.methode === 'adresse_surface').length },
  };
}

describe('GET /v1/flips', () => {
  const arrondissements = (first: number, n: number) => Array.from({ length: n }, (_, i) => String(first + i));

  it.each([
    ['Bordeaux', '33063', ['33063']],
    ['Paris 15e', '75115', ['75115']],
    ['Paris, all arrondissements', '75056', arrondissements(75101, 20)],
    ['Lyon, all arrondissements', '69123', arrondissements(69381, 9)],
  ])('answers the houses of %s (%s) as computed from ventes', async (_name, code, communes) => {
    const r = await api.get(`/v1/flips?code_insee=${code}`, api.key());
    expect(r.status).toBe(200);
    const exp = expectedFigures(communes);
    expect(r.body).toMatchObject({ code_insee: code, type_local: 'Maison', available: true, filters: { code_insee: code, type_local: 'Maison' } });
    expect(r.body).toMatchObject(exp);
    expect(r.body.commune).toBe(getCommune(code)!.nom.normalize('NFD').replace(/[\u0300-\u036f]/g, '').toUpperCase());
  });

  it('has flips to report in a commune of houses (the test above is not only zeros)', async () => {
    const r = await api.get('/v1/flips?code_insee=33063', api.key());
    expect(r.body.flips_detectes).toBeGreaterThan(0);
    expect(r.body.marge_mediane_pct).toBeGreaterThan(0);
  });

  it('takes code_commune as an alias, and refuses it when it differs from code_insee', async () => {
    const key = api.key({ balance: 100 });
    const a = await api.get('/v1/flips?code_commune=33063', key);
    const b = await api.get('/v1/flips?code_insee=33063&code_commune=33063', key);
    expect(a.status).toBe(200);
    expect(b.body.flips_detectes).toBe(a.body.flips_detectes);
    const c = await api.get('/v1/flips?code_insee=33063&code_commune=75115', key);
    expect(c.status).toBe(400);
    expect(c.body.error.code).toBe('invalid_params');
    expect(c.body.error.details).toEqual([{ param: 'code_commune', issue: expect.stringContaining('33063') }]);
    expect(balanceOf(api, key)).toBe(80);
  });

  it('answers Appartement with available false and charges no credit', async () => {
    const key = api.key({ balance: 50 });
    const r = await api.get('/v1/flips?code_insee=75115&type_local=Appartement', key);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ available: false, type_local: 'Appartement', flips_detectes: null, taux_de_flip: null, message: expect.any(String) });
    expect(r.body._credits.used).toBe(0);
    expect(balanceOf(api, key)).toBe(50);
  });

  it('answers a commune without any sale (Corsican code, lower case) with zeros, nulls and a notice', async () => {
    const r = await api.get('/v1/flips?code_insee=2a004', api.key());
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      code_insee: '2A004', commune: 'AJACCIO', transactions_revente: 0, flips_detectes: 0, taux_de_flip: null, marge_brute_mediane: null,
      periode: { date_debut: null, date_fin: null, mois: 24 }, methodes_detection: { cadastre: 0, adresse_surface: 0 }, available: true,
    });
    expect(r.body.notice).toMatch(/No DVF sale/);
  });

  it('reads a former commune code as the commune it was merged into, with a notice', async () => {
    const former = codeMappings().find((m) => m.code !== m.code_actuel)!;
    const r = await api.get(`/v1/flips?code_insee=${former.code}`, api.key());
    expect(r.status).toBe(200);
    expect(r.body.code_insee).toBe(former.code_actuel);
    expect(r.body.notice).toContain(former.code);
  });

  it.each([
    ['/v1/flips?code_insee=99999', 'code_insee', /no commune/],
    ['/v1/flips?code_commune=99999', 'code_commune', /no commune/],
    ['/v1/flips?code_insee=3306', 'code_insee', /5-character INSEE commune code/],
    ['/v1/flips?code_insee=33063&type_local=Terrain', 'type_local', /Maison, Appartement/],
  ])('refuses %s naming %s', async (p, param, issue) => {
    const key = api.key({ balance: 100 });
    const r = await api.get(p, key);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('invalid_params');
    expect(r.body.error.details).toEqual([{ param, issue: expect.stringMatching(issue) }]);
    expect(balanceOf(api, key)).toBe(100);
  });

  it('answers from the cache the second time, still charging', async () => {
    const key = api.key({ balance: 100 });
    await api.get('/v1/flips?code_insee=69381', key);
    const r = await api.get('/v1/flips?code_commune=69381', key);
    expect(r.body.cache).toMatchObject({ hit: true });
    expect(balanceOf(api, key)).toBe(80);
  });

  it('is in the OpenAPI document', async () => {
    const doc = (await api.get('/v1/openapi.json')).body;
    const op = doc.paths['/v1/flips'].get;
    expect(op.parameters.map((p: { name: string }) => p.name).sort()).toEqual(['code_commune', 'code_insee', 'type_local']);
    // The success body is a named component (GetFlipsResponse).
    const ref: string = op.responses['200'].content['application/json'].schema.$ref;
    expect(Object.keys(doc.components.schemas[ref.split('/').pop()!].properties ?? {})).toEqual(expect.arrayContaining(['taux_de_flip', 'methodes_detection', 'cache', '_credits']));
  });
});

describeContract('GET /v1/flips', () => api, {
  path: '/v1/flips?code_insee=33063',
  cost: 10,
  withoutLocation: '/v1/flips?type_local=Maison',
  invalid: { path: '/v1/flips?code_insee=ABCDE', param: 'code_insee' },
});
