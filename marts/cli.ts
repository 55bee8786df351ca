// `npm run marts`: rebuild every mart from the current lake, run their checks, export Parquet and swap the serving database.
import { dataDir } from '../lib/config';
import { buildMarts } from './runner';

console.log(`Building marts from ${dataDir()}/lake…`);
buildMarts({ log: console.log })
  .then((r) => console.log(`Serving database: ${r.servingFile} (${r.seconds.toFixed(1)} s)`))
  .catch((e: Error) => {
    console.error(`marts failed: ${e.message}`);
    process.exit(1);
  });
