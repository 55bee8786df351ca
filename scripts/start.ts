// `npm start`: serve DATA_DIR; with no data yet, first build the offline demo dataset through the real pipeline,
// and create a demo key (plan Scale) whose value is kept in DATA_DIR/demo-key.txt so every start can print it.
import fs from 'node:fs';
import path from 'node:path';
import { dataDir, paths } from '../lib/config';
import { hasServingData } from '../api/db';
import { startServer } from '../api/server';
import { buildDemo } from '../pipeline/demo/build';

const demoKeyFile = () => path.join(dataDir(), 'demo-key.txt');

async function main() {
  if (!hasServingData()) {
    console.log(`No serving database in ${dataDir()}: building the demo dataset (offline, real geo-DVF format)…`);
    await buildDemo({ log: console.log });
  }
  const { ctx } = await startServer();
  const port = Number(process.env.PORT ?? 3000);
  // Only a demo data folder gets a demo key: a production folder's keys are created with `npm run keys`.
  if (fs.existsSync(paths.demoSource()) && !fs.existsSync(demoKeyFile())) {
    const { key } = ctx.store.createKey({ plan: 'Scale', label: 'demo key created by npm start' });
    fs.writeFileSync(demoKeyFile(), `${key}\n`, { mode: 0o600 });
  }
  console.log(`foncier API listening on http://localhost:${port} (data: ${ctx.db.file})`);
  console.log(`Documentation: http://localhost:${port}/docs · OpenAPI: http://localhost:${port}/v1/openapi.json`);
  if (fs.existsSync(demoKeyFile())) {
    const key = fs.readFileSync(demoKeyFile(), 'utf8').trim();
    console.log(`Demo API key (plan Scale): ${key}`);
    console.log(`Try: curl -H "X-API-Key: ${key}" "http://localhost:${port}/v1/stats/market?code_postal=75015"`);
  }
}

main().catch((e: Error) => {
  console.error(`start failed: ${e.message}`);
  process.exit(1);
});
