// Extensibility: a third-party source declared in this test (a small CSV stock file with a snapshot date, no
// year axis), registered, imported through the CLI's own function with --from-dir and its own defaults, and read by a
// mart that the test adds as an extra model folder. Nothing in pipeline/, marts/ or lib/ knows about it.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { all, lit } from '../../lib/duck';
import { Lake } from '../../lib/lake';
import { currentServingFile } from '../../lib/serving';
import { pipelineCommand } from '../../pipeline/cli';
import { registerSource } from '../../pipeline/run';
import { writeQueryPartition } from '../../pipeline/sources/national';
import type { Source } from '../../pipeline/sources/types';
import { queryParquet, tempDir } from '../helpers/samples';

const toySource: Source = {
  name: 'toy',
  label: 'Toy business stock (test)',
  license: 'test',
  attribution: 'test',
  partitioning: 'snapshot',
  defaults: {},
  schema: { code_commune: 'VARCHAR', nb_etablissements: 'INTEGER', imported_at: 'TIMESTAMP' },
  countLabel: 'establishments',
  parts: (sel) => [{ source: 'toy', key: 'stock', format: 'csv', relPath: 'stock/toy-stock.csv', url: `${sel.baseUrl ?? 'https://example.invalid'}/stock/toy-stock.csv`, partitions: [] }],
  batchKey: (part) => part.key,
  async importFiles(ctx, items) {
    const out = [];
    for (const item of items) {
      const csv = `read_csv(${lit(item.file.path)}, header = true, delim = ';', columns = {'date_extraction': 'DATE', 'code_commune': 'VARCHAR', 'nb': 'INTEGER'})`;
      const [{ snapshot, n }] = await all<{ snapshot: string; n: number }>(ctx.conn, `select max(date_extraction)::VARCHAR as snapshot, count(*) as n from ${csv}`);
      const partition = await writeQueryPartition(ctx, {
        source: 'toy', partition: { snapshot }, item, rowsRead: n, anomalies: {},
        select: `select code_commune, nb as nb_etablissements, ${lit(ctx.now.toISOString())}::TIMESTAMP as imported_at from ${csv}`,
      });
      out.push({ partitions: [partition], fileAnomalies: {} });
    }
    return out;
  },
};

const MODEL = `-- grain: one row per commune of the toy stock
-- materialized: table
-- check: unique(code_commune)
select code_commune, sum(nb_etablissements)::INTEGER as etablissements, any_value(snapshot) as snapshot
from {{ source('toy') }}
group by code_commune
`;

describe('a plug-in source with a snapshot and no year axis', () => {
  const tree = tempDir('foncier-toy-tree-');
  const data = tempDir('foncier-toy-data-');
  const models = tempDir('foncier-toy-models-');
  fs.writeFileSync(path.join(models, 'toy_communes.sql'), MODEL);
  const writeStock = (date: string, rows: Array<[string, number]>) => {
    fs.mkdirSync(path.join(tree, 'stock'), { recursive: true });
    fs.writeFileSync(path.join(tree, 'stock', 'toy-stock.csv'), ['date_extraction;code_commune;nb', ...rows.map(([c, n]) => `${date};${c};${n}`)].join('\n') + '\n');
  };
  const servedToy = async () => {
    const serving = currentServingFile(data)!;
    return queryParquet(`attach ${lit(serving)} as s (read_only); select * from s.toy_communes order by code_commune`);
  };
  afterAll(() => {
    vi.restoreAllMocks();
    for (const d of [tree, data, models]) fs.rmSync(d, { recursive: true, force: true });
  });

  it('imports through the CLI path with its own defaults, and a mart reads it; a new snapshot replaces the old', async () => {
    vi.spyOn(console, 'log').mockImplementation(() => {}); // the CLI's progress lines
    registerSource(toySource);
    const first: Array<[string, number]> = [['33001', 2], ['33001', 3], ['75056', 7]];
    writeStock('2025-06-01', first);
    // No --departements / --annees: the toy declares neither axis, and the CLI must not ask DVF's defaults of it.
    await pipelineCommand(['toy', '--from-dir', tree], { dataRoot: data, modelsDirs: [models] });

    const manifest = new Lake(data).readManifest();
    expect(Object.keys(manifest.sources.toy.partitions!)).toEqual(['2025-06-01']);
    expect(manifest.sources.toy.partitions!['2025-06-01']).toMatchObject({ partition: { snapshot: '2025-06-01' }, rows_read: 3, rows_kept: 3, count: 3 });
    // The mart, against a sum computed here from the CSV rows.
    const expected = (rows: Array<[string, number]>, snapshot: string) => Object.entries(rows.reduce<Record<string, number>>((a, [c, n]) => ({ ...a, [c]: (a[c] ?? 0) + n }), {}))
      .sort().map(([code_commune, etablissements]) => ({ code_commune, etablissements, snapshot }));
    expect(await servedToy()).toEqual(expected(first, '2025-06-01'));
    // the analysts' Parquet copy of the mart too
    expect(await queryParquet(`select count(*)::INTEGER n from ${lit(path.join(data, 'marts', 'toy_communes.parquet'))}`)).toEqual([{ n: 2 }]);

    const second: Array<[string, number]> = [['33001', 1], ['69123', 4]];
    writeStock('2025-07-01', second);
    await pipelineCommand(['toy', '--from-dir', tree], { dataRoot: data, modelsDirs: [models] });
    const after = new Lake(data).readManifest().sources.toy;
    expect(Object.keys(after.partitions!)).toEqual(['2025-07-01']);
    expect(fs.readdirSync(path.join(data, 'lake', 'toy'))).toEqual(['snapshot=2025-07-01']);
    expect(await servedToy()).toEqual(expected(second, '2025-07-01'));
  });
});
