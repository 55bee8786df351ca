// The contract every endpoint shares (STYLE.md): one call per endpoint module adds it to the suite. Every endpoint of
// the registry (ENDPOINTS in api/app.ts) must have one `describeContract('<METHOD> <path>', ...)` call in some test
// file, its name a string literal: test/api/platform/contract-coverage.test.ts fails otherwise.
// 401 ×3, 402 not executed and not charged, 429 with Retry-After, 503 at_capacity, 400 missing_location and
// invalid_params with details, credits charged exactly once, refunds on failure and on direct-lookup 404s.
import { describe, expect, it } from 'vitest';
import { ENDPOINTS } from '../../api/app';
import type { ServingDb } from '../../api/db';
import type { PlanName } from '../../api/store';
import { balanceOf, type TestApi } from './api';
import { sqliteState } from './state';

export interface ContractCase {
  /** A valid request (path and query string). */
  path: string;
  cost: number;
  /** The same request without its location filter, when the endpoint requires one. */
  withoutLocation?: string;
  /** A request with one bad parameter, and that parameter's name. */
  invalid?: { path: string; param: string; body?: unknown };
  /** A direct lookup of an unknown id: 404 and the credits refunded. */
  notFound?: string;
  /** False for an endpoint whose answers depend on a service other than the serving database (businesses/:siren and
   * its registry): the database-failure and at-capacity cases are skipped (its own tests cover its failures). */
  usesDatabase?: boolean;
  /** Endpoints with a body (POST, PUT, DELETE): the method, and the JSON body of the valid request (also sent with
   * `withoutLocation` and `invalid` unless `invalid.body` is given). */
  method?: 'POST' | 'PUT' | 'DELETE';
  body?: unknown;
  /** The body without its location filter, when the endpoint requires one (with `path` as the request). */
  withoutLocationBody?: unknown;
  /** Success status when not 200 (201 created, 204 no content). */
  status?: number;
  /** false for responses without _credits and query_time_ms (e.g. 204). */
  analytic?: boolean;
  /** Per-key resources (/v1/portfolio/:id): makes one for the key and returns the request's path, before the request
   * (it may spend credits: the checks compare balances before and after). */
  pathFor?: (api: TestApi, key: string) => Promise<string> | string;
  /** A plan the endpoint accepts, for the rate-limit case (default Free). */
  plan?: PlanName;
  /** Endpoints that never query the serving database: they keep answering while 15 requests hold it. */
  noDatabase?: boolean;
}

interface Sent {
  status: number;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  headers: Headers;
}

