// The businesses endpoints end to end: search on the demo data (results, order, privacy and the DVF statistics
// against computations written here over the serving database's rows), and the live lookup against a loopback
// imitation of INSEE's API Sirene (no test reaches the internet), each in the shared contract.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RegistryClient, registryConfigFromEnv } from '../../../lib/registry';
import { DEMO_SIRENE_SNAPSHOT } from '../../../pipeline/demo/generate-sirene';
import { balanceOf, startTestApi, type TestApi } from '../../helpers/api';
import { describeContract } from '../../helpers/contract';
import { testData } from '../../helpers/data';
import { median } from '../../helpers/stats';

// --- a loopback INSEE: one known head office, 404 for the rest, and scripted failures
const KNOWN = '552032534';
const BUSY = '441232121';
const HANG = '821795283';
const hanging: http.ServerResponse[] = [];
let insee: http.Server;
let inseeUrl: string;
const inseeAnswer = {
  header: { statut: 200, message: 'OK', total: 1, debut: 0, nombre: 1 },
  etablissements: [{
    siren: KNOWN, nic: '00703', siret: '55203253400703', statutDiffusionEtablissement: 'O', etablissementSiege: true,
    uniteLegale: { etatAdministratifUniteLegale: 'A', statutDiffusionUniteLegale: 'O', dateCreationUniteLegale: '1955-01-01', categorieJuridiqueUniteLegale: '5599', denominationUniteLegale: 'DANONE' },
    adresseEtablissement: { numeroVoieEtablissement: '17', typeVoieEtablissement: 'BD', libelleVoieEtablissement: 'HAUSSMANN', codePostalEtablissement: '75009', libelleCommuneEtablissement: 'PARIS 9' },
    periodesEtablissement: [{ dateFin: null, activitePrincipaleEtablissement: '70.10Z' }],
  }],
};

let api: TestApi;
let noKey: TestApi;
beforeAll(async () => {
  insee = http.createServer((req, res) => {
    const siren = /siren:(\d{9})/.exec(decodeURIComponent(req.url ?? ''))?.[1];
    if (siren === KNOWN) return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(inseeAnswer));
    if (siren === BUSY) return res.writeHead(429, { 'retry-after': '9' }).end();
    if (siren === HANG) return void hanging.push(res);
    res.writeHead(404).end('{"header":{"statut":404,"message":"Aucun élément trouvé"}}');
  });
  await new Promise<void>((r) => insee.listen(0, '127.0.0.1', r));
  inseeUrl = `http://127.0.0.1:${(insee.address() as AddressInfo).port}/api-sirene/3.11`;
  const dataRoot = await testData('demo');
  const config = { ...registryConfigFromEnv({ INSEE_SIRENE_API_KEY: 'k', INSEE_SIRENE_BASE_URL: inseeUrl }), timeoutMs: 300 };
  api = await startTestApi({ dataRoot, now: '2026-01-15T12:00:00Z', registry: new RegistryClient(config) });
  noKey = await startTestApi({ dataRoot, now: '2026-01-15T12:00:00Z', registry: new RegistryClient(registryConfigFromEnv({})) });
});
afterAll(async () => {
  for (const r of hanging) r.destroy();
  await new Promise((r) => insee.close(r));
  await api.close();
  await noKey.close();
});

interface Row {
  siret: string; siren: string; denomination: string | null; business_type: string; adresse: string | null; code_postal: string | null;
  code_commune: string; latitude: number; longitude: number; diffusion_partielle: boolean; position_precision: string;
}
const rows = () => api.ctx.db.query<Row>('select * from businesses');

/** Haversine on the mean Earth radius, written here independently of lib/distance.ts. */
function distance(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const r = (d: number) => (d * Math.PI) / 180;
  const a = Math.sin(r(lat2 - lat1) / 2) ** 2 + Math.cos(r(lat1)) * Math.cos(r(lat2)) * Math.sin(r(lon2 - lon1) / 2) ** 2;
  return 2 * 6_371_008.8 * Math.asin(Math.sqrt(a));
}

// Paris 15e, the demo's centre for that arrondissement.
const LAT = 48.84165435;
const LON = 2.29371665;

