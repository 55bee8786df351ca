// The valuation horizon's département (lib/valuation/reference.ts): the nearest loaded sale's, found in a small box
// first and in the full box when the small box cannot vouch for it. Checked against a brute-force nearest sale.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { all, openMemory, run, type Params } from '../lib/duck';
import { referenceDate } from '../lib/valuation/reference';

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
];

beforeAll(async () => {
  db = await openMemory();
  await run(db.conn, 'create table valuation_ventes (id bigint, code_departement varchar, latitude double, longitude double)');
  await run(db.conn, 'create table ventes_horizon_departements (code_departement varchar, derniere_date date)');
  for (const [id, dep, dLat, dLonScaled] of SALES) {
    await run(db.conn, 'insert into valuation_ventes values ($id, $dep, $lat, $lon)', { id, dep, lat: LAT + dLat, lon: LON + dLonScaled / COS });
    await run(db.conn, 'insert into ventes_horizon_departements values ($dep, $d)', { dep, d: `2025-0${id}-15` });
  }
});
afterAll(() => {
  db?.conn.closeSync();
  db?.instance.closeSync();
});

function bruteForce(lat: number, lon: number): string | null {
  let best: [string, number] | null = null;
  for (const [, dep, dLat, dLonScaled] of SALES) {
    const [sLat, sLon] = [LAT + dLat, LON + dLonScaled / COS];
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

  it('finds the nearest sale outside the small box when the small box only holds a farther one', async () => {
    const { calls, query } = counted();
    const ref = await referenceDate(query, zone(LAT, LON), '2026-01-01');
    expect(bruteForce(LAT, LON)).toBe('02');
    expect(ref).toEqual({ date: '2025-02-15', departement: '02', lagging: true });
    expect(calls.length).toBe(2);
  });

  it('answers from the small box alone when its nearest sale lies within it', async () => {
    const { calls, query } = counted();
    const lat = LAT + 0.0085;
    const lon = LON + 0.0080 / COS;
    const ref = await referenceDate(query, zone(lat, lon), '2026-01-01');
    expect(ref.departement).toBe(bruteForce(lat, lon));
    expect(ref.departement).toBe('01');
    expect(calls.length).toBe(1);
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
