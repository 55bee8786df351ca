// /v1/portfolio end to end on the real DVF samples: the state table (costs, invalidation, 30-day expiry on the
// injected clock), validation of every field, paging and key isolation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Call } from '../../../api/platform';
import { insertProperty, type Metadata } from '../../../api/routes/portfolio/common';
import { balanceOf, startTestApi, type TestApi } from '../../helpers/api';
import { describeContract } from '../../helpers/contract';
import { sqliteState } from '../../helpers/state';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
}, 120_000);
afterAll(() => api?.close());

/** A house of the Abzac sample (geo-DVF 33, 2021); its postal code is the estimator's fallback (few sales within 500 m). */
const HOUSE = { latitude: 45.022262, longitude: -0.149933, type_local: 'Maison', surface: 100, code_postal: '33230' };
const DAY = 24 * 3600 * 1000;

/** A property of the key written straight into the store (no credits): its estimate missing, so a GET recomputes it. */
async function storedProperty(key: string, estimated = false): Promise<string> {
  const call: Call = { ctx: api.ctx, key: sqliteState(api.ctx).keys.findByKeyNow(key)!, now: api.clock.now(), requestId: 'contract-setup' };
  const data = { ...HOUSE, label: null, address: null, commune: null, pieces: null, purchase_price: null } as Metadata;
  const estimate = estimated
    ? { estimate_low: 1, estimate_mid: 2, estimate_high: 3, estimate_pm2: 1, estimate_confidence: 'low', estimate_based_on: 3, estimate_reference_date: '2022-06-15' }
    : null;
  return (await insertProperty(call, data, estimate)).id;
}

const get = () => api;
describeContract('POST /v1/portfolio', get, {
  path: '/v1/portfolio', method: 'POST', body: HOUSE, status: 201, cost: 10,
  invalid: { path: '/v1/portfolio', param: 'surface', body: { ...HOUSE, surface: -1 } },
});
describeContract('GET /v1/portfolio', get, { path: '/v1/portfolio', cost: 0, noDatabase: true, invalid: { path: '/v1/portfolio?limit=101', param: 'limit' } });
describeContract('GET /v1/portfolio/:id', get, {
  path: '/v1/portfolio/prop_none', pathFor: async (_api, key) => `/v1/portfolio/${await storedProperty(key)}`, cost: 10, notFound: '/v1/portfolio/prop_none',
});
describeContract('PUT /v1/portfolio/:id', get, {
  path: '/v1/portfolio/prop_none', method: 'PUT', body: { label: 'renamed' }, pathFor: async (_api, key) => `/v1/portfolio/${await storedProperty(key, true)}`, cost: 0, noDatabase: true,
  invalid: { path: '/v1/portfolio/prop_none', param: 'label', body: { label: 'x'.repeat(256) } }, notFound: '/v1/portfolio/prop_none',
});
describeContract('DELETE /v1/portfolio/:id', get, {
  path: '/v1/portfolio/prop_none', method: 'DELETE', status: 204, analytic: false, pathFor: async (_api, key) => `/v1/portfolio/${await storedProperty(key)}`, cost: 0, noDatabase: true,
  notFound: '/v1/portfolio/prop_none',
});

