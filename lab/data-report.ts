// `npm run lab -- data-report [--demo]`: effect of each cleaning rule of the `ventes` mart on the real DVF samples
// (and optionally on the demo data), as the markdown table quoted in docs/data.md.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import zlib from 'node:zlib';
import { samplesDir } from '../lib/config';
import { all, DuckDBInstance } from '../lib/duck';
import { buildMarts } from '../marts/runner';
import { buildDemo } from '../pipeline/demo/build';
import { runSource } from '../pipeline/run';
import { checkEnvOrExit } from '../lib/env';

// A bad environment variable stops the command here, with a message naming it.
checkEnvOrExit();

const pct = (a: number, b: number) => (b ? `${((100 * a) / b).toFixed(1)} %` : '-');

async function report(label: string, root: string): Promise<string> {
  const serving = (await buildMarts({ dataRoot: root })).servingFile;
  const instance = await DuckDBInstance.create(':memory:');
  const conn = await instance.connect();
  const lake = `read_parquet('${root}/lake/dvf/*/*/*.parquet', hive_partitioning = true, hive_types = {'code_departement': VARCHAR, 'annee': INTEGER})`;
  const [l] = await all<Record<string, number>>(conn, `select count(*) lines, count(*) filter (line_occurrence > 1) dup_lines,
      count(*) filter (latitude is null) no_coords, count(distinct id) mutations,
      count(distinct id) filter (nature_mutation in ('Echange', 'Expropriation')) non_sales,
      count(distinct id) filter (nature_mutation not in ('Echange', 'Expropriation') and not coalesce(valeur_fonciere > 0, false)) no_price
    from ${lake}`);
  await conn.run(`attach '${serving}' as s (read_only)`);
  const [v] = await all<Record<string, number>>(conn, `select count(*) sales,
      count(*) filter (is_bulk_sale) bulk, count(*) filter (is_vefa) vefa, count(*) filter (is_outlier) outliers,
      count(*) filter (prix_m2 is null) no_pm2,
      count(*) filter (not is_bulk_sale and not is_vefa and not is_outlier and prix_m2 is not null) clean
    from s.ventes`);
  conn.closeSync();
  instance.closeSync();
  return [
    `### ${label}`, '',
    '| step | rows | share |', '|---|---:|---:|',
    `| DVF lines read | ${l.lines} | |`,
    `| identical repeated lines (kept, counted as distinct properties) | ${l.dup_lines} | ${pct(l.dup_lines, l.lines)} of lines |`,
    `| lines without coordinates (kept; radius searches cannot see them) | ${l.no_coords} | ${pct(l.no_coords, l.lines)} of lines |`,
    `| mutations (sales) | ${l.mutations} | |`,
    `| removed: exchanges and expropriations | ${l.non_sales} | ${pct(l.non_sales, l.mutations)} of mutations |`,
    `| removed: no price or price ≤ 0 | ${l.no_price} | ${pct(l.no_price, l.mutations)} of mutations |`,
    `| rows of \`ventes\` | ${v.sales} | ${pct(v.sales, l.mutations)} of mutations |`,
    `| flagged \`is_bulk_sale\` | ${v.bulk} | ${pct(v.bulk, v.sales)} of sales |`,
    `| flagged \`is_vefa\` | ${v.vefa} | ${pct(v.vefa, v.sales)} of sales |`,
    `| flagged \`is_outlier\` | ${v.outliers} | ${pct(v.outliers, v.sales)} of sales |`,
    `| no \`prix_m2\` (land, outbuildings, no built surface) | ${v.no_pm2} | ${pct(v.no_pm2, v.sales)} of sales |`,
    `| clean priced sales used by default statistics | ${v.clean} | ${pct(v.clean, v.sales)} of sales |`,
    '',
  ].join('\n');
}

async function main() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'foncier-report-'));
  const tree = path.join(tmp, 'tree');
  fs.mkdirSync(path.join(tree, '2021', 'departements'), { recursive: true });
  fs.writeFileSync(path.join(tree, '2021', 'departements', '33.csv.gz'),
    zlib.gzipSync(fs.readFileSync(path.join(samplesDir, 'dvf', 'geo-dvf_2021_33_extrait_abzac.csv'))));
  fs.copyFileSync(path.join(samplesDir, 'dvf', 'valeursfoncieres-2020_extrait_dep01.txt'), path.join(tree, 'valeursfoncieres-2020.txt'));

  const geo = path.join(tmp, 'geo');
  await runSource({ source: 'dvf', fromDir: tree, annees: [2021], departements: ['33'], dataRoot: geo });
  console.log(await report('geo-DVF sample: Abzac (33001), 2021', geo));
  const raw = path.join(tmp, 'raw');
  await runSource({ source: 'dvf', format: 'dgfip', fromDir: tree, annees: [2020], departements: ['01'], dataRoot: raw });
  console.log(await report('DGFiP raw sample: Ain (01), January 2020', raw));
  if (parseArgs({ options: { demo: { type: 'boolean', default: false } } }).values.demo) {
    const demo = path.join(tmp, 'demo');
    await buildDemo({ dataRoot: demo });
    console.log(await report('Demo dataset (generated, 2019–2025)', demo));
  }
  fs.rmSync(tmp, { recursive: true, force: true });
}

main().catch((e: Error) => {
  console.error(e.message);
  process.exit(1);
});
