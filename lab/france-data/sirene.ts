// Step "sirene" of the France bench dataset (lab/france-data/build.ts): a géo-SIRENE stock and a StockUniteLegale
// in their published formats (one .csv.gz per département, Paris per arrondissement, the 2019 header), written by the
// line generator of lab/bench/sirene-pipeline.ts (same activity, state and diffusion mix: ≈ 4.5 % of the lines are
// active establishments of the seven NAF families), then imported with runSource('sirene') offline.
// Sized like the real stock for the bench's sales: ≈ 400,000 kept establishments for 20 M sales (0.02 per sale), and
// placed where the bench's sales are: each line takes the commune, postal code and point of a DVF line of the lake
// (drawn at random, so a town gets establishments in proportion to its sales) with 0–300 m of offset, so the
// businesses/search cases, which query around sale points, find establishments as in a real town.
import fs from 'node:fs';
import path from 'node:path';
import { all, lit, openMemory, run } from '../../lib/duck';
import { Lake } from '../../lib/lake';
import { runSource } from '../../pipeline/run';
import { GEO_SIRENE_DIR, geoSireneFiles } from '../../pipeline/sources/sirene';
import { UNITE_LEGALE_FILE } from '../../pipeline/demo/generate-sirene';
import { geoSireneSelect, SIRENE_KEPT_SHARE, uniteLegaleSelect } from '../bench/sirene-pipeline';
import type { LakeStep } from './build';

/** Kept establishments per wanted sale: ≈ 400,000 for 20 M sales. */
export const ESTABLISHMENTS_PER_SALE = 0.02;
/** SIRENs are numbered per département in blocks of this size (9 digits: 1 dd nnnnnn). */
const SIREN_BLOCK = 1_000_000;

const fmt = (x: number) => x.toLocaleString('en-US', { maximumFractionDigits: 0 });

