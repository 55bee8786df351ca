// The at-capacity gate (api/capacity.ts): slots handed over in arrival order, a bounded wait, and a refusal that
// writes nothing to the state (no charge, no rate-limit hit, no request-log row).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Capacity } from '../../../api/capacity';
import { startTestApi, balanceOf, type TestApi } from '../../helpers/api';

describe('Capacity', () => {
  it('grants up to the limit at once, then hands freed slots to waiters in arrival order', async () => {
    const c = new Capacity(() => 2, () => 1000);
    expect([c.acquire(), c.acquire()]).toEqual([true, true]);
    const order: string[] = [];
    const a = Promise.resolve(c.acquire()).then((g) => order.push(`a:${g}`));
    const b = Promise.resolve(c.acquire()).then((g) => order.push(`b:${g}`));
    expect(c.waiters).toBe(2);
    c.release();
    await a;
    expect(order).toEqual(['a:true']);
    expect(c.queries).toBe(2);
    c.release();
    await b;
    expect(order).toEqual(['a:true', 'b:true']);
    c.release();
    c.release();
    expect([c.queries, c.waiters]).toEqual([0, 0]);
  });

  it('refuses after the wait when no slot frees, and at once without a wait', async () => {
    const c = new Capacity(() => 1, () => 30);
    expect(c.acquire()).toBe(true);
    const t0 = performance.now();
    expect(await c.acquire()).toBe(false);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(25);
    expect(c.waiters).toBe(0);
    expect(new Capacity(() => 1, () => 0).acquire()).toBe(true);
    const none = new Capacity(() => 0, () => 0);
    expect(none.acquire()).toBe(false);
  });

  it('a newcomer never overtakes a waiter', async () => {
    const c = new Capacity(() => 1, () => 1000);
    c.acquire();
    const first = c.acquire();
    c.release(); // handed to `first`
    expect(await first).toBe(true);
    const late = c.acquire(); // the slot is held by `first`: waits
    expect(late).toBeInstanceOf(Promise);
    c.release();
    expect(await late).toBe(true);
    c.release();
  });
});

describe('a request refused at capacity', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi({ limits: { capacityWaitMs: 20 } });
  });
  afterAll(() => api.close());

  it('answers 503 at_capacity after the wait and writes nothing: no charge, no rate-limit hit, no request-log row', async () => {
    const key = api.key({ balance: 100 });
    const first = await api.get('/v1/stats/market?code_postal=33230&date_debut=2021-01-01', key);
    expect(first.status).toBe(200);
    const remaining = Number(first.headers.get('x-ratelimit-remaining'));
    const before = balanceOf(api, key);
    const logged = await api.ctx.state.requestLog.recent((await api.ctx.state.keys.findByKey(key))!.id, 100);

    api.ctx.active.queries = api.ctx.limits.maxConcurrentQueries;
    try {
      const refused = await api.get('/v1/stats/market?code_postal=33230&date_debut=2021-02-01', key, { 'x-request-id': 'refused-1' });
      expect(refused.status).toBe(503);
      expect(refused.body.error.code).toBe('at_capacity');
      expect(refused.headers.get('retry-after')).toBe('2');
      expect(refused.headers.get('x-ratelimit-remaining')).toBeNull();
    } finally {
      api.ctx.active.queries = 0;
    }
    expect(balanceOf(api, key)).toBe(before);
    // The log is written after the answer: a later request's row shows the refused one was skipped, not pending.
    const next = await api.get('/v1/stats/market?code_postal=33230&date_debut=2021-03-01', key);
    expect(next.status).toBe(200);
    expect(Number(next.headers.get('x-ratelimit-remaining'))).toBe(remaining - 1);
    await new Promise((r) => setTimeout(r, 50));
    const after = await api.ctx.state.requestLog.recent((await api.ctx.state.keys.findByKey(key))!.id, 100);
    expect(after.length).toBe(logged.length + 1);
    expect(after.map((r) => r.request_id)).not.toContain('refused-1');
  });

  it('waits for a slot freed within the wait instead of refusing', async () => {
    const key = api.key({ balance: 100 });
    api.ctx.active.queries = api.ctx.limits.maxConcurrentQueries;
    const pending = api.get('/v1/stats/market?code_postal=33230&date_debut=2021-04-01', key);
    await new Promise((r) => setTimeout(r, 5));
    expect(api.ctx.active.waiters).toBe(1);
    api.ctx.active.release(); // one of the "held" slots frees: handed to the waiting request
    const r = await pending;
    api.ctx.active.queries = 0;
    expect(r.status).toBe(200);
  });
});
