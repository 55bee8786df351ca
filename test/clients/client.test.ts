// The typed client (clients/typescript) against the real server on loopback over the shared demo dataset: typed
// success, the API's errors as FoncierError, next_cursor pages, retries on 429 (Retry-After) and 503 at_capacity,
// and the key set once reaching every request.
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { createClient, FoncierError, type FoncierClient, type GetStatsMarketResponse, type Transaction } from '../../clients/typescript/index.js';
import { balanceOf, startTestApi, type TestApi } from '../helpers/api';
import { testData } from '../helpers/data';

const MARKET = { code_postal: '75015', type_local: 'Appartement' } as const;

let api: TestApi;
let dataRoot: string;
beforeAll(async () => {
  dataRoot = await testData('demo');
  api = await startTestApi({ dataRoot, now: '2026-02-15T12:00:00Z' });
});
afterAll(() => api.close());

/** A client whose requests are recorded (their headers), and whose waits are recorded instead of slept. */
function recordingClient(baseUrl: string, apiKey: string, opts: { onSleep?: (ms: number) => void; maxRetries?: number } = {}) {
  const requests: { url: string; headers: Headers; status?: number; retryAfter?: string | null }[] = [];
  const sleeps: number[] = [];
  const client: FoncierClient = createClient({
    baseUrl,
    apiKey,
    maxRetries: opts.maxRetries,
    fetch: async (req) => {
      const record: (typeof requests)[number] = { url: req.url, headers: new Headers(req.headers) };
      requests.push(record);
      const res = await fetch(req);
      [record.status, record.retryAfter] = [res.status, res.headers.get('Retry-After')];
      return res;
    },
    sleep: async (ms) => {
      sleeps.push(ms);
      opts.onSleep?.(ms);
    },
  });
  return { client, requests, sleeps };
}

/** The error a promise rejects with. */
async function rejection(p: Promise<unknown>): Promise<FoncierError> {
  try {
    await p;
  } catch (e) {
    return e as FoncierError;
  }
  throw new Error('expected a rejection');
}

