// The valuation horizon's département (lib/valuation/reference.ts): the one holding most of the sales of the subject's
// 0.01° cell, else, in an empty cell, the nearest loaded sale's, found in a small box first and in the full box when the
// small box cannot vouch for it. Checked against a brute force; the cells mart against an independent count.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { all, DuckDBInstance, openMemory, run, type Params } from '../../../lib/duck';
import { currentServingFile } from '../../../lib/serving';
import { referenceDate } from '../../../lib/valuation/reference';
import { testData } from '../../helpers/data';

let db: Awaited<ReturnType<typeof openMemory>>;
const LAT = 45;
const LON = 5;
const COS = Math.cos((LAT * Math.PI) / 180);
// [id, département, Δlat, Δlon × cos] around the subject (degrees, latitude-scaled)
const SALES: Array<[number, string, number, number]> = [
  [1, '01', 0.0085, 0.0085], // inside the 0.01° box, at 0.0120
  [2, '02', 0.0105, 0], // outside the box, at 0.0105: the nearest
  [3, '03', 0.05, 0.05],
  [4, '04', -0.3, 0], // beyond the full box
  // a cell of their own, 0.2° north: two sales of 05 and one of 06 (05 holds most), and a cell with one each of 07 and
  // 08 (a tie: the smallest code)
  [5, '05', 0.2001, 0.0001], [6, '05', 0.2002, 0.0002], [7, '06', 0.2003, 0.0003],
  [8, '08', 0.2001, 0.0201 * COS], [9, '07', 0.2002, 0.0202 * COS],
];
const position = ([, , dLat, dLonScaled]: (typeof SALES)[number]) => [LAT + dLat, LON + dLonScaled / COS];
const cellOf = (lat: number, lon: number) => `${Math.floor(lat * 100)},${Math.floor(lon * 100)}`;

beforeAll(async () => {
  db = await openMemory();
  await run(db.conn, 'create table valuation_ventes (id bigint, code_departement varchar, latitude double, longitude double)');
  await run(db.conn, 'create table ventes_horizon_departements (code_departement varchar, derniere_date date)');
  await run(db.conn, 'create table valuation_reference_cellules (cell_lat integer, cell_lon integer, code_departement varchar, derniere_date date)');
  for (const sale of SALES) {
    const [id, dep] = sale;
    const [lat, lon] = position(sale);
    await run(db.conn, 'insert into valuation_ventes values ($id, $dep, $lat, $lon)', { id, dep, lat, lon });
  }
  for (const dep of new Set(SALES.map(([, d]) => d))) {
    await run(db.conn, 'insert into ventes_horizon_departements values ($dep, $d)', { dep, d: `2025-${dep}-15` });
  }
  // the cells as the mart defines them, counted here
  const counts = new Map<string, Map<string, number>>();
  for (const sale of SALES) {
    const cell = cellOf(...(position(sale) as [number, number]));
    const c = counts.get(cell) ?? new Map<string, number>();
    counts.set(cell, c.set(sale[1], (c.get(sale[1]) ?? 0) + 1));
  }
  for (const [cell, c] of counts) {
    const [dep] = [...c].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0];
    const [cellLat, cellLon] = cell.split(',').map(Number);
    await run(db.conn, 'insert into valuation_reference_cellules values ($a, $b, $dep, $d)', { a: cellLat, b: cellLon, dep, d: `2025-${dep}-15` });
  }
});
afterAll(() => {
  db?.conn.closeSync();
  db?.instance.closeSync();
});

/** The département of the subject's cell's sales (most of them, then the smallest code), else of its nearest sale. */
function bruteForce(lat: number, lon: number): string | null {
  const inCell = SALES.filter((sale) => cellOf(...(position(sale) as [number, number])) === cellOf(lat, lon)).map(([, d]) => d);
  if (inCell.length) {
    const n = (d: string) => inCell.filter((x) => x === d).length;
    return [...new Set(inCell)].sort((a, b) => n(b) - n(a) || a.localeCompare(b))[0];
  }
  let best: [string, number] | null = null;
  for (const sale of SALES) {
    const [, dep] = sale;
    const [sLat, sLon] = position(sale);
    if (Math.abs(sLat - lat) > 0.1 || Math.abs(sLon - lon) * COS > 0.1) continue;
    const d = Math.hypot(sLat - lat, (sLon - lon) * COS);
    if (!best || d < best[1]) best = [dep, d];
  }
  return best?.[0] ?? null;
}

