// Test harness for the API: a data folder over a shared dataset (test/helpers/data.ts; by default the real DVF
// samples through the real pipeline and marts), a context with a FixedClock, the app on an ephemeral loopback port, and helpers to create keys and call endpoints.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from '../../api/app';
import { answerParserErrors } from '../../api/server';
import { FixedClock } from '../../api/clock';
import { closeContext, createContext, type AppContext, type Limits } from '../../api/context';
import { createLogger, type Logger } from '../../api/log';
import type { PlanName } from '../../api/store';
import { testData } from './data';
import { sqliteState } from './state';

export interface TestApi {
  url: string;
  ctx: AppContext;
  clock: FixedClock;
  dataRoot: string;
  /** A new active key; `balance` credits for the month (default: the plan's allotment). */
  key(opts?: { plan?: PlanName; balance?: number }): string;
  get(path: string, key?: string, headers?: Record<string, string>): Promise<{ status: number; body: any; headers: Headers }>;
  close(): Promise<void>;
}

/** A private, writable copy of the shared sample dataset (test/helpers/data.ts; prefer testData('sample') to only read it). */
export const buildSampleData = (): Promise<string> => testData('sample', { writable: true });

/** A private, writable copy of the shared demo dataset (test/helpers/data.ts; prefer testData('demo') to only read it). */
export const buildDemoData = (): Promise<string> => testData('demo', { writable: true });

export async function startTestApi(opts: { dataRoot?: string; now?: string; limits?: Partial<Limits>; logger?: Logger; registry?: AppContext['registry'] } = {}): Promise<TestApi> {
  const dataRoot = opts.dataRoot ?? (await testData('sample'));
  const clock = new FixedClock(opts.now ?? '2022-06-15T12:00:00Z');
  const ctx = createContext({ dataRoot, clock, limits: opts.limits, db: { watchIntervalMs: 50 }, logger: opts.logger ?? createLogger({ level: 'silent' }), registry: opts.registry });
  await ctx.db.start();
  const server: Server = await new Promise((resolve) => {
    const s = createApp(ctx).listen(0, '127.0.0.1', () => resolve(s));
  });
  answerParserErrors(server);
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    ctx,
    clock,
    dataRoot,
    key: ({ plan = 'Scale', balance } = {}) => sqliteState(ctx).keys.createKeyNow({ plan, balance }).key,
    async get(path, key, headers = {}) {
      const res = await fetch(url + path, { headers: { ...(key ? { 'X-API-Key': key } : {}), ...headers } });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
    },
    async close() {
      await new Promise((r) => server.close(r));
      await closeContext(ctx);
    },
  };
}

/** The key's spendable balance, read independently of the API response. */
export function balanceOf(api: TestApi, rawKey: string): number {
  const rec = sqliteState(api.ctx).keys.findByKeyNow(rawKey)!;
  return sqliteState(api.ctx).credits.balanceNow(rec.id)!.remaining;
}
