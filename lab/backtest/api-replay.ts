// The valuation's independent test, replayed on real DVF data (`npm run lab -- backtest-real --replay`) through the API itself: for each of the last six
// months of the backtest window, the data is cut where a data engineer's copy would end (the day before the month for
// a monthly refresh, twelve months earlier for data frozen a year), imported by the pipeline, built and calibrated as
// `npm run pipeline` does, then every target of that month is valued by `GET /v1/estimate` over HTTP with its own
// coordinates, surface and type and the default parameters. Used by `npm run lab -- backtest-real --replay`.
import fs from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createApp } from '../../api/app';
import { FixedClock } from '../../api/clock';
import { closeContext, createContext } from '../../api/context';
import { createLogger } from '../../api/log';
import { all, lit, openMemory } from '../../lib/duck';
import { currentServingFile } from '../../lib/serving';
import { KNN_NAME, metrics, pct, type Metrics } from '../../lib/valuation/backtest';
import { afterImport } from '../../marts/after-import';
import { runSource } from '../../pipeline/run';
import { fileLines, gzipLines, type RealDataset } from './real-samples';

export interface ReplayTarget {
  target_id: string;
  month: string;
  type_local: 'Maison' | 'Appartement';
  surface: number;
  latitude: number;
  longitude: number;
  actual: number;
  /** The backtest's estimate of the same target (all sales before its day, walk-forward bias correction). */
  backtest_mid: number | null;
  knn: number | null;
}

export interface ReplayScenario {
  name: string;
  /** Months between the first day of the data's cut and the target's month (0: the data ends the day before it). */
  lagMonths: number;
}

export const SCENARIOS: ReplayScenario[] = [
  { name: 'monthly refresh (data up to the day before the month)', lagMonths: 0 },
  { name: 'data frozen a year earlier', lagMonths: 12 },
];

export interface ReplayResult {
  scenario: string;
  /** Reference dates the API answered with, per target month. */
  reference_dates: Record<string, string[]>;
  api: Metrics;
  /** Share of the actual prices inside the API's 50 % interval (targets it valued). */
  interval_coverage: number | null;
  /** The API, the kNN and the backtest on the targets all three valued. */
  api_common: Metrics;
  knn: Metrics;
  backtest: Metrics;
  /** Median |ln(API mid / backtest mid)| over the targets both valued. */
  median_gap: number | null;
  seconds: number;
}

