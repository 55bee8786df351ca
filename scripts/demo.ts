// `npm run demo`: (re)build the offline demo data in DATA_DIR (default data/).
import { buildDemo } from '../pipeline/demo/build';
import { checkEnvOrExit } from '../lib/env';

// A bad environment variable stops the command here, with a message naming it.
checkEnvOrExit();

buildDemo({ log: console.log }).catch((e: Error) => {
  console.error(`demo build failed: ${e.message}`);
  process.exit(1);
});
