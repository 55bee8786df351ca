// BDNB staging cost per step on one synthetic département: `npm run bench -- bdnb-staging [--groups N] [--dep DD]`
// (default one million groups of the Nord) writes its archive with lab/france-data/bdnb-generate.ts to
// os.tmpdir()/bdnb-staging-<dep>-<groups>/ (kept for the next run), extracts the tables, then times `stageBdnb` and the
// Parquet write statement by statement, each with the process's CPU time (DuckDB's threads included): the figures
// that tell which step to optimise, without the fixed costs per archive of the full benchmark (bdnb-pipeline.ts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DuckDBConnection } from '@duckdb/node-api';
import { lit, openMemory, run } from '../../lib/duck';
import { bdnbTableFiles, stageBdnb } from '../../pipeline/sources/bdnb';
import { count } from '../args';
import { metropolitanProfiles, standaloneSitesSql, writeDepArchive } from '../france-data/bdnb-generate';

const { values } = parseArgs({ options: { groups: { type: 'string' }, dep: { type: 'string', default: '59' } } });
const N = count(values.groups, 'groups', 1_000_000);
const DEP = values.dep!;
const dir = path.join(os.tmpdir(), `bdnb-staging-${DEP}-${N}`);
const { instance, conn } = await openMemory({ threads: 2, memoryLimit: '3GB' });
const profile = metropolitanProfiles().find((p) => p.dep === DEP);
if (!profile) throw new Error(`unknown département ${DEP}`);
let archive = fs.existsSync(dir) ? fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).find((f) => f.endsWith('.zip')) : undefined;
if (!archive) {
  const t = performance.now();
  await run(conn, `CREATE OR REPLACE TEMP TABLE bdnb_sites AS ${standaloneSitesSql(profile, N, 0, 2025)}`);
  const a = await writeDepArchive(conn, dir, DEP, 2025);
  archive = path.relative(dir, a.archive);
  console.log(`generated in ${((performance.now() - t) / 1000).toFixed(1)} s: ${(a.csvBytes / 1e6).toFixed(0)} MB of CSV, ${(a.bytes / 1e6).toFixed(0)} MB zipped`);
}
const work = path.join(dir, 'work');
fs.rmSync(work, { recursive: true, force: true });
const files = await bdnbTableFiles(path.join(dir, archive), work);

const cpu = () => {
  const r = process.resourceUsage();
  return (r.userCPUTime + r.systemCPUTime) / 1e6;
};
const steps: Array<{ step: string; wall: number; cpu: number }> = [];
const proto = DuckDBConnection.prototype as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
let depth = 0;
for (const method of ['run', 'runAndReadAll']) {
  const original = proto[method];
  proto[method] = async function (this: unknown, ...args: unknown[]) {
    const [t0, c0] = [performance.now(), cpu()];
    depth++;
    try {
      return await original.apply(this, args);
    } finally {
      if (--depth === 0) {
        const sql = String(args[0]);
        const step = /TEMP\s+(?:TABLE|VIEW)\s+(\w+)/i.exec(sql)?.[1] ?? (/^\s*COPY/i.test(sql) ? 'COPY parquet' : /rows_read/.test(sql) ? 'anomalies' : sql.trim().slice(0, 30));
        steps.push({ step, wall: (performance.now() - t0) / 1000, cpu: cpu() - c0 });
      }
    }
  };
}
const [t0, c0] = [performance.now(), cpu()];
const staged = await stageBdnb(conn, files);
await run(conn, `COPY (SELECT * FROM bdnb_batiments) TO ${lit(path.join(work, 'out.parquet'))} (FORMAT parquet, COMPRESSION zstd)`);
const [wall, cpuS] = [(performance.now() - t0) / 1000, cpu() - c0];
for (const s of steps.filter((x) => x.wall > 0.05)) console.log(`${s.step.padEnd(32)} wall ${s.wall.toFixed(2).padStart(6)} s  cpu ${s.cpu.toFixed(2).padStart(6)} s`);
console.log(JSON.stringify({ groups: N, dep: DEP, wall_s: +wall.toFixed(2), cpu_s: +cpuS.toFixed(2), cpu_s_per_million: +((cpuS * 1e6) / N).toFixed(2), load: os.loadavg()[0], rss_mb: Math.round(process.resourceUsage().maxRSS / 1024), anomalies: staged.anomalies }));
conn.closeSync();
instance.closeSync();
fs.rmSync(work, { recursive: true, force: true });