/** The screened targets of months 7–12 of a built dataset's published backtest, with their coordinates. */
export async function replayTargets(dataRoot: string): Promise<ReplayTarget[]> {
  const serving = currentServingFile(dataRoot);
  if (!serving) throw new Error(`no serving database in ${dataRoot}`);
  const { instance, conn } = await openMemory({ threads: 1, memoryLimit: '1GB' });
  try {
    await all(conn, `attach ${lit(serving)} as s (read_only)`);
    return await all<ReplayTarget>(
      conn,
      `select b.target_id::VARCHAR as target_id, strftime(b.date_mutation, '%Y-%m') as month, b.type_local, b.surface,
         v.latitude, v.longitude, b.actual, b.mid as backtest_mid, b.baseline_knn as knn
       from read_parquet(${lit(path.join(dataRoot, 'marts', 'valuation_backtest.parquet'))}) b
       join s.ventes v on v.id = b.target_id
       where b.part = 'measure' and not b.screened_out
       order by b.date_mutation, b.target_id`,
    );
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

/** The first day of `month` (YYYY-MM) minus `minus` months, ISO. */
export const monthStart = (month: string, minus: number) => {
  const [y, m] = month.split('-').map(Number);
  const d = new Date(Date.UTC(y, m - 1 - minus, 1));
  return d.toISOString().slice(0, 10);
};

/**
 * A copy of a geo-DVF tree with the lines sold before `cutoff` (ISO day) only, streamed line by line: the first two
 * fields (id_mutation, date_mutation) are never quoted. Returns the years that kept a line.
 */
export async function cutTree(ds: RealDataset, cutoff: string, dest: string): Promise<number[]> {
  const years: number[] = [];
  for (const year of ds.annees) {
    if (`${year}-01-01` >= cutoff) continue;
    for (const dep of ds.departements) {
      const rel = path.join(String(year), 'departements', `${dep}.csv.gz`);
      const out = gzipLines(path.join(dest, rel));
      let header = true;
      for await (const line of fileLines(path.join(ds.tree, rel))) {
        if (!line) continue;
        if (!header && !(line.split(',', 2)[1] < cutoff)) continue;
        header = false;
        await out.write(line);
      }
      await out.end();
    }
    years.push(year);
  }
  return years;
}

/** Imports, builds and calibrates the cut tree as `npm run pipeline` would; returns its data folder. */
async function buildCut(ds: RealDataset, cutoff: string, work: string): Promise<string> {
  const tree = path.join(work, `tree-${cutoff}`);
  const dataRoot = path.join(work, `data-${cutoff}`);
  const annees = await cutTree(ds, cutoff, tree);
  const outcomes = await runSource({ source: 'dvf', fromDir: tree, departements: ds.departements, annees, dataRoot });
  const failed = outcomes.filter((o) => o.status === 'failed');
  if (failed.length) throw new Error(`import failed: ${failed.map((o) => `${o.part.key}: ${o.error}`).join('; ')}`);
  const built = await afterImport({ dataRoot, force: true });
  if (!built.ok) throw new Error(`the calibration failed on the data cut at ${cutoff}`);
  fs.rmSync(tree, { recursive: true, force: true });
  return dataRoot;
}

interface Valuation {
  mid: number | null;
  low: number | null;
  high: number | null;
  reference_date: string;
}

/** Values targets with GET /v1/estimate on the API served over `dataRoot` (loopback HTTP, one request at a time). */
async function valueThroughApi(dataRoot: string, targets: ReplayTarget[]): Promise<Valuation[]> {
  const ctx = createContext({ dataRoot, clock: new FixedClock(new Date()), logger: createLogger({ level: 'silent' }), limits: { rateLimitPerMinute: 1e9 } });
  await ctx.db.start();
  const server: Server = await new Promise((resolve) => {
    const s = createApp(ctx).listen(0, '127.0.0.1', () => resolve(s));
  });
  try {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const key = (await ctx.state.keys.createKey({ plan: 'Scale', balance: 10 * targets.length + 10 })).key;
    const out: Valuation[] = [];
    for (const t of targets) {
      const q = new URLSearchParams({ latitude: String(t.latitude), longitude: String(t.longitude), surface: String(t.surface), type_local: t.type_local });
      const res = await fetch(`${url}/v1/estimate?${q}`, { headers: { 'X-API-Key': key } });
      const body = (await res.json()) as { estimate: { price_range: { low: number; mid: number; high: number } } | null; reference_date: string };
      if (res.status !== 200) throw new Error(`GET /v1/estimate?${q} answered ${res.status}: ${JSON.stringify(body)}`);
      const r = body.estimate?.price_range;
      out.push({ mid: r?.mid ?? null, low: r?.low ?? null, high: r?.high ?? null, reference_date: body.reference_date });
    }
    return out;
  } finally {
    await new Promise((r) => server.close(r));
    await closeContext(ctx);
  }
}

/** One scenario over every target month: one cut, build and API per month. */
export async function replay(ds: RealDataset, targets: ReplayTarget[], scenario: ReplayScenario, work: string, log: (m: string) => void): Promise<ReplayResult> {
  const started = Date.now();
  const months = [...new Set(targets.map((t) => t.month))].sort();
  const valued: Array<{ t: ReplayTarget; v: Valuation }> = [];
  const referenceDates: Record<string, string[]> = {};
  for (const month of months) {
    const cutoff = monthStart(month, scenario.lagMonths);
    const ofMonth = targets.filter((t) => t.month === month);
    const dataRoot = await buildCut(ds, cutoff, work);
    const values = await valueThroughApi(dataRoot, ofMonth);
    fs.rmSync(dataRoot, { recursive: true, force: true });
    referenceDates[month] = [...new Set(values.map((v) => v.reference_date))].sort();
    ofMonth.forEach((t, i) => valued.push({ t, v: values[i] }));
    const api = metrics(ofMonth.map((t, i) => ({ actual: t.actual, predicted: values[i].mid })));
    const bt = metrics(ofMonth.map((t) => ({ actual: t.actual, predicted: t.backtest_mid })));
    log(`${scenario.name}: ${month}, data before ${cutoff}, ${ofMonth.length} targets, reference date ${referenceDates[month].join(', ')}; ` +
      `API MdAPE ${pct(api.mdape)} bias ${pct(api.bias)}, backtest ${pct(bt.mdape)} / ${pct(bt.bias)}`);
  }
  const both = valued.filter(({ v, t }) => v.mid !== null && t.backtest_mid !== null);
  const inInterval = valued.filter(({ v }) => v.mid !== null).map(({ t, v }) => t.actual >= v.low! && t.actual <= v.high!);
  const gaps = both.map(({ t, v }) => Math.abs(Math.log(v.mid! / t.backtest_mid!))).sort((a, b) => a - b);
  const common = valued.filter(({ v, t }) => v.mid !== null && t.knn !== null && t.backtest_mid !== null);
  return {
    scenario: scenario.name,
    reference_dates: referenceDates,
    api: metrics(valued.map(({ t, v }) => ({ actual: t.actual, predicted: v.mid }))),
    interval_coverage: inInterval.length ? inInterval.filter(Boolean).length / inInterval.length : null,
    api_common: metrics(common.map(({ t, v }) => ({ actual: t.actual, predicted: v.mid }))),
    knn: metrics(common.map(({ t }) => ({ actual: t.actual, predicted: t.knn }))),
    backtest: metrics(common.map(({ t }) => ({ actual: t.actual, predicted: t.backtest_mid }))),
    median_gap: gaps.length ? gaps[Math.floor(gaps.length / 2)] : null,
    seconds: Math.round((Date.now() - started) / 1000),
  };
}

export function renderReplay(label: string, results: ReplayResult[], targets: number): string {
  const head = '| | targets | coverage | MdAPE | mean APE | within ±10 % | within ±20 % | bias (median signed error) | 50 % interval coverage |';
  const row = (name: string, m: Metrics, interval: number | null = null) =>
    `| ${[name, m.targets, pct(m.coverage), pct(m.mdape), pct(m.mean_ape), pct(m.within_10), pct(m.within_20), pct(m.bias), interval === null ? '' : pct(interval)].join(' | ')} |`;
  return [
    `### ${label}`,
    '',
    `Run ${new Date().toISOString()}: the ${targets} screened targets of months 7–12 of the backtest above, each valued by \`GET /v1/estimate\` ` +
      '(its coordinates, surface and type; default parameters) on the data cut before its month, imported, built and calibrated by the pipeline.',
    '',
    head,
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...results.flatMap((r) => [
      row(`**${r.scenario}: GET /v1/estimate**`, r.api, r.interval_coverage),
      row(`${r.scenario}: GET /v1/estimate on the targets the three valued`, r.api_common),
      row(`${r.scenario}: ${KNN_NAME}, from every sale before the target's day (same targets)`, r.knn),
      row(`${r.scenario}: the backtest's estimator, from every sale before the target's day (same targets)`, r.backtest),
    ]),
    '',
    ...results.map((r) =>
      `- ${r.scenario}: median gap between the API's and the backtest's estimate ${pct(r.median_gap)}; reference dates ` +
        `${Object.entries(r.reference_dates).map(([m, d]) => `${m} → ${d.join(', ')}`).join('; ')} (${r.seconds} s).`),
    '',
  ].join('\n');
}
