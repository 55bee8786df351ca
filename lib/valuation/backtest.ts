// Walk-forward backtest of the valuation estimator, without leakage: each target sale of the last 12 months of data is
// valued from sales strictly before its date (its own mutation excluded), in one batched query that binds the SAME
// candidate rule, score and ranking as the API (lib/valuation/sql.ts) to the targets' columns. It measures accuracy
// against two naive baselines, calibrates the 50 % interval on months 1–6 and measures its coverage on months 7–12,
// then publishes the calibration learnt on all 12 months for the API.
import fs from 'node:fs';
import path from 'node:path';
import { paths } from '../config';
import { all, DuckDBInstance, lit, run, type DuckDBConnection } from '../duck';
import { currentServingFile } from '../serving';
import { DEFAULT_RADIUS_M, haversineSql, METERS_PER_DEGREE } from '../distance';
import { calibrate, calibrationFile, cohortOf, learnBias, spreadOf, type Calibration } from './calibration';
import { BEST_K, DEFAULT_MAX_AGE_MONTHS, ESTIMATE_K, MIN_COMPARABLES, ESTIMATE_SURFACE_FACTOR, estimateFrom, intervalFor, pickRadius, priceStats, widenedRadius, type Comparable, type Fallback } from './estimator';
import { adjustBacktestPools } from './features';
import { candidateWhere, comparableColumns, RANK_ORDER, trendJoinSql, WEIGHT_ORDER, withinRadiusSql, type SubjectSql } from './sql';
import { writeFileAtomic } from '../files';

/** The targets' columns as the estimator's subject: /v1/estimate's defaults (no rooms, 500 m, 18 months). */
const TARGET_SUBJECT: SubjectSql = {
  typeLocal: 't.type_local',
  latitude: 't.latitude',
  longitude: 't.longitude',
  surface: 't.surface_reelle_bati',
  surfaceMin: `t.surface_reelle_bati / ${ESTIMATE_SURFACE_FACTOR}`,
  surfaceMax: `t.surface_reelle_bati * ${ESTIMATE_SURFACE_FACTOR}`,
  pieces: 'NULL::DOUBLE',
  radiusM: String(DEFAULT_RADIUS_M),
  refDate: 't.date_mutation',
  maxAgeMonths: String(DEFAULT_MAX_AGE_MONTHS),
  until: 't.date_mutation',
  excludeBulk: 'true',
  excludeMutation: 't.id_mutation',
};

/** Grid of the batched join: 0.01° cells (≥ 1.1 km of latitude, more than the radius). */
const CELLS_PER_DEGREE = 100;

export interface Metrics {
  targets: number;
  /** Share of targets that got an estimate. */
  coverage: number;
  mdape: number | null;
  mean_ape: number | null;
  within_10: number | null;
  within_20: number | null;
  /** Median of (estimate − actual) / actual. */
  bias: number | null;
}

export interface SegmentReport extends Metrics {
  segment: string;
  /** Share of the measured targets (months 7–12) whose actual price falls in the interval calibrated on months 1–6. */
  interval_coverage: number | null;
  interval_n: number;
}

export interface BacktestReport {
  generated_at: string;
  serving_file: string;
  window: { from: string; to: string };
  targets: number;
  estimator: SegmentReport;
  /** The naive baselines on the same targets; `mdape_common` compares on the targets the estimator valued. */
  baselines: Array<Metrics & { name: string; mdape_common: number | null }>;
  /** Estimator and baselines per type, on the targets every one of them valued (the fair comparison). */
  by_type: Array<{ type_local: string; targets: number; estimator: Metrics; baselines: Array<Metrics & { name: string }> }>;
  /** The estimator on every target, the screened-out ones included: the effect of the screen. */
  with_screened: Metrics;
  /**
   * Months 7–12 alone (their bias correction and interval learnt on earlier months only), the estimator and the plain
   * kNN on the same targets (those both valued): the out-of-sample comparison.
   */
  measure_months: { estimator: Metrics; knn: Metrics };
  segments: SegmentReport[];
  calibration: Calibration;
  seconds: number;
}

interface Target {
  target_id: number;
  id_mutation: string;
  date_mutation: string;
  month_idx: number;
  type_local: string;
  surface: number;
  actual: number;
  /** Outside what was known before the window (absolute bounds, past fences): valued, reported apart. */
  screened_out: boolean;
  baseline_code_postal: number | null;
  baseline_commune: number | null;
  baseline_knn: number | null;
}