async function send(method: string, path: string, key: string | undefined, body?: unknown, raw?: string) {
  const res = await fetch(api.url + path, {
    method,
    headers: { ...(key ? { 'X-API-Key': key } : {}), ...(body !== undefined || raw !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
  });
  const text = await res.text();
  return { status: res.status, text, body: text ? JSON.parse(text) : undefined };
}

/** The same subject through GET /v1/estimate (optional fields only when set). */
const estimateFor = (p: { latitude: number; longitude: number; type_local: string; surface: number; code_postal?: string | null; pieces?: number | null }, key: string) =>
  send('GET', `/v1/estimate?latitude=${p.latitude}&longitude=${p.longitude}&type_local=${p.type_local}&surface=${p.surface}${p.code_postal ? `&code_postal=${p.code_postal}` : ''}${p.pieces ? `&pieces=${p.pieces}` : ''}`, key);

describe('POST /v1/portfolio', () => {
  it('stores a house with the estimate of /v1/estimate for 10 credits', async () => {
    const key = api.key({ balance: 100 });
    const r = await send('POST', '/v1/portfolio', key, { ...HOUSE, label: 'Maison Abzac', pieces: 4, purchase_price: 150_000 });
    expect(r.status).toBe(201);
    expect(r.body._credits).toEqual({ used: 10, remaining: 90 });
    expect(balanceOf(api, key)).toBe(90);
    const p = r.body.property;
    expect(p).toMatchObject({ ...HOUSE, label: 'Maison Abzac', pieces: 4, purchase_price: 150_000, address: null, api_key_id: sqliteState(api.ctx).keys.findByKeyNow(key)!.id });
    expect(p.id).toMatch(/^prop_/);
    expect(p.estimate_computed_at).toBe(api.clock.now().toISOString());
    // The same estimator, same day: /v1/estimate with the same subject (no pieces filter there, so none here either).
    const bare = (await send('POST', '/v1/portfolio', key, HOUSE)).body.property;
    const ref = (await estimateFor(HOUSE, key)).body;
    expect(ref.estimate).not.toBeNull();
    expect(bare).toMatchObject({
      estimate_low: ref.estimate.price_range.low,
      estimate_mid: ref.estimate.price_range.mid,
      estimate_high: ref.estimate.price_range.high,
      estimate_pm2: ref.estimate.price_per_m2.median,
      estimate_confidence: ref.estimate.confidence,
      estimate_based_on: ref.estimate.based_on_count,
      estimate_reference_date: ref.reference_date,
    });
  });

  it('stores Terrain, Local commercial and Dépendance as metadata only for 2 credits, without estimate fields', async () => {
    for (const type_local of ['Terrain', 'Local commercial', 'Dépendance']) {
      const key = api.key({ balance: 10 });
      const r = await send('POST', '/v1/portfolio', key, { ...HOUSE, type_local });
      expect(r.status).toBe(201);
      expect(r.body._credits.used).toBe(2);
      expect(balanceOf(api, key)).toBe(8);
      expect(Object.keys(r.body.property).filter((k) => k.startsWith('estimate'))).toEqual([]);
    }
  });

  it('stores a property with fewer than 3 comparables with null estimate fields and the reason, charged', async () => {
    const key = api.key({ balance: 100 });
    const far = { ...HOUSE, latitude: 48.8566, longitude: 2.3522, code_postal: undefined };
    expect((await estimateFor(far, key)).body.estimate).toBeNull();
    const r = await send('POST', '/v1/portfolio', key, far);
    expect(r.status).toBe(201);
    expect(r.body._credits.used).toBe(10);
    expect(r.body.property).toMatchObject({ estimate_low: null, estimate_mid: null, estimate_high: null, estimate_pm2: null, estimate_based_on: 0 });
    expect(r.body.property.estimate_message).toMatch(/at least 3/);
  });

  it.each([
    [{ ...HOUSE, label: 'x'.repeat(256) }, 'label'],
    [{ ...HOUSE, address: 'x'.repeat(501) }, 'address'],
    [{ ...HOUSE, latitude: 91 }, 'latitude'],
    [{ ...HOUSE, longitude: -181 }, 'longitude'],
    [{ ...HOUSE, surface: 0 }, 'surface'],
    [{ ...HOUSE, surface: '100' }, 'surface'],
    [{ ...HOUSE, pieces: 2.5 }, 'pieces'],
    [{ ...HOUSE, pieces: 0 }, 'pieces'],
    [{ ...HOUSE, purchase_price: -1 }, 'purchase_price'],
    [{ ...HOUSE, type_local: 'Local industriel' }, 'type_local'],
    [{ ...HOUSE, code_postal: '3323' }, 'code_postal'],
    [{ ...HOUSE, colour: 'blue' }, 'colour'],
    [{ latitude: 45, longitude: -0.1, surface: 50 }, 'type_local'],
    [{ ...HOUSE, surface: undefined }, 'surface'],
  ])('refuses %j with invalid_params naming %s, without charging', async (body, param) => {
    const key = api.key({ balance: 100 });
    const r = await send('POST', '/v1/portfolio', key, body);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('invalid_params');
    expect(r.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ param })]));
    expect(balanceOf(api, key)).toBe(100);
  });

  it('answers a body that is not JSON with 400 and the JSON error body', async () => {
    const key = api.key({ balance: 100 });
    const r = await send('POST', '/v1/portfolio', key, undefined, '{"latitude": 45,');
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('invalid_params');
    const plain = await fetch(`${api.url}/v1/portfolio`, { method: 'POST', headers: { 'X-API-Key': key, 'content-type': 'text/plain' }, body: 'hello' });
    expect(plain.status).toBe(400);
    // One error about the body as a whole, not one per field the schema could not find in it.
    const error = ((await plain.json()) as { error: { code: string; message: string; details: Array<{ param: string; issue: string }> } }).error;
    expect(error.code).toBe('invalid_params');
    expect(error.details).toEqual([{ param: 'body', issue: 'must be JSON: send it with Content-Type: application/json' }]);
    expect(balanceOf(api, key)).toBe(100);
  });
});