describe('GET /v1/businesses/search', () => {
  it('returns the establishments within the radius, nearest first, as computed here from the mart', async () => {
    const all = await rows();
    for (const [radius, type, limit] of [[1000, 'all', 50], [3000, 'agence', 10], [300, 'notaire', 20]] as const) {
      const expected = all
        .filter((r) => type === 'all' || r.business_type === type)
        .map((r) => ({ siret: r.siret, d: distance(LAT, LON, r.latitude, r.longitude) }))
        .filter((r) => r.d <= radius)
        .sort((a, b) => a.d - b.d || a.siret.localeCompare(b.siret))
        .slice(0, limit);
      const res = await api.get(`/v1/businesses/search?latitude=${LAT}&longitude=${LON}&radius_m=${radius}&type=${type}&limit=${limit}`, api.key());
      expect(res.status).toBe(200);
      expect(res.body.businesses.map((b: { siret: string }) => b.siret)).toEqual(expected.map((e) => e.siret));
      res.body.businesses.forEach((b: { distance_m: number }, i: number) => expect(b.distance_m).toBeCloseTo(expected[i].d, 0));
      expect(res.body.count).toBe(expected.length);
      expect(res.body.filters).toEqual({ latitude: LAT, longitude: LON, radius_m: radius, type });
    }
  });

  it('serves the specified item fields, and the defaults radius 1000, type all, limit 20', async () => {
    const res = await api.get(`/v1/businesses/search?latitude=${LAT}&longitude=${LON}`, api.key());
    expect(res.body.filters).toEqual({ latitude: LAT, longitude: LON, radius_m: 1000, type: 'all' });
    expect(res.body.count).toBe(20);
    expect(Object.keys(res.body.businesses[0]).sort()).toEqual(
      ['siret', 'siren', 'denomination', 'naf_code', 'business_type', 'adresse', 'code_postal', 'commune', 'code_departement', 'latitude', 'longitude', 'date_creation', 'is_siege', 'distance_m'].sort(),
    );
    for (const b of res.body.businesses) {
      expect(b.siret).toMatch(/^\d{14}$/);
      expect(b.siret.slice(0, 9)).toBe(b.siren);
      expect(b.naf_code).toMatch(/^\d{4}[A-Z]$/);
    }
  });

  it('shows partially diffusible professionals at their commune point, without address or person’s name', async () => {
    const all = await rows();
    const partial = all.filter((r) => r.diffusion_partielle);
    expect(partial.length).toBeGreaterThan(3);
    const [one] = partial;
    const sameCommune = partial.filter((p) => p.code_commune === one.code_commune);
    // Every partial row of a commune sits at the commune's one point.
    expect(new Set(sameCommune.map((p) => `${p.latitude},${p.longitude}`)).size).toBe(1);
    const res = await api.get(`/v1/businesses/search?latitude=${one.latitude}&longitude=${one.longitude}&radius_m=100&limit=50`, api.key());
    const shown = res.body.businesses.filter((b: { siret: string }) => partial.some((p) => p.siret === b.siret));
    expect(shown.map((b: { siret: string }) => b.siret).sort()).toEqual(sameCommune.map((p) => p.siret).sort());
    for (const b of shown) {
      expect(b).toMatchObject({ adresse: null, latitude: one.latitude, longitude: one.longitude, distance_m: 0 });
      // The demo's partially diffusible units are all sole traders: no name at all.
      expect(b.denomination).toBeNull();
    }
  });

  it('adds each postal code’s 24-month DVF volume and median €/m², as computed here from the sales', async () => {
    const res = await api.get(`/v1/businesses/search?latitude=${LAT}&longitude=${LON}&radius_m=2000&limit=50&include_dvf_stats=true`, api.key());
    expect(res.status).toBe(200);
    const codes = [...new Set(res.body.businesses.map((b: { code_postal: string }) => b.code_postal))] as string[];
    for (const cp of codes) {
      const sales = await api.ctx.db.query<{ d: string; p: number; dep: string; ok: boolean }>(
        `select date_mutation::VARCHAR as d, prix_m2 as p, code_departement as dep,
           type_local in ('Maison', 'Appartement') and prix_m2 is not null and not is_bulk_sale and not is_outlier and not is_vefa as ok
         from ventes where code_postal = $cp`, { cp },
      );
      const deps = new Set(sales.map((s) => s.dep));
      const horizons = await api.ctx.db.query<{ dep: string; d: string }>('select code_departement as dep, max(date_mutation)::VARCHAR as d from ventes group by 1');
      const lastDay = horizons.filter((h) => deps.has(h.dep)).map((h) => h.d).sort().at(-1)!;
      const end = new Date(`${lastDay}T00:00:00Z`);
      const start = new Date(end);
      start.setUTCMonth(start.getUTCMonth() - 24);
      const inWindow = sales.filter((s) => s.ok && new Date(`${s.d}T00:00:00Z`) > start && new Date(`${s.d}T00:00:00Z`) <= end).map((s) => s.p);
      expect(inWindow.length).toBeGreaterThan(30);
      for (const b of res.body.businesses.filter((x: { code_postal: string }) => x.code_postal === cp)) {
        expect(b.dvf_nb_mutations).toBe(inWindow.length);
        expect(b.dvf_prix_m2_median).toBeCloseTo(median(inWindow), 1);
      }
    }
  });

  it('computes the results and their DVF statistics in one query', async () => {
    let queries = 0;
    const db = api.ctx.db;
    const original = db.query.bind(db);
    db.query = ((sql: string, params?: never) => {
      queries++;
      return original(sql, params);
    }) as typeof db.query;
    try {
      const res = await api.get(`/v1/businesses/search?latitude=${LAT}&longitude=${LON + 0.001}&radius_m=4000&limit=50&include_dvf_stats=true`, api.key());
      expect(res.body.count).toBeGreaterThan(20);
      expect(queries).toBe(1);
    } finally {
      delete (db as Partial<{ query: unknown }>).query;
    }
  });

  it('caches an answer for an hour, still charged', async () => {
    const key = api.key({ balance: 100 });
    const path = `/v1/businesses/search?latitude=45.75&longitude=4.85&radius_m=1500&type=courtier`;
    const first = await api.get(path, key);
    const second = await api.get(path, key);
    expect(first.body.cache).toEqual({ hit: false, ttl_seconds: 3600 });
    expect(second.body.cache.hit).toBe(true);
    expect(second.body.businesses).toEqual(first.body.businesses);
    expect(balanceOf(api, key)).toBe(90);
  });

  it('refuses out-of-range parameters with invalid_params naming them', async () => {
    for (const [q, param] of [['radius_m=99', 'radius_m'], ['radius_m=5001', 'radius_m'], ['limit=51', 'limit'], ['limit=0', 'limit'], ['type=banque', 'type']]) {
      const res = await api.get(`/v1/businesses/search?latitude=${LAT}&longitude=${LON}&${q}`, api.key());
      expect(res.status).toBe(400);
      expect(res.body.error.details[0].param).toBe(param);
    }
    const half = await api.get(`/v1/businesses/search?latitude=${LAT}`, api.key());
    expect([half.status, half.body.error.details[0].param]).toEqual([400, 'longitude']);
  });
});

