// DVF × BDNB matching throughput: `npx tsx scripts/bench/bdnb-matching.ts [sales] [groups] [share without parcel]`
// (defaults 2,000,000 sales, 1,000,000 groups, 25 %) builds synthetic `ventes`, `bdnb_batiments` and parcel relations
// in memory, every group within a 30 × 30 km square (≈ 1,100 groups/km², Paris density everywhere: the worst case
// for the distance search), then runs marts/models/marts/bdnb_ventes.sql as the marts runner would and times it.
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../../lib/config';
import { HAVERSINE_MACRO_SQL } from '../../lib/distance';
import { all, openMemory, run } from '../../lib/duck';

const SALES = Number(process.argv[2] ?? 2_000_000);
const GROUPS = Number(process.argv[3] ?? 1_000_000);
const NO_PARCEL = Number(process.argv[4] ?? 0.25);
const { conn } = await openMemory({ threads: 2, memoryLimit: '3GB' });
await run(conn, HAVERSINE_MACRO_SQL);
// 30 km ≈ 0.27° of latitude and 0.41° of longitude around Paris
await run(conn, `CREATE TABLE bdnb_batiments AS SELECT 'bdnb-bg-' || i AS batiment_groupe_id, 48.7 + random() * 0.27 AS latitude,
  2.1 + random() * 0.41 AS longitude, 100 + random() * 400 AS s_geom_groupe, 1800 + (i % 220) AS annee_construction,
  'avant_1919' AS tranche, 'PIERRE' AS mat_mur_txt FROM range(${GROUPS}) t(i)`);
await run(conn, `CREATE TABLE stg_bdnb_parcelles AS SELECT batiment_groupe_id, 'P' || row_number() OVER () AS parcelle_id, true AS parcelle_principale FROM bdnb_batiments`);
await run(conn, `CREATE TABLE ventes AS SELECT i AS id,
  CASE WHEN random() < ${NO_PARCEL} THEN 'X' || i ELSE 'P' || (1 + (i % ${GROUPS})) END AS id_parcelle,
  48.7 + random() * 0.27 AS latitude, 2.1 + random() * 0.41 AS longitude, '75' AS code_departement, '75011' AS code_postal,
  '75111' AS code_commune_actuel, 'Appartement' AS type_local, 10000.0 AS prix_m2, DATE '2024-01-01' AS date_mutation,
  false AS is_bulk_sale, false AS is_outlier, false AS is_vefa FROM range(${SALES}) t(i)`);
const sql = fs.readFileSync(path.join(repoRoot, 'marts', 'models', 'marts', 'bdnb_ventes.sql'), 'utf8').replace(/\{\{\s*ref\('(\w+)'\)\s*\}\}/g, '$1');
const cpu0 = process.cpuUsage();
const t = Date.now();
await run(conn, `CREATE TABLE bdnb_ventes AS ${sql}`);
const cpu = process.cpuUsage(cpu0);
const [r] = await all(conn, `SELECT count(*) AS matched, count(*) FILTER (match_method = 'distance') AS by_distance FROM bdnb_ventes`);
console.log(JSON.stringify({ sales: SALES, groups: GROUPS, seconds: (Date.now() - t) / 1000, cpu_s: (cpu.user + cpu.system) / 1e6, ...r }));
