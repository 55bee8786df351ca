// `npm run backtest [-- --max-targets 20000 --label NAME --no-docs]`: walk-forward backtest of the valuation estimator
// on DATA_DIR's serving database (lib/valuation/backtest.ts). Writes marts/valuation_backtest.parquet and the
// calibration the API loads, prints the figures and publishes them in docs/valuation.md under `## Results`.
// `npm run backtest -- --real-samples [DIR]` instead imports the real multi-year DVF samples (DIR, default
// shared/data/dvf) into temporary data folders with the pipeline and backtests each (Toulon, Lyon); with --replay, also
// values the last six months' targets through GET /v1/estimate on data cut before each month (scripts/backtest/api-replay.ts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { dataDir, repoRoot, samplesDir } from '../lib/config';
import { recalibrate } from '../marts/after-import';
import { renderReport, upsertSection } from '../lib/valuation/report';
import { buildMarts } from '../marts/runner';
import { runSource } from '../pipeline/run';
import { renderReplay, replay, replayTargets, SCENARIOS } from './backtest/api-replay';
import { buildRealDatasets } from './backtest/real-samples';
import { checkEnvOrExit } from '../lib/env';

// A bad environment variable stops the command here, with a message naming it.
checkEnvOrExit();

interface Args {
  maxTargets: number;
  label: string;
  docs: boolean;
  realSamples?: string;
  replay: boolean;
  keep: boolean;
}

function args(argv: string[]): Args {
  const a: Args = { maxTargets: 20_000, label: path.basename(dataDir()), docs: true, replay: false, keep: false };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--max-targets') a.maxTargets = Number(argv[++i]);
    else if (argv[i] === '--label') a.label = argv[++i];
    else if (argv[i] === '--no-docs') a.docs = false;
    else if (argv[i] === '--keep') a.keep = true;
    else if (argv[i] === '--replay') a.replay = true;
    else if (argv[i] === '--real-samples') a.realSamples = argv[i + 1] && !argv[i + 1].startsWith('--') ? path.resolve(argv[++i]) : path.join(samplesDir, 'dvf');
    else throw new Error(`unexpected argument ${argv[i]} (usage: --max-targets N --label NAME --no-docs | --real-samples [DIR] --replay --keep)`);
  }
  if (!Number.isInteger(a.maxTargets) || a.maxTargets < 1) throw new Error('--max-targets must be a positive integer');
  if (a.replay && !a.realSamples) throw new Error('--replay goes with --real-samples');
  if (a.realSamples && !fs.statSync(a.realSamples, { throwIfNoEntry: false })?.isDirectory()) throw new Error(`--real-samples ${a.realSamples}: no such folder`);
  return a;
}

function publish(a: Args, markdown: string, label: string): void {
  console.log(`\n${markdown}`);
  if (!a.docs) return;
  const file = path.join(repoRoot, 'docs', 'valuation.md');
  fs.writeFileSync(file, upsertSection(fs.readFileSync(file, 'utf8'), label, markdown));
  console.log(`Published in ${path.relative(repoRoot, file)} (section "${label}").`);
}

async function realSamples(a: Args): Promise<void> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'foncier-backtest-real-'));
  try {
    const datasets = await buildRealDatasets(a.realSamples!, path.join(work, 'trees'), console.log);
    if (!datasets.length) throw new Error(`no multi-year geo-DVF data found in ${a.realSamples}`);
    for (const ds of datasets) {
      const dataRoot = path.join(work, `data-${ds.slug}`);
      console.log(`${ds.label}: importing ${ds.tree}`);
      const outcomes = await runSource({ source: 'dvf', fromDir: ds.tree, departements: ds.departements, annees: ds.annees, dataRoot });
      const failed = outcomes.filter((o) => o.status === 'failed');
      if (failed.length) throw new Error(`import failed: ${failed.map((o) => `${o.part.key}: ${o.error}`).join('; ')}`);
      await buildMarts({ dataRoot });
      publish(a, renderReport(await recalibrate({ dataRoot, maxTargets: a.maxTargets, log: console.log }), ds.label), ds.label);
      if (a.replay) {
        const targets = await replayTargets(dataRoot);
        const results = [];
        for (const scenario of SCENARIOS) results.push(await replay(ds, targets, scenario, work, console.log));
        const label = `${ds.label}, replayed through GET /v1/estimate`;
        publish(a, renderReplay(label, results, targets.length), label);
      }
    }
  } finally {
    if (a.keep) console.log(`Data folders kept in ${work}`);
    else fs.rmSync(work, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const a = args(process.argv.slice(2));
  if (a.realSamples) return realSamples(a);
  // recalibrate = runBacktest + the stamp saying which serving database the calibration was learnt on
  publish(a, renderReport(await recalibrate({ dataRoot: dataDir(), maxTargets: a.maxTargets, log: console.log }), a.label), a.label);
}

main().catch((e: Error) => {
  console.error(`backtest failed: ${e.message}`);
  process.exit(1);
});
