// The SIRENE import at scale: a synthetic géo-SIRENE stock in the real format (the 2019 header, one .csv.gz per
// département, Paris per arrondissement; ≈ 400,000 active establishments of the seven NAF families among --lines lines
// of every activity and state) and a StockUniteLegale, then `runSource('sirene')` timed in a child process of its own
// (peak RSS = the import's).
//   npm run bench -- sirene-pipeline [--data-dir data-bench-sirene] [--lines 10000000]
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { repoRoot } from '../../lib/config';
import { DuckDBInstance, lit, run } from '../../lib/duck';
import { ALL_DEPARTEMENTS } from '../../lib/sources/departements';
import { GEO_SIRENE_HEADER, UNITE_LEGALE_HEADER } from '../../pipeline/demo/generate-sirene';
import { runSource } from '../../pipeline/run';
import { GEO_SIRENE_DIR, geoSireneFiles } from '../../pipeline/sources/sirene';

/** Where a generated line lies: SQL expressions over the row. */
export interface SirenePlace { commune: string; codePostal: string; libelleCommune: string; latitude: string; longitude: string }

/** Share of the lines that are active establishments of the seven families (≈ 400,000 of 10 M; the real stock: of ≈ 40 M). */
export const SIRENE_KEPT_SHARE = 0.045;

/**
 * The SELECT list of one géo-SIRENE line over a row number `i` (SQL), an establishment (NIC 00017) of SIREN `siren`
 * (SQL, 9 digits) at `place`. 4 % of the lines are active establishments of the seven families, 5 % of those partially
 * diffusible; the rest other activities, half of them closed (plus half of the other 1 % with a real-estate code:
 * ≈ 4.5 % kept).
 */
export function geoSireneSelect(siren: string, place: SirenePlace): string {
  const naf = `['68.31Z', '69.10Z', '41.10A', '68.32A', '68.10Z', '66.12Z', '68.20A'][((hash(i * 17) % 7) + 1)::BIGINT]`;
  const other = `['56.10A', '47.11B', '86.21Z', '68.20B', '43.21A'][((hash(i * 19) % 5) + 1)::BIGINT]`;
  const cols: Record<string, string> = {
    siren, nic: `'00017'`, siret: `${siren} || '00017'`,
    statutDiffusionEtablissement: `case when hash(i * 3) % 20 = 0 then 'P' else 'O' end`,
    dateCreationEtablissement: `'2015-06-01'`, dateDernierTraitementEtablissement: `'2025-10-31T10:00:00'`, etablissementSiege: `'true'`,
    numeroVoieEtablissement: `((hash(i) % 200) + 1)::VARCHAR`, typeVoieEtablissement: `'RUE'`, libelleVoieEtablissement: `'DE LA REPUBLIQUE'`,
    codePostalEtablissement: place.codePostal, libelleCommuneEtablissement: place.libelleCommune, codeCommuneEtablissement: place.commune,
    etatAdministratifEtablissement: `case when hash(i * 13) % 100 < 4 or hash(i * 5) % 2 = 0 then 'A' else 'F' end`,
    activitePrincipaleEtablissement: `case when hash(i * 13) % 100 < 5 then ${naf} else ${other} end`,
    nomenclatureActivitePrincipaleEtablissement: `'NAFRev2'`, latitude: place.latitude, longitude: place.longitude, geo_score: `'0.91'`,
  };
  return GEO_SIRENE_HEADER.map((h) => `${cols[h] ?? "''"} AS "${h}"`).join(', ');
}

/** The SELECT list of one StockUniteLegale line: an active company of SIREN `siren` (SQL), named after `i`. */
export function uniteLegaleSelect(siren: string): string {
  const ul: Record<string, string> = {
    siren, statutDiffusionUniteLegale: `'O'`, etatAdministratifUniteLegale: `'A'`,
    categorieJuridiqueUniteLegale: `'5499'`, denominationUniteLegale: `'SOCIETE ' || i`, dateCreationUniteLegale: `'2015-06-01'`,
  };
  return UNITE_LEGALE_HEADER.map((h) => `${ul[h] ?? "''"} AS "${h}"`).join(', ');
}

