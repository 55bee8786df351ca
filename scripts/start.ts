// `npm start`: serve DATA_DIR; with no data yet, first build the offline demo dataset through the real pipeline; when
// the serving database is older than the lake, or the calibration older than the serving database (a pipeline killed
// during the marts or the backtest), first finish the after-import step; and create a demo key (plan Scale) whose value is kept in DATA_DIR/demo-key.txt so every start can print it.
import fs from 'node:fs';
import path from 'node:path';
import { dataDir, paths } from '../lib/config';
import { hasServingData } from '../api/db';
import { startServer } from '../api/server';
import { staleness } from '../lib/serving';
import { afterImport } from '../marts/after-import';
import { buildDemo } from '../pipeline/demo/build';
import { checkEnvOrExit, env } from '../lib/env';

// A bad environment variable stops the server here, before any data is built, with a message naming it.
checkEnvOrExit();

const demoKeyFile = () => path.join(dataDir(), 'demo-key.txt');

async function main() {
  if (!hasServingData()) {
    console.log(`No serving database in ${dataDir()}: building the demo dataset (offline, real geo-DVF format)…`);
    await buildDemo({ log: console.log });
  } else if (Object.values(staleness()).some(Boolean)) {
    console.log(`The serving data in ${dataDir()} is older than its lake: finishing the after-import step first…`);
    // A pipeline still running holds the lake lock and will finish the step itself: serve what exists meanwhile.
    await afterImport({ log: console.log }).catch((e: Error) => console.error(`after-import step skipped: ${e.message}`));
  }
  const { ctx } = await startServer();
  const port = env().PORT;
  // Only a demo data folder gets a demo key: a production folder's keys are created with `npm run keys`.
  if (fs.existsSync(paths.demoSource()) && !fs.existsSync(demoKeyFile())) {
    const { key } = await ctx.state.keys.createKey({ plan: 'Scale', label: 'demo key created by npm start' });
    fs.writeFileSync(demoKeyFile(), `${key}\n`, { mode: 0o600 });
  }
  console.log(`foncier API listening on http://localhost:${port} (data: ${ctx.db.file})`);
  console.log(`Documentation: http://localhost:${port}/docs · OpenAPI: http://localhost:${port}/v1/openapi.json`);
  if (fs.existsSync(demoKeyFile())) {
    const key = fs.readFileSync(demoKeyFile(), 'utf8').trim();
    console.log(`Demo API key (plan Scale): ${key}`);
    console.log(`Try: curl -H "X-API-Key: ${key}" "http://localhost:${port}/v1/stats/market?code_postal=75015"`);
  } else {
    console.log(`No demo key for this data folder: create a key with  npm run keys -- create --plan Scale --label "my app"  (DATA_DIR=${dataDir()})`);
  }
}

main().catch((e: Error) => {
  console.error(`start failed: ${e.message}`);
  process.exit(1);
});
