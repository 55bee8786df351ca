// The PostgreSQL side of the throughput bench (lab/bench/postgres-side.ts) computes what GET /v1/stats/market computes:
// on the demo data loaded into a local PostgreSQL, random queries of both mixes answered by the prepared statements
// equal the same aggregates computed by DuckDB over the serving file's `ventes`.
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { all, DuckDBInstance, type DuckDBConnection } from '../../lib/duck';
import { currentServingFile } from '../../lib/serving';
import { testData } from '../../test/helpers/data';
import { mixKind, mixParams, mixQueries, mixSql, preparePostgres, runPostgresMix, type MixQuery } from '../bench/postgres-side';

type Answer = Record<string, number | null>;

let dataDir: string;
let servingFile: string;
let side: Awaited<ReturnType<typeof preparePostgres>>;
let clusterDir: string;
let duck: { instance: DuckDBInstance; conn: DuckDBConnection };

beforeAll(async () => {
  dataDir = await testData('demo');
  servingFile = currentServingFile(dataDir)!;
  // Under /tmp itself with a mode the server's account can enter (not the test's private temporary folder).
  clusterDir = fs.mkdtempSync(path.join('/tmp', 'foncier-pgside-'));
  fs.chmodSync(clusterDir, 0o755);
  side = await preparePostgres({ servingFile, dataDir, clusterDir, log: () => undefined });
  const instance = await DuckDBInstance.create(servingFile, { access_mode: 'READ_ONLY' });
  duck = { instance, conn: await instance.connect() };
}, 600_000);

afterAll(async () => {
  duck?.conn.closeSync();
  duck?.instance.closeSync();
  await side?.stop();
  if (clusterDir) fs.rmSync(clusterDir, { recursive: true, force: true });
});

/** The same statistics, independently, in DuckDB (median = the mean of the two middle values of an even count). */
async function duckAnswer(q: MixQuery): Promise<Answer> {
  const kind = mixKind(q);
  const [zone, types, from, to] = mixParams(q);
  const [r] = await all<Answer>(duck.conn,
    `select count(*) as count,
       median(valeur_fonciere) as p_med, avg(valeur_fonciere) as p_avg, min(valeur_fonciere) as p_min, max(valeur_fonciere) as p_max,
       median(prix_m2) as m_med, avg(prix_m2) as m_avg, min(prix_m2) as m_min, max(prix_m2) as m_max,
       median(surface_reelle_bati) filter (surface_reelle_bati > 0) as s_med, avg(surface_reelle_bati) filter (surface_reelle_bati > 0) as s_avg,
       min(surface_reelle_bati) filter (surface_reelle_bati > 0) as s_min, max(surface_reelle_bati) filter (surface_reelle_bati > 0) as s_max
     from ventes
     where ${kind} = $zone and type_local in (${types.map((_, i) => `$type${i}`).join(', ')}) and date_mutation between $from::DATE and $to::DATE
       and not is_bulk_sale and not is_outlier and not is_vefa`,
    { zone, from, to, ...Object.fromEntries(types.map((t, i) => [`type${i}`, t])) });
  return r;
}

describe('the PostgreSQL side of the throughput bench', () => {
  it('loads every sale of the serving file, and a restart reuses the loaded cluster', async () => {
    const [{ n }] = await all<{ n: number }>(duck.conn, 'select count(*) as n from ventes');
    expect(side.rows).toBe(n);
    expect(side.reused).toBe(false);
    await side.stop();
    side = await preparePostgres({ servingFile, dataDir, clusterDir, log: () => undefined });
    expect(side).toMatchObject({ reused: true, rows: n });
  });

  it('answers 60 random queries of both mixes as DuckDB does over the same sales', async () => {
    const [{ cps, deps }] = await all<{ cps: string[]; deps: string[] }>(duck.conn,
      'select list(distinct code_postal order by code_postal) as cps, list(distinct code_departement order by code_departement) as deps from ventes where code_postal is not null');
    const queries = [...mixQueries(cps, 'code_postal', 30, 7), ...mixQueries(deps, 'code_departement', 30, 8)];
    const client = new pg.Client({ connectionString: side.url });
    await client.connect();
    let nonEmpty = 0;
    try {
      for (const q of queries) {
        const kind = mixKind(q);
        const { rows: [got] } = await client.query<Answer>({ name: `check_${kind}`, text: mixSql(kind), values: mixParams(q) });
        const want = await duckAnswer(q);
        if (want.count) nonEmpty++;
        expect(Object.keys(got).sort(), JSON.stringify(q)).toEqual(Object.keys(want).sort());
        for (const [field, w] of Object.entries(want)) {
          const g = got[field];
          // Counts, minima and maxima are the stored values themselves (the CSV export keeps every digit); medians and
          // means are computed in another order by each engine.
          if (w === null || g === null || !/_(med|avg)$/.test(field)) expect(g, `${field} of ${JSON.stringify(q)}`).toBe(w);
          else expect(Math.abs(g - w), `${field} of ${JSON.stringify(q)}: ${g} vs ${w}`).toBeLessThanOrEqual(1e-9 * Math.abs(w));
        }
      }
    } finally {
      await client.end();
    }
    expect(nonEmpty, 'most queries find sales').toBeGreaterThan(40);
  });

  it('runs the mix on several connections without running a query twice', async () => {
    // 4,000 of the 4 × 3 × 365 combinations: all distinct, and more than 1 s of queries on 2 connections can use.
    const queries = mixQueries(['75', '33', '69', '13'], 'code_departement', 4000, 3);
    expect(new Set(queries.map((q) => JSON.stringify(q))).size).toBe(queries.length);
    const r = await runPostgresMix({ url: side.url, queries, connections: 2, durationSeconds: 1 });
    expect(r.queries).toBeGreaterThan(10);
    expect(r.repeats).toBe(0);
    expect(r.qps).toBeGreaterThan(0);
    expect(r.p99).toBeGreaterThanOrEqual(r.p50);
  });
});
