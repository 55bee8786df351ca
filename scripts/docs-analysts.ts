// `npm run docs:analysts`: writes docs/analysts.md from the marts' SQL headers (grain, sort, checks, leading comment,
// the meaning of each column) and the columns and types of the Parquet marts of DATA_DIR (build them first: `npm start` on demo data, or the pipeline), so
// the document cannot drift from the models: test/marts/analysts.test.ts regenerates it on the demo dataset and fails when
// the committed file differs. The worked examples below are run by that test too.
import fs from 'node:fs';
import path from 'node:path';
import { dataDir, paths, repoRoot } from '../lib/config';
import { columnMeanings, loadModels, MODELS_DIR, type Model } from '../marts/runner';
import { openMarts, runSql } from './sql';

export const ANALYSTS_DOC = path.join(repoRoot, 'docs', 'analysts.md');

export interface WorkedExample {
  id: 'commune_median' | 'dpe_mix' | 'flips';
  title: string;
  /** Why and how to read the answer. */
  text: string;
  sql: string;
  /** The marts the query reads: when one is not a model of this repository yet, the example says it is coming. */
  needs: string[];
}

export const EXAMPLES: WorkedExample[] = [
  {
    id: 'commune_median',
    title: "A commune's yearly median €/m²",
    text:
      'Flats in Bordeaux (INSEE 33063), clean sales only (no bulk sale, outlier or off-plan sale: the API\'s defaults), ' +
      'one row per year. `code_commune_actuel` is the current commune, so sales of communes merged since count in ' +
      'their new commune; for Paris, Lyon and Marseille use an arrondissement code (75115) or `code_commune_actuel ' +
      "like '751%'`.",
    sql: `select year(date_mutation) as annee,
       count(*) as ventes,
       round(median(prix_m2), 2) as prix_m2_median
from ventes
where code_commune_actuel = '33063'
  and type_local = 'Appartement'
  and prix_m2 is not null
  and not (is_bulk_sale or is_outlier or is_vefa)
group by all
order by annee`,
    needs: ['ventes'],
  },
  {
    id: 'dpe_mix',
    title: 'The DPE class mix of a département',
    text:
      'Share of each energy class among the current diagnostics of Gironde (33): a diagnostic replaced by a newer one ' +
      '(`est_remplace`) is left out, as in every statistic of the API; classes outside A–G are null and left out too.',
    sql: `select classe_energie,
       count(*) as diagnostics,
       round(100 * count(*) / sum(count(*)) over (), 1) as pct
from dpe_diagnostics
where code_departement = '33'
  and not est_remplace
  and classe_energie is not null
group by classe_energie
order by classe_energie`,
    needs: ['dpe_diagnostics'],
  },
  {
    id: 'flips',
    title: 'Flips per commune',
    text:
      'Fast resales (a clean single-dwelling sale resold 18–24 months after its purchase, rules in docs/decisions.md, ' +
      'Flips) per current commune and type, with the median gross margin; `flips_communes` has the same counts over ' +
      "each commune's latest 24 months, with the rate against all its resales.",
    sql: `select code_commune_actuel,
       type_local,
       count(*) as flips,
       round(median(prix_revente / prix_achat - 1) * 100, 1) as marge_brute_mediane_pct
from flips
group by all
order by flips desc, code_commune_actuel, type_local
limit 10`,
    needs: ['flips'],
  },
];

/** The leading comment of a model that is not a `key: value` header line: what the model is for. */
function descriptionOf(model: Model): string {
  const lines: string[] = [];
  for (const line of model.sql.split('\n')) {
    if (!line.startsWith('--')) break;
    const text = line.replace(/^--\s?/, '');
    if (/^(grain|materialized|sort|index|check|column):/.test(text)) continue;
    lines.push(text.trim());
  }
  return lines.join(' ');
}

const code = (s: string) => `\`${s.replace(/`/g, "'")}\``;

/** The columns a `not_null` check covers: the only nullability the build guarantees. */
function notNullColumns(model: Model): Set<string> {
  return new Set(model.checks.flatMap((c) => /^not_null\((.*)\)$/s.exec(c.trim())?.[1].split(',').map((s) => s.trim()) ?? []));
}

const cell = (s: string) => s.replace(/\|/g, '\\|');