/** The case's request (or `path` with the case's method and `body`), with a key and headers. */
async function sendCase(api: TestApi, c: ContractCase, path: string, key?: string, headers: Record<string, string> = {}, body = c.body): Promise<Sent> {
  if (!c.method) return api.get(path, key, headers);
  const res = await fetch(api.url + path, {
    method: c.method,
    headers: { ...(key ? { 'X-API-Key': key } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
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
  (sqliteState(api.ctx).db.prepare(`select count(*) as n from credit_ledger where key_id = ? and reason = 'charge'`).get(sqliteState(api.ctx).keys.findByKeyNow(key)!.id) as { n: number }).n;

/** How a contract case names its endpoint: `GET /v1/transactions/:id`, as the registry spells method and path. */
export const endpointName = (e: { method: string; path: string }) => `${e.method.toUpperCase()} ${e.path}`;

export function describeContract(name: string, getApi: () => TestApi, c: ContractCase): void {
  // A misspelt name would silently leave its endpoint uncovered for test/api/platform/contract-coverage.test.ts.
  if (!ENDPOINTS.some((e) => endpointName(e) === name)) throw new Error(`describeContract: "${name}" is not an endpoint of ENDPOINTS (api/app.ts)`);
  const ok = c.status ?? 200;
  const pathOf = async (api: TestApi, key: string) => (c.pathFor ? c.pathFor(api, key) : c.path);
  describe(`contract: ${name}`, () => {
    it('answers 401 missing_bearer_token, unknown_key and inactive_key, and accepts both key headers', async () => {
      const api = getApi();
      const none = await sendCase(api, c, c.path);
      expect(none.status).toBe(401);
      expect(none.body.error.code).toBe('missing_bearer_token');
      const unknown = await sendCase(api, c, c.path, 'fk_live_thisKeyDoesNotExist000000000000');
      expect(unknown.status).toBe(401);
      expect(unknown.body.error.code).toBe('unknown_key');
      const key = api.key();
      const path = await pathOf(api, key);
      sqliteState(api.ctx).keys.revokeNow(sqliteState(api.ctx).keys.findByKeyNow(key)!.id);
      const revoked = await sendCase(api, c, path, key);
      expect(revoked.status).toBe(401);
      expect(revoked.body.error.code).toBe('inactive_key');
      const bearerKey = api.key();
      const bearer = await sendCase(api, c, await pathOf(api, bearerKey), undefined, { Authorization: `Bearer ${bearerKey}` });
      expect(bearer.status).toBe(ok);
    });

    it('charges the cost exactly once and reports it in _credits, with X-Request-Id echoed', async () => {
      const api = getApi();
      const key = api.key({ balance: 1000 });
      const path = await pathOf(api, key);
      const [before, chargesBefore] = [balanceOf(api, key), chargesOf(api, key)];
      const r = await sendCase(api, c, path, key, { 'X-Request-Id': 'client-req-42' });
      expect(r.status).toBe(ok);
      expect(r.headers.get('x-request-id')).toBe('client-req-42');
      if (c.analytic ?? true) {
        expect(r.body._credits).toEqual({ used: c.cost, remaining: before - c.cost });
        expect(typeof r.body.query_time_ms).toBe('number');
      }
      expect(balanceOf(api, key)).toBe(before - c.cost);
      expect(chargesOf(api, key) - chargesBefore).toBe(c.cost > 0 ? 1 : 0);
    });

    if (c.cost > 0) {
      it('refuses with 402 insufficient_credits, without running a query or charging', async () => {
        const api = getApi();
        const key = api.key({ balance: c.cost - 1 });
        const path = await pathOf(api, key);
        const before = balanceOf(api, key);
        api.ctx.cache.clear();
        let queries = 0;
        const r = await withQuery(api, (q) => ((...a) => (queries++, q(...a))) as Query, () => sendCase(api, c, path, key));
        expect(r.status).toBe(402);
        expect(r.body.error.code).toBe('insufficient_credits');
        expect(queries).toBe(0);
        expect(balanceOf(api, key)).toBe(before);
      });

      it.skipIf(c.usesDatabase === false)('refunds the credits when the service fails (500 query_failed)', async () => {
        const api = getApi();
        const key = api.key({ balance: 100 });
        const path = await pathOf(api, key);
        const before = balanceOf(api, key);
        api.ctx.cache.clear();
        const r = await withQuery(api, () => (() => Promise.reject(new Error('disk on fire'))) as Query, () => sendCase(api, c, path, key));
        expect(r.status).toBe(500);
        expect(r.body).toEqual({ error: { code: 'query_failed', message: expect.any(String), request_id: r.headers.get('x-request-id') } });
        expect(r.body.error.message).not.toContain('disk on fire');
        expect(balanceOf(api, key)).toBe(before);
      });
    }

    it('answers 429 rate_limited with Retry-After past the plan limit, without charging', async () => {
      const api = getApi();
      const key = api.key({ plan: c.plan ?? 'Free', balance: 100 });
      const path = await pathOf(api, key);
      const before = balanceOf(api, key);
      // Any authenticated request counts, even one refused for its parameters.
      // Sent side by side: the limiter counts them all the same, and 60 round trips in a row cost a second per endpoint.
      const refused = await Promise.all(Array.from({ length: 60 }, () => api.get('/v1/transactions?limit=0', key)));
      for (const r of refused) expect(r.status).toBe(400);
      const r = await sendCase(api, c, path, key);
      expect(r.status).toBe(429);
      expect(r.body.error.code).toBe('rate_limited');
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(r.headers.get('x-ratelimit-limit')).toBe('60');
      expect(r.headers.get('x-ratelimit-remaining')).toBe('0');
      expect(balanceOf(api, key)).toBe(before);
      api.clock.advance(61_000);
      expect((await sendCase(api, c, path, key)).status).toBe(ok);
    });

    it.skipIf(c.usesDatabase === false)(c.noDatabase ? 'keeps answering while 15 requests hold the database (it never queries it)' : 'answers 503 at_capacity with Retry-After: 2 while 15 requests hold the database, without charging', async () => {
      const api = getApi();
      const key = api.key({ balance: 10_000 });
      const paths = await Promise.all(Array.from({ length: 16 }, () => pathOf(api, key)));
      const probe = c.noDatabase ? '/v1/transactions?code_postal=33230' : undefined;
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      await withQuery(api, (q) => (async (...a) => (await gate, q(...a))) as Query, async () => {
        // Nothing answered from the cache: every one of these requests needs the database.
        api.ctx.cache.clear();
        const held = paths.slice(0, 15).map((p) => (probe ? api.get(probe, key) : sendCase(api, c, p, key)));
        try {
          for (let t = 0; api.ctx.active.queries < 15 && t < 1000; t++) await new Promise((r) => setTimeout(r, 5));
          expect(api.ctx.active.queries).toBe(15);
          const before = balanceOf(api, key);
          const r = await sendCase(api, c, paths[15], key);
          if (c.noDatabase) {
            expect(r.status).toBe(ok);
            expect(balanceOf(api, key)).toBe(before - c.cost);
          } else {
            expect(r.status).toBe(503);
            expect(r.body.error.code).toBe('at_capacity');
            expect(r.headers.get('retry-after')).toBe('2');
            expect(balanceOf(api, key)).toBe(before);
          }
        } finally {
          release();
        }
        expect((await Promise.all(held)).map((x) => x.status)).toEqual(Array(15).fill(probe ? 200 : ok));
      });
    });

    if (c.withoutLocation || c.withoutLocationBody) {
      it('answers 400 missing_location without a location filter, without charging', async () => {
        const api = getApi();
        const key = api.key({ balance: 100 });
        const r = c.withoutLocationBody ? await sendCase(api, c, c.path, key, {}, c.withoutLocationBody) : await sendCase(api, c, c.withoutLocation!, key);
        expect(r.status).toBe(400);
        expect(r.body.error.code).toBe('missing_location');
        expect(balanceOf(api, key)).toBe(100);
      });
    }

    if (c.invalid) {
      it(`answers 400 invalid_params naming ${c.invalid.param}, without charging`, async () => {
        const api = getApi();
        const key = api.key({ balance: 100 });
        const r = await sendCase(api, c, c.invalid!.path, key, {}, c.invalid!.body ?? c.body);
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
        const r = await sendCase(api, c, c.notFound!, key);
        expect(r.status).toBe(404);
        expect(r.body.error.code).toBe('not_found');
        expect(balanceOf(api, key)).toBe(100);
      });
    }
  });
}
