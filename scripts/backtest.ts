// `npm run backtest [-- --max-targets 20000 --label NAME --no-docs]`: walk-forward backtest of the valuation estimator
// on DATA_DIR's serving database (lib/valuation/backtest.ts). Writes marts/valuation_backtest.parquet and the
// calibration the API loads (as the pipeline does after an import), prints the figures and publishes them in
// docs/valuation.md under `## Results`. The same backtest on the real multi-year DVF samples, and its replay through
// GET /v1/estimate, are research: `npm run lab -- backtest-real` (lab/backtest/README.md).
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { dataDir, repoRoot } from '../lib/config';
import { recalibrate } from '../marts/after-import';
import { renderReport, upsertSection } from '../lib/valuation/report';
import { checkEnvOrExit } from '../lib/env';

// A bad environment variable stops the command here, with a message naming it.
checkEnvOrExit();

/** Prints a report and, unless `docs` is false, writes it into docs/valuation.md as the section `label`. */
function publish(docs: boolean, markdown: string, label: string): void {
  console.log(`\n${markdown}`);
  if (!docs) return;
  const file = path.join(repoRoot, 'docs', 'valuation.md');
  fs.writeFileSync(file, upsertSection(fs.readFileSync(file, 'utf8'), label, markdown));
  console.log(`Published in ${path.relative(repoRoot, file)} (section "${label}").`);
}

/** --max-targets as a positive integer (default 20,000). */
function maxTargetsOf(value: string | undefined): number {
  const n = Number(value ?? 20_000);
  if (!Number.isInteger(n) || n < 1) throw new Error('--max-targets must be a positive integer');
  return n;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { 'max-targets': { type: 'string' }, label: { type: 'string' }, 'no-docs': { type: 'boolean', default: false } },
  });
  const maxTargets = maxTargetsOf(values['max-targets']);
  const label = values.label ?? path.basename(dataDir());
  // recalibrate = runBacktest + the stamp saying which serving database the calibration was learnt on
  publish(!values['no-docs'], renderReport(await recalibrate({ dataRoot: dataDir(), maxTargets, log: console.log }), label), label);
}

main().catch((e: Error) => {
  console.error(`backtest failed: ${e.message}`);
  process.exit(1);
});
