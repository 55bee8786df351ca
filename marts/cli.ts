// `npm run marts`: rebuild every mart from the current lake, run their checks, export Parquet, swap the serving database
// and recalibrate the valuation intervals on it (the after-import step, forced).
import { dataDir } from '../lib/config';
import { afterImport } from './after-import';
import { checkEnvOrExit } from '../lib/env';

// A bad environment variable stops the command here, with a message naming it.
checkEnvOrExit();

console.log(`Building marts from ${dataDir()}/lake…`);
afterImport({ force: true, log: console.log })
  .then((r) => void (process.exitCode = r.ok ? 0 : 1))
  .catch((e: Error) => {
    console.error(`marts failed: ${e.message}`);
    process.exit(1);
  });
