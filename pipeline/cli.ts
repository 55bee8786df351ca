// `npm run pipeline -- [dvf|filosofi|anil] --departements 75,69 --annees 2021-2025 [--source geo-dvf|dgfip]
//  [--base-url URL] [--from-dir DIR] [--force] [--no-marts]`: fetch, import into the lake, then rebuild the marts and
//  serving database. Without a source name, every source is imported (--annees then selects DVF years only; Filosofi
//  and ANIL take their default vintages).
import cliProgress from 'cli-progress';
import { parseArgs } from 'node:util';
import { dataDir } from '../lib/config';
import { currentServingFile } from '../lib/serving';
import { runBacktest } from '../lib/valuation/backtest';
import { calibrationFile } from '../lib/valuation/calibration';
import { buildMarts } from '../marts/runner';
import { runSource, SOURCES, type PartOutcome, type RunOptions } from './run';
import { DVF_DEPARTEMENTS } from './sources/dvf';

export function parseDepartements(s: string | undefined): string[] {
  if (!s || s === 'all') return DVF_DEPARTEMENTS;
  return s.split(',').map((d) => {
    const v = d.trim().toUpperCase();
    const norm = /^\d$/.test(v) ? `0${v}` : v;
    if (!/^(\d{2}|2A|2B|97[1-6])$/.test(norm)) throw new Error(`invalid département "${d}" (expected e.g. 75, 2A, 971)`);
    return norm;
  });
}

export function parseAnnees(s: string | undefined, now = new Date()): number[] {
  const last = now.getUTCFullYear() - 1;
  if (!s) return Array.from({ length: 5 }, (_, i) => last - 4 + i);
  const out = new Set<number>();
  for (const chunk of s.split(',')) {
    const m = /^\s*(\d{4})\s*(?:-\s*(\d{4}))?\s*$/.exec(chunk);
    if (!m) throw new Error(`invalid year range "${chunk}" (expected e.g. 2024 or 2021-2025)`);
    const [a, b] = [Number(m[1]), Number(m[2] ?? m[1])];
    if (b < a || a < 2014) throw new Error(`invalid year range "${chunk}" (DVF starts in 2014)`);
    for (let y = a; y <= b; y++) out.add(y);
  }
  return [...out].sort();
}

