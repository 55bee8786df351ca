// The BDNB of the France bench dataset (step "bdnb" of lab/france-data/build.ts): building groups consistent with
// the bench's DVF sales, written as the publisher's per-département archives (lab/france-data/bdnb-generate.ts) into
// <dataDir>/bdnb-source and imported into <dataDir>'s lake with the real pipeline (runSource, offline).
// Read from the lake's DVF lines (DuckDB, never the Node heap): one site per cadastral parcel holding a built
// property (house, flat, outbuilding or premises) in a metropolitan département. Each parcel's fate is a pure function
// of its id (as in the demo, pipeline/demo/generate-bdnb.ts):
//   - 88 % "linked": a group centred on the sale's point, related to that parcel (its sales match by parcel);
//   - 9 % "renumbered": the group stands at the sale's point but is related to another parcel id (a distance match);
//   - 3 % "none": no building (the sales match a neighbour within 200 m, or nothing).
// Sites without coordinates stand at their commune's centre. Unsold stock is added, as many groups again per commune,
// around the commune's centre (the stock statistics count every building). A parcel holding several sales gets one
// group. Lines per group: 1 group per built parcel; the share of groups per département follows the sales.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { all, lit, openMemory, run } from '../../lib/duck';
import { Lake } from '../../lib/lake';
import { BDNB_DEFAULT_MILLESIME } from '../../lib/sources/bdnb';
import { dvfDeclaration } from '../../lib/sources/dvf';
import { runSource } from '../../pipeline/run';
import { writeDepArchive } from './bdnb-generate';

const SELF = fileURLToPath(import.meta.url);
const SEED = 14;
const fmt = (x: number) => x.toLocaleString('en-US');

/** What the step's stamp hashes: the generator code (this file and bdnb-generate.ts) on top of the lake it reads. */
export function franceBdnbHash(upstreamHash: string): string {
  const h = crypto.createHash('sha256').update(`bdnb:${upstreamHash}:${SEED}:${BDNB_DEFAULT_MILLESIME}`);
  for (const f of [SELF, path.join(path.dirname(SELF), 'bdnb-generate.ts')]) h.update(fs.readFileSync(f));
  return h.digest('hex').slice(0, 16);
}

export interface FranceBdnbResult {
  seconds: number;
  groups: number;
  stockGroups: number;
  parcels: { linked: number; renumbered: number; none: number };
  departements: number;
  archiveBytes: number;
}

