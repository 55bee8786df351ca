// /v1/alerts end to end on the real DVF samples: plans, both body forms, the URL rules (HTTPS, no private address),
// the 20-active cap with reactivation, the secret shown once, key isolation; and the address rule on its own.
import type dns from 'node:dns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostProblem, isForbiddenAddress } from '../../../api/webhooks/ssrf';
import type { Call } from '../../../api/platform';
import { insertAlert } from '../../../api/routes/alerts/common';
import { balanceOf, startTestApi, type TestApi } from '../../helpers/api';
import { describeContract } from '../../helpers/contract';
import { sqliteState } from '../../helpers/state';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
}, 120_000);
afterAll(() => api?.close());

/** A public address literal: no DNS needed, and never contacted by these tests. */
const URL_OK = 'https://93.184.216.34/hooks/foncier';

async function send(method: string, path: string, key: string | undefined, body?: unknown) {
  const res = await fetch(api.url + path, {
    method,
    headers: { ...(key ? { 'X-API-Key': key } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, text, body: text ? JSON.parse(text) : undefined };
}

/** An alert of the key written straight into the store. */
async function storedAlert(key: string): Promise<string> {
  const call: Call = { ctx: api.ctx, key: sqliteState(api.ctx).keys.findByKeyNow(key)!, now: api.clock.now(), requestId: 'contract-setup' };
  return (await insertAlert(call, { webhook_url: URL_OK, code_postal: '33230' }, 'whsec_' + Buffer.alloc(32, 1).toString('base64'))).id;
}

const get = () => api;
const ALERT_CASE = { cost: 0, noDatabase: true, plan: 'Scale' } as const;
describeContract('POST /v1/alerts', get, {
  ...ALERT_CASE, path: '/v1/alerts', method: 'POST', status: 201, body: { webhook_url: URL_OK, code_postal: '33230' },
  withoutLocationBody: { webhook_url: URL_OK, type_local: 'Maison' },
  invalid: { path: '/v1/alerts', param: 'webhook_url', body: { webhook_url: 'http://93.184.216.34/x', code_postal: '33230' } },
});
describeContract('GET /v1/alerts', get, { ...ALERT_CASE, path: '/v1/alerts', invalid: { path: '/v1/alerts?limit=51', param: 'limit' } });
describeContract('PUT /v1/alerts/:id', get, {
  ...ALERT_CASE, path: '/v1/alerts/alert_none', method: 'PUT', body: { is_active: false }, pathFor: async (_api, key) => `/v1/alerts/${await storedAlert(key)}`,
  invalid: { path: '/v1/alerts/alert_none', param: 'prix_min', body: { prix_min: -5 } }, notFound: '/v1/alerts/alert_none',
});
describeContract('DELETE /v1/alerts/:id', get, {
  ...ALERT_CASE, path: '/v1/alerts/alert_none', method: 'DELETE', status: 204, analytic: false, pathFor: async (_api, key) => `/v1/alerts/${await storedAlert(key)}`,
  notFound: '/v1/alerts/alert_none',
});
describeContract('GET /v1/alerts/:id/deliveries', get, {
  ...ALERT_CASE, path: '/v1/alerts/alert_none/deliveries', pathFor: async (_api, key) => `/v1/alerts/${await storedAlert(key)}/deliveries`,
  invalid: { path: '/v1/alerts/alert_none/deliveries?limit=101', param: 'limit' }, notFound: '/v1/alerts/alert_none/deliveries',
});

const create = (key: string, body: Record<string, unknown> = {}) => send('POST', '/v1/alerts', key, { webhook_url: URL_OK, code_postal: '33230', ...body });

describe('POST /v1/alerts', () => {
  it('creates an active alert for 0 credits and returns the signing secret once', async () => {
    const key = api.key({ plan: 'Scale', balance: 5 });
    const r = await create(key, { type_local: 'Maison', prix_min: 100_000, prix_max: 300_000, surface_min: 50, surface_max: 200 });
    expect(r.status).toBe(201);
    expect(r.body._credits).toMatchObject({ used: 0, remaining: 5 });
    expect(r.body.alert).toMatchObject({
      webhook_url: URL_OK, code_postal: '33230', commune: null, code_departement: null, type_local: 'Maison',
      prix_min: 100_000, prix_max: 300_000, surface_min: 50, surface_max: 200, is_active: true, label: null,
      api_key_id: sqliteState(api.ctx).keys.findByKeyNow(key)!.id, created_at: api.clock.now().toISOString(),
    });
    expect(r.body.signing_secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(r.body.signing_secret.slice(6), 'base64')).toHaveLength(32);
    const id = r.body.alert.id;
    // Never again: not in the list, not in an update.
    const list = await send('GET', '/v1/alerts', key);
    expect(list.text).not.toContain(r.body.signing_secret.slice(6));
    expect(Object.keys(list.body.alerts[0]).sort()).toEqual(Object.keys(r.body.alert).sort());
    expect(list.text).not.toMatch(/secret|whsec/);
    expect(list.body.alerts.map((a: { id: string }) => a.id)).toEqual([id]);
    const put = await send('PUT', `/v1/alerts/${id}`, key, { label: 'x' });
    expect(put.text).not.toContain('signing_secret');
    expect(balanceOf(api, key)).toBe(5);
  });

  it('accepts the flat form and {label, filters} as equivalent', async () => {
    const key = api.key({ plan: 'Enterprise' });
    const criteria = { commune: 'Abzac', type_local: 'Appartement', surface_max: 80 };
    const flat = await create(key, { ...criteria, code_postal: undefined, label: 'flat' });
    const nested = await send('POST', '/v1/alerts', key, { webhook_url: URL_OK, label: 'nested', filters: criteria });
    expect(flat.status).toBe(201);
    expect(nested.status).toBe(201);
    const strip = (a: Record<string, unknown>) => ({ ...a, id: undefined, label: undefined });
    expect(strip(nested.body.alert)).toEqual(strip(flat.body.alert));
    expect(nested.body.alert).toMatchObject({ label: 'nested', commune: 'ABZAC', surface_max: 80 });
    const both = await send('POST', '/v1/alerts', key, { webhook_url: URL_OK, code_postal: '33230', filters: criteria });
    expect(both.status).toBe(400);
    expect(both.body.error.details[0].param).toBe('code_postal');
  });

  it.each([
    [{ code_postal: undefined }, 'missing_location', undefined],
    [{ webhook_url: 'http://93.184.216.34/hook' }, 'invalid_params', 'webhook_url'],
    [{ webhook_url: 'not a url' }, 'invalid_params', 'webhook_url'],
    [{ webhook_url: undefined }, 'invalid_params', 'webhook_url'],
    [{ type_local: 'Château' }, 'invalid_params', 'type_local'],
    [{ code_postal: '332' }, 'invalid_params', 'code_postal'],
    [{ code_departement: '3' }, 'invalid_params', 'code_departement'],
    [{ prix_min: -1 }, 'invalid_params', 'prix_min'],
    [{ prix_min: 10, prix_max: 5 }, 'invalid_params', 'prix_min'],
    [{ surface_min: 'big' }, 'invalid_params', 'surface_min'],
    [{ label: 'x'.repeat(256) }, 'invalid_params', 'label'],
    [{ colour: 'red' }, 'invalid_params', 'colour'],
    [{ filters: { code_postal: '33230', extra: 1 }, code_postal: undefined }, 'invalid_params', 'filters.extra'],
  ])('refuses %j with %s', async (body, code, param) => {
    const key = api.key({ plan: 'Scale' });
    const r = await create(key, body);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe(code);
    if (param) expect(r.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ param })]));
  });

  it.each([
    'https://localhost/hook',
    'https://api.localhost/hook',
    'https://127.0.0.1/hook',
    'https://127.1.2.3:8443/hook',
    'https://10.0.0.5/hook',
    'https://172.16.0.1/hook',
    'https://172.31.255.255/hook',
    'https://192.168.1.10/hook',
    'https://169.254.169.254/latest/meta-data',
    'https://0.0.0.0/hook',
    'https://224.0.0.1/hook',
    'https://[::1]/hook',
    'https://[::ffff:127.0.0.1]/hook',
    'https://[fc00::1]/hook',
    'https://[fd12:3456::1]/hook',
    'https://[fe80::1]/hook',
    'https://[ff02::1]/hook',
    'https://2130706433/hook', // 127.0.0.1 as one number: the URL parser normalises it
  ])('refuses the private or loopback webhook_url %s (invalid_params naming webhook_url)', async (url) => {
    const r = await create(api.key({ plan: 'Scale' }), { webhook_url: url });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('invalid_params');
    expect(r.body.error.details[0].param).toBe('webhook_url');
  });

  it('accepts public addresses and a host that does not resolve', async () => {
    const key = api.key({ plan: 'Scale' });
    for (const url of ['https://172.32.0.1/x', 'https://[2606:4700::1111]/x', 'https://no-such-host.invalid/hook']) {
      expect((await create(key, { webhook_url: url })).status).toBe(201);
    }
  });
});

