// The BDNB source through the CLI's own code path (`npm run pipeline -- bdnb …`): its defaults (every département,
// Alsace-Moselle included; millésime 2025-07-a), the published ZIP and the unzipped layout under --from-dir, the
// manifest records (millésime as vintage, anomalies) and the lake rows against the input files read here.
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { Lake } from '../../../lib/lake';
import { pipelineCommand } from '../../../pipeline/cli';
import { generateDemo } from '../../../pipeline/demo/generate';
import { generateBdnb } from '../../../pipeline/demo/generate-bdnb';
import { SOURCES } from '../../../pipeline/sources';
import { bdnbArchivePath } from '../../../pipeline/sources/bdnb';
import { writeZip } from '../../helpers/income';
import { queryParquet, splitCsv, tempDir } from '../../helpers/samples';

const tree = tempDir('foncier-bdnb-tree-');
const zipTree = tempDir('foncier-bdnb-zip-');
const data = tempDir('foncier-bdnb-data-');
const unzipped = (dep: string) => path.join(tree, bdnbArchivePath('2025-07-a', dep).replace(/\.zip$/, ''), 'csv');

beforeAll(async () => {
  await generateDemo(tree, { years: [2021] });
  await generateBdnb(tree, tree, { years: [2021] });
  // Département 75 as published: one ZIP with the tables under csv/ (and a table the source does not read).
  const zip = path.join(zipTree, bdnbArchivePath('2025-07-a', '75'));
  fs.mkdirSync(path.dirname(zip), { recursive: true });
  writeZip(zip, [
    { name: 'csv/batiment_construction.csv', content: Buffer.from('batiment_construction_id,batiment_groupe_id\nx,y\n') },
    ...fs.readdirSync(unzipped('75')).map((n) => ({ name: `csv/${n}`, content: fs.readFileSync(path.join(unzipped('75'), n)) })),
  ]);
}, 120_000);

describe('bdnb source', () => {
  it('defaults to every département, 57, 67 and 68 included, and to millésime 2025-07-a; --source names another', () => {
    const parts = SOURCES.bdnb.parts({ departements: SOURCES.bdnb.defaults.departements!, annees: [] });
    expect(parts.map((p) => p.key)).toEqual(expect.arrayContaining(['57', '67', '68', '2A', '971']));
    expect(parts.find((p) => p.key === '2A')!.url).toBe(
      'https://open-data.s3.fr-par.scw.cloud/bdnb_millesime_2025-07-a/millesime_2025-07-a_dep2a/open_data_millesime_2025-07-a_dep2a_csv.zip');
    expect(SOURCES.bdnb.parts({ departements: ['33'], annees: [], format: '2024-10-a' })[0].relPath).toContain('open_data_millesime_2024-10-a_dep33_csv.zip');
    expect(() => SOURCES.bdnb.parts({ departements: ['33'], annees: [], format: 'geo-dvf' })).toThrow(/millésime/);
  });

  it('imports the unzipped layout and the published ZIP; one partition per département, the millésime as vintage', async () => {
    expect(await pipelineCommand(['bdnb', '--from-dir', tree, '--departements', '23', '--no-marts'], { dataRoot: data })).toBe(0);
    expect(await pipelineCommand(['bdnb', '--from-dir', zipTree, '--departements', '75', '--no-marts'], { dataRoot: data })).toBe(0);
    const manifest = new Lake(data).readManifest().sources.bdnb!;
    expect(Object.keys(manifest.partitions!).sort()).toEqual(['23', '75']);
    for (const dep of ['23', '75']) {
      const groups = fs.readFileSync(path.join(unzipped(dep), 'batiment_groupe.csv'), 'utf8').trim().split('\n').length - 1;
      expect(manifest.partitions![dep]).toMatchObject({ partition: { code_departement: dep }, vintage: '2025-07-a', source_format: '2025-07-a', rows_read: groups, rows_kept: groups, count: groups });
    }
    // lake rows against the input tables, read here
    const rows = await queryParquet(`select * from '${path.join(data, 'lake', manifest.partitions!['75'].file)}'`);
    const ffo = fs.readFileSync(path.join(unzipped('75'), 'batiment_groupe_ffo_bat.csv'), 'utf8').trim().split('\n').slice(1).map((l) => splitCsv(l));
    const rel = fs.readFileSync(path.join(unzipped('75'), 'rel_batiment_groupe_parcelle.csv'), 'utf8').trim().split('\n').slice(1).map((l) => splitCsv(l));
    const byId = new Map(rows.map((r) => [r.batiment_groupe_id as string, r]));
    expect(byId.size).toBe(ffo.length);
    for (const [id, , annee, usage, nbLog, nbNiveau, mur, toit] of ffo.slice(0, 500)) {
      expect(byId.get(id)).toMatchObject({
        annee_construction: annee ? Number(annee) : null, usage_niveau_1_txt: usage, nb_log: Number(nbLog), nb_niveau: Number(nbNiveau),
        mat_mur_txt: mur, mat_toit_txt: toit, millesime: '2025-07-a',
      });
    }
    for (const [id, , parcel] of rel.slice(0, 500)) expect(byId.get(id)!.parcelles_principales).toBe(parcel);
    expect(rows.every((r) => typeof r.latitude === 'number' && typeof r.longitude === 'number')).toBe(true);
  });

  it('skips an unchanged archive on the next run', async () => {
    const before = new Lake(data).readManifest().sources.bdnb!.partitions!['75'].imported_at;
    expect(await pipelineCommand(['bdnb', '--from-dir', zipTree, '--departements', '75', '--no-marts'], { dataRoot: data })).toBe(0);
    expect(new Lake(data).readManifest().sources.bdnb!.partitions!['75'].imported_at).toBe(before);
  });
});