describe('estimate lifecycle', () => {
  it('GET :id is free while valid, recomputes for 10 credits after a change of position, surface or type, or after 30 days', async () => {
    const start = api.clock.now();
    try {
      const key = api.key({ balance: 1000 });
      const id = (await send('POST', '/v1/portfolio', key, HOUSE)).body.property.id;
      const first = await send('GET', `/v1/portfolio/${id}`, key);
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({ estimate_refreshed: false, _credits: { used: 0 } });

      // Other metadata keeps the estimate.
      const meta = await send('PUT', `/v1/portfolio/${id}`, key, { label: 'renamed', purchase_price: 1, pieces: 5, address: '1 rue X' });
      expect(meta.status).toBe(200);
      expect(meta.body.estimate_invalidated).toBe(false);
      expect(meta.body.property).toMatchObject({ label: 'renamed', purchase_price: 1, estimate_mid: first.body.property.estimate_mid });
      // Sending the same position again changes nothing.
      expect((await send('PUT', `/v1/portfolio/${id}`, key, { latitude: HOUSE.latitude })).body.estimate_invalidated).toBe(false);

      for (const change of [{ surface: 80 }, { latitude: 45.02 }, { longitude: -0.15 }, { type_local: 'Appartement' }]) {
        const put = await send('PUT', `/v1/portfolio/${id}`, key, change);
        expect(put.body.estimate_invalidated).toBe(true);
        expect(put.body.property).toMatchObject({ ...change, estimate_mid: null, estimate_computed_at: null });
        const before = balanceOf(api, key);
        const got = await send('GET', `/v1/portfolio/${id}`, key);
        expect(got.body).toMatchObject({ estimate_refreshed: true, _credits: { used: 10 } });
        expect(balanceOf(api, key)).toBe(before - 10);
        const p = got.body.property;
        const ref = (await estimateFor(p, key)).body;
        expect(p.estimate_mid).toBe(ref.estimate?.price_range.mid ?? null);
        expect((await send('GET', `/v1/portfolio/${id}`, key)).body.estimate_refreshed).toBe(false);
      }

      // 30 days exactly: still valid; one millisecond more: recomputed.
      const computedAt = (await send('GET', `/v1/portfolio/${id}`, key)).body.property.estimate_computed_at;
      api.clock.set(new Date(new Date(computedAt).getTime() + 30 * DAY));
      expect((await send('GET', `/v1/portfolio/${id}`, key)).body).toMatchObject({ estimate_refreshed: false, _credits: { used: 0 } });
      api.clock.advance(1);
      const expired = await send('GET', `/v1/portfolio/${id}`, key);
      expect(expired.body).toMatchObject({ estimate_refreshed: true, _credits: { used: 10 } });
      expect(expired.body.property.estimate_computed_at).toBe(api.clock.now().toISOString());

      // Two changes in a row: each says it invalidated the estimate; one recomputation.
      expect((await send('PUT', `/v1/portfolio/${id}`, key, { surface: 81 })).body.estimate_invalidated).toBe(true);
      expect((await send('PUT', `/v1/portfolio/${id}`, key, { surface: 82 })).body.estimate_invalidated).toBe(true);
      expect((await send('GET', `/v1/portfolio/${id}`, key)).body).toMatchObject({ estimate_refreshed: true, _credits: { used: 10 } });

      // A type without estimate: no estimate fields, never recomputed; between two such types nothing is invalidated.
      const terrain = await send('PUT', `/v1/portfolio/${id}`, key, { type_local: 'Terrain' });
      expect(terrain.body.estimate_invalidated).toBe(true);
      expect((await send('PUT', `/v1/portfolio/${id}`, key, { type_local: 'Dépendance' })).body.estimate_invalidated).toBe(false);
      await send('PUT', `/v1/portfolio/${id}`, key, { type_local: 'Terrain' });
      expect(Object.keys(terrain.body.property).filter((k) => k.startsWith('estimate_') && k !== 'estimate_invalidated')).toEqual([]);
      api.clock.advance(60 * DAY);
      expect((await send('GET', `/v1/portfolio/${id}`, key)).body).toMatchObject({ estimate_refreshed: false, _credits: { used: 0 } });
    } finally {
      api.clock.set(start);
    }
  });

  it('refuses a recomputation without the credits (402, not charged) and keeps the property', async () => {
    const key = api.key({ balance: 12 });
    const id = (await send('POST', '/v1/portfolio', key, HOUSE)).body.property.id;
    await send('PUT', `/v1/portfolio/${id}`, key, { surface: 90 });
    const r = await send('GET', `/v1/portfolio/${id}`, key);
    expect(r.status).toBe(402);
    expect(r.body.error.code).toBe('insufficient_credits');
    expect(balanceOf(api, key)).toBe(2);
  });
});

