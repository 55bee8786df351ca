// BDNB staging throughput on a synthetic département: `npx tsx scripts/bench/bdnb-staging.ts [groups]` (default one
// million) writes batiment_groupe (5-vertex footprints in GDAL's WKT), ffo_bat and the parcel relation to
// os.tmpdir()/bdnb-bench-<groups>/ (kept for the next run), then times stageBdnb (header mapping, typed staging,
// centroids, Lambert-93 → WGS84, joins) and the Parquet write, with the process's CPU time (DuckDB's threads included).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { all, openMemory, run } from '../../lib/duck';
import { stageBdnb } from '../../pipeline/sources/bdnb';
const N = Number(process.argv[2] ?? 1_000_000);
const dir = path.join(os.tmpdir(), `bdnb-bench-${N}`);
fs.mkdirSync(dir, { recursive: true });
const { conn } = await openMemory({ threads: 2, memoryLimit: '3GB' });
let t = Date.now();
const g = path.join(dir, 'batiment_groupe.csv');
if (!fs.existsSync(g)) {
  await run(conn, `COPY (SELECT 'bdnb-bg-' || lpad(i::VARCHAR, 12, '0') AS batiment_groupe_id, '75' AS code_departement_insee, '75111' AS code_commune_insee,
    'Paris 11e' AS libelle_commune_insee, 150 AS s_geom_groupe, 'f' AS contient_fictive_geom_groupe,
    'MULTIPOLYGON (((' || x || ' ' || y || ',' || (x + 12.5) || ' ' || y || ',' || (x + 12.5) || ' ' || (y + 9.25) || ',' || (x + 6) || ' ' || (y + 11) || ',' || x || ' ' || (y + 9.25) || ',' || x || ' ' || y || ')))' AS geom_groupe
    FROM (SELECT i, 600000 + (i % 2000) * 20.5 AS x, 6800000 + (i // 2000) * 20.25 AS y FROM range(${N}) t(i))) TO '${g}' (HEADER, DELIMITER ',')`);
  await run(conn, `COPY (SELECT 'bdnb-bg-' || lpad(i::VARCHAR, 12, '0') AS batiment_groupe_id, '75' AS code_departement_insee, 1800 + i % 220 AS annee_construction,
    'Résidentiel collectif' AS usage_niveau_1_txt, 12 AS nb_log, 5 AS nb_niveau, 'PIERRE' AS mat_mur_txt, 'ZINC ALUMINIUM' AS mat_toit_txt FROM range(${N}) t(i)) TO '${path.join(dir, 'batiment_groupe_ffo_bat.csv')}' (HEADER, DELIMITER ',')`);
  await run(conn, `COPY (SELECT 'bdnb-bg-' || lpad(i::VARCHAR, 12, '0') AS batiment_groupe_id, '75' AS code_departement_insee, '75111000AB' || lpad((i % 10000)::VARCHAR, 4, '0') AS parcelle_id, 't' AS parcelle_principale FROM range(${N}) t(i)) TO '${path.join(dir, 'rel_batiment_groupe_parcelle.csv')}' (HEADER, DELIMITER ',')`);
  console.log('generated', (Date.now() - t) / 1000, 's', (fs.statSync(g).size / 1e6).toFixed(0), 'MB');
}
t = Date.now();
const cpu0 = process.cpuUsage();
const s = await stageBdnb(conn, { batiment_groupe: g, batiment_groupe_ffo_bat: path.join(dir, 'batiment_groupe_ffo_bat.csv'), rel_batiment_groupe_parcelle: path.join(dir, 'rel_batiment_groupe_parcelle.csv') });
const st = (Date.now() - t) / 1000;
t = Date.now();
await run(conn, `COPY (SELECT * FROM bdnb_batiments) TO '${path.join(dir, 'out.parquet')}' (FORMAT parquet, COMPRESSION zstd)`);
const wt = (Date.now() - t) / 1000;
const cpu = process.cpuUsage(cpu0);
console.log(JSON.stringify({ cpu_s: (cpu.user + cpu.system) / 1e6, N, stage_s: st, write_s: wt, groups_per_s: Math.round(N / (st + wt)), rss_mb: Math.round(process.memoryUsage().rss / 1e6), anomalies: s.anomalies }));
console.log(await all(conn, 'select count(latitude) placed, min(latitude), max(latitude) from bdnb_batiments'));
