// The one step after an import, shared by the pipeline CLI, `npm run marts`, the demo build, `npm start` and the bench
// dataset: build the marts and the serving database, then recalibrate the valuation intervals on it. Each output
// records what it was made from (lib/serving.ts), so a run interrupted between or inside these steps is finished by
// the next one even when no file changed.
import { dataDir } from '../lib/config';
import { currentServingFile, staleness, writeCalibrationStamp } from '../lib/serving';
import { maybePauseForTests } from '../lib/generations';
import { runBacktest, type BacktestReport } from '../lib/valuation/backtest';
import { calibrationFile } from '../lib/valuation/calibration';
import { buildMarts, type BuildReport } from './runner';

export interface AfterImportOptions {
  dataRoot?: string;
  log?: (m: string) => void;
  /** Rebuild even when the outputs look fresh (something was imported, or --force). */
  force?: boolean;
  /** Extra marts model folders (see marts/runner.ts). */
  modelsDirs?: string[];
  /** Backtest targets (default: lib/valuation/backtest.ts's). */
  maxTargets?: number;
}

export interface AfterImportResult {
  /** false when the calibration failed (the API then keeps the previous one). A marts failure throws. */
  ok: boolean;
  marts?: BuildReport;
  backtest?: BacktestReport;
}

/** Walk-forward backtest on the current serving database, then the stamp saying which database it was learnt on. */
export async function recalibrate(opts: { dataRoot?: string; log?: (m: string) => void; maxTargets?: number } = {}): Promise<BacktestReport> {
  const root = opts.dataRoot ?? dataDir();
  const serving = currentServingFile(root);
  const report = await runBacktest({ dataRoot: root, log: opts.log, maxTargets: opts.maxTargets });
  if (serving) writeCalibrationStamp(root, serving);
  return report;
}

export async function afterImport(opts: AfterImportOptions = {}): Promise<AfterImportResult> {
  const root = opts.dataRoot ?? dataDir();
  const log = opts.log ?? (() => {});
  const result: AfterImportResult = { ok: true };
  if (opts.force || staleness(root).marts) {
    log('\nBuilding marts and the serving database…');
    result.marts = await buildMarts({ dataRoot: root, log, modelsDirs: opts.modelsDirs });
    log(`Serving database: ${result.marts.servingFile} (${result.marts.seconds.toFixed(1)} s)`);
  }
  maybePauseForTests('before-calibration');
  if (result.marts || staleness(root).calibration) {
    // The valuation intervals are calibrated on the data just built (docs/valuation.md).
    try {
      result.backtest = await recalibrate({ dataRoot: root, log, maxTargets: opts.maxTargets });
      log(`Valuation calibration: ${result.backtest.targets} targets backtested, ${calibrationFile(root)} (${result.backtest.seconds.toFixed(1)} s)`);
    } catch (e) {
      log(`Valuation backtest failed (${(e as Error).message}); the API keeps the previous calibration.`);
      result.ok = false;
    }
  }
  return result;
}