export function summaryTable(outcomes: PartOutcome[]): string {
  const fmt = (n: number) => n.toLocaleString('en-US');
  const rows = outcomes.map((o) => {
    const anomalies = Object.entries(o.anomalies).filter(([, v]) => v > 0).map(([k, v]) => `${k} ${fmt(v)}`).join(', ');
    return [o.part.key, o.status, fmt(o.rowsRead), fmt(o.rowsKept), fmt(o.newMutations), `${o.seconds.toFixed(1)} s`,
      o.error ?? (anomalies || '-')];
  });
  const head = ['partition', 'status', 'rows in', 'rows out', 'new sales', 'time', 'anomalies / error'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r: string[]) => r.map((c, i) => (i >= 2 && i <= 5 ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join('  ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

async function main() {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      departements: { type: 'string' },
      annees: { type: 'string' },
      source: { type: 'string' },
      'base-url': { type: 'string' },
      'from-dir': { type: 'string' },
      force: { type: 'boolean', default: false },
      'no-marts': { type: 'boolean', default: false },
    },
  });
  // A bare run imports every source (DVF, then the income and rent sources) and builds the marts once at the end.
  const names = positionals[0] ? [positionals[0]] : Object.keys(SOURCES);
  for (const n of names) if (!SOURCES[n]) throw new Error(`unknown source ${n} (known: ${Object.keys(SOURCES).join(', ')})`);
  // A mirror or a local tree holds one source's files: say which (a bare run would fail on the others' missing files).
  if (names.length > 1 && (values['base-url'] || values.source || values['from-dir'])) throw new Error('--base-url, --from-dir and --source apply to one source: name it (e.g. `npm run pipeline -- dvf --from-dir DIR`)');
  const started = performance.now();
  const outcomes: PartOutcome[] = [];
  for (const sourceName of names) {
    const defaults = SOURCES[sourceName].defaultAnnees;
    outcomes.push(...(await runOne({
      source: sourceName,
      departements: parseDepartements(values.departements),
      // In a bare run --annees selects DVF years; the income and rent sources keep their default vintages.
      annees: defaults && (!values.annees || names.length > 1) ? defaults(new Date()) : parseAnnees(values.annees),
      format: values.source,
      baseUrl: values['base-url'],
      fromDir: values['from-dir'],
      force: values.force,
    })));
  }

  console.log('\n' + summaryTable(outcomes));
  const failed = outcomes.filter((o) => o.status === 'failed');
  const changed = outcomes.some((o) => o.status === 'imported');
  if (!values['no-marts'] && (changed || values.force || !currentServingFile())) {
    console.log('\nBuilding marts and the serving database…');
    const report = await buildMarts({ log: console.log });
    console.log(`Serving database: ${report.servingFile} (${report.seconds.toFixed(1)} s)`);
    // The valuation intervals are calibrated on the data just built (docs/valuation.md).
    try {
      const bt = await runBacktest({ dataRoot: dataDir(), log: console.log });
      console.log(`Valuation calibration: ${bt.targets} targets backtested, ${calibrationFile(dataDir())} (${bt.seconds.toFixed(1)} s)`);
    } catch (e) {
      console.error(`Valuation backtest failed (${(e as Error).message}); the API keeps the previous calibration.`);
      process.exitCode = 1;
    }
  }
  console.log(`\n${outcomes.length - failed.length}/${outcomes.length} files ok in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  if (failed.length) {
    console.error(`${failed.length} file(s) failed; the lake keeps their previous partitions.`);
    process.exitCode = 1;
  }
}

/** Runs one source with progress bars (TTY) or one line per step. */
async function runOne(opts: RunOptions): Promise<PartOutcome[]> {
  const sourceName = opts.source;
  const scope = sourceName === 'dvf' ? `départements ${opts.departements.join(',')}, ` : '';
  console.log(`foncier pipeline → ${dataDir()}: ${sourceName}, ${scope}years ${opts.annees.join(',')}`);

  const tty = process.stdout.isTTY;
  const bars = new cliProgress.MultiBar(
    { format: ' {bar} {percentage}% | {name} | {value}/{total}', hideCursor: true, clearOnComplete: false, noTTYOutput: false },
    cliProgress.Presets.shades_classic,
  );
  const total = SOURCES[sourceName].parts(opts).length;
  const filesBar = tty ? bars.create(total, 0, { name: 'files' }) : undefined;
  let download: cliProgress.SingleBar | undefined;
  let importing: { bar?: cliProgress.SingleBar; files: number } | undefined;
  const outcomes = await runSource(opts, {
    log: (m) => (tty ? bars.log(`${m}\n`) : console.log(`  ${m}`)),
    onPartStart: (p) => {
      if (!tty) console.log(`  ${p.key}: fetching ${opts.fromDir ? p.relPath : p.url}`);
      filesBar?.update({ name: `files (fetching ${p.key})` });
    },
    onDownloadProgress: (p, received, size) => {
      if (!tty) return;
      download ??= bars.create(size ?? received, 0, { name: `download ${p.key} (bytes)` });
      if (size) download.setTotal(size);
      download.update(received, { name: `download ${p.key} (bytes)` });
    },
    // The changed files are imported together, in one DuckDB pass per year: one bar for the steps of that pass.
    onImportStart: (parts) => {
      importing = { files: parts.length, bar: tty ? bars.create(1, 0, { name: `import of ${parts.length} files` }) : undefined };
    },
    onImportProgress: (step, done, total) => {
      if (!tty) return void console.log(`  import of ${importing?.files ?? '?'} files: ${step}`);
      importing?.bar?.setTotal(total);
      importing?.bar?.update(done, { name: `import of ${importing.files} files: ${step}` });
    },
    onPartDone: (o) => {
      if (download) {
        bars.remove(download);
        download = undefined;
      }
      if (importing?.bar) {
        bars.remove(importing.bar);
        importing.bar = undefined;
      }
      filesBar?.increment(1, { name: `files (last: ${o.part.key} ${o.status})` });
      if (!tty) console.log(`  ${o.part.key}: ${o.status}${o.error ? ` — ${o.error}` : ''}`);
    },
  });
  bars.stop();
  return outcomes;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((e: Error) => {
    console.error(`pipeline failed: ${e.message}`);
    process.exit(1);
  });
}