describe('referenceDate', () => {
  const zone = (lat: number, lon: number) => ({ latitude: lat, longitude: lon, codePostal: null, communeCodes: [] });
  const counted = () => {
    const calls: string[] = [];
    const query = (sql: string, params: Params) => {
      calls.push(sql);
      return all(db.conn, sql, params);
    };
    return { calls, query };
  };

  it('answers from the cell when it holds sales: the département with most of them, the smallest code on a tie', async () => {
    for (const [dLat, dLonScaled, expected] of [[0.2005, 0.0005, '05'], [0.2005, 0.0205 * COS, '07']] as const) {
      const { calls, query } = counted();
      const lat = LAT + dLat;
      const lon = LON + dLonScaled / COS;
      const ref = await referenceDate(query, zone(lat, lon), '2026-01-01');
      expect(bruteForce(lat, lon)).toBe(expected);
      expect(ref).toEqual({ date: `2025-${expected}-15`, departement: expected, lagging: true });
      expect(calls.length).toBe(1);
    }
    // the sale of 01 shares its cell with no other
    const ref = await referenceDate(counted().query, zone(LAT + 0.0085, LON + 0.008 / COS), '2026-01-01');
    expect(ref.departement).toBe('01');
  });

  it('in an empty cell, finds the nearest sale outside the small box when the small box only holds a farther one', async () => {
    const { calls, query } = counted();
    const ref = await referenceDate(query, zone(LAT, LON), '2026-01-01');
    expect(bruteForce(LAT, LON)).toBe('02');
    expect(ref).toEqual({ date: '2025-02-15', departement: '02', lagging: true });
    expect(calls.length).toBe(3);
  });

  it('in an empty cell, answers from the small box when its nearest sale lies within it', async () => {
    const { calls, query } = counted();
    const lat = LAT + 0.0105; // the cell north of the sale of 01, which is 0.002 away
    const lon = LON + 0.0085 / COS;
    expect(cellOf(lat, lon)).not.toBe(cellOf(LAT + 0.0085, LON + 0.0085 / COS));
    const ref = await referenceDate(query, zone(lat, lon), '2026-01-01');
    expect(ref.departement).toBe(bruteForce(lat, lon));
    expect(ref.departement).toBe('01');
    expect(calls.length).toBe(2);
  });

  it('agrees with the brute force on a grid of subjects', async () => {
    for (let i = -6; i <= 6; i++) {
      for (let j = -6; j <= 6; j++) {
        const lat = LAT + i * 0.004;
        const lon = LON + (j * 0.004) / COS;
        const ref = await referenceDate(counted().query, zone(lat, lon), '2026-01-01');
        expect(ref.departement, `${i},${j}`).toBe(bruteForce(lat, lon));
      }
    }
  });
});

describe('valuation_reference_cellules on the demo data', () => {
  it('gives each 0.01° cell with sales the département holding most of them, as counted here from valuation_ventes', async () => {
    const instance = await DuckDBInstance.create(currentServingFile(await testData('demo'))!, { access_mode: 'READ_ONLY' });
    const conn = await instance.connect();
    try {
      const sales = await all<{ latitude: number; longitude: number; code_departement: string }>(conn,
        'select latitude, longitude, code_departement from valuation_ventes where latitude is not null and longitude is not null and code_departement is not null');
      const horizon = new Map((await all<{ code_departement: string; d: string }>(conn, 'select code_departement, derniere_date::VARCHAR d from ventes_horizon_departements')).map((r) => [r.code_departement, r.d]));
      const counts = new Map<string, Map<string, number>>();
      for (const s of sales) {
        const cell = cellOf(s.latitude, s.longitude);
        const c = counts.get(cell) ?? new Map<string, number>();
        counts.set(cell, c.set(s.code_departement, (c.get(s.code_departement) ?? 0) + 1));
      }
      const expected = [...counts].map(([cell, c]) => {
        const [dep] = [...c].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0];
        return `${cell} ${dep} ${[...c.values()].reduce((a, b) => a + b, 0)} ${horizon.get(dep)}`;
      }).sort();
      const mart = (await all<{ k: string }>(conn,
        `select concat_ws(' ', cell_lat || ',' || cell_lon, code_departement, nb_ventes, derniere_date::VARCHAR) k from valuation_reference_cellules`)).map((r) => r.k).sort();
      expect(sales.length).toBeGreaterThan(1000);
      expect(mart).toEqual(expected);
    } finally {
      conn.closeSync();
      instance.closeSync();
    }
  });
});
