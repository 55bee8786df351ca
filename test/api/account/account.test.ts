// The key holder's endpoints (GET /v1/account, /v1/account/usage, /v1/account/requests): a key's calls made here over
// REST and MCP, then what the endpoints report compared with what this test did and with the ledger; other keys'
// calls stay invisible; days are UTC days of the server's clock; the log keeps 31 days. Plus the shared contract.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { balanceOf, startTestApi, type TestApi } from '../../helpers/api';
import { describeContract, withQuery, type Query } from '../../helpers/contract';
import { sqliteState } from '../../helpers/state';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ now: '2022-06-15T12:00:00Z' });
});
afterAll(() => api?.close());
const get = () => api;

describeContract('GET /v1/account', get, { path: '/v1/account', cost: 0, noDatabase: true });
describeContract('GET /v1/account/usage', get, { path: '/v1/account/usage?days=7', cost: 0, noDatabase: true, invalid: { path: '/v1/account/usage?days=31', param: 'days' } });
describeContract('GET /v1/account/requests', get, { path: '/v1/account/requests', cost: 0, noDatabase: true, invalid: { path: '/v1/account/requests?limit=0', param: 'limit' } });

const MARKET = '/v1/stats/market?code_postal=33230&type_local=Maison&date_debut=2021-01-01&date_fin=2021-12-31';

