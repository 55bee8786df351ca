// docs/analysts.md: generated from the models' headers and the Parquet marts (fails when the committed file is out of
// date), and its worked examples run on the demo dataset, each checked against the same figure computed here in plain
// TypeScript from the mart's rows; plus `npm run sql` itself.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../lib/config';
import type { Row } from '../../lib/duck';
import { columnMeanings, loadModels } from '../../marts/runner';
import { ANALYSTS_DOC, EXAMPLES, renderAnalystsDoc } from '../../scripts/docs-analysts';
import { formatTable, openMarts, runSql, type Marts } from '../../scripts/sql';
import { testData } from '../helpers/data';
import { median } from '../helpers/stats';

let dataRoot: string;
let marts: Marts;
beforeAll(async () => {
  dataRoot = await testData('demo');
  marts = await openMarts(dataRoot);
}, 600_000); // builds the demo dataset when this file asks first: minutes on a busy machine
afterAll(() => marts?.close());

const example = (id: string) => EXAMPLES.find((e) => e.id === id)!;
const modelExists = (name: string) => loadModels().some((m) => m.name === name);
/** Every row of a mart, with no filter or aggregate: the independent side of each check. */
const rowsOf = async (mart: string, columns: string) => (await runSql(marts.conn, `select ${columns} from ${mart}`)).rows;
/** SQL's round(x, n) and ours may differ on a half; anything else is a wrong figure. */
const near = (a: unknown, b: number, decimals: number) => expect(Math.abs((a as number) - b)).toBeLessThanOrEqual(0.5 * 10 ** -decimals + 1e-9);

function groupBy<K>(rows: Row[], key: (r: Row) => K): Map<K, Row[]> {
  const m = new Map<K, Row[]>();
  for (const r of rows) m.set(key(r), [...(m.get(key(r)) ?? []), r]);
  return m;
}