describe('GET /v1/portfolio and DELETE', () => {
  it('pages in creation order with total and next_cursor, and deletes with 204 and no body', async () => {
    const key = api.key({ balance: 1000 });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await send('POST', '/v1/portfolio', key, { ...HOUSE, type_local: 'Terrain', label: `t${i}` })).body.property.id);
    const all = await send('GET', '/v1/portfolio', key);
    expect(all.body).toMatchObject({ total: 5, next_cursor: null, _credits: { used: 0 } });
    expect(all.body.properties.map((p: { id: string }) => p.id)).toEqual(ids);
    const page1 = await send('GET', '/v1/portfolio?limit=2', key);
    expect(page1.body.properties.map((p: { id: string }) => p.id)).toEqual(ids.slice(0, 2));
    expect(page1.body.next_cursor).toBe(2);
    const page3 = await send('GET', '/v1/portfolio?limit=2&offset=4', key);
    expect(page3.body.properties.map((p: { id: string }) => p.id)).toEqual(ids.slice(4));
    expect(page3.body.next_cursor).toBeNull();
    for (const bad of ['limit=0', 'limit=101', 'offset=-1', 'limit=abc']) {
      const r = await send('GET', `/v1/portfolio?${bad}`, key);
      expect(r.status).toBe(400);
      expect(r.body.error.details[0].param).toBe(bad.split('=')[0]);
    }

    const del = await send('DELETE', `/v1/portfolio/${ids[1]}`, key);
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expect((await send('GET', `/v1/portfolio/${ids[1]}`, key)).status).toBe(404);
    expect((await send('DELETE', `/v1/portfolio/${ids[1]}`, key)).status).toBe(404);
    expect((await send('GET', '/v1/portfolio', key)).body.total).toBe(4);
  });

  it("isolates keys: another key's property is 404 on every route, never charged, and absent from its list", async () => {
    const owner = api.key({ balance: 100 });
    const other = api.key({ balance: 100 });
    const id = (await send('POST', '/v1/portfolio', owner, HOUSE)).body.property.id;
    await send('PUT', `/v1/portfolio/${id}`, owner, { surface: 70 }); // a GET by the owner would now cost 10
    for (const [method, body] of [['GET', undefined], ['PUT', { label: 'mine' }], ['DELETE', undefined]] as const) {
      const r = await send(method, `/v1/portfolio/${id}`, other, body);
      expect(r.status).toBe(404);
      expect(r.body.error.code).toBe('not_found');
    }
    expect((await send('GET', '/v1/portfolio', other)).body.total).toBe(0);
    expect(balanceOf(api, other)).toBe(100);
    const mine = await send('GET', `/v1/portfolio/${id}`, owner);
    expect(mine.body.property).toMatchObject({ label: null, surface: 70 });
  });
});
