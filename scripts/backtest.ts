// `npm run backtest [-- --max-targets 20000 --label NAME --no-docs]`: walk-forward backtest of the valuation estimator
// on DATA_DIR's serving database (lib/valuation/backtest.ts). Writes marts/valuation_backtest.parquet and the
// calibration the API loads, prints the figures and publishes them in docs/valuation.md under `## Results`.
import fs from 'node:fs';
import path from 'node:path';
import { dataDir, repoRoot } from '../lib/config';
import { recalibrate } from '../marts/after-import';
import { renderReport, upsertSection } from '../lib/valuation/report';

function args(argv: string[]): { maxTargets: number; label: string; docs: boolean } {
  const a = { maxTargets: 20_000, label: path.basename(dataDir()), docs: true };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--max-targets') a.maxTargets = Number(argv[++i]);
    else if (argv[i] === '--label') a.label = argv[++i];
    else if (argv[i] === '--no-docs') a.docs = false;
    else throw new Error(`unexpected argument ${argv[i]} (usage: --max-targets N --label NAME --no-docs)`);
  }
  if (!Number.isInteger(a.maxTargets) || a.maxTargets < 1) throw new Error('--max-targets must be a positive integer');
  return a;
}

async function main(): Promise<void> {
  const a = args(process.argv.slice(2));
  // recalibrate = runBacktest + the stamp saying which serving database the calibration was learnt on
  const report = await recalibrate({ dataRoot: dataDir(), maxTargets: a.maxTargets, log: console.log });
  const markdown = renderReport(report, a.label);
  console.log(`\n${markdown}`);
  if (a.docs) {
    const file = path.join(repoRoot, 'docs', 'valuation.md');
    fs.writeFileSync(file, upsertSection(fs.readFileSync(file, 'utf8'), a.label, markdown));
    console.log(`Published in ${path.relative(repoRoot, file)} (section "${a.label}").`);
  }
}

main().catch((e: Error) => {
  console.error(`backtest failed: ${e.message}`);
  process.exit(1);
});
