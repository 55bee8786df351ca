// The one way to start a lab program: `npm run bench -- <name> [options]` for a benchmark (lab/bench),
// `npm run lab -- <name> [options]` for the rest (France-scale data, backtest research, the lab's tests). Each program
// runs in a child process of its own (it parses its own options with node:util parseArgs); without a name, or with an
// unknown one, the list is printed. A benchmark that writes its figures as JSON (`--json FILE`) writes them by default
// to a dated file of lab/results/ (`--no-save`: not at all).
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

interface Program {
  file: string;
  what: string;
  /** Takes `--json FILE` for its figures. */
  json?: boolean;
}

const BENCHES: Record<string, Program> = {
  throughput: { file: 'bench/throughput.ts', what: 'the throughput targets on the France-scale dataset, each rate beside /health\'s (`npm run bench` alone runs it)', json: true },
  api: { file: 'bench/api.ts', what: 'HTTP load on the France-scale dataset: latency and throughput of every case (lab/bench/cases)', json: true },
  pipeline: { file: 'bench/pipeline.ts', what: 'DVF import and marts build throughput at France scale (--dpe, --dpe-csv SIZE, --bdnb: the other imports)', json: true },
  alerts: { file: 'bench/alerts.ts', what: 'the alert scan and the webhook deliveries at scale' },
  businesses: { file: 'bench/businesses.ts', what: 'businesses/search on 400,000 establishments and 20 M sales, in process' },
  'sirene-pipeline': { file: 'bench/sirene-pipeline.ts', what: 'the SIRENE import on a synthetic géo-SIRENE stock' },
  'dpe-matching': { file: 'bench/dpe-matching.ts', what: 'DVF × DPE matching at France scale' },
  'dpe-latency': { file: 'bench/dpe-latency.ts', what: 'the DPE endpoints at France scale, one client, in process' },
  'bdnb-matching': { file: 'bench/bdnb-matching.ts', what: 'DVF × BDNB matching at France scale', json: true },
  'bdnb-endpoints': { file: 'bench/bdnb-endpoints.ts', what: 'the BDNB endpoints at France scale, one client, in process', json: true },
  replicas: { file: 'bench/replicas.ts', what: 'cached stats/market and /health through 1, 2, 3 replicas on PostgreSQL and one on SQLite: the shared state\'s cost per request', json: true },
  'state-postgres': { file: 'bench/state-postgres.ts', what: 'the PostgreSQL state\'s cost per API request (key lookup, rate-limit hit, charge)' },
  'bdnb-staging': { file: 'bench/bdnb-staging.ts', what: 'the BDNB staging cost per step on one synthetic département' },
  'postgres-side': { file: 'bench/postgres-side.ts', what: 'the stats/market query mix (postal codes, départements) on the same sales in a local, indexed PostgreSQL' },
};

const PROGRAMS: Record<string, Program> = {
  'data-report': { file: 'data-report.ts', what: "the effect of each cleaning rule of the ventes mart on the real DVF samples (--demo: and the demo's)" },
  'france-data': { file: 'france-data/build.ts', what: 'builds (or updates) the France-scale dataset the API bench reads' },
  'backtest-features': { file: 'backtest/features.ts', what: 'the valuation backtest without and with the building and energy adjustments' },
  'backtest-real': { file: 'backtest/real.ts', what: 'the valuation backtest on the real multi-year DVF samples (--replay: through GET /v1/estimate)' },
  'walk-forward-extract': { file: 'backtest/walk-forward/extract.ts', what: 'extracts the walk-forward targets and their comparables to a parquet file' },
  'walk-forward-search': { file: 'backtest/walk-forward/search.ts', what: 'searches the estimator parameters on an extract' },
  'walk-forward-stack': { file: 'backtest/walk-forward/stack.ts', what: 'compares stacked estimators on an extract' },
  'walk-forward-noise': { file: 'backtest/walk-forward/noise.ts', what: 'measures the noise of the walk-forward metrics on an extract' },
};

const labDir = path.dirname(fileURLToPath(import.meta.url));

function list(title: string, programs: Record<string, Program>): string {
  const width = Math.max(...Object.keys(programs).map((n) => n.length));
  return `${title}\n${Object.entries(programs).map(([n, p]) => `  ${n.padEnd(width)}  ${p.what}`).join('\n')}`;
}

/**
 * `args` with `--json lab/results/<date>-<time>-bench-<name>[-<mode>].json` added unless they name a file already;
 * `--no-save` is taken out and adds nothing.
 */
function withResultsFile(name: string, args: string[], now = new Date()): string[] {
  if (args.includes('--no-save')) return args.filter((a) => a !== '--no-save');
  if (args.some((a) => a === '--json' || a.startsWith('--json='))) return args;
  const mode = ['--dpe-csv', '--dpe', '--bdnb'].find((m) => args.includes(m))?.slice(2);
  const stamp = now.toISOString().slice(0, 16).replace(':', '');
  const file = path.join(labDir, 'results', `${stamp}-bench-${name}${mode ? `-${mode}` : ''}.json`);
  console.log(`Figures will be written to ${path.relative(process.cwd(), file)} (--no-save: not written)`);
  return [...args, '--json', file];
}

function main(argv: string[]): number {
  const bench = argv[0] === 'bench';
  // `npm run bench` alone (or with options only) is the throughput bench, the one docs/performance.md's API figures come from.
  const benchArgs = argv.slice(1);
  const [name, ...rest] = bench ? (benchArgs[0] === undefined || benchArgs[0].startsWith('-') && benchArgs[0] !== '--list' ? ['throughput', ...benchArgs] : benchArgs) : argv;
  if (!bench && name === 'bench') return main(argv.slice(1));
  if (!bench && name === 'test') {
    const vitest = path.join(labDir, '..', 'node_modules', 'vitest', 'vitest.mjs');
    return spawnSync(process.execPath, [vitest, 'run', '--config', path.join(labDir, 'vitest.config.ts'), ...rest], { stdio: 'inherit' }).status ?? 1;
  }
  const programs = bench ? BENCHES : PROGRAMS;
  const program = name && name !== '--list' ? programs[name] : undefined;
  if (!program) {
    if (name && name !== '--list') console.error(`unknown ${bench ? 'benchmark' : 'lab program'} "${name}"\n`);
    console.error(bench
      ? list('npm run bench -- <name> [options]  (lab/bench/README.md)', BENCHES)
      : list('npm run lab -- <name> [options]  (lab/README.md)', { ...PROGRAMS, test: { file: '', what: "the lab's own tests (lab/vitest.config.ts)" } }));
    return name && name !== '--list' ? 2 : 0;
  }
  const args = program.json ? withResultsFile(name!, rest) : rest;
  const r = spawnSync(process.execPath, [...process.execArgv, path.join(labDir, program.file), ...args], { stdio: 'inherit' });
  return r.status ?? (r.signal ? 128 + 15 : 1);
}

process.exit(main(process.argv.slice(2)));
