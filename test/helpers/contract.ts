// The contract every endpoint shares (STYLE.md): one call per endpoint module adds it to the suite. Every endpoint of
// the registry (ENDPOINTS in api/app.ts) must have one `describeContract('<METHOD> <path>', ...)` call in some test
// file, its name a string literal: test/contract-coverage.test.ts fails otherwise.
// 401 ×3, 402 not executed and not charged, 429 with Retry-After, 503 at_capacity, 400 missing_location and
// invalid_params with details, credits charged exactly once, refunds on failure and on direct-lookup 404s.
import { describe, expect, it } from 'vitest';
import { ENDPOINTS } from '../../api/app';
import type { ServingDb } from '../../api/db';
import { balanceOf, type TestApi } from './api';

export interface ContractCase {
  /** A valid request (path and query string). */
  path: string;
  cost: number;
  /** The same request without its location filter, when the endpoint requires one. */
  withoutLocation?: string;
  /** A request with one bad parameter, and that parameter's name. */
  invalid?: { path: string; param: string };
  /** A direct lookup of an unknown id: 404 and the credits refunded. */
  notFound?: string;
}

export type Query = ServingDb['query'];

/** Replaces the serving database's query method for the duration of `f`. */
/** Runs f with the serving database's query method replaced (to count, delay or fail queries). */
export async function withQuery<T>(api: TestApi, replacement: (original: Query) => Query, f: () => Promise<T>): Promise<T> {
  const db = api.ctx.db;
  const original = db.query.bind(db) as Query;
  db.query = replacement(original);
  try {
    return await f();
  } finally {
    delete (db as Partial<{ query: Query }>).query;
  }
}

const chargesOf = (api: TestApi, key: string) =>
  (api.ctx.store.db.prepare(`select count(*) as n from credit_ledger where key_id = ? and reason = 'charge'`).get(api.ctx.store.findByKey(key)!.id) as { n: number }).n;

/** How a contract case names its endpoint: `GET /v1/transactions/:id`, as the registry spells method and path. */
export const endpointName = (e: { method: string; path: string }) => `${e.method.toUpperCase()} ${e.path}`;

