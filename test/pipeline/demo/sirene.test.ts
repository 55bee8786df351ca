// The demo SIRENE generator: the real published header, deterministic files, and the staging recovers what it planted
// (active professionals per type, partially diffusible sole traders whose names never reach the staged tables).
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { samplesDir } from '../../../lib/config';
import { all, openMemory, type DuckDBConnection, type DuckDBInstance } from '../../../lib/duck';
import { DEMO_SIRENE_SNAPSHOT, GEO_SIRENE_HEADER, generateSirene, UNITE_LEGALE_FILE, UNITE_LEGALE_HEADER, type SireneDemoTruth } from '../../../pipeline/demo/generate-sirene';
import { stageEtablissements, stageUnitesLegales } from '../../../pipeline/sources/sirene/stage';
import { tempDir } from '../../helpers/samples';

const firstLine = (file: string) => fs.readFileSync(path.join(samplesDir, 'sirene', file), 'utf8').split('\n')[0];

let instance: DuckDBInstance;
let conn: DuckDBConnection;
let dir: string;
let truth: SireneDemoTruth;
beforeAll(async () => {
  ({ instance, conn } = await openMemory({ threads: 1 }));
  dir = tempDir('foncier-sirene-demo-');
  truth = await generateSirene(dir);
});
afterAll(() => {
  conn.closeSync();
  instance.closeSync();
});

/** The generated CSV lines as objects (a small reader of its own: quoted fields may hold commas). */
function readCsv(text: string): Array<Record<string, string>> {
  const split = (l: string) => {
    const cells: string[] = [];
    let cur = '';
    let quoted = false;
    for (let i = 0; i < l.length; i++) {
      const ch = l[i];
      if (quoted && ch === '"' && l[i + 1] === '"') (cur += '"'), i++;
      else if (ch === '"') quoted = !quoted;
      else if (ch === ',' && !quoted) cells.push(cur), (cur = '');
      else cur += ch;
    }
    return [...cells, cur];
  };
  const [head, ...lines] = text.trim().split('\n');
  const h = split(head);
  return lines.map((l) => {
    const cells = split(l);
    expect(cells).toHaveLength(h.length);
    return Object.fromEntries(cells.map((v, i) => [h[i], v]));
  });
}

describe('demo SIRENE files', () => {
  it('use the published headers of géo-SIRENE and StockUniteLegale', () => {
    expect(GEO_SIRENE_HEADER.join(',')).toBe(firstLine('sample_etablissements_OK.csv'));
    expect(UNITE_LEGALE_HEADER.join(',')).toBe(firstLine('sample_unites_legales_OK.csv'));
  });

  it('are byte-identical for the same seed', async () => {
    const again = tempDir('foncier-sirene-demo2-');
    await generateSirene(again);
    for (const f of truth.files) expect(fs.readFileSync(path.join(again, f)).equals(fs.readFileSync(path.join(dir, f))), f).toBe(true);
  });

  it('stage into the professionals the generator planted, partially diffusible ones without names or addresses', async () => {
    const geo = truth.files.filter((f) => f.endsWith('.csv.gz')).map((f) => path.join(dir, f));
    const lines = geo.flatMap((f) => readCsv(zlib.gunzipSync(fs.readFileSync(f)).toString('utf8')));
    expect(lines).toHaveLength(truth.lines);
    const report = await stageEtablissements(conn, geo);
    expect(report.rowsRead).toBe(truth.lines);
    expect(report.rowsKept).toBe(truth.kept);
    expect(report.latestTreatment).toBe(DEMO_SIRENE_SNAPSHOT);
    expect(report.anomalies.partial_diffusion).toBe(truth.partial);
    expect(truth.partial).toBeGreaterThan(3);
    expect(report.anomalies.no_position).toBe(0);
    const byType = await all<{ business_type: string; n: number }>(conn, 'SELECT business_type, count(*)::INT AS n FROM sirene_etablissements_stg GROUP BY 1');
    expect(Object.fromEntries(byType.map((r) => [r.business_type, r.n]))).toEqual(Object.fromEntries(Object.entries(truth.byType).filter(([, n]) => n > 0)));

    await stageUnitesLegales(conn, [path.join(dir, UNITE_LEGALE_FILE)], 'SELECT siren FROM sirene_etablissements_stg');
    // The planted partial sole traders' shop signs carry their names: none of those names may be staged.
    const partialSigns = lines.filter((l) => l.statutDiffusionEtablissement === 'P').map((l) => l.enseigne1Etablissement);
    expect(new Set(partialSigns)).toEqual(new Set(['[ND]']));
    const staged = JSON.stringify([
      ...(await all(conn, 'SELECT * FROM sirene_etablissements_stg WHERE diffusion_partielle')),
      ...(await all(conn, 'SELECT * FROM sirene_unites_legales_stg WHERE diffusion_partielle')),
    ]);
    expect(staged).not.toContain('[ND]');
    const partialSirens = new Set(lines.filter((l) => l.statutDiffusionEtablissement === 'P').map((l) => l.siren));
    const ul = readCsv(fs.readFileSync(path.join(dir, UNITE_LEGALE_FILE), 'utf8')).filter((u) => partialSirens.has(u.siren));
    expect(ul.every((u) => u.statutDiffusionUniteLegale === 'P' && u.nomUniteLegale === '[ND]')).toBe(true);
    const names = await all<{ n: number }>(conn, `SELECT count(*)::INT AS n FROM sirene_unites_legales_stg WHERE diffusion_partielle AND (nom IS NOT NULL OR prenom IS NOT NULL OR denomination IS NOT NULL)`);
    expect(names[0].n).toBe(0);
  });
});