interface Valued extends Target {
  comparables: number;
  /** Fallbacks used, comma-separated ('' when none). */
  fallbacks: string;
  /** The estimate without bias correction (estimateFrom without a calibration). */
  mid_raw: number | null;
  /** The estimate with the bias correction learnt on the earlier months of the window. */
  mid: number | null;
  rel_iqr: number | null;
  cohort: string | null;
  z: number | null;
  low: number | null;
  high: number | null;
  in_interval: boolean | null;
  part: 'calibration' | 'measure';
}

const median = (v: number[]) => {
  if (!v.length) return null;
  const s = [...v].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const mean = (v: number[]) => (v.length ? v.reduce((a, b) => a + b, 0) / v.length : null);
const share = (v: boolean[]) => (v.length ? v.filter(Boolean).length / v.length : null);

export function metrics(rows: Array<{ actual: number; predicted: number | null }>): Metrics {
  const valued = rows.filter((r): r is { actual: number; predicted: number } => r.predicted !== null);
  const signed = valued.map((r) => (r.predicted - r.actual) / r.actual);
  const ape = signed.map(Math.abs);
  return {
    targets: rows.length,
    coverage: rows.length ? valued.length / rows.length : 0,
    mdape: median(ape),
    mean_ape: mean(ape),
    within_10: share(ape.map((a) => a <= 0.1)),
    within_20: share(ape.map((a) => a <= 0.2)),
    bias: median(signed),
  };
}

function segmentReport(segment: string, rows: Valued[]): SegmentReport {
  const measured = rows.filter((r) => r.in_interval !== null);
  return {
    segment,
    ...metrics(rows.map((r) => ({ actual: r.actual, predicted: r.mid }))),
    interval_coverage: share(measured.map((r) => r.in_interval!)),
    interval_n: measured.length,
  };
}

/**
 * Targets: every clean single sale of a house or flat with coordinates of the last 12 calendar months of data, sampled
 * proportionally per month and type, read from `ventes`, not from the estimator's mart: the `is_outlier` flag there
 * uses fences computed over every loaded year, the target's own included, so it must not choose targets. The targets
 * are screened instead with what was known before the window (`screened_out`): the absolute bounds of docs/data.md
 * (symbolic prices, €/m² outside 100–60,000) and Tukey fences on ln(€/m²) from the sales sold BEFORE the window
 * (commune and type, else département and type, at least 20 sales). Screened targets are valued too, and the report
 * gives the figures with them beside. Off-plan sales (VEFA) are not targets: /v1/estimate values existing homes.
 */
async function selectTargets(conn: DuckDBConnection, maxTargets: number): Promise<{ from: string; to: string }> {
  const [w] = await all<{ from: string; to: string }>(
    conn,
    `select (date_trunc('month', max(date_mutation)) - interval 11 month)::DATE::VARCHAR as "from", max(date_mutation)::VARCHAR as "to"
     from valuation_ventes`,
  );
  await run(
    conn,
    `create or replace temp table bt_targets as
     with past as (
       select code_commune, code_departement, type_local, ln(prix_m2) as l from ventes
       where date_mutation < $from::DATE and type_local in ('Maison', 'Appartement') and prix_m2 > 0 and not is_bulk_sale
     ),
     fences as (
       select 'c' as level, code_commune as zone, type_local, quantile_cont(l, 0.25) as q1, quantile_cont(l, 0.75) as q3
       from past group by all having count(*) >= 20
       union all
       select 'd', code_departement, type_local, quantile_cont(l, 0.25), quantile_cont(l, 0.75)
       from past group by all having count(*) >= 20
     ),
     eligible as (
       select v.id as target_id, v.id_mutation, v.date_mutation, v.type_local, v.surface_reelle_bati, v.valeur_fonciere as actual,
         v.latitude, v.longitude, v.code_postal, v.code_commune_actuel,
         coalesce(v.valeur_fonciere < 1000 or v.prix_m2 < 100 or v.prix_m2 > 60000
           or ln(v.prix_m2) not between coalesce(fc.q1, fd.q1) - 1.5 * (coalesce(fc.q3, fd.q3) - coalesce(fc.q1, fd.q1))
                                    and coalesce(fc.q3, fd.q3) + 1.5 * (coalesce(fc.q3, fd.q3) - coalesce(fc.q1, fd.q1)), false) as screened_out,
         date_diff('month', $from::DATE, date_trunc('month', v.date_mutation)) + 1 as month_idx
       from ventes v
       left join fences fc on fc.level = 'c' and fc.zone = v.code_commune and fc.type_local = v.type_local
       left join fences fd on fd.level = 'd' and fd.zone = v.code_departement and fd.type_local = v.type_local
       where v.type_local in ('Maison', 'Appartement') and v.prix_m2 is not null and not v.is_vefa
         and v.date_mutation >= $from::DATE and not v.is_bulk_sale and v.latitude is not null
         and v.surface_reelle_bati between 5 and 5000
     ),
     ranked as (
       select *, row_number() over (partition by month_idx, type_local order by hash(target_id), target_id) as rn,
         count(*) over (partition by month_idx, type_local) as stratum_n, count(*) over () as total
       from eligible
     )
     select * exclude (rn, stratum_n, total) from ranked where rn <= ceil(stratum_n * least(1, $max / total))`,
    { from: w.from, max: maxTargets },
  );
  return w;
}

/**
 * The estimate's pool of every target, as searchComparables finds it: the heaviest ESTIMATE_K within the radius, or,
 * with fewer than MIN_COMPARABLES there, within the widened radius (the geographic fallback).
 */
async function batchComparables(conn: DuckDBConnection, maxLat: number | null): Promise<Map<number, { pool: Comparable[]; fallbacks: Fallback[] }>> {
  const wide = widenedRadius(DEFAULT_RADIUS_M);
  const g = gridJoin(wide, maxLat);
  const rows = await all<Comparable & { target_id: number; in_radius: boolean }>(
    conn,
    `with pairs as (
       select t.target_id, ${comparableColumns(TARGET_SUBJECT)}, ${withinRadiusSql(TARGET_SUBJECT)} as in_radius
       from ${g.targets} t join ${g.candidates} c on ${g.on} ${trendJoinSql(TARGET_SUBJECT)}
       where ${candidateWhere(TARGET_SUBJECT)} and ${withinRadiusSql(TARGET_SUBJECT, 'c', String(wide))}
     )
     select * from pairs
     -- the heaviest within the radius, and the heaviest of the ring: the heaviest of the widened search are among them;
     -- the ring only for targets with fewer than MIN_COMPARABLES inside (pickRadius ignores it otherwise: fewer rows)
     qualify row_number() over (partition by target_id, in_radius order by ${WEIGHT_ORDER}) <= ${ESTIMATE_K}
       and (in_radius or sum(in_radius::INTEGER) over (partition by target_id) < ${MIN_COMPARABLES})
     order by target_id, ${RANK_ORDER}`,
  );
  const byTarget = new Map<number, Array<Comparable & { in_radius: boolean }>>();
  for (const r of rows) {
    const list = byTarget.get(r.target_id);
    if (list) list.push(r);
    else byTarget.set(r.target_id, [r]);
  }
  const out = new Map<number, { pool: Comparable[]; fallbacks: Fallback[] }>();
  for (const [id, found] of byTarget) {
    const { pool, fallbacks } = pickRadius(found, BEST_K);
    out.set(id, { pool, fallbacks });
  }
  return out;
}

/** The 0.01° grid join of the targets to candidate sales within `radiusM` (no cross join at France scale). */
function gridJoin(radiusM: number, maxLat: number | null): { targets: string; candidates: string; on: string } {
  const cellM = METERS_PER_DEGREE / CELLS_PER_DEGREE;
  const dLat = Math.ceil(radiusM / cellM);
  const dLon = Math.ceil(radiusM / (cellM * Math.max(0.01, Math.cos(((maxLat ?? 0) * Math.PI) / 180))));
  const cell = (col: string) => `floor(${col} * ${CELLS_PER_DEGREE})::INTEGER`;
  return {
    targets: `(select bt.*, ${cell('bt.latitude')} + a.d as cell_lat, ${cell('bt.longitude')} + b.d as cell_lon
       from bt_targets bt cross join range(-${dLat}, ${dLat + 1}) a(d) cross join range(-${dLon}, ${dLon + 1}) b(d))`,
    candidates: `(select *, ${cell('latitude')} as cell_lat, ${cell('longitude')} as cell_lon from valuation_ventes where latitude is not null)`,
    on: 'c.cell_lat = t.cell_lat and c.cell_lon = t.cell_lon and c.type_local = t.type_local',
  };
}

/** The plain nearest-neighbour baseline: the 10 nearest clean sales within 500 m of the last 18 months. */
export const KNN = { k: 10, radiusM: 500, months: 18, surfaceTolerance: 0.3 } as const;

/**
 * Naive baselines, same type and no leakage (sold strictly before the target, its own mutation excluded, not bulk):
 * median €/m² of the postal code (resp. commune) over the estimator's horizon × surface, and the plain kNN: median €/m²
 * of the KNN.k nearest sales within KNN.radiusM over KNN.months with a surface within ±30 % × surface.
 */
async function baselines(conn: DuckDBConnection, maxLat: number | null): Promise<Target[]> {
  const zone = (col: string) =>
    `(select t.target_id, median(c.prix_m2) * t.surface_reelle_bati as v
      from bt_targets t join valuation_ventes c on c.${col} = t.${col} and c.type_local = t.type_local
      where c.date_mutation >= (t.date_mutation - to_months(${DEFAULT_MAX_AGE_MONTHS}))::DATE and c.date_mutation < t.date_mutation
        and c.id_mutation <> t.id_mutation and not c.is_bulk_sale
      group by t.target_id, t.surface_reelle_bati)`;
  const g = gridJoin(KNN.radiusM, maxLat);
  const distance = haversineSql('t.latitude', 't.longitude', 'c.latitude', 'c.longitude');
  const knn = `(select target_id, median(prix_m2) * any_value(surface_reelle_bati) as v from (
      select t.target_id, t.surface_reelle_bati, c.prix_m2
      from ${g.targets} t join ${g.candidates} c on ${g.on}
      where c.date_mutation >= (t.date_mutation - to_months(${KNN.months}))::DATE and c.date_mutation < t.date_mutation
        and c.id_mutation <> t.id_mutation and not c.is_bulk_sale
        and abs(c.surface_reelle_bati - t.surface_reelle_bati) <= ${KNN.surfaceTolerance} * t.surface_reelle_bati
        and ${distance} <= ${KNN.radiusM}
      qualify row_number() over (partition by t.target_id order by ${distance}, c.id) <= ${KNN.k})
    group by target_id)`;
  return all<Target>(
    conn,
    `select t.target_id, t.id_mutation, t.date_mutation::VARCHAR as date_mutation, t.month_idx, t.type_local,
       t.surface_reelle_bati as surface, t.actual, t.screened_out, cp.v as baseline_code_postal, co.v as baseline_commune,
       knn.v as baseline_knn
     from bt_targets t left join ${zone('code_postal')} cp using (target_id) left join ${zone('code_commune_actuel')} co using (target_id)
       left join ${knn} knn using (target_id)
     order by t.target_id`,
  );
}

export const KNN_NAME = `plain kNN (${KNN.k} nearest within ${KNN.radiusM} m, ${KNN.months} months, surface ±30 %)`;

const BASELINES = [
  ['baseline_knn', `${KNN_NAME} × surface`],
  ['baseline_code_postal', 'median €/m² of the postal code × surface'],
  ['baseline_commune', 'median €/m² of the commune × surface'],
] as const;

export interface BacktestOptions {
  dataRoot: string;
  /** Upper bound of sampled targets (stratified by month and type). */
  maxTargets?: number;
  log?: (line: string) => void;
  /** Time stamp of the published calibration (default: now). */
  now?: Date;
  /** Building and energy adjustments (default true; false measures the estimator without them). */
  features?: boolean;
}

/**
 * Runs the backtest on the current serving database of `dataRoot`, writes `marts/valuation_backtest.parquet` (one row
 * per target) and `marts/valuation_calibration.json` (what the API loads), and returns the report.
 */
export async function runBacktest(opts: BacktestOptions): Promise<BacktestReport> {
  const started = performance.now();
  const log = opts.log ?? (() => {});
  const servingFile = currentServingFile(opts.dataRoot);
  if (!servingFile) throw new Error(`no serving database under ${opts.dataRoot}: build the marts first`);
  const generatedAt = (opts.now ?? new Date()).toISOString();
  const instance = await DuckDBInstance.create(servingFile, { access_mode: 'READ_ONLY', threads: '2', memory_limit: '3GB' });
  const conn = await instance.connect();
  try {
    const window = await selectTargets(conn, opts.maxTargets ?? 20_000);
    const [{ maxlat }] = await all<{ maxlat: number | null }>(conn, 'select max(abs(latitude)) as maxlat from bt_targets');
    const found = await batchComparables(conn, maxlat);
    // building and energy adjustments (lib/valuation/features.ts), on by default; off to measure their effect
    const comps = opts.features === false ? found : await adjustBacktestPools((sql, p) => all(conn, sql, p), found);
    const targets = await baselines(conn, maxlat);
    log(`backtest: ${targets.length} targets from ${window.from} to ${window.to}, ${comps.size} with comparables`);

    // Uncorrected estimates first (what estimateFrom gives without a calibration).
    const raw = targets.map((t) => {
      const { pool, fallbacks } = comps.get(t.target_id) ?? { pool: [], fallbacks: [] };
      const est = estimateFrom(pool, { typeLocal: t.type_local, surface: t.surface, fallbacks }, undefined);
      const stats = est ? priceStats(pool) : null;
      const midRaw = stats ? stats.median * t.surface : null;
      return { t, n: pool.length, fallbacks: fallbacks.join(','), midRaw, relIqr: stats?.relIqr ?? null, cohort: stats ? cohortOf(t.type_local, t.surface, stats.relIqr) : null };
    });
    // Walk-forward bias correction: month m's correction is learnt on the targets of months 1 to m − 1 only (none for
    // month 1, nor while a type has fewer than MIN_COHORT_N earlier targets); the API's, on all 12 months.
    const learnable = raw.filter((r) => r.midRaw !== null && !r.t.screened_out);
    const ratios = (rows: typeof raw) => rows.map((r) => ({ typeLocal: r.t.type_local, logRatio: Math.log(r.t.actual / r.midRaw!) }));
    const biasBefore = new Map<number, Record<string, { n: number; value: number }>>();
    for (const m of new Set(raw.map((r) => r.t.month_idx))) biasBefore.set(m, learnBias(ratios(learnable.filter((r) => r.t.month_idx < m))));
    const biasAll = learnBias(ratios(learnable));
    const corrected = (r: (typeof raw)[number], bias: Record<string, { n: number; value: number }> | undefined) =>
      r.midRaw === null ? null : r.midRaw * Math.exp(bias?.[r.t.type_local]?.value ?? 0);
    const zOf = (r: (typeof raw)[number], mid: number | null) => (mid === null ? null : Math.log(r.t.actual / mid) / spreadOf(r.relIqr!));
    const learn = (rows: typeof raw, bias: (r: (typeof raw)[number]) => Record<string, { n: number; value: number }> | undefined) =>
      rows.filter((r) => r.midRaw !== null && !r.t.screened_out).map((r) => ({ cohort: r.cohort!, z: zOf(r, corrected(r, bias(r)))! }));
    // Honest coverage: the interval of months 7–12 comes from a calibration that never saw them.
    const early = calibrate(learn(raw.filter((r) => r.t.month_idx <= 6), (r) => biasBefore.get(r.t.month_idx)), generatedAt);
    const calibration = calibrate(learn(raw, () => biasAll), generatedAt, biasAll);
    const valued: Valued[] = raw.map((r) => {
      const { t, n, fallbacks, midRaw, relIqr, cohort } = r;
      const mid = corrected(r, biasBefore.get(t.month_idx));
      const part = t.month_idx <= 6 ? 'calibration' : 'measure';
      const iv = mid !== null ? intervalFor(part === 'measure' ? early : calibration, t.type_local, t.surface, relIqr!) : null;
      const low = iv ? mid! * iv.ratioLow : null;
      const high = iv ? mid! * iv.ratioHigh : null;
      const inInterval = part === 'measure' && low !== null ? t.actual >= low && t.actual <= high! : null;
      return { ...t, comparables: n, fallbacks, mid_raw: midRaw, mid, rel_iqr: relIqr, cohort, z: zOf(r, mid), low, high, in_interval: inInterval, part };
    });

    // The figures and the calibration are those of the screened targets; all targets are published (Parquet).
    const kept = valued.filter((v) => !v.screened_out);
    const bySegment = new Map<string, Valued[]>();
    for (const v of kept) {
      for (const key of [v.type_local, v.cohort]) if (key) bySegment.set(key, [...(bySegment.get(key) ?? []), v]);
    }
    const modelled = kept.filter((v) => v.mid !== null);
    const report: BacktestReport = {
      generated_at: generatedAt,
      serving_file: path.basename(servingFile),
      window,
      targets: kept.length,
      estimator: segmentReport('all', kept),
      baselines: BASELINES.map(([col, name]) => ({
        name,
        ...metrics(kept.map((v) => ({ actual: v.actual, predicted: v[col] }))),
        mdape_common: metrics(modelled.map((v) => ({ actual: v.actual, predicted: v[col] }))).mdape,
      })),
      by_type: [...new Set(kept.map((v) => v.type_local))].sort().map((type) => {
        const common = kept.filter((v) => v.type_local === type && v.mid !== null && BASELINES.every(([col]) => v[col] !== null));
        return {
          type_local: type,
          targets: common.length,
          estimator: metrics(common.map((v) => ({ actual: v.actual, predicted: v.mid }))),
          baselines: BASELINES.map(([col, name]) => ({ name, ...metrics(common.map((v) => ({ actual: v.actual, predicted: v[col] }))) })),
        };
      }),
      with_screened: metrics(valued.map((v) => ({ actual: v.actual, predicted: v.mid }))),
      measure_months: ((rows) => ({
        estimator: metrics(rows.map((v) => ({ actual: v.actual, predicted: v.mid }))),
        knn: metrics(rows.map((v) => ({ actual: v.actual, predicted: v.baseline_knn }))),
      }))(kept.filter((v) => v.part === 'measure' && v.mid !== null && v.baseline_knn !== null)),
      segments: [...bySegment].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, rows]) => segmentReport(k, rows)),
      calibration,
      seconds: 0,
    };
    await writeOutputs(conn, opts.dataRoot, valued, calibration);
    report.seconds = Math.round((performance.now() - started) / 10) / 100;
    log(`backtest: MdAPE ${pct(report.estimator.mdape)}, coverage ${pct(report.estimator.coverage)}, interval coverage ${pct(report.estimator.interval_coverage)} (${report.seconds} s)`);
    return report;
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

