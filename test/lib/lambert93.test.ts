// lib/lambert93.ts: the SQL inverse Lambert-93 against proj4 (the maintained reference library) on every point of the
// real DPE samples that carry Lambert-93 coordinates, to at most 1 m.
import path from 'node:path';
import proj4 from 'proj4';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { samplesDir } from '../../lib/config';
import { all, lit, openMemory, run, type DuckDBConnection, type DuckDBInstance } from '../../lib/duck';
import { lambert93Macros } from '../../lib/lambert93';

// EPSG:2154 as published in the EPSG registry (towgs84 zero: RGF93 ≈ WGS84).
proj4.defs('EPSG:2154', '+proj=lcc +lat_0=46.5 +lon_0=3 +lat_1=49 +lat_2=44 +x_0=700000 +y_0=6600000 +ellps=GRS80 +towgs84=0,0,0,0,0,0,0 +units=m +no_defs');

const LYON = path.join(samplesDir, 'dpe', 'dpe-v2-logements-neufs_lyon8_69388.csv.gz');
const LOZERE = path.join(samplesDir, 'dpe', 'dpe-v2-existants+neufs_lozere48_R-reexport.csv.gz');

let db: { instance: DuckDBInstance; conn: DuckDBConnection };
beforeAll(async () => {
  db = await openMemory({ threads: 1, memoryLimit: '512MB' });
  await run(db.conn, lambert93Macros());
});
afterAll(() => db.instance.closeSync());

/** Great-circle distance in metres (spherical Earth, plenty for metre-level checks). */
function haversineMeters(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const r = Math.PI / 180;
  const h = Math.sin(((lat2 - lat1) * r) / 2) ** 2 + Math.cos(lat1 * r) * Math.cos(lat2 * r) * Math.sin(((lon2 - lon1) * r) / 2) ** 2;
  return 2 * 6_371_008.8 * Math.asin(Math.sqrt(h));
}

interface Pt { x: number; y: number; lat: number; lon: number; geopoint?: string | null }

describe('Lambert-93 → WGS84 in SQL', () => {
  it('agrees with proj4 to 1 m on every point of the Lyon 8e and Lozère samples', async () => {
    const lyon = await all<Pt>(db.conn, `
      SELECT x, y, lambert93_lat(x, y) AS lat, lambert93_lon(x, y) AS lon FROM (
        SELECT try_cast("Coordonnée_cartographique_X_(BAN)" AS DOUBLE) AS x, try_cast("Coordonnée_cartographique_Y_(BAN)" AS DOUBLE) AS y
        FROM read_csv(${lit(LYON)}, header = true, all_varchar = true)) WHERE x IS NOT NULL AND y IS NOT NULL`);
    // The R re-export has one unnamed leading column: read positionally (X is the 15th name, Y the 29th, shifted by one).
    const lozere = await all<Pt>(db.conn, `
      SELECT x, y, lambert93_lat(x, y) AS lat, lambert93_lon(x, y) AS lon, geopoint FROM (
        SELECT try_cast(column15 AS DOUBLE) AS x, try_cast(column29 AS DOUBLE) AS y, column25 AS geopoint
        FROM read_csv(${lit(LOZERE)}, header = false, skip = 1, all_varchar = true, delim = ';', null_padding = true))
      WHERE x IS NOT NULL AND y IS NOT NULL`);
    expect(lyon.length).toBeGreaterThan(2800);
    expect(lozere.length).toBeGreaterThan(2500);
    let worst = 0;
    for (const p of [...lyon, ...lozere]) {
      const [lon, lat] = proj4('EPSG:2154', 'WGS84', [p.x, p.y]);
      worst = Math.max(worst, haversineMeters(lat, lon, p.lat, p.lon));
    }
    expect(worst).toBeLessThanOrEqual(1);
    // And ADEME's own `_geopoint` (lat,lon) of the same rows lies on the same spot (their conversion, a few metres).
    const withGeo = lozere.filter((p) => p.geopoint);
    const far = withGeo.filter((p) => {
      const [glat, glon] = p.geopoint!.split(',').map(Number);
      return haversineMeters(glat, glon, p.lat, p.lon) > 5;
    });
    expect(withGeo.length).toBeGreaterThan(2500);
    expect(far.length / withGeo.length).toBeLessThan(0.01);
  });

  it('returns NULL for missing coordinates instead of failing', async () => {
    const [r] = await all<{ lat: number | null; lon: number | null }>(db.conn, 'SELECT lambert93_lat(NULL::DOUBLE, 6600000) AS lat, lambert93_lon(700000, NULL::DOUBLE) AS lon');
    expect(r).toEqual({ lat: null, lon: null });
  });

  it('maps the projection origin to 46.5° N, 3° E', async () => {
    const [r] = await all<{ lat: number; lon: number }>(db.conn, 'SELECT lambert93_lat(700000, 6600000) AS lat, lambert93_lon(700000, 6600000) AS lon');
    expect(r.lat).toBeCloseTo(46.5, 9);
    expect(r.lon).toBeCloseTo(3, 9);
  });
});
