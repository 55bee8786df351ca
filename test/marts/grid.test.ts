// The grid nearest-neighbour macro (grid_cells, lib/distance.ts): complete against a brute-force search, and the three
// models that use it (bdnb_ventes, dpe_ventes, dpe_ventes_200m) give the same rows as the hand-written 3 × 3 blocks
// they replaced, frozen in test/marts/grid-before/ and built beside them on the demo dataset.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GRID_CELLS_MACRO_SQL, HAVERSINE_MACRO_SQL } from '../../lib/distance';
import { all, DuckDBInstance, openMemory, run } from '../../lib/duck';
import { buildMarts } from '../../marts/runner';
import { testData } from '../helpers/data';

describe('grid_cells', () => {
  it('finds every pair of points within the radius that a brute-force search finds, and only in the 3 × 3 block', async () => {
    const { instance, conn } = await openMemory({ threads: 1 });
    try {
      await run(conn, HAVERSINE_MACRO_SQL);
      await run(conn, GRID_CELLS_MACRO_SQL);
      // Dense random points around Bordeaux, Lille (north) and Saint-Denis de La Réunion (south, negative latitude),
      // and on both sides of the Greenwich meridian (negative longitudes).
      await run(conn, `create table p as
        select row_number() over () as i, c.lat + (random() - 0.5) * 0.01 as lat, c.lon + (random() - 0.5) * 0.01 as lon
        from (values (44.84, -0.58), (51.05, 3.0), (-20.88, 55.45), (48.0, 0.0)) c(lat, lon), range(400)`);
      for (const radius of [50, 200]) {
        const brute = await all(conn, `select a.i as a, b.i as b from p a, p b
          where a.i <> b.i and haversine_m(a.lat, a.lon, b.lat, b.lon) <= ${radius} order by all`);
        const grid = await all(conn, `select a.i as a, b.i as b
          from (select i, lat, lon, unnest(grid_cells(lat, lon, ${radius}, 1)) as cell from p) a
          join (select i, lat, lon, unnest(grid_cells(lat, lon, ${radius}, 0)) as cell from p) b using (cell)
          where a.i <> b.i and haversine_m(a.lat, a.lon, b.lat, b.lon) <= ${radius} order by all`);
        expect(brute.length, `pairs within ${radius} m`).toBeGreaterThan(300);
        expect(grid).toEqual(brute);
      }
      const [{ own, block }] = await all<{ own: number; block: number }>(conn,
        'select len(grid_cells(44.8, -0.5, 50, 0)) as own, len(list_distinct(grid_cells(44.8, -0.5, 50, 1))) as block');
      expect([own, block]).toEqual([1, 9]);
    } finally {
      conn.closeSync();
      instance.closeSync();
    }
  });
});

describe('models using grid_cells, against their former hand-written grids', () => {
  it('bdnb_ventes, dpe_ventes and dpe_ventes_200m have exactly the rows of the frozen former SQL on the demo data', async () => {
    const dataRoot = await testData('demo', { writable: true });
    const { servingFile } = await buildMarts({ dataRoot, modelsDirs: [path.join(import.meta.dirname, 'grid-before')] });
    const instance = await DuckDBInstance.create(servingFile, { access_mode: 'READ_ONLY' });
    const conn = await instance.connect();
    try {
      const count = async (sql: string) => Number(Object.values((await all(conn, sql))[0])[0]);
      for (const model of ['bdnb_ventes', 'dpe_ventes', 'dpe_ventes_200m']) {
        const before = `${model}_grid_before`;
        expect(await count(`select count(*) from ${model}`), model).toBe(await count(`select count(*) from ${before}`));
        expect(await count(`select count(*) from (select * from ${model} except all select * from ${before})`), model).toBe(0);
        expect(await count(`select count(*) from (select * from ${before} except all select * from ${model})`), model).toBe(0);
      }
      // The searches the grid serves did match something: sales placed by distance, crossings found beyond 50 m.
      expect(await count(`select count(*) from bdnb_ventes where match_method = 'distance'`)).toBeGreaterThan(100);
      expect(await count(`select count(*) from dpe_ventes where methode_match = 'proximity'`)).toBeGreaterThan(100);
      expect(await count('select count(*) from dpe_ventes_200m where distance_m > 50')).toBeGreaterThan(100);
    } finally {
      conn.closeSync();
      instance.closeSync();
    }
  }, 600_000); // the demo dataset (when this file builds it first), then every model again
});