function modelSection(model: Model, meanings: Map<string, string>, columns: Array<{ name: string; type: string }> | undefined): string {
  const out = [`### ${model.name}`, ''];
  const description = descriptionOf(model);
  if (description) out.push(description, '');
  out.push(`- **Grain**: ${model.grain ?? '(not declared)'}`);
  if (model.sort.length) out.push(`- **Sorted by**: ${model.sort.map(code).join(', ')}`);
  out.push(`- **Built from**: ${[...model.refs.map(code), ...model.sources.map((s) => `source ${code(s)}`)].join(', ') || '(nothing)'}`);
  out.push(`- **Checks** (every build fails unless they hold):${model.checks.length ? '' : ' none'}`);
  for (const check of model.checks) out.push(`  - ${code(check)}`);
  out.push('');
  if (!columns) {
    out.push('_Not built in the data folder this document was generated from._', '');
  } else {
    const notNull = notNullColumns(model);
    out.push(
      '| column | type | never null | meaning |',
      '|---|---|---|---|',
      ...columns.map((c) => {
        const meaning = meanings.get(c.name);
        if (!meaning) throw new Error(`${model.name}.${c.name} has no meaning: add a "-- column: ${c.name}: …" line to ${path.relative(repoRoot, model.file)}`);
        return `| ${c.name} | ${c.type} | ${notNull.has(c.name) ? 'yes (checked)' : ''} | ${cell(meaning)} |`;
      }),
      '',
    );
  }
  return out.join('\n');
}

/** The whole document, from the models and the Parquet marts of `root`. */
export async function renderAnalystsDoc(root = dataDir()): Promise<string> {
  const models = loadModels(MODELS_DIR);
  const meanings = columnMeanings(models);
  const tables = models.filter((m) => m.materialized === 'table');
  const names = new Set(tables.map((m) => m.name));
  const marts = await openMarts(root);
  const columnsOf = new Map<string, Array<{ name: string; type: string }>>();
  try {
    for (const t of marts.tables) {
      const { rows } = await runSql(marts.conn, `describe "${t}"`);
      columnsOf.set(t, rows.map((r) => ({ name: String(r.column_name), type: String(r.column_type) })));
    }
  } finally {
    marts.close();
  }

  const examples = EXAMPLES.map((e, i) => {
    const missing = e.needs.filter((n) => !names.has(n));
    const note = missing.length
      ? `\n\n> Available once the source of ${missing.map(code).join(', ')} lands: this repository has no such mart yet, so the query cannot run today.`
      : '';
    return `### ${i + 1}. ${e.title}\n\n${e.text}${note}\n\n\`\`\`sh\nnpm run sql -- "${e.sql.replace(/\s*\n\s*/g, ' ')}"\n\`\`\`\n\n\`\`\`sql\n${e.sql}\n\`\`\`\n`;
  });

  return `# Analysts' guide: the marts

<!-- Generated by \`npm run docs:analysts\` from marts/models/**/*.sql and the Parquet marts; do not edit by hand.
     test/marts/analysts.test.ts fails when this file is out of date, and runs the worked examples. -->

The pipeline publishes every mart (a table built by a SQL model of \`marts/models/\`) as one Parquet file in
\`data/marts/\` (or \`$DATA_DIR/marts/\`), replaced atomically by each build: query them directly, with no server and no
key. Rules behind the columns (cleaning, outliers, bulk sales, VEFA) are in [data.md](data.md) and
[decisions.md](decisions.md).

## One-command queries

\`\`\`sh
npm run sql -- "select type_local, count(*) from ventes group by all"            # an aligned table
npm run sql -- --format csv "select * from flips_communes" > flips_communes.csv   # or --format json
DATA_DIR=/srv/foncier npm run sql -- "describe ventes"
\`\`\`

Each Parquet file is a view named after it (\`ventes\` is \`data/marts/ventes.parquet\`); DuckDB's own syntax also
works: \`select … from 'data/marts/ventes.parquet'\`. The same in Python with the \`duckdb\` package
(\`pip install duckdb\`):

\`\`\`python
import glob, os, duckdb

con = duckdb.connect()
for f in glob.glob("data/marts/*.parquet"):
    con.execute(f"create view {os.path.basename(f)[:-8]} as select * from read_parquet('{f}')")
print(con.sql("select type_local, count(*) from ventes group by all").df())  # .df() needs pandas; .fetchall() does not
\`\`\`

## Worked examples

${examples.join('\n')}
## Marts

${tables.length} marts, in the order of \`marts/models/\`. Grain, sort order, checks and the meaning of each column come from
each model's header; columns and types from its Parquet file. "Never null" marks the columns a \`not_null\` check
covers; any other column may be null where its meaning says so.

${tables.map((m) => modelSection(m, meanings.get(m.name)!, columnsOf.get(m.name))).join('\n')}`;
}

async function main(): Promise<void> {
  if (!fs.existsSync(paths.marts())) throw new Error(`no marts in ${paths.marts()}: build them first (npm start on demo data, or npm run pipeline)`);
  fs.writeFileSync(ANALYSTS_DOC, await renderAnalystsDoc());
  console.log(`wrote ${path.relative(process.cwd(), ANALYSTS_DOC)} from ${dataDir()}`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((e: Error) => {
    console.error(`docs:analysts: ${e.message}`);
    process.exit(1);
  });
}
