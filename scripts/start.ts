// `npm start`: serve DATA_DIR; with no data yet, first build the offline demo dataset through the real pipeline.
import { dataDir } from '../lib/config';
import { hasServingData } from '../api/db';
import { startServer } from '../api/server';
import { buildDemo } from '../pipeline/demo/build';

async function main() {
  if (!hasServingData()) {
    console.log(`No serving database in ${dataDir()}: building the demo dataset (offline, real geo-DVF format)…`);
    await buildDemo({ log: console.log });
  }
  const { db } = await startServer();
  const port = Number(process.env.PORT ?? 3000);
  console.log(`foncier API listening on http://localhost:${port} (data: ${db.file})`);
}

main().catch((e: Error) => {
  console.error(`start failed: ${e.message}`);
  process.exit(1);
});
