// `npm run bench -- replicas [--data-dir DIR] [--duration 5] [--connections 8] [--keys 2000] [--durable]`: the cost of
// the shared state. Cached `stats/market` (answered from the replica's response cache, so the state's work — key lookup,
// rate-limit hit, charge and its settlement, request log — is most of what a request costs) through 1, 2 and 3 API
// replicas on PostgreSQL against one replica on SQLite, same machine, same run, and `GET /health` (no state work) as the
// bare HTTP reference of each. The load is split evenly over the replicas (one autocannon per replica, `--connections`
// in all); the keys are rotated so that none meets its rate limit. Also reported: CPU per request of the replicas and
// of PostgreSQL (all its processes), i.e. what the state costs per request in each set-up. Without --data-dir the
// demo dataset is built into a temporary folder. PostgreSQL is a throwaway server (test/helpers/postgres.ts; --durable:
// fsync and synchronous commits on, as in production).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { openStore } from '../../api/store';
import { buildDemo } from '../../pipeline/demo/build';
import { killReplicas, startReplica, type Replica } from '../../test/helpers/replicas';
import { startPostgres } from '../../test/helpers/postgres';
import { count } from '../args';

const { values } = parseArgs({
  options: {
    'data-dir': { type: 'string' }, duration: { type: 'string' }, connections: { type: 'string' }, keys: { type: 'string' },
    durable: { type: 'boolean', default: false }, json: { type: 'string' },
  },
});
const DURATION = count(values.duration, 'duration', 5);
const CONNECTIONS = count(values.connections, 'connections', 8);
const KEYS = count(values.keys, 'keys', 2000);
const CACHED = '/v1/stats/market?code_postal=75015';

const HZ = 100; // USER_HZ on Linux
const cpuOf = (pid: number): number => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / HZ;
  } catch {
    return 0;
  }
};
const postgresCpu = (): number => fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))
  .filter((p) => { try { return fs.readFileSync(`/proc/${p}/comm`, 'utf8').trim() === 'postgres'; } catch { return false; } })
  .reduce((s, p) => s + cpuOf(Number(p)), 0);

interface Row { setup: string; path: string; rps: number; p50: number; p99: number; non2xx: number; apiCpuMs: number; pgCpuMs: number }

async function load(replicas: Replica[], urlPath: string, keys: string[]): Promise<Omit<Row, 'setup' | 'path'>> {
  let k = 0;
  const cpu0 = replicas.map((r) => cpuOf(r.child.pid!));
  const pg0 = postgresCpu();
  const per = Math.max(1, Math.round(CONNECTIONS / replicas.length));
  const results = await Promise.all(replicas.map((r) => new Promise<autocannon.Result>((resolve, reject) => {
    autocannon({
      url: r.url, connections: per, duration: DURATION,
      requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: urlPath, headers: { 'x-api-key': keys[k++ % keys.length] } }) }],
    }, (err, res) => (err ? reject(err) : resolve(res)));
  })));
  const ok = results.reduce((s, r) => s + r['2xx'], 0);
  const non2xx = results.reduce((s, r) => s + r.non2xx, 0);
  const apiCpu = replicas.reduce((s, r, i) => s + cpuOf(r.child.pid!) - cpu0[i], 0);
  return {
    rps: ok / DURATION,
    // The slowest replica's percentiles (autocannon's histograms are per instance).
    p50: Math.max(...results.map((r) => r.latency.p50)),
    p99: Math.max(...results.map((r) => r.latency.p99)),
    non2xx,
    apiCpuMs: ok ? (apiCpu * 1000) / ok : 0,
    pgCpuMs: ok ? ((postgresCpu() - pg0) * 1000) / ok : 0,
  };
}

async function createKeys(opts: { dataRoot?: string; databaseUrl?: string }): Promise<string[]> {
  const state = openStore({ ...opts, poolSize: 4 });
  try {
    const keys: string[] = [];
    for (let i = 0; i < KEYS; i++) keys.push((await state.keys.createKey({ plan: 'Enterprise', label: `replicas bench ${i}` })).key);
    return keys;
  } finally {
    await state.close();
  }
}

async function main(): Promise<void> {
  let dataDir = values['data-dir'];
  if (!dataDir) {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'foncier-bench-replicas-'));
    console.log(`Building the demo dataset in ${dataDir}…`);
    await buildDemo({ dataRoot: dataDir });
  }
  const pg = await startPostgres({ durable: values.durable });
  const rows: Row[] = [];
  try {
    const setups: { name: string; n: number; databaseUrl?: string }[] = [
      { name: 'SQLite, 1 replica', n: 1 },
      { name: 'PostgreSQL, 1 replica', n: 1, databaseUrl: pg.url },
      { name: 'PostgreSQL, 2 replicas', n: 2, databaseUrl: pg.url },
      { name: 'PostgreSQL, 3 replicas', n: 3, databaseUrl: pg.url },
    ];
    const sqliteKeys = await createKeys({ dataRoot: dataDir });
    const pgKeys = await createKeys({ databaseUrl: pg.url });
    for (const s of setups) {
      const env: Record<string, string> = { DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...(s.databaseUrl ? { DATABASE_URL: s.databaseUrl } : {}) };
      const replicas = await Promise.all(Array.from({ length: s.n }, () => startReplica(env)));
      const keys = s.databaseUrl ? pgKeys : sqliteKeys;
      for (const r of replicas) await fetch(`${r.url}${CACHED}`, { headers: { 'x-api-key': keys[0] } }).then((res) => res.text());
      for (const p of ['/health', CACHED]) {
        const row = { setup: s.name, path: p, ...(await load(replicas, p, keys)) };
        rows.push(row);
        console.log(`${s.name.padEnd(24)} ${p.padEnd(36)} ${row.rps.toFixed(0).padStart(6)} req/s  p50 ${row.p50} ms  p99 ${row.p99} ms  `
          + `API CPU ${row.apiCpuMs.toFixed(3)} ms/req  PostgreSQL CPU ${row.pgCpuMs.toFixed(3)} ms/req${row.non2xx ? `  non-2xx ${row.non2xx}` : ''}`);
      }
      await killReplicas();
    }
  } finally {
    await killReplicas();
    await pg.stop();
  }
  const health = (setup: string) => rows.find((r) => r.setup === setup && r.path === '/health')!.rps;
  console.log('\nCached stats/market as a share of /health in the same set-up:');
  for (const r of rows.filter((x) => x.path === CACHED)) console.log(`  ${r.setup}: ${((100 * r.rps) / health(r.setup)).toFixed(0)} %`);
  if (values.json) {
    fs.writeFileSync(values.json, JSON.stringify({ date: new Date().toISOString(), load: os.loadavg(), cpus: os.cpus().length,
      duration: DURATION, connections: CONNECTIONS, keys: KEYS, durable: values.durable, rows }, null, 2));
  }
}

await main();