export const sireneStep: LakeStep = {
  name: 'sirene',
  source: 'sirene',
  inputs: ({ sales, seed }) => JSON.stringify({
    sales, seed, ESTABLISHMENTS_PER_SALE,
    code: [new URL(import.meta.url), new URL('../bench/sirene-pipeline.ts', import.meta.url)].map((u) => fs.readFileSync(u, 'utf8')),
  }),

  async build({ dataDir, dir, sales, seed, log }) {
    const lake = new Lake(dataDir);
    const manifest = lake.readManifest();
    const deps = [...new Set(Object.values(manifest.sources.dvf?.partitions ?? {}).map((p) => String(p.partition.code_departement)))].sort();
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(path.join(dir, GEO_SIRENE_DIR), { recursive: true });
    fs.mkdirSync(path.dirname(path.join(dir, UNITE_LEGALE_FILE)), { recursive: true });
    const { instance, conn } = await openMemory({ threads: 2, memoryLimit: '2GB' });
    const started = performance.now();
    const written: string[] = [];
    let lines = 0;
    try {
      await run(conn, `SET temp_directory = ${lit(path.join(dir, 'duckdb-tmp'))}`);
      const [{ n }] = await all<{ n: number }>(conn, `SELECT count(*)::BIGINT AS n FROM read_parquet([${lake.partitionFiles('dvf', undefined, manifest).map(lit).join(', ')}])
        WHERE latitude IS NOT NULL AND longitude IS NOT NULL`);
      const wanted = (ESTABLISHMENTS_PER_SALE * sales) / SIRENE_KEPT_SHARE;
      const q = Math.min(1, wanted / Number(n));
      log(`  sirene: generating ≈ ${fmt(wanted)} géo-SIRENE lines (${(q * 100).toFixed(1)} % of ${fmt(Number(n))} DVF lines) for ${deps.length} départements…`);
      const u = (k: number) => `((hash(i, ${100 + k}, ${seed}) >> 11)::DOUBLE / 9007199254740992)`;
      for (const [d, dep] of deps.entries()) {
        const files = lake.partitionFiles('dvf', (p) => String(p.code_departement) === dep, manifest);
        if (!files.length) continue;
        await run(conn, `CREATE OR REPLACE TEMP TABLE drawn AS
          WITH l AS (
            -- a national line number: the generator's draws hash it
            SELECT ${d * 100_000_000} + (annee - 2019) * 10000000 + file_row_number AS i, latitude, longitude, code_commune, code_postal, nom_commune
            FROM read_parquet([${files.map(lit).join(', ')}], hive_partitioning = true, file_row_number = true)
            WHERE latitude IS NOT NULL AND longitude IS NOT NULL
          )
          SELECT *, row_number() OVER (ORDER BY i) AS rn, 300 * sqrt(${u(1)}) AS r_m, 2 * pi() * ${u(2)} AS angle FROM l WHERE ${u(0)} < ${q}`);
        const [{ m }] = await all<{ m: number }>(conn, 'SELECT count(*)::BIGINT AS m FROM drawn');
        if (Number(m) >= SIREN_BLOCK) throw new Error(`département ${dep}: ${m} lines, more than a SIREN block (${SIREN_BLOCK})`);
        const select = geoSireneSelect(`(${100_000_000 + d * SIREN_BLOCK} + rn)::VARCHAR`, {
          commune: 'code_commune', codePostal: 'code_postal', libelleCommune: 'upper(nom_commune)',
          latitude: `printf('%.6f', latitude + r_m * sin(angle) / 111320)`,
          longitude: `printf('%.6f', longitude + r_m * cos(angle) / (111320 * cos(radians(latitude))))`,
        });
        // Paris is published per arrondissement: one file per INSEE code 751xx.
        for (const f of geoSireneFiles(dep)) {
          const file = path.join(dir, GEO_SIRENE_DIR, `geo_siret_${f}.csv.gz`);
          const where = f === dep ? '' : `WHERE code_commune = ${lit(f)}`;
          const [r] = await all<{ Count: number }>(conn, `COPY (SELECT ${select} FROM drawn ${where} ORDER BY i) TO ${lit(file)} (FORMAT csv, HEADER, COMPRESSION gzip)`);
          lines += Number(r.Count);
          written.push(file);
        }
      }
      // One legal unit per SIREN of the establishment files (read back by DuckDB: never through the Node heap).
      await run(conn, `COPY (SELECT ${uniteLegaleSelect('siren')} FROM (
          SELECT siren, row_number() OVER (ORDER BY siren) AS i FROM read_csv([${written.map(lit).join(', ')}], header = true, all_varchar = true) GROUP BY siren))
        TO ${lit(path.join(dir, UNITE_LEGALE_FILE))} (FORMAT csv, HEADER)`);
    } finally {
      conn.closeSync();
      instance.closeSync();
      fs.rmSync(path.join(dir, 'duckdb-tmp'), { recursive: true, force: true });
    }
    const generated = (performance.now() - started) / 1000;
    log(`  sirene: ${fmt(lines)} lines in ${written.length} files (${fmt(generated)} s); importing with runSource…`);
    const t1 = performance.now();
    const outcomes = await runSource({ source: 'sirene', fromDir: dir, annees: [], departements: deps, dataRoot: dataDir, force: true });
    const failed = outcomes.filter((o) => o.status === 'failed');
    if (failed.length) throw new Error(`SIRENE import failed: ${failed.slice(0, 5).map((o) => `${o.part.key}: ${o.error}`).join('; ')}`);
    const kept = outcomes.reduce((a, o) => a + o.rowsKept, 0);
    const imported = (performance.now() - t1) / 1000;
    return {
      figures: { lines, establishments: kept, generateSeconds: Math.round(generated), importSeconds: Math.round(imported) },
      summary: `${fmt(lines)} géo-SIRENE lines generated (${fmt(generated)} s), ${fmt(kept)} establishments kept (${fmt(imported)} s)`,
    };
  },
};