async function generate(tree: string, lines: number, files: string[]): Promise<void> {
  fs.rmSync(tree, { recursive: true, force: true });
  fs.mkdirSync(path.join(tree, GEO_SIRENE_DIR), { recursive: true });
  fs.mkdirSync(path.join(tree, 'insee-sirene'), { recursive: true });
  const instance = await DuckDBInstance.create(':memory:', { threads: '2' });
  const conn = await instance.connect();
  const per = Math.ceil(lines / files.length);
  for (const [k, f] of files.entries()) {
    const commune = f.length === 5 ? f : `${f}${f.length === 2 ? '001' : '01'}`;
    const select = geoSireneSelect(`lpad((${k * per} + i + 100000000)::VARCHAR, 9, '0')`, {
      commune: lit(commune), codePostal: `${lit(commune.slice(0, 2))} || '000'`, libelleCommune: `'COMMUNE ' || ${lit(commune)}`,
      latitude: `(45 + (hash(i * 7) % 100000) / 100000.0)::VARCHAR`, longitude: `(2 + (hash(i * 11) % 100000) / 100000.0)::VARCHAR`,
    });
    await run(conn, `COPY (SELECT ${select} FROM range(${per}) t(i)) TO ${lit(path.join(tree, GEO_SIRENE_DIR, `geo_siret_${f}.csv.gz`))} (HEADER, COMPRESSION gzip)`);
  }
  const select = uniteLegaleSelect(`lpad((i + 100000000)::VARCHAR, 9, '0')`);
  await run(conn, `COPY (SELECT ${select} FROM range(${per * files.length}) t(i)) TO ${lit(path.join(tree, 'insee-sirene', 'StockUniteLegale_utf8.csv'))} (HEADER)`);
  conn.closeSync();
  instance.closeSync();
}

const { values } = path.resolve(process.argv[1] ?? '') === fileURLToPath(import.meta.url)
  ? parseArgs({ options: { 'data-dir': { type: 'string' }, lines: { type: 'string' }, step: { type: 'string' } } })
  : { values: undefined };
const root = path.resolve(values?.['data-dir'] ?? path.join(repoRoot, 'data-bench-sirene'));
const lines = Number(values?.lines ?? 10_000_000);
const tree = path.join(root, 'source');
const files = ALL_DEPARTEMENTS.flatMap(geoSireneFiles);

if (!values) {
  // imported for its generator functions (lab/france-data/sirene.ts): nothing to run
} else if (values.step === 'import') {
  const data = path.join(root, 'data');
  fs.rmSync(data, { recursive: true, force: true });
  const t0 = performance.now();
  const out = await runSource({ source: 'sirene', fromDir: tree, annees: [], departements: ALL_DEPARTEMENTS, dataRoot: data });
  const seconds = (performance.now() - t0) / 1000;
  const read = out.reduce((a, o) => a + o.rowsRead, 0);
  const kept = out.reduce((a, o) => a + o.rowsKept, 0);
  const failed = out.filter((o) => o.status === 'failed');
  if (failed.length) throw new Error(failed.map((o) => `${o.part.key}: ${o.error}`).join('; '));
  console.log(JSON.stringify({ files: out.length, lines: read, kept, seconds: Math.round(seconds), linesPerSecond: Math.round(read / seconds), peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024) }));
} else {
  const t0 = performance.now();
  await generate(tree, lines, files);
  console.log(`generated ${files.length} géo-SIRENE files and a StockUniteLegale in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  const r = spawnSync(process.execPath, [...process.execArgv, new URL(import.meta.url).pathname, '--step', 'import', '--data-dir', root, '--lines', String(lines)], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}
