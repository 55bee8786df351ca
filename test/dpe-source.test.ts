// The DPE source plug-in through the CLI's own code path: the real samples laid out like the data-fair client's
// downloads (--from-dir), then the data-fair API itself imitated on loopback (--base-url), into partition
// code_departement=<dep> with its manifest record, and the dpe_diagnostics mart.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { lit } from '../lib/duck';
import { samplesDir } from '../lib/config';
import { Lake } from '../lib/lake';
import { currentServingFile } from '../lib/serving';
import { pipelineCommand } from '../pipeline/cli';
import { dpeDatasets, dpeSource } from '../pipeline/sources/dpe';
import { queryParquet, tempDir } from './helpers/samples';

const dirs: string[] = [];
const temp = (p: string) => {
  const d = tempDir(p);
  dirs.push(d);
  return d;
};
afterAll(() => {
  vi.restoreAllMocks();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

describe('DPE source plug-in', () => {
  it('defaults to every département, Alsace-Moselle included, and to the three ADEME datasets', () => {
    expect(dpeSource.defaults.departements).toEqual(expect.arrayContaining(['57', '67', '68', '2A', '976']));
    expect(dpeSource.partitioning).toBe('departement');
    expect(dpeDatasets().map((d) => d.id)).toEqual(['dpe03existant', 'dpe02neuf', 'dpe-france']);
    expect(dpeDatasets('dpe-v2-logements-existants:code_departement_ban')).toEqual([{ id: 'dpe-v2-logements-existants', departementField: 'code_departement_ban' }]);
  });

  it('imports the real samples from --from-dir into one partition per département, and the mart reads them', async () => {
    vi.spyOn(console, 'log').mockImplementation(() => {});
    const tree = temp('foncier-dpe-tree-');
    const data = temp('foncier-dpe-data-');
    const put = (dataset: string, dep: string, sample: string) => {
      fs.mkdirSync(path.join(tree, dataset), { recursive: true });
      fs.copyFileSync(path.join(samplesDir, 'dpe', sample), path.join(tree, dataset, `${dep}.csv.gz`));
    };
    put('dpe03existant', '48', 'dpe-v2-existants+neufs_lozere48_R-reexport.csv.gz');
    put('dpe02neuf', '69', 'dpe-v2-logements-neufs_lyon8_69388.csv.gz');
    expect(await pipelineCommand(['dpe', '--from-dir', tree, '--departements', '48,69'], { dataRoot: data })).toBe(0);
    const src = new Lake(data).readManifest().sources.dpe;
    expect(Object.keys(src.partitions!).sort()).toEqual(['48', '69']);
    // Lozère: 2,594 rows, all dated. Lyon 8e: 2,851 rows, one of them replaced by another of the file.
    expect(src.partitions!['48']).toMatchObject({ partition: { code_departement: '48' }, rows_read: 2594, rows_kept: 2594, count: 2594 });
    expect(src.partitions!['69']).toMatchObject({ rows_read: 2851, rows_kept: 2851, anomalies: { remplace_par_un_plus_recent: 1 } });
    const serving = currentServingFile(data)!;
    const rows = await queryParquet(`attach ${lit(serving)} as s (read_only);
      select code_departement, count(*)::INTEGER as n, count(*) filter (est_remplace)::INTEGER as replaced,
        count(*) filter (classe_energie = 'G')::INTEGER as g from s.dpe_diagnostics group by 1 order by 1`);
    expect(rows).toEqual([{ code_departement: '48', n: 2594, replaced: 0, g: 388 }, { code_departement: '69', n: 2851, replaced: 1, g: 0 }]);

    // Unchanged files: nothing imported again.
    expect(await pipelineCommand(['dpe', '--from-dir', tree, '--departements', '48', '--no-marts'], { dataRoot: data })).toBe(0);
    expect(new Lake(data).readManifest().sources.dpe.partitions!['48'].imported_at).toBe(src.partitions!['48'].imported_at);
  }, 120_000);

  it('fetches a département from the data-fair API (every dataset, page by page) with --base-url', async () => {
    vi.spyOn(console, 'log').mockImplementation(() => {});
    const nancy = JSON.parse(fs.readFileSync(path.join(samplesDir, 'dpe', 'dpe03existant_api_lines_nancy_geo50m.json'), 'utf8')) as { results: unknown[] };
    const seen: string[] = [];
    const server = http.createServer((req, res) => {
      const url = new URL(req.url!, 'http://x');
      seen.push(`${url.pathname}?${url.searchParams.get('qs') ?? ''}&after=${url.searchParams.get('after') ?? ''}`);
      const m = /\/datasets\/([^/]+)(\/lines)?$/.exec(url.pathname);
      if (!m) return void res.writeHead(404).end();
      if (!m[2]) return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: m[1], dataUpdatedAt: '2026-11-01T00:00:00Z' }));
      const rows = m[1] === 'dpe03existant' ? nancy.results : [];
      const after = Number(url.searchParams.get('after') ?? 0);
      const page = rows.slice(after, after + 10);
      const next = new URL(`http://${req.headers.host}${req.url}`);
      next.searchParams.set('after', String(after + page.length));
      res.writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ total: rows.length, ...(after + page.length < rows.length ? { next: next.toString() } : {}), results: page }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const data = temp('foncier-dpe-api-');
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/data-fair/api/v1`;
      expect(await pipelineCommand(['dpe', '--base-url', base, '--departements', '54', '--no-marts'], { dataRoot: data })).toBe(0);
      expect(seen).toContain('/data-fair/api/v1/datasets/dpe03existant/lines?code_departement_ban:"54"&after=10');
      expect(seen).toContain('/data-fair/api/v1/datasets/dpe-france/lines?tv016_departement_code:"54"&after=');
      const p = new Lake(data).readManifest().sources.dpe.partitions!['54'];
      expect(p).toMatchObject({ rows_read: 18, rows_kept: 18, vintage: '2026-11-01' });
    } finally {
      await new Promise((r) => server.close(r));
    }
  }, 60_000);
});
