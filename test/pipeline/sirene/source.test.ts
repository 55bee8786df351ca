// The SIRENE plug-in through the CLI's own code path: the demo files laid out like files.data.gouv.fr, one dated
// snapshot in the lake, unchanged files skipped, a changed file re-importing the whole snapshot, a missing file
// keeping the previous one, and the businesses mart with its privacy check.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { lit } from '../../../lib/duck';
import { Lake } from '../../../lib/lake';
import { currentServingFile } from '../../../lib/serving';
import { DEMO_SIRENE_SNAPSHOT, generateSirene, geoSireneRelPath, UNITE_LEGALE_FILE, type SireneDemoTruth } from '../../../pipeline/demo/generate-sirene';
import { pipelineCommand } from '../../../pipeline/cli';
import { runSource } from '../../../pipeline/run';
import { geoSireneFiles, sireneSource } from '../../../pipeline/sources/sirene';
import { queryParquet, tempDir } from '../../helpers/samples';

const DEPS = ['23', '33', '69', '75'];
let tree: string;
let data: string;
let truth: SireneDemoTruth;
beforeAll(async () => {
  tree = tempDir('foncier-sirene-tree-');
  data = tempDir('foncier-sirene-data-');
  truth = await generateSirene(tree);
  vi.spyOn(console, 'log').mockImplementation(() => {});
});
afterAll(() => {
  vi.restoreAllMocks();
  for (const d of [tree, data]) fs.rmSync(d, { recursive: true, force: true });
});

const snapshotRecord = () => new Lake(data).readManifest().sources.sirene;

describe('SIRENE source', () => {
  it('lists one file per département (Paris per arrondissement) and the StockUniteLegale, on a configurable base URL', () => {
    const parts = sireneSource.parts({ departements: ['33', '75'], annees: [], baseUrl: 'http://mirror.local/' });
    expect(geoSireneFiles('75')).toHaveLength(20);
    expect(parts.map((p) => p.url)).toEqual([
      'http://mirror.local/geo-sirene/last/dep/geo_siret_33.csv.gz',
      ...geoSireneFiles('75').map((f) => `http://mirror.local/geo-sirene/last/dep/geo_siret_${f}.csv.gz`),
      'http://mirror.local/insee-sirene/StockUniteLegale_utf8.zip',
    ]);
    expect(new Set(parts.map((p) => sireneSource.batchKey(p))).size).toBe(1);
    expect(sireneSource.parts({ departements: ['33'], annees: [] })[0].url).toBe('https://files.data.gouv.fr/geo-sirene/last/dep/geo_siret_33.csv.gz');
  });

  it('imports the files as one snapshot dated by the stock, and the mart serves its positioned establishments', async () => {
    await pipelineCommand(['sirene', '--from-dir', tree, '--departements', DEPS.join(',')], { dataRoot: data });
    const src = snapshotRecord();
    expect(Object.keys(src.partitions!)).toEqual([DEMO_SIRENE_SNAPSHOT]);
    expect(src.partitions![DEMO_SIRENE_SNAPSHOT]).toMatchObject({ partition: { snapshot: DEMO_SIRENE_SNAPSHOT }, rows_read: truth.lines, rows_kept: truth.kept, count: truth.kept });
    expect(fs.readdirSync(path.join(data, 'lake', 'sirene'))).toEqual([`snapshot=${DEMO_SIRENE_SNAPSHOT}`]);
    const served = await queryParquet(`attach ${lit(currentServingFile(data)!)} as s (read_only);
      select count(*)::INTEGER as n, count(*) filter (where diffusion_partielle)::INTEGER as partial,
        count(*) filter (where diffusion_partielle and (adresse is not null or position_precision <> 'commune'))::INTEGER as leaks
      from s.businesses`);
    expect(served).toEqual([{ n: truth.kept, partial: truth.partial, leaks: 0 }]);
  });

  it('skips unchanged files, and re-imports the whole snapshot when one file changed', async () => {
    const again = await runSource({ source: 'sirene', fromDir: tree, annees: [], departements: DEPS, dataRoot: data });
    expect(new Set(again.map((o) => o.status))).toEqual(new Set(['unchanged']));
    // Creuse's file loses its last line: only that file changed, yet the snapshot holds every file's rows.
    const creuse = path.join(tree, geoSireneRelPath('23'));
    const lines = zlib.gunzipSync(fs.readFileSync(creuse)).toString('utf8').trimEnd().split('\n');
    const dropped = lines.at(-1)!;
    fs.writeFileSync(creuse, zlib.gzipSync(lines.slice(0, -1).join('\n') + '\n'));
    const third = await runSource({ source: 'sirene', fromDir: tree, annees: [], departements: DEPS, dataRoot: data });
    expect(new Set(third.map((o) => o.status))).toEqual(new Set(['imported']));
    const keptDropped = /,A,/.test(dropped) && /,(68\.31Z|6831Z|69\.10Z|6910Z|41\.10[ABCD]|4110[ABCD]|68\.32[AB]|6832[AB]|68\.10Z|6810Z|66\.12Z|6612Z|68\.20A|6820A),/.test(dropped);
    expect(snapshotRecord().partitions![DEMO_SIRENE_SNAPSHOT]).toMatchObject({ rows_read: truth.lines - 1, rows_kept: truth.kept - (keptDropped ? 1 : 0) });
  });

  it('keeps the previous snapshot when one of its files is missing', async () => {
    const before = snapshotRecord().partitions![DEMO_SIRENE_SNAPSHOT];
    fs.appendFileSync(path.join(tree, geoSireneRelPath('33')), zlib.gzipSync(''));
    fs.rmSync(path.join(tree, UNITE_LEGALE_FILE));
    const out = await runSource({ source: 'sirene', fromDir: tree, annees: [], departements: DEPS, dataRoot: data });
    expect(out.find((o) => o.part.key === 'unites-legales')!.error).toMatch(/file not found/);
    expect(out.find((o) => o.part.key === 'dep/33')!.error).toMatch(/snapshot is incomplete without unites-legales/);
    expect(snapshotRecord().partitions![DEMO_SIRENE_SNAPSHOT]).toEqual(before);
  });
});