describe('docs/analysts.md', () => {
  // After changing or adding a model: `npx vitest run test/marts/analysts.test.ts -u` rewrites the file from the shared demo
  // dataset (or `npm run docs:analysts` over a demo data folder).
  it('is what `npm run docs:analysts` generates from the models and the marts', async () => {
    const committed = await renderAnalystsDoc(dataRoot);
    await expect(committed).toMatchFileSnapshot(ANALYSTS_DOC);
    // Every table model has its section, with its grain and every check.
    for (const m of loadModels().filter((x) => x.materialized === 'table')) {
      const section = committed.split(`\n### ${m.name}\n`)[1]?.split('\n### ')[0];
      expect(section, m.name).toBeDefined();
      expect(section).toContain(m.grain!);
      for (const c of m.checks) expect(section).toContain(c);
    }
  });

  it('gives every column of every mart a meaning: the model headers list exactly the columns of the built marts', async () => {
    const models = loadModels();
    const meanings = columnMeanings(models);
    const tables = models.filter((m) => m.materialized === 'table');
    expect(tables.length).toBeGreaterThan(20);
    for (const m of tables) {
      const built = (await runSql(marts.conn, `describe "${m.name}"`)).rows.map((r) => String(r.column_name));
      expect(m.columns.map((c) => c.name).sort(), m.name).toEqual([...built].sort());
      for (const c of built) expect(meanings.get(m.name)!.get(c), `${m.name}.${c}`).toMatch(/\S.{9,}/);
    }
  });

  it("example 1: a commune's yearly median €/m²", async () => {
    const { rows } = await runSql(marts.conn, example('commune_median').sql);
    const sales = (await rowsOf('ventes', 'code_commune_actuel, type_local, date_mutation, prix_m2, is_bulk_sale, is_outlier, is_vefa')).filter(
      (r) => r.code_commune_actuel === '33063' && r.type_local === 'Appartement' && r.prix_m2 !== null && !r.is_bulk_sale && !r.is_outlier && !r.is_vefa,
    );
    const byYear = [...groupBy(sales, (r) => Number(String(r.date_mutation).slice(0, 4)))].sort(([a], [b]) => a - b);
    expect(byYear.length).toBeGreaterThanOrEqual(5);
    expect(rows.map((r) => [r.annee, r.ventes])).toEqual(byYear.map(([y, rs]) => [y, rs.length]));
    byYear.forEach(([, rs], i) => near(rows[i].prix_m2_median, median(rs.map((r) => r.prix_m2 as number)), 2));
  });

  it('example 2: the DPE class mix of a département (once the DPE mart exists)', async () => {
    const e = example('dpe_mix');
    if (!modelExists('dpe_diagnostics')) {
      // Not yet: the document says so, and the query indeed cannot run.
      expect(fs.readFileSync(ANALYSTS_DOC, 'utf8')).toContain('Available once the source of `dpe_diagnostics` lands');
      await expect(runSql(marts.conn, e.sql)).rejects.toThrow(/dpe_diagnostics/);
      return;
    }
    const { rows } = await runSql(marts.conn, e.sql);
    const current = (await rowsOf('dpe_diagnostics', 'code_departement, est_remplace, classe_energie')).filter(
      (r) => r.code_departement === '33' && !r.est_remplace && r.classe_energie !== null,
    );
    expect(current.length).toBeGreaterThan(0);
    const byClass = [...groupBy(current, (r) => r.classe_energie as string)].sort(([a], [b]) => a.localeCompare(b));
    expect(rows.map((r) => [r.classe_energie, r.diagnostics])).toEqual(byClass.map(([c, rs]) => [c, rs.length]));
    byClass.forEach(([, rs], i) => near(rows[i].pct, (100 * rs.length) / current.length, 1));
  });

  it('example 3: flips per commune', async () => {
    const { rows } = await runSql(marts.conn, example('flips').sql);
    const flips = await rowsOf('flips', 'code_commune_actuel, type_local, prix_achat, prix_revente');
    const groups = [...groupBy(flips, (r) => `${r.code_commune_actuel}|${r.type_local}`)]
      .map(([k, rs]) => ({ k, n: rs.length, marge: median(rs.map((r) => (r.prix_revente as number) / (r.prix_achat as number) - 1)) * 100 }))
      .sort((a, b) => b.n - a.n || a.k.localeCompare(b.k))
      .slice(0, 10);
    expect(groups[0].n).toBeGreaterThan(1);
    expect(rows.map((r) => [`${r.code_commune_actuel}|${r.type_local}`, r.flips])).toEqual(groups.map((g) => [g.k, g.n]));
    groups.forEach((g, i) => near(rows[i].marge_brute_mediane_pct, g.marge, 1));
  });

  it('`npm run sql` answers a query over the marts of DATA_DIR (json; the table format aligned)', async () => {
    const sql = 'select type_local, count(*) as n from ventes group by all order by type_local';
    const run = (...args: string[]) =>
      promisify(execFile)(path.join(repoRoot, 'node_modules', '.bin', 'tsx'), [path.join(repoRoot, 'scripts', 'sql.ts'), ...args], { env: { ...process.env, DATA_DIR: dataRoot } });
    const expected = (await runSql(marts.conn, sql)).rows;
    const counts = groupBy(await rowsOf('ventes', 'type_local'), (r) => r.type_local as string);
    expect(expected).toEqual([...counts].sort(([a], [b]) => (a < b ? -1 : 1)).map(([t, rs]) => ({ type_local: t, n: rs.length })));
    expect(JSON.parse((await run('--format', 'json', sql)).stdout)).toEqual(expected);
    // The default format, in process (one child process is enough to test the command itself).
    const table = `${formatTable(['type_local', 'n'], expected)}\n`;
    expect(table).toContain(`(${expected.length} rows)`);
    for (const r of expected) expect(table).toMatch(new RegExp(`${r.type_local}\\s+│\\s+${r.n}\\n`));
  });
});
