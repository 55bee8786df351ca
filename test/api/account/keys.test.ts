// Keys from the dashboard over HTTP: POST /v1/account/roll (a new secret for the same key; the replaced one through its
// grace period on the server's clock, then refused), POST /v1/account/revoke (confirmed by the key's id), POST
// /v1/account/free-key (a Free key per client address and UTC day, 429 past it, 404 when the operator turned it off).
// Each action in the key's request log; none an MCP tool; all in the OpenAPI document.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { addressKey } from '../../../api/routes/account/keys';
import { balanceOf, startTestApi, type TestApi } from '../../helpers/api';
import { sqliteState } from '../../helpers/state';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ now: '2022-06-15T12:00:00Z' });
});
afterAll(() => api?.close());
beforeEach(() => api.clock.set('2022-06-15T12:00:00Z'));

async function post(path: string, body: unknown, key?: string): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(api.url + path, {
    method: 'POST',
    headers: { ...(key ? { 'X-API-Key': key } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
}

const idOf = (key: string) => sqliteState(api.ctx).keys.findByKeyNow(key)!.id;

describe('POST /v1/account/roll', () => {
  it('gives the key a new secret; the key keeps its id, credits and portfolio; the old secret works until its grace ends', async () => {
    const old = api.key({ plan: 'Scale', balance: 777 });
    const id = idOf(old);
    const created = await post('/v1/portfolio', { latitude: 44.98, longitude: -0.2, type_local: 'Terrain', surface: 850, label: 'plot' }, old);
    expect(created.status).toBe(201);
    const balance = balanceOf(api, old);

    const r = await post('/v1/account/roll', { grace_period_seconds: 3600 }, old);
    expect(r.status).toBe(200);
    const secret: string = r.body.api_key;
    expect(secret).toMatch(/^fk_live_[0-9A-Za-z]{32}$/);
    expect(secret).not.toBe(old);
    expect(r.body.key).toEqual({
      id,
      prefix: secret.slice(0, 12),
      label: '',
      plan: 'Scale',
      created_at: '2022-06-15T12:00:00.000Z',
      previous_secret: { prefix: old.slice(0, 12), expires_at: '2022-06-15T13:00:00.000Z' },
    });
    expect(r.body._credits).toBeUndefined();

    for (const k of [old, secret]) {
      const a = await api.get('/v1/account', k);
      expect(a.status).toBe(200);
      expect(a.body.key.id).toBe(id);
      expect(a.body.key.previous_secret).toEqual({ prefix: old.slice(0, 12), expires_at: '2022-06-15T13:00:00.000Z' });
    }
    expect(balanceOf(api, secret)).toBe(balance);
    const props = await api.get('/v1/portfolio', secret);
    expect(props.body.properties.map((p: any) => p.id)).toEqual([created.body.property.id]);

    api.clock.set('2022-06-15T12:59:59.999Z');
    expect((await api.get('/v1/account', old)).status).toBe(200);
    api.clock.set('2022-06-15T13:00:00.000Z');
    const refused = await api.get('/v1/account', old);
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('unknown_key');
    const now = await api.get('/v1/account', secret);
    expect(now.status).toBe(200);
    expect(now.body.key.previous_secret).toBeNull();

    // Every call above, the roll included, is in the key's one request log.
    const log = (await api.get('/v1/account/requests?limit=100', secret)).body.requests.map((q: any) => `${q.endpoint} ${q.status}`);
    expect(log).toContain('POST /v1/account/roll 200');
    expect(log).toContain('POST /v1/portfolio 201');
    expect(log.filter((l: string) => l === 'GET /v1/account 200')).toHaveLength(4);
  });

  it('stops the old secret at once without a grace period, and a previous one still in its grace period too', async () => {
    const first = api.key();
    const second = (await post('/v1/account/roll', { grace_period_seconds: 7 * 86_400 }, first)).body.api_key;
    expect((await api.get('/v1/account', first)).status).toBe(200);
    const r = await post('/v1/account/roll', { grace_period_seconds: 0 }, second);
    expect(r.status).toBe(200);
    expect(r.body.key.previous_secret).toBeNull();
    for (const k of [first, second]) expect((await api.get('/v1/account', k)).body.error.code).toBe('unknown_key');
    expect((await api.get('/v1/account', r.body.api_key)).status).toBe(200);
  });

  it('refuses a missing, out-of-range or unknown field with invalid_params, and changes nothing', async () => {
    const key = api.key();
    for (const [body, param] of [
      [undefined, 'body'],
      [{}, 'grace_period_seconds'],
      [{ grace_period_seconds: 604_801 }, 'grace_period_seconds'],
      [{ grace_period_seconds: -1 }, 'grace_period_seconds'],
      [{ grace_period_seconds: 1.5 }, 'grace_period_seconds'],
      [{ grace_period_seconds: 60, also: 1 }, 'also'],
    ] as const) {
      const r = await post('/v1/account/roll', body, key);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.code).toBe('invalid_params');
      expect(r.body.error.details.map((d: any) => d.param)).toContain(param);
    }
    expect((await api.get('/v1/account', key)).status).toBe(200);
    expect((await post('/v1/account/roll', { grace_period_seconds: 0 })).body.error.code).toBe('missing_bearer_token');
  });
});

describe('POST /v1/account/revoke', () => {
  it('needs the key’s own id, then revokes every secret of the key at once, and logs it', async () => {
    const old = api.key();
    const id = idOf(old);
    const secret = (await post('/v1/account/roll', { grace_period_seconds: 3600 }, old)).body.api_key;
    const other = api.key();
    const wrong = await post('/v1/account/revoke', { key_id: idOf(other) }, secret);
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.details).toEqual([{ param: 'key_id', issue: 'must be the id of the key sending this request' }]);
    expect((await post('/v1/account/revoke', {}, secret)).status).toBe(400);
    expect((await api.get('/v1/account', secret)).status).toBe(200);

    const r = await post('/v1/account/revoke', { key_id: id }, old);
    expect(r.status).toBe(200);
    expect(r.body.key).toMatchObject({ id, plan: 'Scale', is_active: false, revoked_at: '2022-06-15T12:00:00.000Z' });
    for (const k of [old, secret]) {
      const after = await api.get('/v1/account', k);
      expect(after.status).toBe(401);
      expect(after.body.error.code).toBe('inactive_key');
    }
    expect((await post('/v1/account/roll', { grace_period_seconds: 0 }, secret)).body.error.code).toBe('inactive_key');
    expect((await api.get('/v1/account', other)).status).toBe(200);
    const log = await sqliteState(api.ctx).requestLog.recent(id, 20);
    expect(log.map((q) => `${q.endpoint} ${q.status}`)).toEqual(expect.arrayContaining(['POST /v1/account/revoke 200', 'POST /v1/account/revoke 400', 'POST /v1/account/roll 200']));
  });
});

describe('POST /v1/account/free-key', () => {
  const saved = { on: process.env.FREE_KEYS, perDay: process.env.FREE_KEYS_PER_ADDRESS_PER_DAY };
  afterEach(() => {
    for (const [name, v] of [['FREE_KEYS', saved.on], ['FREE_KEYS_PER_ADDRESS_PER_DAY', saved.perDay]] as const) {
      if (v === undefined) delete process.env[name];
      else process.env[name] = v;
    }
  });

  it('issues Free keys to an address up to its daily limit, then 429 with the seconds to the next UTC day', async () => {
    process.env.FREE_KEYS_PER_ADDRESS_PER_DAY = '2';
    api.clock.set('2022-06-16T18:30:00Z');
    const r = await post('/v1/account/free-key', { label: 'visitor' });
    expect(r.status).toBe(201);
    const key: string = r.body.api_key;
    expect(key).toMatch(/^fk_live_[0-9A-Za-z]{32}$/);
    expect(r.body.key).toMatchObject({ prefix: key.slice(0, 12), label: 'visitor', plan: 'Free', previous_secret: null, created_at: '2022-06-16T18:30:00.000Z' });
    expect(r.body.credits).toEqual({ remaining: 100, monthly_allotment: 100, resets_on: '2022-07-01' });
    const account = await api.get('/v1/account', key);
    expect(account.body.key.id).toBe(r.body.key.id);
    expect(account.body.credits.remaining).toBe(100);
    // Its first request is its own creation.
    const log = (await api.get('/v1/account/requests', key)).body.requests;
    expect(log.map((q: any) => [q.endpoint, q.status, q.credits, q.request_id])).toEqual([['GET /v1/account', 200, 0, account.headers.get('x-request-id')], ['POST /v1/account/free-key', 201, 0, r.headers.get('x-request-id')]]);

    // JSON only (a form of another site cannot ask for one): refused without counting.
    const form = await fetch(`${api.url}/v1/account/free-key`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'label=x' });
    expect(form.status).toBe(400);
    expect(((await form.json()) as any).error.details).toEqual([{ param: 'body', issue: 'must be JSON: send it with Content-Type: application/json (`{}` will do)' }]);
    expect((await post('/v1/account/free-key', undefined)).status).toBe(400);
    expect((await post('/v1/account/free-key', {})).status).toBe(201);
    const refused = await post('/v1/account/free-key', {});
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('free_key_limit_reached');
    expect(refused.body.error.message).toMatch(/2 free keys of the day/);
    expect(refused.headers.get('retry-after')).toBe(String(5.5 * 3600));
    expect(refused.body.error.request_id).toBe(refused.headers.get('x-request-id'));
    // A higher limit lets the address have one more; the next UTC day starts again.
    process.env.FREE_KEYS_PER_ADDRESS_PER_DAY = '3';
    expect((await post('/v1/account/free-key', {})).status).toBe(201);
    expect((await post('/v1/account/free-key', {})).status).toBe(429);
    api.clock.set('2022-06-17T00:00:00Z');
    expect((await post('/v1/account/free-key', {})).status).toBe(201);
    const free = (await sqliteState(api.ctx).keys.listKeys()).filter((k) => k.plan === 'Free');
    expect(free).toHaveLength(4);
  });

  it('refuses a bad body with invalid_params, and answers 404 when the operator turned free keys off', async () => {
    api.clock.set('2022-06-20T08:00:00Z');
    const long = await post('/v1/account/free-key', { label: 'x'.repeat(101) });
    expect(long.status).toBe(400);
    expect(long.body.error.details[0].param).toBe('label');
    expect((await post('/v1/account/free-key', { plan: 'Enterprise' })).body.error.details).toEqual([{ param: 'plan', issue: 'is not a known field' }]);
    process.env.FREE_KEYS = 'off';
    const off = await post('/v1/account/free-key', {});
    expect(off.status).toBe(404);
    expect(off.body.error.code).toBe('not_found');
    process.env.FREE_KEYS = 'on';
    expect((await post('/v1/account/free-key', {})).status).toBe(201);
  });

  it('counts an IPv4 address as itself (mapped or not) and an IPv6 address by its /64', () => {
    expect(addressKey('203.0.113.9')).toBe('203.0.113.9');
    expect(addressKey('::ffff:203.0.113.9')).toBe('203.0.113.9');
    expect(addressKey('2001:db8:aa:bb:1:2:3:4')).toBe('2001:db8:aa:bb::/64');
    expect(addressKey('2001:0db8:00aa:00bb:ffff::1')).toBe('2001:db8:aa:bb::/64');
    expect(addressKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
    expect(addressKey(undefined)).toBe('unknown');
  });
});

describe('the key routes', () => {
  it('are documented (free-key without a key) and are not MCP tools', async () => {
    const doc = (await api.get('/v1/openapi.json')).body;
    expect(doc.paths['/v1/account/roll'].post.operationId).toBe('postAccountRoll');
    expect(doc.paths['/v1/account/revoke'].post['x-credits']).toBe(0);
    expect(doc.paths['/v1/account/free-key'].post.security).toEqual([]);
    expect(doc.paths['/v1/account/free-key'].post.responses['429'].headers['Retry-After']).toBeTruthy();
    const client = new Client({ name: 't', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), { requestInit: { headers: { 'X-API-Key': api.key() } } }));
    const names = (await client.listTools()).tools.map((t) => t.name);
    await client.close();
    expect(names).toContain('getAccount');
    for (const n of ['postAccountRoll', 'postAccountRevoke', 'postAccountFreeKey']) expect(names).not.toContain(n);
  });
});
