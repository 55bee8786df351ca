// What the PostgreSQL state costs per API request: the statements a charged call runs (key lookup, rate-limit hit,
// pending charge, keep), timed one at a time (latency) and with 32 calls in flight (throughput), on a throwaway server
// (test/helpers/postgres.ts) or on DATABASE_URL. `npm run bench -- state-postgres [--n 4000] [--durable]`:
// --durable starts the throwaway server with fsync and synchronous_commit on (every commit waits for its WAL flush).
import { parseArgs } from 'node:util';
import { systemClock } from '../../api/clock';
import { openStore } from '../../api/store';
import { startPostgres } from '../../test/helpers/postgres';
import { count } from '../args';

const { values } = parseArgs({ options: { n: { type: 'string' }, durable: { type: 'boolean', default: false } } });
const n = count(values.n, 'n', 4000);
const server = process.env.DATABASE_URL ? undefined : await startPostgres({ durable: values.durable });
const state = openStore({ databaseUrl: process.env.DATABASE_URL ?? server!.url, clock: systemClock, poolSize: 32 });
await state.ready();
const { keys, credits, rateLimit: limiter } = state;
const made = await Promise.all(Array.from({ length: 64 }, () => keys.createKey({ plan: 'Enterprise', balance: 10_000_000 })));

type Step = (i: number) => Promise<unknown>;
const steps: Record<string, Step> = {
  'key lookup': (i) => keys.findByKey(made[i % 64].key),
  'rate limit (rate_hit)': (i) => limiter.hit(made[i % 64].id, 1_000_000),
  'charge: hold + keep': async (i) => {
    const h = await credits.hold(made[i % 64].id, 1, `b${i}`);
    if (h.ok) await credits.keep(h.chargeId);
  },
};
steps['all of a charged call'] = async (i) => {
  await steps['key lookup'](i);
  await steps['rate limit (rate_hit)'](i);
  await steps['charge: hold + keep'](i);
};

async function run(step: Step, inFlight: number): Promise<{ perCallMs: number; perSecond: number }> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: inFlight }, async () => {
    while (next < n) await step(next++);
  }));
  const ms = performance.now() - t0;
  return { perCallMs: (ms / n) * inFlight, perSecond: (n / ms) * 1000 };
}

console.log(`${n} calls per row; PostgreSQL${server ? ` (throwaway server, ${values.durable ? 'fsync and synchronous commits on' : 'fsync off'})` : ''}`);
console.log('| step | latency, 1 in flight (ms) | calls/s, 32 in flight |');
console.log('|---|---:|---:|');
for (const [name, step] of Object.entries(steps)) {
  await run(step, 4); // warm-up
  const one = await run(step, 1);
  const many = await run(step, 32);
  console.log(`| ${name} | ${one.perCallMs.toFixed(3)} | ${Math.round(many.perSecond)} |`);
}
await state.close();
await server?.stop();