describe('the typed client against the server', () => {
  it('answers a named operation with the REST body, typed, and charges it once with the key set once', async () => {
    const key = api.key({ balance: 1000 });
    const { client, requests } = recordingClient(api.url, key);
    const before = balanceOf(api, key);
    const market = await client.getStatsMarket({ query: MARKET });
    expectTypeOf(market).toEqualTypeOf<GetStatsMarketResponse>();
    expectTypeOf(market.price_per_m2.median).toEqualTypeOf<number | null>();
    expect(market.count).toBeGreaterThan(0);
    expect(balanceOf(api, key)).toBe(before - market._credits.used);

    const rest = await api.get(`/v1/stats/market?${new URLSearchParams(MARKET)}`, api.key());
    // Everything but the per-call fields (credits, timing, and the cache the first call filled).
    const { _credits: _a, query_time_ms: _b, cache: _e, ...fromClient } = market as Record<string, unknown>;
    const { _credits: _c, query_time_ms: _d, cache: _f, ...fromRest } = rest.body;
    expect(fromClient).toEqual(fromRest);
    // call() is the same operation by name.
    expect((await client.call('getStatsMarket', { query: MARKET })).count).toBe(market.count);

    expect(requests).toHaveLength(2);
    for (const r of requests) {
      expect(r.headers.get('X-API-Key')).toBe(key);
      expect(r.headers.get('Authorization')).toBeNull();
      expect(new URL(r.url).pathname).toBe('/v1/stats/market');
    }
  });

  it('fills path parameters and sends JSON bodies (portfolio), 204 as undefined', async () => {
    const key = api.key({ balance: 1000 });
    const client = createClient({ baseUrl: api.url + '/', apiKey: key });
    const created = await client.postPortfolio({ body: { latitude: 45.022262, longitude: -0.149933, type_local: 'Maison', surface: 100, code_postal: '33230', label: 'client' } });
    const id = created.property.id;
    expect((await client.getPortfolioById({ path: { id } })).property.label).toBe('client');
    expect(await client.deletePortfolioById({ path: { id } })).toBeUndefined();
    const gone = await rejection(client.getPortfolioById({ path: { id } }));
    expect([gone.status, gone.code]).toEqual([404, 'not_found']);
  });

  it('rejects invalid parameters with a FoncierError carrying status, code, details and request id', async () => {
    const { client } = recordingClient(api.url, api.key());
    // The types refuse what the document refuses (checked by npm run typecheck), so the bad call needs a cast.
    // @ts-expect-error a type_local outside the enum
    void (() => client.getStatsMarket({ query: { type_local: 'Chateau' } }));
    // @ts-expect-error the path parameter is required
    void (() => client.getPortfolioById());
    const err = await rejection(client.getStatsMarket({ query: { code_postal: '3323', type_local: 'Chateau' as 'Maison' } }));
    expect(err).toBeInstanceOf(FoncierError);
    expect(err.status).toBe(400);
    expect(err.code).toBe('invalid_params');
    expect(err.details!.map((d) => d.param).sort()).toEqual(['code_postal', 'type_local']);
    expect(err.requestId).toMatch(/\S/);
  });

  it('rejects a key without credits with 402 insufficient_credits, without retrying', async () => {
    const { client, requests, sleeps } = recordingClient(api.url, api.key({ balance: 0 }));
    const err = await rejection(client.getStatsMarket({ query: MARKET }));
    expect([err.status, err.code]).toEqual([402, 'insufficient_credits']);
    expect(requests).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('iterates every transaction through next_cursor pages: the same sales as one large page', async () => {
    const key = api.key({ balance: 10_000 });
    const all = await api.get('/v1/transactions?code_postal=75015&type_local=Maison&limit=200', key);
    expect(all.body.next_cursor).toBeNull(); // one page holds them all: the reference is complete
    const expected = all.body.transactions.map((t: { id: number }) => t.id);
    expect(expected.length).toBeGreaterThan(14);

    const { client, requests } = recordingClient(api.url, key);
    const seen: number[] = [];
    for await (const t of client.items('getTransactions', { query: { code_postal: '75015', type_local: 'Maison', limit: 7 } })) {
      expectTypeOf(t).toEqualTypeOf<Transaction>();
      seen.push(t.id);
    }
    expect(seen).toEqual(expected);
    expect(requests).toHaveLength(Math.ceil(expected.length / 7));
    expect(requests.map((r) => new URL(r.url).searchParams.get('offset'))).toEqual(requests.map((_, i) => String(i * 7)));

    let pages = 0;
    for await (const page of client.pages('getTransactions', { query: { code_postal: '75015', type_local: 'Maison', limit: 7, offset: 7 } })) {
      pages++;
      expect(page.transactions.map((t) => t.id)).toEqual(expected.slice(7 * pages, 7 * pages + 7));
    }
    expect(pages).toBe(Math.ceil(expected.length / 7) - 1);
  });

  it('pages the portfolio too', async () => {
    const key = api.key({ balance: 1000 });
    const client = createClient({ baseUrl: api.url, apiKey: key });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await client.postPortfolio({ body: { latitude: 45.022262, longitude: -0.149933, type_local: 'Terrain', surface: 100, label: `t${i}` } })).property.id);
    const seen: string[] = [];
    for await (const p of client.items('getPortfolio', { query: { limit: 2 } })) seen.push(p.id);
    expect(seen).toEqual(ids);
  });

  it('retries 503 at_capacity after its Retry-After, then answers', async () => {
    const key = api.key({ balance: 1000 });
    // Every database slot taken until the client waits: the server refuses the first attempt with at_capacity.
    api.ctx.active.queries = api.ctx.limits.maxConcurrentQueries;
    const { client, requests, sleeps } = recordingClient(api.url, key, { onSleep: () => (api.ctx.active.queries = 0) });
    try {
      const r = await client.getStatsMarket({ query: { ...MARKET, type_local: 'Maison' } });
      expect(r.filters.type_local).toBe('Maison');
    } finally {
      api.ctx.active.queries = 0;
    }
    expect(sleeps).toEqual([2000]);
    expect(requests).toHaveLength(2);
  });

  it('gives up 503 at_capacity after maxRetries', async () => {
    api.ctx.active.queries = api.ctx.limits.maxConcurrentQueries;
    const { client, requests, sleeps } = recordingClient(api.url, api.key(), { maxRetries: 2 });
    try {
      const err = await rejection(client.getStatsMarket({ query: { ...MARKET, code_postal: '75011' } }));
      expect([err.status, err.code, err.retryAfterSeconds]).toEqual([503, 'at_capacity', 2]);
    } finally {
      api.ctx.active.queries = 0;
    }
    expect(requests).toHaveLength(3);
    expect(sleeps).toEqual([2000, 2000]);
  });
});

