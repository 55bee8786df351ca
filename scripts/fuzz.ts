// `npm run fuzz -- --n 100000 [--seed S] [--concurrency C] [--url http://host:port --key fk_live_…]`: the fuzz test
// (test/helpers/fuzz.ts) run long. Without --url it starts the API in process over the demo dataset (built in a
// temporary folder, removed at the end), with the rate limit and the dense-query budget raised so that only the
// requests decide the answers. Prints the answers by status and every failing request; exits 1 when any request failed.
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import fc from 'fast-check';
import { describeRequest, fuzzApiOptions, fuzzTarget, problems, requestArbitrary, send, type FuzzRequest } from '../test/helpers/fuzz';
import { buildDemo } from '../pipeline/demo/build';
import { startTestApi, type TestApi } from '../test/helpers/api';
import { tempDir } from '../test/helpers/samples';
import { checkEnvOrExit } from '../lib/env';

// A bad environment variable stops the command here, with a message naming it.
checkEnvOrExit();

async function main(): Promise<void> {
  const text = { type: 'string' } as const;
  const { values: a } = parseArgs({ options: { n: text, seed: text, concurrency: text, url: text, key: text } });
  const n = Number(a.n ?? 10_000);
  const seed = Number(a.seed ?? Date.now() % 2 ** 31);
  const concurrency = Number(a.concurrency ?? 4);
  let api: TestApi | undefined;
  let dataRoot: string | undefined;
  let url = a.url;
  let key = a.key;
  if (!url) {
    console.log('building the demo dataset…');
    dataRoot = tempDir('foncier-fuzz-');
    await buildDemo({ dataRoot });
    api = await startTestApi({ dataRoot, ...fuzzApiOptions() });
    url = api.url;
    key = api.key({ balance: 1_000_000_000 });
  }
  if (!key) throw new Error('--key is required with --url');
  const doc = await (await fetch(`${url}/v1/openapi.json`)).json();
  const target = await fuzzTarget(doc);
  console.log(`fuzzing ${target.operations.length} operations of ${url}: ${n} requests, seed ${seed}, concurrency ${concurrency}`);

  const arb = requestArbitrary(target, key);
  const statuses = new Map<number, number>();
  const failures: string[] = [];
  const started = Date.now();
  let done = 0;
  const BATCH = 1000;
  for (let offset = 0; offset < n; offset += BATCH) {
    // Each batch is drawn from its own seed, so any batch can be replayed (seed + batch index).
    const batch: FuzzRequest[] = fc.sample(arb, { seed: seed + offset / BATCH, numRuns: Math.min(BATCH, n - offset) });
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < batch.length) {
          const req = batch[next++];
          try {
            const res = await send(url!, req);
            statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
            const found = problems(target, req, res);
            if (found.length) failures.push(`${describeRequest(req)} → ${res.status}: ${found.join('; ')}`);
          } catch (e) {
            failures.push(`${describeRequest(req)} → no answer: ${(e as Error).message}`);
          }
          done++;
        }
      }),
    );
    const s = (Date.now() - started) / 1000;
    console.log(`${done} requests in ${s.toFixed(0)} s (${(done / s).toFixed(0)}/s); failures ${failures.length}; by status ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`);
  }
  const serverErrors = [...statuses].filter(([s]) => s >= 500).reduce((t, [, c]) => t + c, 0);
  for (const f of failures.slice(0, 50)) console.log(`FAIL ${f.slice(0, 1000)}`);
  console.log(`done: ${done} requests, ${serverErrors} server errors (5xx), ${failures.length} failing requests`);
  await api?.close();
  if (dataRoot) fs.rmSync(dataRoot, { recursive: true, force: true });
  process.exit(failures.length ? 1 : 0);
}

main().catch((e: Error) => {
  console.error(`fuzz failed: ${e.stack ?? e.message}`);
  process.exit(1);
});
