// The transport-independent call path (api/platform.ts callEndpoint): what the MCP server and internal jobs will use.
// No Express and no HTTP here: a context over the real samples, endpoints called as functions, and the credit ledger
// read directly.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../../api/clock';
import { closeContext, createContext, type AppContext } from '../../../api/context';
import { ApiError } from '../../../api/errors';
import { createLogger } from '../../../api/log';
import { z } from '../../../api/params';
import { callEndpoint, defineEndpoint, requestIdOf } from '../../../api/platform';
import { statsMarket } from '../../../api/routes/stats/market';
import { getTransaction } from '../../../api/routes/transactions/transactions';
import { buildSampleData } from '../../helpers/api';
import { sqliteState } from '../../helpers/state';

let ctx: AppContext;
beforeAll(async () => {
  ctx = createContext({ dataRoot: await buildSampleData(), clock: new FixedClock('2022-06-15T12:00:00Z'), logger: createLogger({ level: 'silent' }) });
  await ctx.db.start();
});
afterAll(() => closeContext(ctx));

/** A small endpoint without database work, for the rules that do not depend on an endpoint's data. */
const toy = defineEndpoint({
  method: 'post',
  path: '/v1/toy',
  tag: 'Test',
  summary: 'toy',
  response: z.object({ ok: z.boolean() }),
  credits: 3,
  usesDatabase: false,
  prepare: () => ({}),
  handler: async () => ({ ok: true }),
});

const newKey = (balance: number) => sqliteState(ctx).keys.createKeyNow({ plan: 'Scale', balance });
const remaining = (id: string) => sqliteState(ctx).credits.balanceNow(id)!.remaining;
const ledger = (id: string) =>
  sqliteState(ctx).db.prepare('select reason, delta, request_id, settled, charge_id from credit_ledger where key_id = ? order by id').all(id) as Array<{
    reason: string;
    delta: number;
    request_id: string | null;
    settled: string | null;
    charge_id: number | null;
  }>;

const MARKET = { code_postal: '33230', type_local: 'Maison', date_debut: '2021-01-01', date_fin: '2021-12-31' };

