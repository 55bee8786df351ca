// The access log: one JSON line per request with its id, method, path and query string, status,
// duration, credits and key id, never the key; stack traces for unforeseen server errors only; level and file set by
// LOG_LEVEL / LOG_FILE.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../api/log';
import { startTestApi, type TestApi } from '../../helpers/api';
import { tempDir } from '../../helpers/samples';
import { sqliteState } from '../../helpers/state';

const lines: string[] = [];
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ logger: createLogger({ level: 'info', stream: { write: (l: string) => void lines.push(l) } }) });
});
afterAll(() => api.close());

/** The log lines of one request id, once its line is written (on the response's finish). */
async function linesOf(requestId: string): Promise<Array<Record<string, any>>> {
  for (let t = 0; t < 100; t++) {
    const found = lines.map((l) => JSON.parse(l)).filter((l) => l.request_id === requestId);
    if (found.length) return found;
    await new Promise((r) => setTimeout(r, 10));
  }
  return [];
}

describe('access log', () => {
  it('writes one line per request with id, method, path and query, status, duration, credits and key id, never the key', async () => {
    const key = api.key({ balance: 100 });
    const keyId = sqliteState(api.ctx).keys.findByKeyNow(key)!.id;
    const url = '/v1/stats/market?code_postal=33230&date_debut=2021-01-01&date_fin=2021-12-31';
    const r = await api.get(url, key, { 'X-Request-Id': 'log-ok-1' });
    expect(r.status).toBe(200);
    const found = await linesOf('log-ok-1');
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ level: 30, request_id: 'log-ok-1', req: { method: 'GET', url }, res: { status: 200 }, key_id: keyId, credits_used: 5 });
    expect(found[0].duration_ms).toEqual(expect.any(Number));
    expect(found[0].err).toBeUndefined();
    expect(lines.join('\n')).not.toContain(key);
  });

  it('logs a client mistake in one short line, without a stack', async () => {
    const key = api.key({ balance: 100 });
    await api.get('/v1/transactions?code_postal=33230&limit=0', key, { 'X-Request-Id': 'log-400' });
    await api.get('/v1/nothing', undefined, { 'X-Request-Id': 'log-404' });
    await fetch(`${api.url}/v1/transactions`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-request-id': 'log-json' }, body: '{"a":' });
    for (const [id, status] of [['log-400', 400], ['log-404', 404], ['log-json', 400]] as const) {
      const found = await linesOf(id);
      expect(found).toHaveLength(1);
      expect(found[0]).toMatchObject({ level: 30, res: { status } });
      expect(JSON.stringify(found[0])).not.toMatch(/stack|\.ts:\d+/);
    }
    // The key id and credits appear once the key is known; a refused request used none.
    expect((await linesOf('log-400'))[0]).toMatchObject({ credits_used: 0 });
  });

  it('logs an unforeseen server error at error level with its stack, and the refund as 0 credits', async () => {
    const key = api.key({ balance: 100 });
    api.ctx.cache.clear();
    const db = api.ctx.db;
    db.query = (() => Promise.reject(new Error('disk on fire'))) as typeof db.query;
    try {
      const r = await api.get('/v1/stats/market?code_postal=33230', key, { 'X-Request-Id': 'log-500' });
      expect(r.status).toBe(500);
    } finally {
      delete (db as Partial<{ query: unknown }>).query;
    }
    const [line] = await linesOf('log-500');
    expect(line).toMatchObject({ level: 50, res: { status: 500 }, credits_used: 0, err: { message: 'disk on fire' } });
    expect(line.err.stack).toContain('disk on fire');
  });
});

describe('createLogger', () => {
  it('appends to LOG_FILE at LOG_LEVEL and refuses an unknown level', () => {
    const file = path.join(tempDir('foncier-log-'), 'sub', 'api.log');
    const saved = { level: process.env.LOG_LEVEL, file: process.env.LOG_FILE };
    try {
      process.env.LOG_LEVEL = 'warn';
      process.env.LOG_FILE = file;
      const logger = createLogger();
      logger.info('not written');
      logger.warn('written');
      logger.flush();
      const written = fs.readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      expect(written.map((l) => l.msg)).toEqual(['written']);
      process.env.LOG_LEVEL = 'loud';
      expect(() => createLogger()).toThrow(/LOG_LEVEL/);
    } finally {
      for (const [k, v] of [['LOG_LEVEL', saved.level], ['LOG_FILE', saved.file]] as const) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });
});
