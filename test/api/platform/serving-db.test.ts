// The API's serving database: read-only hardening, time budget, and the hot swap to a new build without a failed query.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { QueryTimeoutError, ServingDb } from '../../../api/db';
import { buildMarts } from '../../../marts/runner';
import { runSource } from '../../../pipeline/run';
import { sampleTree, tempDir } from '../../helpers/samples';

describe('ServingDb', () => {
  const data = tempDir();
  const db = new ServingDb({ dataRoot: data, watchIntervalMs: 20 });
  beforeAll(async () => {
    await runSource({ source: 'dvf', fromDir: sampleTree(), annees: [2021], departements: ['33'], dataRoot: data });
    await buildMarts({ dataRoot: data });
    await db.start();
  });
  afterAll(() => db.close());

  it('binds parameters and never lets a query touch another file or unlock the configuration', async () => {
    const [r] = await db.query<{ n: number }>('select count(*) as n from ventes where code_commune = $c', { c: '33001' });
    expect(r.n).toBeGreaterThan(0);
    await expect(db.query(`select * from read_csv('/etc/hostname')`)).rejects.toThrow(/disabled by configuration/);
    await expect(db.query(`copy ventes to '${data}/leak.csv'`)).rejects.toThrow(/disabled by configuration/);
    await expect(db.query('set enable_external_access = true')).rejects.toThrow(/locked/);
  });

  it('interrupts a query past its time budget', async () => {
    await expect(db.query('select count(*) from range(20000000000)', undefined, { timeoutMs: 100 })).rejects.toBeInstanceOf(QueryTimeoutError);
  });

  it('switches to a new build while queries run, without a failed query', async () => {
    const first = db.file;
    let stop = false;
    let ok = 0;
    const errors: unknown[] = [];
    const load = Promise.all(Array.from({ length: 6 }, async () => {
      while (!stop) {
        try {
          await db.query('select count(*) as n from ventes');
          ok++;
        } catch (e) {
          errors.push(e);
        }
      }
    }));
    await runSource({ source: 'dvf', format: 'dgfip', fromDir: sampleTree(), annees: [2020], departements: ['01'], dataRoot: data });
    await buildMarts({ dataRoot: data });
    const deadline = Date.now() + 5000;
    while (db.file === first && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 100));
    stop = true;
    await load;
    expect(db.file).not.toBe(first);
    expect(errors).toEqual([]);
    expect(ok).toBeGreaterThan(10);
    const [r] = await db.query<{ n: number }>(`select count(*) as n from ventes where code_departement = '01'`);
    expect(r.n).toBeGreaterThan(0);
  });

  it('fires the on-swap listeners after it picked up a new build, never for the first one, isolating their failures', async () => {
    const errors: Error[] = [];
    const watcher = new ServingDb({ dataRoot: data, watchIntervalMs: 20, onSwapError: (e) => errors.push(e) });
    const seen: Array<{ file: string; served: string | undefined; n: number }> = [];
    watcher.onSwap(async (file) => {
      // the listener runs on the new generation: a query it makes reads the new data
      const [r] = await watcher.query<{ n: number }>('select count(*) as n from ventes');
      seen.push({ file, served: watcher.file, n: r.n });
    });
    watcher.onSwap(() => {
      throw new Error('listener bug');
    });
    const removed = vi.fn();
    watcher.onSwap(removed)();
    await watcher.start();
    const first = watcher.file;
    expect(seen).toEqual([]);
    try {
      const report = await buildMarts({ dataRoot: data });
      const deadline = Date.now() + 5000;
      while (seen.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(seen.map((s) => s.file)).toEqual([report.servingFile]);
      expect(seen[0].served).toBe(report.servingFile);
      expect(seen[0].file).not.toBe(first);
      expect(seen[0].n).toBeGreaterThan(0);
      expect(errors.map((e) => e.message)).toEqual(['listener bug']);
      expect(removed).not.toHaveBeenCalled();
      // the failing listener did not stop the swap: queries run on the new file
      await expect(watcher.query('select 1')).resolves.toHaveLength(1);
    } finally {
      await watcher.close();
    }
  });
});