describe('GET /v1/businesses/:siren', () => {
  it('returns the head office from the registry', async () => {
    const res = await api.get(`/v1/businesses/${KNOWN}`, api.key());
    expect(res.status).toBe(200);
    expect(res.body.business).toEqual({
      siren: KNOWN, siret: '55203253400703', denomination: 'DANONE', naf_code: '7010Z', etat: 'A', date_creation: '1955-01-01',
      adresse: '17 BD HAUSSMANN', code_postal: '75009', commune: 'PARIS 9', source: 'insee_api',
    });
    expect(res.body._credits.used).toBe(2);
  });

  it('refunds the registry’s failures: busy (503, Retry-After), timeout (504), not configured (503)', async () => {
    const cases: Array<[TestApi, string, number, string]> = [
      [api, BUSY, 503, 'registry_busy'],
      [api, HANG, 504, 'registry_timeout'],
      [noKey, KNOWN, 503, 'registry_unavailable'],
    ];
    for (const [target, siren, status, code] of cases) {
      const key = target.key({ balance: 10 });
      const res = await target.get(`/v1/businesses/${siren}`, key);
      expect([res.status, res.body.error.code]).toEqual([status, code]);
      expect(balanceOf(target, key)).toBe(10);
      if (code === 'registry_busy') expect(res.headers.get('retry-after')).toBe('9');
    }
  });

  it('refuses a malformed SIREN without charging or calling the registry', async () => {
    const key = api.key({ balance: 10 });
    for (const siren of ['55203253', '552032535', 'ABCDEFGHI']) {
      const res = await api.get(`/v1/businesses/${siren}`, key);
      expect([res.status, res.body.error.code, res.body.error.details[0].param]).toEqual([400, 'invalid_params', 'siren']);
    }
    expect(balanceOf(api, key)).toBe(10);
  });
});

describe('GET /v1/meta/sources', () => {
  it('lists the SIRENE snapshot with its date and the establishments served', async () => {
    const r = await api.get('/v1/meta/sources', api.key());
    const sirene = r.body.sources.find((x: { source: string }) => x.source === 'sirene');
    const [{ n }] = await api.ctx.db.query<{ n: number }>('select count(*)::INTEGER as n from businesses');
    expect(sirene).toMatchObject({ available: true, snapshot: DEMO_SIRENE_SNAPSHOT, partitions: 1, served_rows: n });
    expect(sirene.rows).toBeGreaterThanOrEqual(n);
    expect(r.body.sources.find((x: { source: string }) => x.source === 'dvf').snapshot).toBeNull();
  });
});

const getApi = () => api;
describeContract('GET /v1/businesses/search', getApi, {
  path: `/v1/businesses/search?latitude=${LAT}&longitude=${LON}`,
  cost: 5,
  withoutLocation: '/v1/businesses/search?radius_m=500',
  invalid: { path: `/v1/businesses/search?latitude=${LAT}&longitude=${LON}&radius_m=6000`, param: 'radius_m' },
});
describeContract('GET /v1/businesses/:siren', getApi, {
  path: `/v1/businesses/${KNOWN}`,
  cost: 2,
  invalid: { path: '/v1/businesses/12345', param: 'siren' },
  notFound: '/v1/businesses/503302861',
  usesDatabase: false,
});
