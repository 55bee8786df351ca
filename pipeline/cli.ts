// `npm run pipeline -- [dvf|filosofi|anil] --departements 75,69 --annees 2021-2025 [--source geo-dvf|dgfip]
//  [--base-url URL] [--from-dir DIR] [--force] [--no-marts]`: fetch, import into the lake, then rebuild the marts and
//  serving database. Without a source name, every source is imported (--annees then selects DVF years only; Filosofi
//  and ANIL take their default vintages).
import cliProgress from 'cli-progress';
import { parseArgs } from 'node:util';
import { dataDir } from '../lib/config';
import type { SourceDeclaration } from '../lib/sources/types';
import { afterImport } from '../marts/after-import';
import { runSource, SOURCES, type PartOutcome, type RunOptions } from './run';
import { checkEnvOrExit } from '../lib/env';

// A bad environment variable stops the command here, with a message naming it.
checkEnvOrExit();

/** `--departements`: the source's default départements when absent or `all`. */
export function parseDepartements(s: string | undefined, defaults: string[] = SOURCES.dvf.defaults.departements ?? []): string[] {
  if (!s || s === 'all') return defaults;
  return s.split(',').map((d) => {
    const v = d.trim().toUpperCase();
    const norm = /^\d$/.test(v) ? `0${v}` : v;
    if (!/^(\d{2}|2A|2B|97[1-6])$/.test(norm)) throw new Error(`invalid département "${d}" (expected e.g. 75, 2A, 971)`);
    return norm;
  });
}

/** `--annees`: a list of years and ranges, none before the source's first year; the source's defaults when absent. */
export function parseAnnees(s: string | undefined, now = new Date(), decl: Pick<SourceDeclaration, 'label' | 'defaults'> = SOURCES.dvf): number[] {
  if (!s) return decl.defaults.annees?.(now) ?? [];
  const min = decl.defaults.minAnnee;
  const out = new Set<number>();
  for (const chunk of s.split(',')) {
    const m = /^\s*(\d{4})\s*(?:-\s*(\d{4}))?\s*$/.exec(chunk);
    if (!m) throw new Error(`invalid year range "${chunk}" (expected e.g. 2024 or 2021-2025)`);
    const [a, b] = [Number(m[1]), Number(m[2] ?? m[1])];
    if (b < a || (min !== undefined && a < min)) throw new Error(`invalid year range "${chunk}" (${decl.label.split(' (')[0]} starts in ${min})`);
    for (let y = a; y <= b; y++) out.add(y);
  }
  return [...out].sort();
}

export function summaryTable(outcomes: PartOutcome[]): string {
  const fmt = (n: number) => n.toLocaleString('en-US');
  const rows = outcomes.map((o) => {
    const anomalies = Object.entries(o.anomalies).filter(([, v]) => v > 0).map(([k, v]) => `${k} ${fmt(v)}`).join(', ');
    return [o.part.key, o.status, fmt(o.rowsRead), fmt(o.rowsKept), fmt(o.newCount), `${o.seconds.toFixed(1)} s`,
      o.error ?? (anomalies || '-')];
  });
  const head = ['partition', 'status', 'rows in', 'rows out', 'new', 'time', 'anomalies / error'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r: string[]) => r.map((c, i) => (i >= 2 && i <= 5 ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join('  ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export interface PipelineCommandOptions {
  /** Extra marts model folders (a plug-in source's models; see docs/adding-a-source.md). */
  modelsDirs?: string[];
  now?: Date;
  /** Data folder (default DATA_DIR). */
  dataRoot?: string;
}

/**
 * `npm run pipeline -- …` without the process around it (tests call it): imports the named source (or every source),
 * then, unless --no-marts, the after-import step when anything changed or the serving data is stale. Returns the
 * exit code.
 */
export async function pipelineCommand(argv: string[], opts: PipelineCommandOptions = {}): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
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
  const now = opts.now ?? new Date();
  // A bare run imports every source (DVF, then the income and rent sources) and builds the marts once at the end.
  const names = positionals[0] ? [positionals[0]] : Object.keys(SOURCES);
  for (const n of names) if (!SOURCES[n]) throw new Error(`unknown source ${n} (known: ${Object.keys(SOURCES).join(', ')})`);
  // A mirror or a local tree holds one source's files: say which (a bare run would fail on the others' missing files).
  if (names.length > 1 && (values['base-url'] || values.source || values['from-dir'])) throw new Error('--base-url, --from-dir and --source apply to one source: name it (e.g. `npm run pipeline -- dvf --from-dir DIR`)');
  const started = performance.now();
  const outcomes: PartOutcome[] = [];
  for (const sourceName of names) {
    const src = SOURCES[sourceName];
    // In a bare run --annees selects the years of the sources partitioned by year of event (DVF); the national
    // sources keep their default vintages.
    const annees = names.length > 1 && src.partitioning !== 'departement-year' ? undefined : values.annees;
    outcomes.push(...(await runOne({
      source: sourceName,
      departements: src.defaults.departements ? parseDepartements(values.departements, src.defaults.departements) : [],
      annees: src.partitioning === 'snapshot' ? [] : parseAnnees(annees, now, src),
      format: values.source,
      baseUrl: values['base-url'],
      fromDir: values['from-dir'],
      force: values.force,
      now,
      dataRoot: opts.dataRoot,
    })));
  }

  console.log('\n' + summaryTable(outcomes));
  const failed = outcomes.filter((o) => o.status === 'failed');
  const changed = outcomes.some((o) => o.status === 'imported');
  let code = 0;
  if (!values['no-marts']) {
    // Also when nothing changed in this run: a previous run killed during the marts or the calibration left the
    // serving data older than the lake (afterImport checks what the serving build and the calibration were made from).
    const r = await afterImport({ dataRoot: opts.dataRoot, log: console.log, force: changed || values.force, modelsDirs: opts.modelsDirs });
    if (!r.ok) code = 1;
  }
  console.log(`\n${outcomes.length - failed.length}/${outcomes.length} files ok in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  if (failed.length) {
    console.error(`${failed.length} file(s) failed; the lake keeps their previous partitions.`);
    code = 1;
  }
  return code;
}

/** Runs one source with progress bars (TTY) or one line per step. */
async function runOne(opts: RunOptions): Promise<PartOutcome[]> {
  const sourceName = opts.source;
  const decl = SOURCES[sourceName];
  const scope = decl.defaults.departements ? `départements ${opts.departements.join(',')}, ` : '';
  const years = decl.partitioning === 'snapshot' ? 'latest snapshot' : `years ${opts.annees.join(',')}`;
  console.log(`foncier pipeline → ${opts.dataRoot ?? dataDir()}: ${sourceName}, ${scope}${years}`);

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
  pipelineCommand(process.argv.slice(2)).then((code) => void (process.exitCode = code), (e: Error) => {
    console.error(`pipeline failed: ${e.message}`);
    process.exit(1);
  });
}
