// GET /v1/transactions and /v1/transactions/:id on the real samples; credits under 200 concurrent requests; the
// OpenAPI document.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENDPOINTS } from '../../../api/app';
import { GEO_SAMPLE, splitCsv } from '../../helpers/samples';
import { balanceOf, startTestApi, type TestApi } from '../../helpers/api';
import { sqliteState } from '../../helpers/state';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(() => api.close());

describe('GET /v1/transactions', () => {
  it('pages through every sale of the postal code once, newest first, with next_cursor and has_more', async () => {
    const key = api.key();
    // Independent count: the sample's distinct mutations that are not exchanges or expropriations, all in 33230.
    const [header, ...lines] = fs.readFileSync(GEO_SAMPLE, 'utf8').trim().split('\n');
    const cols = splitCsv(header);
    const mutations = new Set(lines.map((l) => splitCsv(l)).filter((v) => !['Echange', 'Expropriation'].includes(v[cols.indexOf('nature_mutation')])).map((v) => v[0]));
    const seen: Array<{ id: number; id_mutation: string; date_mutation: string }> = [];
    let offset: number | null = 0;
    let pages = 0;
    while (offset !== null) {
      const r = await api.get(`/v1/transactions?code_postal=33230&limit=20&offset=${offset}`, key);
      expect(r.status).toBe(200);
      expect(r.body.total_found).toBe(mutations.size);
      expect(r.body.pagination).toEqual({ total: mutations.size, has_more: r.body.next_cursor !== null });
      if (r.body.next_cursor !== null) expect(r.body.next_cursor).toBe(offset + r.body.transactions.length);
      seen.push(...r.body.transactions);
      offset = r.body.next_cursor;
      pages++;
    }
    expect(pages).toBe(Math.ceil(mutations.size / 20));
    expect(new Set(seen.map((t) => t.id_mutation))).toEqual(mutations);
    const order = [...seen].sort((a, b) => (a.date_mutation === b.date_mutation ? b.id - a.id : a.date_mutation < b.date_mutation ? 1 : -1));
    expect(seen).toEqual(order);
    expect(balanceOf(api, key)).toBe(50_000 - 5 * pages);
  });

  it('applies type, price, surface, rooms and date filters', async () => {
    const key = api.key();
    const all = (await api.get('/v1/transactions?code_postal=33230&limit=200', key)).body.transactions as Array<Record<string, any>>;
    const r = await api.get('/v1/transactions?code_postal=33230&type_local=Maison&prix_min=100000&prix_max=300000&surface_min=80&pieces_min=4&date_debut=2021-03-01&date_fin=2021-10-31&limit=200', key);
    const expected = all.filter(
      (t) => t.type_local === 'Maison' && t.valeur_fonciere >= 100000 && t.valeur_fonciere <= 300000 && t.surface_reelle_bati >= 80 &&
        t.nombre_pieces_principales >= 4 && t.date_mutation >= '2021-03-01' && t.date_mutation <= '2021-10-31',
    );
    expect(expected.length).toBeGreaterThan(0);
    expect(r.body.transactions).toEqual(expected);
    const bad = await api.get('/v1/transactions?code_postal=33230&prix_min=5&prix_max=1', key);
    expect(bad.body.error).toMatchObject({ code: 'invalid_params', details: [{ param: 'prix_min', issue: 'must not exceed prix_max' }] });
  });

  it('returns one sale by id with the full transaction record', async () => {
    const key = api.key();
    const [first] = (await api.get('/v1/transactions?code_departement=01&limit=1', key)).body.transactions;
    const r = await api.get(`/v1/transactions/${first.id}`, key);
    expect(r.status).toBe(200);
    expect(r.body.transaction).toEqual(first);
    expect(Object.keys(first)).toEqual(
      ['id', 'id_mutation', 'date_mutation', 'nature_mutation', 'valeur_fonciere', 'prix_m2', 'type_local', 'surface_reelle_bati', 'surface_carrez',
        'nombre_pieces_principales', 'surface_terrain', 'nombre_lots', 'address', 'code_postal', 'code_commune', 'commune', 'code_departement',
        'section', 'no_plan', 'id_parcelle', 'latitude', 'longitude', 'is_bulk_sale', 'is_vefa'],
    );
    expect(r.body._credits.used).toBe(2);
  });
});

describe('credits under concurrency', () => {
  it('200 concurrent requests on a key with 100 credits spend exactly 100: 20 answered, 180 refused with 402', async () => {
    // Limits raised so that only credits decide (rate limit and capacity have their own contract tests).
    const loaded = await startTestApi({ dataRoot: api.dataRoot, limits: { maxConcurrentQueries: 1000, rateLimitPerMinute: 1000 } });
    try {
      const key = loaded.key({ balance: 100 });
      const results = await Promise.all(Array.from({ length: 200 }, (_, i) => loaded.get(`/v1/transactions?code_postal=33230&limit=${1 + (i % 50)}`, key)));
      const statuses = results.map((r) => r.status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(20);
      expect(statuses.filter((s) => s === 402)).toHaveLength(180);
      expect(balanceOf(loaded, key)).toBe(0);
      const id = sqliteState(loaded.ctx).keys.findByKeyNow(key)!.id;
      const ledger = sqliteState(loaded.ctx).db.prepare(`select reason, count(*) as n, sum(delta) as d from credit_ledger where key_id = ? group by reason order by reason`).all(id);
      expect(ledger).toEqual([{ reason: 'charge', n: 20, d: -100 }, { reason: 'create', n: 1, d: 100 }]);
      const remaining = results.filter((r) => r.status === 200).map((r) => r.body._credits.remaining).sort((a, b) => a - b);
      expect(remaining).toEqual(Array.from({ length: 20 }, (_, i) => i * 5));
    } finally {
      await loaded.close();
    }
  });
});

describe('OpenAPI document and errors', () => {
  it('documents every endpoint with its parameters, response and error body', async () => {
    const doc = (await api.get('/v1/openapi.json')).body;
    expect(doc.openapi).toBe('3.1.0');
    for (const e of ENDPOINTS) {
      const op = doc.paths[e.path.replace(/:(\w+)/g, '{$1}')][e.method];
      expect(op.summary).toBe(e.summary);
      expect(op.responses['401'].content['application/json'].schema.$ref).toBe('#/components/schemas/Error');
      // Input-dependent costs (flips: 0 for Appartement) are explained in the description instead of x-credits.
      if (typeof e.credits === 'number') expect(op['x-credits']).toBe(e.credits);
      else expect(op.description).toMatch(/credits/);
      // Parameters declared only to be refused (undocumentedQuery) are validated but not advertised.
      for (const name of Object.keys(e.query?.shape ?? {})) {
        if (!e.undocumentedQuery?.includes(name)) expect(op.parameters.map((p: { name: string }) => p.name)).toContain(name);
      }
    }
    const limit = doc.paths['/v1/transactions'].get.parameters.find((p: { name: string }) => p.name === 'limit');
    expect(limit.schema).toMatchObject({ minimum: 1, maximum: 200, default: 50 });
  });

  it('renders unknown paths and malformed JSON in the error body', async () => {
    const missing = await api.get('/v1/nothing-here', api.key());
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: { code: 'not_found', message: 'no route for GET /v1/nothing-here', request_id: missing.headers.get('x-request-id') } });
    expect(missing.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const res = await fetch(`${api.url}/v1/transactions`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-request-id': 'bad-json-1' }, body: '{"a": ' });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: { code: 'invalid_params', message: expect.any(String), details: [{ param: 'body', issue: 'malformed JSON' }], request_id: 'bad-json-1' } });
  });
});

