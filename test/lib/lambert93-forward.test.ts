// lib/lambert93.ts's SQL forward projection (WGS84 → Lambert-93, used by the France-scale data generator): checked
// against proj4 (the maintained reference) over a grid covering metropolitan France, and back through the import's
// inverse (lib/lambert93.ts), to the centimetre.
import proj4 from 'proj4';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { all, openMemory, run, type DuckDBConnection, type DuckDBInstance } from '../../lib/duck';
import { lambert93Macros, wgs84ToLambert93Sql } from '../../lib/lambert93';

proj4.defs('EPSG:2154', '+proj=lcc +lat_0=46.5 +lon_0=3 +lat_1=49 +lat_2=44 +x_0=700000 +y_0=6600000 +ellps=GRS80 +towgs84=0,0,0,0,0,0,0 +units=m +no_defs');

let db: { instance: DuckDBInstance; conn: DuckDBConnection };
beforeAll(async () => {
  db = await openMemory({ threads: 1, memoryLimit: '512MB' });
  await run(db.conn, lambert93Macros());
});
afterAll(() => db.instance.closeSync());

describe('WGS84 → Lambert-93 in SQL', () => {
  it('agrees with proj4 and with the import inverse to 2 cm over metropolitan France', async () => {
    const { x, y } = wgs84ToLambert93Sql('lat', 'lon');
    const rows = await all<{ lat: number; lon: number; x: number; y: number; lat2: number; lon2: number }>(db.conn, `
      SELECT lat, lon, ${x} AS x, ${y} AS y, lambert93_lat(${x}, ${y}) AS lat2, lambert93_lon(${x}, ${y}) AS lon2
      FROM (SELECT 41.3 + 0.37 * i AS lat FROM range(27) t(i)), (SELECT -5.2 + 0.53 * j AS lon FROM range(28) t(j))`);
    expect(rows.length).toBe(27 * 28);
    for (const r of rows) {
      const [px, py] = proj4('WGS84', 'EPSG:2154', [r.lon, r.lat]);
      expect(Math.abs(r.x - px)).toBeLessThan(0.02);
      expect(Math.abs(r.y - py)).toBeLessThan(0.02);
      // degrees → metres: 1e-7° of latitude ≈ 1.1 cm
      expect(Math.abs(r.lat2 - r.lat) * 111_320).toBeLessThan(0.02);
      expect(Math.abs(r.lon2 - r.lon) * 111_320 * Math.cos((r.lat * Math.PI) / 180)).toBeLessThan(0.02);
    }
  });
});