/** Writes the archives consistent with the lake's sales into <dataDir>/bdnb-source and imports them (runSource). */
export async function buildFranceBdnb(opts: { dataDir: string; log?: (m: string) => void }): Promise<FranceBdnbResult> {
  const log = opts.log ?? console.log;
  const started = performance.now();
  const sourceDir = path.join(opts.dataDir, 'bdnb-source');
  fs.rmSync(sourceDir, { recursive: true, force: true });
  const lake = new Lake(opts.dataDir);
  const { instance, conn } = await openMemory({ threads: 2, memoryLimit: '4GB' });
  const u = (salt: string, key = 'parcel') => `((hash(${SEED}, ${key}, ${lit(salt)}) % 1000003) / 1000003.0)`;
  const written: string[] = [];
  let archiveBytes = 0;
  try {
    await run(conn, `CREATE TEMP TABLE bdnb_parcel_sites AS
      SELECT id_parcelle AS parcel, any_value(code_departement) AS dep, any_value(code_commune) AS code_commune,
        any_value(nom_commune) AS nom_commune, max(latitude) AS lat, max(longitude) AS lon,
        CASE WHEN bool_or(code_type_local = 2) THEN 'appartement' WHEN bool_or(code_type_local = 1) THEN 'maison'
             WHEN bool_or(code_type_local = 4) THEN 'local' ELSE 'dependance' END AS kind
      FROM ${lake.readSql(dvfDeclaration)}
      WHERE code_type_local IN (1, 2, 3, 4) AND id_parcelle IS NOT NULL AND length(code_departement) = 2
      GROUP BY id_parcelle`);
    await run(conn, `CREATE TEMP TABLE bdnb_parcel_fate AS
      SELECT *, CASE WHEN ${u('fate')} < 0.03 THEN 'none' WHEN ${u('fate')} < 0.12 THEN 'renumbered' ELSE 'linked' END AS fate FROM bdnb_parcel_sites`);
    // Commune centre and spread from its located sites (the stock stands around it; sites without a point at it).
    await run(conn, `CREATE TEMP TABLE bdnb_communes AS
      SELECT code_commune, any_value(dep) AS dep, any_value(nom_commune) AS nom_commune, count(*) AS n,
        avg(lat) AS clat, avg(lon) AS clon,
        greatest(150, 1.2 * sqrt(coalesce(var_pop(lat) * pow(111320, 2) + var_pop(lon) * pow(111320 * cos(radians(avg(lat))), 2), 0))) AS radius
      FROM bdnb_parcel_sites GROUP BY code_commune HAVING count(lat) > 0`);
    await run(conn, `CREATE TEMP TABLE bdnb_all_sites AS
      WITH sited AS (
        SELECT s.dep, s.code_commune, s.nom_commune, coalesce(s.lat, c.clat) AS lat, coalesce(s.lon, c.clon) AS lon,
          -- a renumbered parcel keeps its commune and section and gets a plan number beyond those the bench uses
          CASE WHEN fate = 'linked' THEN parcel ELSE left(parcel, 10) || '9' || right(parcel, 3) END AS parcel,
          NULL::VARCHAR AS parcel2, kind, parcel AS k
        FROM bdnb_parcel_fate s JOIN bdnb_communes c USING (code_commune)
        WHERE fate <> 'none'
      ),
      stock AS (
        SELECT c.dep, c.code_commune, c.nom_commune,
          c.clat + c.radius * ${u('d', 'c.code_commune, j')} * sin(2 * pi() * ${u('a', 'c.code_commune, j')}) / 111320 AS lat,
          c.clon + c.radius * ${u('d', 'c.code_commune, j')} * cos(2 * pi() * ${u('a', 'c.code_commune, j')}) / (111320 * cos(radians(c.clat))) AS lon,
          c.code_commune || '000YY' || lpad((1 + j % 9999)::VARCHAR, 4, '0') AS parcel, NULL::VARCHAR AS parcel2, NULL::VARCHAR AS kind,
          c.code_commune || ':' || j AS k
        FROM bdnb_communes c, LATERAL (SELECT unnest(range(c.n)) AS j)
      )
      SELECT row_number() OVER (ORDER BY dep, k) - 1 AS i, * EXCLUDE (k), k LIKE '%:%' AS stock FROM (SELECT * FROM sited UNION ALL SELECT * FROM stock)
      ORDER BY dep`);
    const [counts] = await all<{ linked: number; renumbered: number; none: number; groups: number; stock: number }>(conn, `SELECT
        (SELECT count(*) FILTER (fate = 'linked') FROM bdnb_parcel_fate) AS linked, (SELECT count(*) FILTER (fate = 'renumbered') FROM bdnb_parcel_fate) AS renumbered,
        (SELECT count(*) FILTER (fate = 'none') FROM bdnb_parcel_fate) AS none, count(*) AS groups, count(*) FILTER (stock) AS stock FROM bdnb_all_sites`);
    const deps = (await all<{ dep: string }>(conn, 'SELECT DISTINCT dep FROM bdnb_all_sites ORDER BY dep')).map((r) => r.dep);
    log(`    bdnb: ${fmt(Number(counts.groups))} groups (${fmt(Number(counts.stock))} unsold stock) over ${deps.length} départements; built parcels: `
      + `${fmt(Number(counts.linked))} linked, ${fmt(Number(counts.renumbered))} renumbered, ${fmt(Number(counts.none))} without building`);
    for (const dep of deps) {
      await run(conn, `CREATE OR REPLACE TEMP TABLE bdnb_sites AS SELECT i, dep, code_commune, nom_commune, lat, lon, parcel, parcel2, kind FROM bdnb_all_sites WHERE dep = ${lit(dep)}`);
      const a = await writeDepArchive(conn, sourceDir, dep, SEED);
      archiveBytes += a.bytes;
      written.push(dep);
    }
    conn.closeSync();
    instance.closeSync();
    log(`    bdnb: ${written.length} archives written (${Math.round(archiveBytes / 2 ** 20)} MiB) in ${Math.round((performance.now() - started) / 1000)} s; importing with runSource…`);
    const outcomes = await runSource({ source: 'bdnb', fromDir: sourceDir, annees: [], departements: written, dataRoot: opts.dataDir, force: true });
    const failed = outcomes.filter((o) => o.status === 'failed');
    if (failed.length) throw new Error(`bdnb import failed: ${failed.slice(0, 5).map((o) => `${o.part.key}: ${o.error}`).join('; ')}`);
    return {
      seconds: (performance.now() - started) / 1000, groups: Number(counts.groups), stockGroups: Number(counts.stock),
      parcels: { linked: Number(counts.linked), renumbered: Number(counts.renumbered), none: Number(counts.none) }, departements: written.length, archiveBytes,
    };
  } catch (e) {
    try {
      conn.closeSync();
      instance.closeSync();
    } catch {
      // already closed before the import
    }
    throw e;
  }
}
