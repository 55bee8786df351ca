// The DPE source plug-in through the CLI's own code path: the real samples laid out like the data-fair client's
// downloads (--from-dir), then the data-fair API itself imitated on loopback (--base-url), into partition
// code_departement=<dep> with its manifest record, and the dpe_diagnostics mart.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { lit } from '../../../lib/duck';
import { samplesDir } from '../../../lib/config';
import { Lake } from '../../../lib/lake';
import { currentServingFile } from '../../../lib/serving';
import { pipelineCommand } from '../../../pipeline/cli';
import { dpeDatasets, dpeSource } from '../../../pipeline/sources/dpe';
import { DPE_API_FIELDS } from '../../../pipeline/sources/dpe/columns';
import { queryParquet, tempDir } from '../../helpers/samples';

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
    // A renamed v2 dataset is asked for the v2 fields; `all` drops select=, `a+b` names the fields.
    expect(dpeDatasets('dpe-v2-logements-existants:code_departement_ban')).toEqual([{ id: 'dpe-v2-logements-existants', departementField: 'code_departement_ban', select: DPE_API_FIELDS.dpe03existant }]);
    expect(dpeDatasets('dpe03existant:code_departement_ban:all,dpe02neuf::numero_dpe+etiquette_dpe')).toEqual([
      { id: 'dpe03existant', departementField: 'code_departement_ban' },
      { id: 'dpe02neuf', departementField: 'code_departement_ban', select: ['numero_dpe', 'etiquette_dpe'] },
    ]);
    expect(dpeSource.parts({ departements: ['54'], annees: [] })[0].format).toBe('dpe03existant:code_departement_ban,dpe02neuf:code_departement_ban,dpe-france:tv016_departement_code');
    expect(dpeSource.parts({ departements: ['54'], annees: [], format: 'dpe03existant::all' })[0].format).toBe('dpe03existant:code_departement_ban:all');
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
    const selects: string[] = [];
    const server = http.createServer((req, res) => {
      const url = new URL(req.url!, 'http://x');
      seen.push(`${url.pathname}?${url.searchParams.get('qs') ?? ''}&after=${url.searchParams.get('after') ?? ''}`);
      if (url.pathname.endsWith('/lines')) selects.push(`${url.searchParams.get('format')} ${url.searchParams.get('select')}`);
      const m = /\/datasets\/([^/]+)(\/lines)?$/.exec(url.pathname);
      if (!m) return void res.writeHead(404).end();
      if (!m[2]) return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: m[1], dataUpdatedAt: '2026-11-01T00:00:00Z' }));
      const rows = m[1] === 'dpe03existant' ? nancy.results : [];
      const after = Number(url.searchParams.get('after') ?? 0);
      const page = rows.slice(after, after + 10);
      const next = new URL(`http://${req.headers.host}${req.url}`);
      next.searchParams.set('after', String(after + page.length));
      const more = after + page.length < rows.length;
      if (url.searchParams.get('format') === 'csv') {
        // data-fair's CSV: the selected fields in the dataset's own order (here the records' key order), cursor in Link.
        const wanted = new Set(url.searchParams.get('select')!.split(','));
        const cols = [...new Set(rows.flatMap((r) => Object.keys(r as object)))].filter((k) => wanted.has(k));
        const cell = (v: unknown) => (v === undefined || v === null ? '' : /[",\n]/.test(String(v)) ? `"${String(v).replace(/"/g, '""')}"` : String(v));
        const csv = [cols.join(','), ...page.map((r) => cols.map((c) => cell((r as Record<string, unknown>)[c])).join(','))].join('\n') + '\n';
        return void res.writeHead(200, { 'content-type': 'text/csv', ...(more ? { link: `<${next}>; rel=next` } : {}) }).end(csv);
      }
      res.writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ total: rows.length, ...(more ? { next: next.toString() } : {}), results: page }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const data = temp('foncier-dpe-api-');
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/data-fair/api/v1`;
      expect(await pipelineCommand(['dpe', '--base-url', base, '--departements', '54', '--no-marts'], { dataRoot: data })).toBe(0);
      expect(seen).toContain('/data-fair/api/v1/datasets/dpe03existant/lines?code_departement_ban:"54"&after=10');
      expect(seen).toContain('/data-fair/api/v1/datasets/dpe-france/lines?tv016_departement_code:"54"&after=');
      // CSV of the parser's fields only, per dataset family.
      expect(selects).toContain(`csv ${DPE_API_FIELDS.dpe03existant.join(',')}`);
      expect(selects).toContain(`csv ${DPE_API_FIELDS['dpe-france'].join(',')}`);
      const p = new Lake(data).readManifest().sources.dpe.partitions!['54'];
      expect(p).toMatchObject({ rows_read: 18, rows_kept: 18, vintage: '2026-11-01' });
      // The values went through the CSV: a row compared with the JSON sample it was served from.
      const [row] = await queryParquet(`select classe_energie, periode_construction, latitude, coord_source from read_parquet(${lit(path.join(data, 'lake', p.file))}) where dpe_id = '2654E1190898B'`);
      expect(row).toEqual({ classe_energie: 'D', periode_construction: '1978-1982', latitude: 48.70319300100884, coord_source: 'geopoint' });
    } finally {
      await new Promise((r) => server.close(r));
    }
  }, 60_000);
});