/** Typed explicitly: a column that is null on every row (a tiny run) keeps its type, and an empty run still writes. */
const PARQUET_COLUMNS = `{target_id: 'BIGINT', id_mutation: 'VARCHAR', date_mutation: 'DATE', month_idx: 'INTEGER', type_local: 'VARCHAR',
  surface: 'DOUBLE', actual: 'DOUBLE', screened_out: 'BOOLEAN', baseline_code_postal: 'DOUBLE', baseline_commune: 'DOUBLE',
  baseline_knn: 'DOUBLE', comparables: 'INTEGER',
  fallbacks: 'VARCHAR', mid_raw: 'DOUBLE', mid: 'DOUBLE', rel_iqr: 'DOUBLE', cohort: 'VARCHAR', z: 'DOUBLE', low: 'DOUBLE', high: 'DOUBLE',
  in_interval: 'BOOLEAN', part: 'VARCHAR'}`;

async function writeOutputs(conn: DuckDBConnection, dataRoot: string, rows: Valued[], calibration: Calibration): Promise<void> {
  const dir = paths.marts(dataRoot);
  fs.mkdirSync(dir, { recursive: true });
  const tmpJson = path.join(dir, `.valuation_backtest-${process.pid}.ndjson`);
  const tmpParquet = path.join(dir, `.valuation_backtest-${process.pid}.parquet`);
  fs.writeFileSync(tmpJson, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  try {
    await run(conn, `copy (select * from read_json(${lit(tmpJson)}, format = 'newline_delimited', columns = ${PARQUET_COLUMNS}))
      to ${lit(tmpParquet)} (format parquet, compression zstd)`);
    fs.renameSync(tmpParquet, path.join(dir, 'valuation_backtest.parquet'));
  } finally {
    fs.rmSync(tmpJson, { force: true });
  }
  const file = calibrationFile(dataRoot);
  writeFileAtomic(file, JSON.stringify(calibration, null, 2));
}

export const pct = (v: number | null) => (v === null ? 'n/a' : `${(v * 100).toFixed(1)} %`);