export function describeContract(name: string, getApi: () => TestApi, c: ContractCase): void {
  // A misspelt name would silently leave its endpoint uncovered for test/contract-coverage.test.ts.
  if (!ENDPOINTS.some((e) => endpointName(e) === name)) throw new Error(`describeContract: "${name}" is not an endpoint of ENDPOINTS (api/app.ts)`);
  describe(`contract: ${name}`, () => {
    it('answers 401 missing_bearer_token, unknown_key and inactive_key, and accepts both key headers', async () => {
      const api = getApi();
      const none = await api.get(c.path);
      expect(none.status).toBe(401);
      expect(none.body.error.code).toBe('missing_bearer_token');
      const unknown = await api.get(c.path, 'fk_live_thisKeyDoesNotExist000000000000');
      expect(unknown.status).toBe(401);
      expect(unknown.body.error.code).toBe('unknown_key');
      const key = api.key();
      api.ctx.store.revoke(api.ctx.store.findByKey(key)!.id);
      const revoked = await api.get(c.path, key);
      expect(revoked.status).toBe(401);
      expect(revoked.body.error.code).toBe('inactive_key');
      const bearer = await api.get(c.path, undefined, { Authorization: `Bearer ${api.key()}` });
      expect(bearer.status).toBe(200);
    });

    it('charges the cost exactly once and reports it in _credits, with X-Request-Id echoed', async () => {
      const api = getApi();
      const key = api.key({ balance: 1000 });
      const r = await api.get(c.path, key, { 'X-Request-Id': 'client-req-42' });
      expect(r.status).toBe(200);
      expect(r.headers.get('x-request-id')).toBe('client-req-42');
      expect(r.body._credits).toEqual({ used: c.cost, remaining: 1000 - c.cost });
      expect(typeof r.body.query_time_ms).toBe('number');
      expect(balanceOf(api, key)).toBe(1000 - c.cost);
      expect(chargesOf(api, key)).toBe(c.cost > 0 ? 1 : 0);
    });

    if (c.cost > 0) {
      it('refuses with 402 insufficient_credits, without running a query or charging', async () => {
        const api = getApi();
        const key = api.key({ balance: c.cost - 1 });
        api.ctx.cache.clear();
        let queries = 0;
        const r = await withQuery(api, (q) => ((...a) => (queries++, q(...a))) as Query, () => api.get(c.path, key));
        expect(r.status).toBe(402);
        expect(r.body.error.code).toBe('insufficient_credits');
        expect(queries).toBe(0);
        expect(balanceOf(api, key)).toBe(c.cost - 1);
      });

      it('refunds the credits when the service fails (500 query_failed)', async () => {
        const api = getApi();
        const key = api.key({ balance: 100 });
        api.ctx.cache.clear();
        const r = await withQuery(api, () => (() => Promise.reject(new Error('disk on fire'))) as Query, () => api.get(c.path, key));
        expect(r.status).toBe(500);
        expect(r.body).toEqual({ error: { code: 'query_failed', message: expect.any(String), request_id: r.headers.get('x-request-id') } });
        expect(r.body.error.message).not.toContain('disk on fire');
        expect(balanceOf(api, key)).toBe(100);
      });
    }

    it('answers 429 rate_limited with Retry-After past the plan limit, without charging', async () => {
      const api = getApi();
      const key = api.key({ plan: 'Free', balance: 100 });
      // Any authenticated request counts, even one refused for its parameters.
      // Sent side by side: the limiter counts them all the same, and 60 round trips in a row cost a second per endpoint.
      const refused = await Promise.all(Array.from({ length: 60 }, () => api.get('/v1/transactions?limit=0', key)));
      for (const r of refused) expect(r.status).toBe(400);
      const r = await api.get(c.path, key);
      expect(r.status).toBe(429);
      expect(r.body.error.code).toBe('rate_limited');
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(r.headers.get('x-ratelimit-limit')).toBe('60');
      expect(r.headers.get('x-ratelimit-remaining')).toBe('0');
      expect(balanceOf(api, key)).toBe(100);
      api.clock.advance(61_000);
      expect((await api.get(c.path, key)).status).toBe(200);
    });

    it('answers 503 at_capacity with Retry-After: 2 while 15 requests hold the database, without charging', async () => {
      const api = getApi();
      const key = api.key({ balance: 10_000 });
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      await withQuery(api, (q) => (async (...a) => (await gate, q(...a))) as Query, async () => {
        // Nothing answered from the cache: every one of these requests needs the database.
        api.ctx.cache.clear();
        const held = Array.from({ length: 15 }, () => api.get(c.path, key));
        try {
          for (let t = 0; api.ctx.active.queries < 15 && t < 1000; t++) await new Promise((r) => setTimeout(r, 5));
          expect(api.ctx.active.queries).toBe(15);
          const before = balanceOf(api, key);
          const r = await api.get(c.path, key);
          expect(r.status).toBe(503);
          expect(r.body.error.code).toBe('at_capacity');
          expect(r.headers.get('retry-after')).toBe('2');
          expect(balanceOf(api, key)).toBe(before);
        } finally {
          release();
        }
        expect((await Promise.all(held)).map((x) => x.status)).toEqual(Array(15).fill(200));
      });
    });

    if (c.withoutLocation) {
      it('answers 400 missing_location without a location filter, without charging', async () => {
        const api = getApi();
        const key = api.key({ balance: 100 });
        const r = await api.get(c.withoutLocation!, key);
        expect(r.status).toBe(400);
        expect(r.body.error.code).toBe('missing_location');
        expect(balanceOf(api, key)).toBe(100);
      });
    }

    if (c.invalid) {
      it(`answers 400 invalid_params naming ${c.invalid.param}, without charging`, async () => {
        const api = getApi();
        const key = api.key({ balance: 100 });
        const r = await api.get(c.invalid!.path, key);
        expect(r.status).toBe(400);
        expect(r.body.error.code).toBe('invalid_params');
        expect(r.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ param: c.invalid!.param })]));
        expect(balanceOf(api, key)).toBe(100);
      });
    }

    if (c.notFound) {
      it('answers 404 not_found for an unknown id and refunds the credits', async () => {
        const api = getApi();
        const key = api.key({ balance: 100 });
        const r = await api.get(c.notFound!, key);
        expect(r.status).toBe(404);
        expect(r.body.error.code).toBe('not_found');
        expect(balanceOf(api, key)).toBe(100);
      });
    }
  });
}
