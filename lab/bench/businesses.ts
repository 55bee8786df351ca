// businesses/search at France scale, without the 45-minute bench dataset: a serving database holding a synthetic
// `businesses` mart of 400,000 establishments (its real columns and sort order; Paris as dense as the real stock)
// and a synthetic `ventes` of 20 million sales reduced to the columns the DVF statistics read (with the
// businesses_dvf_codes_postaux mart built from it by its own SQL), then the endpoint's own handler timed uncached,
// one client.
//   npm run bench -- businesses [--data-dir data-bench-businesses] [--runs 200]
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { AppContext } from '../../api/context';
import { ServingDb } from '../../api/db';
import { searchBusinesses } from '../../api/routes/businesses/search';
import { repoRoot } from '../../lib/config';
import { DuckDBInstance, run } from '../../lib/duck';

const { values } = parseArgs({ options: { 'data-dir': { type: 'string' }, runs: { type: 'string' } } });
const root = path.resolve(values['data-dir'] ?? path.join(repoRoot, 'data-bench-businesses'));
const runs = Number(values.runs ?? 200);
const ESTABLISHMENTS = 400_000;
const SALES = 20_000_000;

async function build(file: string): Promise<void> {
  const instance = await DuckDBInstance.create(file, { threads: '2' });
  const conn = await instance.connect();
  // 8 % of the establishments in Paris (≈ 32,000, the real stock's order of magnitude for these NAF codes), the rest
  // around 40 other centres and scattered over mainland France. Positions from hashes: deterministic.
  await run(conn, `create table businesses as
    with r as (select i, hash(i) as h, (hash(i * 7 + 1) % 1000000) / 1e6 as u1, (hash(i * 7 + 2) % 1000000) / 1e6 as u2,
                      (hash(i * 7 + 3) % 1000000) / 1e6 as u3 from range(${ESTABLISHMENTS}) t(i)),
    placed as (
      select i, h,
        case when u3 < 0.08 then 48.8566 + (u1 - 0.5) * 0.11
             when u3 < 0.6 then 43.3 + (h % 40) * 0.17 + (u1 - 0.5) * 0.2
             else 42.5 + u1 * 8.5 end as latitude,
        case when u3 < 0.08 then 2.3522 + (u2 - 0.5) * 0.16
             when u3 < 0.6 then -1.2 + (h % 40) * 0.18 + (u2 - 0.5) * 0.28
             else -4.5 + u2 * 12.5 end as longitude,
        case when u3 < 0.08 then '750' || lpad(((h % 20) + 1)::VARCHAR, 2, '0') else lpad(((h % 95) + 1)::VARCHAR, 2, '0') || '000' end as code_postal
      from r)
    select lpad((300000000 + i)::VARCHAR, 9, '0') || '00017' as siret, lpad((300000000 + i)::VARCHAR, 9, '0') as siren,
      'BENCH ' || i as denomination,
      ['6831Z', '6910Z', '4110A', '6832A', '6810Z', '6612Z', '6820A'][((h % 7) + 1)::BIGINT] as naf_code,
      ['agence', 'notaire', 'promoteur', 'gestionnaire', 'marchand', 'courtier', 'bailleur'][((h % 7) + 1)::BIGINT] as business_type,
      (h % 120)::VARCHAR || ' RUE DU BENCH' as adresse, code_postal, left(code_postal, 2) || '001' as code_commune, 'BENCH' as commune,
      left(code_postal, 2) as code_departement, latitude, longitude, 'adresse' as position_precision, DATE '2010-01-01' as date_creation,
      true as is_siege, false as diffusion_partielle
    from placed order by latitude, longitude`);
  // Sales over 2020–2025, Paris with its real share (≈ 1 %), sorted like the ventes mart.
  await run(conn, `create table ventes as
    select case when hash(i) % 100 = 0 then '750' || lpad(((hash(i * 3) % 20) + 1)::VARCHAR, 2, '0') else lpad(((hash(i * 3) % 95) + 1)::VARCHAR, 2, '0') || '000' end as code_postal,
      DATE '2020-01-01' + (hash(i * 5) % 2190)::INTEGER as date_mutation,
      case when hash(i * 11) % 3 = 0 then 'Maison' else 'Appartement' end as type_local,
      1500 + (hash(i * 13) % 9000) as prix_m2, hash(i * 17) % 50 = 0 as is_bulk_sale, hash(i * 19) % 40 = 0 as is_outlier, hash(i * 23) % 30 = 0 as is_vefa
    from range(${SALES}) t(i)`);
  await run(conn, `create or replace table ventes as select *, left(code_postal, 2) as code_departement from ventes order by code_departement, code_postal, date_mutation`);
  await run(conn, `create table ventes_horizon_departements as select code_departement, max(date_mutation) as derniere_date from ventes group by 1`);
  // The DVF figures per postal code, by the mart's own SQL.
  const mart = fs.readFileSync(path.join(repoRoot, 'marts', 'models', 'marts', 'businesses_dvf_codes_postaux.sql'), 'utf8');
  await run(conn, `create table businesses_dvf_codes_postaux as ${mart.replace(/\{\{\s*ref\('(\w+)'\)\s*\}\}/g, '$1')}`);
  await run(conn, 'checkpoint');
  conn.closeSync();
  instance.closeSync();
}

const serving = path.join(root, 'serving');
const name = 'bench-businesses-v2.duckdb';
if (!fs.existsSync(path.join(serving, name))) {
  fs.mkdirSync(serving, { recursive: true });
  const t0 = performance.now();
  await build(path.join(serving, name));
  console.log(`built ${name} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}
fs.writeFileSync(path.join(serving, 'CURRENT'), name + '\n');

const db = new ServingDb({ dataRoot: root });
await db.start();
const ctx = { db } as unknown as AppContext;
const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];
const cases = [
  { label: 'Paris, 1,000 m, all types, limit 20', radius_m: 1000, include_dvf_stats: false },
  { label: 'Paris, 5,000 m, all types, limit 50, include_dvf_stats', radius_m: 5000, include_dvf_stats: true, limit: 50 },
];
for (const c of cases) {
  const times: number[] = [];
  let found = 0;
  for (let i = 0; i < runs + 10; i++) {
    // Points spread over central Paris, each one new: no cache anywhere but DuckDB's own buffers.
    const p = { latitude: 48.83 + ((i * 37) % 50) / 1000, longitude: 2.30 + ((i * 53) % 90) / 1000, radius_m: c.radius_m, type: 'all' as const, limit: c.limit ?? 20, include_dvf_stats: c.include_dvf_stats };
    const t0 = performance.now();
    const r = await searchBusinesses.handler(p, { ctx } as never);
    if (i >= 10) times.push(performance.now() - t0);
    found += r.count;
  }
  console.log(`${c.label}: p50 ${quantile(times, 0.5).toFixed(1)} ms, p95 ${quantile(times, 0.95).toFixed(1)} ms, mean results ${(found / (runs + 10)).toFixed(1)} (${runs} runs)`);
}
await db.close();
