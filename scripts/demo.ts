// `npm run demo`: (re)build the offline demo data in DATA_DIR (default data/).
import { buildDemo } from '../pipeline/demo/build';

buildDemo({ log: console.log }).catch((e: Error) => {
  console.error(`demo build failed: ${e.message}`);
  process.exit(1);
});