describe('the typed client and the rate limit', () => {
  let limited: TestApi;
  beforeAll(async () => {
    limited = await startTestApi({ dataRoot, now: '2026-02-15T12:00:00Z', limits: { rateLimitPerMinute: 1 } });
  });
  afterAll(() => limited.close());

  it('waits the Retry-After of a 429 (the server clock moves instead of sleeping) and succeeds, charged once', async () => {
    const key = limited.key({ balance: 1000 });
    const { client, requests, sleeps } = recordingClient(limited.url, key, { onSleep: (ms) => limited.clock.advance(ms) });
    await client.getStatsMarket({ query: MARKET });
    const before = balanceOf(limited, key);
    const second = await client.getStatsMarket({ query: { ...MARKET, type_local: 'Maison' } });
    expect(requests).toHaveLength(3);
    expect(requests.map((r) => r.status)).toEqual([200, 429, 200]);
    // The wait is the server's own Retry-After, in seconds.
    expect(Number(requests[1].retryAfter)).toBeGreaterThan(0);
    expect(sleeps).toEqual([Number(requests[1].retryAfter) * 1000]);
    expect(balanceOf(limited, key)).toBe(before - second._credits.used);
  });

  it('surfaces the 429 with its Retry-After when retries are off', async () => {
    const key = limited.key({ balance: 1000 });
    const { client, sleeps } = recordingClient(limited.url, key, { maxRetries: 0 });
    await client.getAccount();
    const err = await rejection(client.getAccount());
    expect([err.status, err.code]).toEqual([429, 'rate_limited']);
    expect(err.retryAfterSeconds).toBeGreaterThan(0);
    expect(sleeps).toEqual([]);
  });
});

describe('the typed client and answers that are not the API’s', () => {
  /** A client over a scripted fetch answering the given responses in turn. */
  function scripted(responses: (() => Response)[], opts: { maxRetryDelayMs?: number } = {}) {
    const sleeps: number[] = [];
    let calls = 0;
    const client = createClient({
      baseUrl: 'http://127.0.0.1:9',
      apiKey: 'k',
      ...opts,
      fetch: async () => responses[calls++]!(),
      sleep: async (ms) => void sleeps.push(ms),
    });
    return { client, sleeps, calls: () => calls };
  }

  it('turns a non-JSON error page into a FoncierError http_<status>', async () => {
    const { client } = scripted([() => new Response('<html>Bad gateway</html>', { status: 502, headers: { 'Content-Type': 'text/html' } })]);
    const err = await rejection(client.getAccount());
    expect([err.status, err.code, err.message]).toEqual([502, 'http_502', '<html>Bad gateway</html>']);
  });

  it('reads a Retry-After given as an HTTP date, and does not wait beyond maxRetryDelayMs', async () => {
    const body = JSON.stringify({ error: { code: 'rate_limited', message: 'slow down', request_id: 'r1' } });
    const at = (s: number) => new Date(Math.ceil(Date.now() / 1000) * 1000 + s * 1000).toUTCString();
    const ok = JSON.stringify({ plan: 'Scale' });
    const dated = scripted([
      () => new Response(body, { status: 429, headers: { 'Retry-After': at(30) } }),
      () => new Response(ok, { status: 200, headers: { 'Content-Type': 'application/json' } }),
    ]);
    await dated.client.getAccount();
    expect(dated.sleeps).toHaveLength(1);
    expect(dated.sleeps[0]).toBeGreaterThan(28_000);
    expect(dated.sleeps[0]).toBeLessThanOrEqual(31_000);

    const tooLong = scripted([() => new Response(body, { status: 429, headers: { 'Retry-After': '3600' } })], { maxRetryDelayMs: 60_000 });
    const err = await rejection(tooLong.client.getAccount());
    expect([err.code, err.retryAfterSeconds, err.requestId]).toEqual(['rate_limited', 3600, 'r1']);
    expect(tooLong.sleeps).toEqual([]);
    expect(tooLong.calls()).toBe(1);
  });

  it('does not retry a 503 other than at_capacity', async () => {
    const body = JSON.stringify({ error: { code: 'no_data', message: 'no serving database', request_id: 'r2' } });
    const { client, sleeps, calls } = scripted([() => new Response(body, { status: 503, headers: { 'Retry-After': '1' } })]);
    const err = await rejection(client.getAccount());
    expect([err.status, err.code]).toEqual([503, 'no_data']);
    expect([sleeps, calls()]).toEqual([[], 1]);
  });
});