describe('the key holder’s figures', () => {
  // The contract cases above move the clock past their rate-limit windows.
  beforeEach(() => api.clock.set('2022-06-15T12:00:00Z'));

  it('reports plan, credits and reset date from the key’s balance', async () => {
    const key = api.key({ plan: 'Indie', balance: 1234 });
    sqliteState(api.ctx).keys.topupNow(sqliteState(api.ctx).keys.findByKeyNow(key)!.id, 50);
    await api.get(MARKET, key);
    const r = await api.get('/v1/account', key);
    expect(r.status).toBe(200);
    const rec = sqliteState(api.ctx).keys.findByKeyNow(key)!;
    expect(r.body.key).toEqual({ id: rec.id, prefix: rec.prefix, label: rec.label, plan: 'Indie', created_at: rec.createdAt, previous_secret: null });
    expect(r.body.credits).toEqual({ remaining: 1234 + 50 - 5, monthly_allotment: 2000, monthly_remaining: 1234 - 5, topup: 50, resets_on: '2022-07-01' });
    expect(r.body.credits.remaining).toBe(balanceOf(api, key));
    expect(r.body.rate_limit_per_minute).toBe(60);
    expect(r.body._credits).toEqual({ used: 0, remaining: 1279 });
  });

  it('lists every call of the key, REST and MCP, with its request id, status and the credits it finally cost', async () => {
    const key = api.key({ balance: 100 });
    const other = api.key();
    await api.get(MARKET, other);
    api.ctx.cache.clear();
    const made: Array<{ id: string; endpoint: string; status: number; credits: number; transport: string }> = [];
    const rest = async (path: string, endpoint: string, credits: number) => {
      const r = await api.get(path, key);
      made.push({ id: r.headers.get('x-request-id')!, endpoint, status: r.status, credits, transport: 'rest' });
    };
    await rest(MARKET, 'GET /v1/stats/market', 5);
    await rest(MARKET, 'GET /v1/stats/market', 5); // a cache hit is charged too
    await rest('/v1/stats/market?code_postal=1', 'GET /v1/stats/market', 0); // 400, not charged
    await rest('/v1/transactions/999999999999', 'GET /v1/transactions/:id', 0); // 404, refunded
    await rest('/v1/meta/sources', 'GET /v1/meta/sources', 0);
    const client = new Client({ name: 't', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), { requestInit: { headers: { 'X-API-Key': key, 'X-Request-Id': 'mcp-call-1' } } }));
    await client.callTool({ name: 'getTransactions', arguments: { code_postal: '33230', limit: 2 } });
    await client.close();
    made.push({ id: 'mcp-call-1', endpoint: 'GET /v1/transactions', status: 200, credits: 5, transport: 'mcp' });
    // Requests outside the registry (unknown route, no key) are not the key's calls.
    await api.get('/v1/nowhere', key);
    await api.get(MARKET);

    const r = await api.get('/v1/account/requests?limit=100', key);
    expect(r.status).toBe(200);
    expect(r.body.requests.map((q: any) => ({ id: q.request_id, endpoint: q.endpoint, status: q.status, credits: q.credits, transport: q.transport }))).toEqual(
      [...made].reverse(),
    );
    for (const q of r.body.requests) expect(q.at).toBe('2022-06-15T12:00:00.000Z');
    const spent = made.reduce((a, m) => a + m.credits, 0);
    expect(balanceOf(api, key)).toBe(100 - spent);
    expect((await api.get('/v1/account/requests?limit=2', key)).body.requests).toHaveLength(2);

    const usage = (await api.get('/v1/account/usage', key)).body;
    expect(usage).toMatchObject({ date_debut: '2022-05-17', date_fin: '2022-06-15' });
    // This test's calls, grouped here, plus the requests listing made just above (0 credits).
    const expected = new Map<string, { requests: number; credits: number }>();
    for (const m of [...made, { endpoint: 'GET /v1/account/requests', credits: 0 }, { endpoint: 'GET /v1/account/requests', credits: 0 }]) {
      const e = expected.get(m.endpoint) ?? { requests: 0, credits: 0 };
      e.requests++;
      e.credits += m.credits;
      expected.set(m.endpoint, e);
    }
    expect(usage.usage).toEqual([...expected].map(([endpoint, e]) => ({ date: '2022-06-15', endpoint, ...e })).sort((a, b) => a.endpoint.localeCompare(b.endpoint)));
    expect(usage.totals[0]).toEqual({ endpoint: 'GET /v1/stats/market', requests: 3, credits: 10 });
    expect(usage.totals.reduce((a: number, t: any) => a + t.credits, 0)).toBe(spent);
  });

  it('splits usage by UTC day, honours `days`, and forgets calls older than 31 days', async () => {
    const key = api.key();
    const at = async (iso: string, n: number) => {
      api.clock.set(iso);
      for (let i = 0; i < n; i++) await api.get('/v1/meta/sources', key);
    };
    await at('2022-06-01T23:59:59Z', 1);
    await at('2022-06-02T00:00:00Z', 2);
    await at('2022-06-20T10:00:00Z', 3);
    api.clock.set('2022-06-20T11:00:00Z');
    const days = async (n?: number) =>
      ((await api.get(`/v1/account/usage${n ? `?days=${n}` : ''}`, key)).body.usage as any[]).filter((u) => u.endpoint === 'GET /v1/meta/sources').map((u) => [u.date, u.requests]);
    expect(await days()).toEqual([['2022-06-01', 1], ['2022-06-02', 2], ['2022-06-20', 3]]);
    expect(await days(19)).toEqual([['2022-06-02', 2], ['2022-06-20', 3]]);
    expect(await days(1)).toEqual([['2022-06-20', 3]]);
    // 31 days after the first call, the next call's pruning drops it (the log keeps a month for the 30-day view).
    api.clock.set('2022-07-03T00:00:00Z');
    await api.get('/v1/meta/sources', api.key());
    const left = sqliteState(api.ctx).db.prepare('select count(*) as n from request_log where key_id = ?').get(sqliteState(api.ctx).keys.findByKeyNow(key)!.id) as { n: number };
    expect(left.n).toBe(2 + 3 + 3);
  });

  it('answers while the serving database is at capacity (it never queries it)', async () => {
    const key = api.key();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    await withQuery(api, (q) => (async (...a) => (await gate, q(...a))) as Query, async () => {
      api.ctx.cache.clear();
      const held = Array.from({ length: 15 }, () => api.get(MARKET, key));
      try {
        for (let t = 0; api.ctx.active.queries < 15 && t < 1000; t++) await new Promise((r) => setTimeout(r, 5));
        expect((await api.get(MARKET, key)).status).toBe(503);
        expect((await api.get('/v1/account', key)).status).toBe(200);
      } finally {
        release();
      }
      await Promise.all(held);
    });
  });
});