describe('the address rule', () => {
  it('classifies addresses', () => {
    for (const ip of ['127.0.0.1', '10.1.2.3', '172.20.0.1', '192.168.0.1', '169.254.1.1', '100.64.0.1', '::1', '::', 'fe80::1', 'fc00::', '::ffff:10.0.0.1', 'ff05::2', '239.1.1.1']) {
      expect(isForbiddenAddress(ip), ip).toBe(true);
    }
    for (const ip of ['8.8.8.8', '172.15.255.255', '172.32.0.0', '192.169.0.1', '2001:4860:4860::8888', '::ffff:8.8.8.8']) {
      expect(isForbiddenAddress(ip), ip).toBe(false);
    }
  });

  it('refuses a name if any of its addresses is private, accepts one that does not resolve, honours the allow-list', async () => {
    const fake = (answers: Record<string, string[]>) =>
      (async (host: string) => {
        if (!answers[host]) throw Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' });
        return answers[host].map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
      }) as unknown as typeof dns.promises.lookup;
    const lookup = fake({ 'rebind.example': ['93.184.216.34', '10.0.0.1'], 'public.example': ['93.184.216.34'], 'v6.example': ['fd00::1'] });
    expect(await hostProblem('rebind.example', [], lookup)).toMatch(/10\.0\.0\.1/);
    expect(await hostProblem('v6.example', [], lookup)).toMatch(/fd00::1/);
    expect(await hostProblem('public.example', [], lookup)).toBeUndefined();
    expect(await hostProblem('gone.example', [], lookup)).toBeUndefined();
    expect(await hostProblem('127.0.0.1', ['127.0.0.1'], lookup)).toBeUndefined();
    expect(await hostProblem('rebind.example', ['rebind.example'], lookup)).toBeUndefined();
  });
});

