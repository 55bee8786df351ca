// Seeded property-based fuzzing of every operation of the served OpenAPI document (generator and
// checks in test/helpers/fuzz.ts). Bounded for `npm test` (FUZZ_RUNS requests, default 2,500, and 45 s);
// `npm run fuzz -- --n 100000` runs it long. Set FUZZ_SEED to replay another sequence.
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeRequest, fuzzApiOptions, fuzzTarget, problems, requestArbitrary, send, type FuzzTarget } from '../../helpers/fuzz';
import { startTestApi, type TestApi } from '../../helpers/api';
import { testData } from '../../helpers/data';

const SEED = Number(process.env.FUZZ_SEED ?? 20261124);
const RUNS = Number(process.env.FUZZ_RUNS ?? 2500);

let api: TestApi;
let key: string;
let target: FuzzTarget;
beforeAll(async () => {
  api = await startTestApi({ dataRoot: await testData('demo'), ...fuzzApiOptions() });
  key = api.key({ balance: 1_000_000_000 });
  target = await fuzzTarget((await api.get('/v1/openapi.json')).body);
});
afterAll(() => api.close());

it('covers every documented operation', () => {
  expect(target.operations.length).toBeGreaterThanOrEqual(18);
});

it('answers every generated request without a 5xx, with the JSON error body on 4xx, and leaks nothing', async () => {
  const statuses = new Map<number, number>();
  let sent = 0;
  await fc.assert(
    fc.asyncProperty(requestArbitrary(target, key), async (req) => {
      const res = await send(api.url, req);
      sent++;
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      const found = problems(target, req, res);
      if (found.length) throw new Error(`${describeRequest(req)} → ${res.status}: ${found.join('; ')}`);
    }),
    { seed: SEED, numRuns: RUNS, interruptAfterTimeLimit: 45_000, markInterruptAsFailure: false, endOnFailure: true },
  );
  // The fuzzer must reach the handlers, not only the validation: some requests succeed, many are refused.
  const ok = [...statuses].filter(([s]) => s < 300).reduce((n, [, c]) => n + c, 0);
  expect(ok, JSON.stringify([...statuses])).toBeGreaterThan(sent / 50);
  expect(statuses.get(400) ?? 0).toBeGreaterThan(sent / 5);
}, 120_000);