describe('callEndpoint, without any transport', () => {
  it('charges once per call, serves the second call from the cache (still charged), and records the request id', async () => {
    const { id, key } = newKey(100);
    ctx.cache.clear();
    const first = await callEndpoint(ctx, statsMarket, { key, input: { query: MARKET }, requestId: 'mcp-call-1' });
    expect(first.status).toBe(200);
    expect(first.body.cache).toEqual({ hit: false, ttl_seconds: 3600 });
    expect(first.body._credits).toEqual({ used: 5, remaining: 95 });
    expect(first.keyId).toBe(id);
    expect(first.creditsUsed).toBe(5);
    expect(first.headers['X-RateLimit-Limit']).toBe('60');

    let queries = 0;
    const original = ctx.db.query.bind(ctx.db);
    ctx.db.query = ((...a: Parameters<typeof original>) => (queries++, original(...a))) as typeof original;
    try {
      const second = await callEndpoint(ctx, statsMarket, { key, input: { query: MARKET }, requestId: 'mcp-call-2' });
      expect(second.status).toBe(200);
      expect(second.body.cache).toMatchObject({ hit: true });
      expect(second.body.count).toBe(first.body.count);
      expect(queries).toBe(0);
    } finally {
      delete (ctx.db as Partial<{ query: unknown }>).query;
    }
    expect(remaining(id)).toBe(90);
    const charges = ledger(id).filter((r) => r.reason === 'charge');
    expect(charges).toEqual([
      { reason: 'charge', delta: -5, request_id: 'mcp-call-1', settled: 'kept', charge_id: null },
      { reason: 'charge', delta: -5, request_id: 'mcp-call-2', settled: 'kept', charge_id: null },
    ]);
  });

  it('refunds a failing handler (500) and a direct lookup of an unknown id (404), with the request id in the error body', async () => {
    const { id, key } = newKey(100);
    const missing = await callEndpoint(ctx, getTransaction, { key, input: { params: { id: '999999999999' } }, requestId: 'lookup-1' });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: { code: 'not_found', message: expect.any(String), request_id: 'lookup-1' } });
    expect(missing.creditsUsed).toBe(0);
    expect(remaining(id)).toBe(100);

    ctx.cache.clear();
    ctx.db.query = (() => Promise.reject(new Error('disk on fire'))) as typeof ctx.db.query;
    try {
      const failed = await callEndpoint(ctx, statsMarket, { key, input: { query: MARKET }, requestId: 'market-1' });
      expect(failed.status).toBe(500);
      expect(failed.error?.code).toBe('query_failed');
      expect(JSON.stringify(failed.body)).not.toContain('disk on fire');
    } finally {
      delete (ctx.db as Partial<{ query: unknown }>).query;
    }
    expect(remaining(id)).toBe(100);
    const rows = ledger(id).filter((r) => r.reason !== 'create');
    expect(rows.map((r) => [r.reason, r.delta, r.request_id, r.settled])).toEqual([
      ['charge', -2, 'lookup-1', 'refunded'],
      ['refund', 2, 'lookup-1', null],
      ['charge', -5, 'market-1', 'refunded'],
      ['refund', 5, 'market-1', null],
    ]);
    // Each refund names the charge it undoes.
    const ids = sqliteState(ctx).db.prepare(`select id from credit_ledger where key_id = ? and reason = 'charge' order by id`).pluck().all(id);
    expect(rows.filter((r) => r.reason === 'refund').map((r) => r.charge_id)).toEqual(ids);
  });

  it('keeps the charge of a 404 on an endpoint without that refund rule', async () => {
    const { id, key } = newKey(10);
    const strict = defineEndpoint({ ...toy, handler: async () => Promise.reject(new ApiError('not_found', 'nothing here')) });
    const r = await callEndpoint(ctx, strict, { key, requestId: 'toy-1' });
    expect(r.status).toBe(404);
    expect(r.creditsUsed).toBe(3);
    expect(remaining(id)).toBe(7);
  });

  it('lets a pre-check refuse without charging, and computes the cost from the input', async () => {
    const { id, key } = newKey(50);
    let handled = 0;
    const guarded = defineEndpoint({
      ...toy,
      body: z.object({ items: z.array(z.string()).max(100) }),
      credits: ({ body }) => (body.items.length > 2 ? 10 : 2),
      prepare: ({ body }) => ({ n: body.items.length }),
      precheck: async ({ n }) => {
        if (n === 0) throw new ApiError('alert_limit_reached', 'cap reached');
      },
      handler: async () => (handled++, { ok: true }),
    });
    const refused = await callEndpoint(ctx, guarded, { key, input: { body: { items: [] } }, requestId: 'p-1' });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ error: { code: 'alert_limit_reached', request_id: 'p-1' } });
    expect(handled).toBe(0);
    expect(remaining(id)).toBe(50);
    expect((await callEndpoint(ctx, guarded, { key, input: { body: { items: ['a'] } }, requestId: 'p-2' })).creditsUsed).toBe(2);
    expect((await callEndpoint(ctx, guarded, { key, input: { body: { items: ['a', 'b', 'c'] } }, requestId: 'p-3' })).creditsUsed).toBe(10);
    expect(handled).toBe(2);
    expect(remaining(id)).toBe(38);
    const bad = await callEndpoint(ctx, guarded, { key, input: { body: { items: 'a' } }, requestId: 'p-4' });
    expect(bad.status).toBe(400);
    expect(remaining(id)).toBe(38);
  });

  it('settles each charge of a client that reuses its request id on its own', async () => {
    const { id, key } = newKey(20);
    let fail = true;
    const flaky = defineEndpoint({ ...toy, handler: async () => (fail ? Promise.reject(new Error('boom')) : { ok: true }) });
    expect((await callEndpoint(ctx, flaky, { key, requestId: 'retry-me' })).status).toBe(500);
    fail = false;
    expect((await callEndpoint(ctx, flaky, { key, requestId: 'retry-me' })).status).toBe(200);
    fail = true;
    expect((await callEndpoint(ctx, flaky, { key, requestId: 'retry-me' })).status).toBe(500);
    // Three charges of 3 under one request id: the first and the third refunded, the second kept.
    expect(remaining(id)).toBe(17);
    expect(ledger(id).filter((r) => r.reason === 'charge').map((r) => r.settled)).toEqual(['refunded', 'kept', 'refunded']);
  });

  it('answers 401 without a key and accepts a key record from an internal job', async () => {
    const none = await callEndpoint(ctx, toy, { key: undefined, requestId: 'anon' });
    expect(none.body).toEqual({ error: { code: 'missing_bearer_token', message: expect.any(String), request_id: 'anon' } });
    const { id } = newKey(5);
    const job = await callEndpoint(ctx, toy, { key: sqliteState(ctx).keys.findByIdNow(id)!, requestId: 'job-1' });
    expect(job.status).toBe(200);
    expect(remaining(id)).toBe(2);
  });
});

describe('requestIdOf', () => {
  it('keeps a well-formed client id and replaces anything else', () => {
    expect(requestIdOf('client-req-42')).toBe('client-req-42');
    expect(requestIdOf('a:b.c_d-9')).toBe('a:b.c_d-9');
    for (const bad of [undefined, '', 'has space', 'x'.repeat(129), 'é', 'a\nb']) expect(requestIdOf(bad)).toMatch(/^[0-9a-f-]{36}$/);
  });
});
