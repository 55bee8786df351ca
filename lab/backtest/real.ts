// `npm run lab -- backtest-real [--samples DIR] [--replay] [--keep] [--max-targets N] [--no-docs]`: the walk-forward
// backtest on real multi-year DVF. Imports the samples (DIR, default shared/data/dvf; real-samples.ts turns them into
// geo-DVF trees) into temporary data folders with the pipeline, builds and backtests each (Toulon, Lyon) and publishes
// the tables in docs/valuation.md under `## Results`; with --replay, also values the last six months' targets
// through GET /v1/estimate on data cut before each month (api-replay.ts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { repoRoot, samplesDir } from '../../lib/config';
import { renderReport, upsertSection } from '../../lib/valuation/report';
import { recalibrate } from '../../marts/after-import';
import { buildMarts } from '../../marts/runner';
import { runSource } from '../../pipeline/run';
import { renderReplay, replay, replayTargets, SCENARIOS } from './api-replay';
import { buildRealDatasets } from './real-samples';

const { values } = parseArgs({
  options: {
    samples: { type: 'string' },
    replay: { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
    'max-targets': { type: 'string', default: '20000' },
    'no-docs': { type: 'boolean', default: false },
  },
});
const samples = path.resolve(values.samples ?? path.join(samplesDir, 'dvf'));
const maxTargets = Number(values['max-targets']);

function publish(markdown: string, label: string): void {
  console.log(`\n${markdown}`);
  if (values['no-docs']) return;
  const file = path.join(repoRoot, 'docs', 'valuation.md');
  fs.writeFileSync(file, upsertSection(fs.readFileSync(file, 'utf8'), label, markdown));
  console.log(`Published in ${path.relative(repoRoot, file)} (section "${label}").`);
}

async function main(): Promise<void> {
  if (!Number.isInteger(maxTargets) || maxTargets < 1) throw new Error('--max-targets must be a positive integer');
  if (!fs.statSync(samples, { throwIfNoEntry: false })?.isDirectory()) throw new Error(`--samples ${samples}: no such folder`);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'foncier-backtest-real-'));
  try {
    const datasets = await buildRealDatasets(samples, path.join(work, 'trees'), console.log);
    if (!datasets.length) throw new Error(`no multi-year geo-DVF data found in ${samples}`);
    for (const ds of datasets) {
      const dataRoot = path.join(work, `data-${ds.slug}`);
      console.log(`${ds.label}: importing ${ds.tree}`);
      const outcomes = await runSource({ source: 'dvf', fromDir: ds.tree, departements: ds.departements, annees: ds.annees, dataRoot });
      const failed = outcomes.filter((o) => o.status === 'failed');
      if (failed.length) throw new Error(`import failed: ${failed.map((o) => `${o.part.key}: ${o.error}`).join('; ')}`);
      await buildMarts({ dataRoot });
      publish(renderReport(await recalibrate({ dataRoot, maxTargets, log: console.log }), ds.label), ds.label);
      if (values.replay) {
        const targets = await replayTargets(dataRoot);
        const results = [];
        for (const scenario of SCENARIOS) results.push(await replay(ds, targets, scenario, work, console.log));
        const label = `${ds.label}, replayed through GET /v1/estimate`;
        publish(renderReplay(label, results, targets.length), label);
      }
    }
  } finally {
    if (values.keep) console.log(`Data folders kept in ${work}`);
    else fs.rmSync(work, { recursive: true, force: true });
  }
}

main().catch((e: Error) => {
  console.error(`backtest failed: ${e.message}`);
  process.exit(1);
});