describe('plans, cap, transitions and isolation', () => {
  it('answers 403 plan_required on every alert route below Scale, without charging', async () => {
    const owner = api.key({ plan: 'Scale' });
    const id = (await create(owner)).body.alert.id;
    for (const plan of ['Free', 'Indie', 'Agent'] as const) {
      const key = api.key({ plan, balance: 50 });
      for (const [method, path, body] of [
        ['POST', '/v1/alerts', { webhook_url: URL_OK, code_postal: '33230' }],
        ['GET', '/v1/alerts'],
        ['PUT', `/v1/alerts/${id}`, { label: 'x' }],
        ['DELETE', `/v1/alerts/${id}`],
        ['GET', `/v1/alerts/${id}/deliveries`],
      ] as const) {
        const r = await send(method, path, key, body);
        expect(r.status, `${plan} ${method} ${path}`).toBe(403);
        expect(r.body.error.code).toBe('plan_required');
      }
      expect(balanceOf(api, key)).toBe(50);
    }
  });

  it('caps active alerts at 20 (409), keeps inactive ones out of the cap, and refuses a 21st reactivation', async () => {
    const key = api.key({ plan: 'Scale' });
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const r = await create(key, { label: `a${i}` });
      expect(r.status).toBe(201);
      ids.push(r.body.alert.id);
    }
    const over = await create(key);
    expect(over.status).toBe(409);
    expect(over.body.error.code).toBe('alert_limit_reached');

    const off = await send('PUT', `/v1/alerts/${ids[0]}`, key, { is_active: false });
    expect(off.status).toBe(200);
    expect(off.body.alert.is_active).toBe(false);
    const list = await send('GET', '/v1/alerts?limit=50', key);
    expect(list.body).toMatchObject({ total: 20, next_cursor: null });
    expect(list.body.alerts.find((a: { id: string }) => a.id === ids[0]).is_active).toBe(false);

    const twentieth = await create(key, { label: 'replacement' });
    expect(twentieth.status).toBe(201);
    const again = await send('PUT', `/v1/alerts/${ids[0]}`, key, { is_active: true });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('alert_limit_reached');
    expect((await send('GET', '/v1/alerts?limit=1&offset=0', key)).body.alerts[0].is_active).toBe(false);

    expect((await send('DELETE', `/v1/alerts/${twentieth.body.alert.id}`, key)).status).toBe(204);
    const back = await send('PUT', `/v1/alerts/${ids[0]}`, key, { is_active: true });
    expect(back.status).toBe(200);
    expect(back.body.alert.is_active).toBe(true);
    const page = await send('GET', '/v1/alerts?limit=7&offset=14', key);
    expect(page.body.alerts.map((a: { id: string }) => a.id)).toEqual(ids.slice(14, 20));
    expect(page.body.next_cursor).toBeNull();
    expect((await send('GET', '/v1/alerts?limit=51', key)).status).toBe(400);
  });

  it('updates criteria (flat or filters), keeps a location, re-checks a new URL', async () => {
    const key = api.key({ plan: 'Scale' });
    const id = (await create(key, { prix_min: 1000 })).body.alert.id;
    const flat = await send('PUT', `/v1/alerts/${id}`, key, { code_departement: '33', code_postal: null, prix_min: null });
    expect(flat.body.alert).toMatchObject({ code_departement: '33', code_postal: null, prix_min: null, updated_at: api.clock.now().toISOString() });
    const nested = await send('PUT', `/v1/alerts/${id}`, key, { filters: { type_local: 'Terrain' } });
    expect(nested.body.alert).toMatchObject({ code_departement: '33', type_local: 'Terrain' });
    const noLocation = await send('PUT', `/v1/alerts/${id}`, key, { code_departement: null });
    expect(noLocation.status).toBe(400);
    expect(noLocation.body.error.code).toBe('missing_location');
    for (const url of ['https://192.168.0.1/x', 'http://93.184.216.34/x']) {
      const bad = await send('PUT', `/v1/alerts/${id}`, key, { webhook_url: url });
      expect(bad.status).toBe(400);
      expect(bad.body.error.details[0].param).toBe('webhook_url');
    }
    expect((await send('PUT', `/v1/alerts/${id}`, key, { is_active: 'no' })).body.error.details[0].param).toBe('is_active');
  });

  it("isolates keys: another key's alert is 404 on every route and absent from its list", async () => {
    const owner = api.key({ plan: 'Scale' });
    const other = api.key({ plan: 'Enterprise' });
    const id = (await create(owner)).body.alert.id;
    for (const [method, path, body] of [
      ['PUT', `/v1/alerts/${id}`, { is_active: false }],
      ['DELETE', `/v1/alerts/${id}`],
      ['GET', `/v1/alerts/${id}/deliveries`],
    ] as const) {
      const r = await send(method, path, other, body);
      expect(r.status).toBe(404);
      expect(r.body.error.code).toBe('not_found');
    }
    expect((await send('GET', '/v1/alerts', other)).body.total).toBe(0);
    const mine = await send('GET', '/v1/alerts', owner);
    expect(mine.body.alerts[0]).toMatchObject({ id, is_active: true });
    expect((await send('DELETE', `/v1/alerts/${id}`, owner)).status).toBe(204);
    expect((await send('DELETE', `/v1/alerts/${id}`, owner)).status).toBe(404);
  });
});
