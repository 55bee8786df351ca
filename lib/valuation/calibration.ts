// Calibration of the 50 % interval: per cohort, the 25th and 75th percentiles of z = ln(actual / mid) / spread, where
// spread is the relative IQR of the comparables' €/m². Learnt by the backtest (lib/valuation/backtest.ts), written
// next to the marts as JSON, and read lazily by the API (again whenever the serving database or the file changes).
import fs from 'node:fs';
import path from 'node:path';
import { paths } from '../config';

export const CONTRACT_VERSION = 'valuation-comparables-v1';
/** A cohort's own quantiles are used from this many measured targets on; below, the global ones. */
export const MIN_COHORT_N = 30;
/** The relative IQR never counts below this: three identical prices do not make a zero-width interval. */
const MIN_SPREAD = 0.05;
/**
 * Without a published backtest: ±1 spread around the mid. On the demo and sample backtests the measured global
 * quantiles stay well inside it (docs/valuation.md), so this errs wide, and a limiting factor says it is uncalibrated.
 */
const DEFAULT_QUANTILES = { z_low: -1, z_high: 1 } as const;

interface CohortQuantiles {
  n: number;
  z_low: number;
  z_high: number;
}

export interface Calibration {
  contract_version: string;
  generated_at: string | null;
  min_cohort_n: number;
  global: CohortQuantiles;
  /** Per type (the `global` basis of that type; absent from older files, then `global`). */
  types?: Record<string, CohortQuantiles>;
  /** Per cohort, shrunk toward the type's (COHORT_SHRINKAGE). */
  cohorts: Record<string, CohortQuantiles>;
  /**
   * Bias correction per type: the median of ln(actual / estimate) over the backtest's targets of that type (at least
   * min_cohort_n of them), learnt on earlier sales and applied to the mid (× exp(log_bias)). Absent from older files.
   */
  log_bias?: Record<string, { n: number; value: number }>;
}

export const DEFAULT_CALIBRATION: Calibration = {
  contract_version: CONTRACT_VERSION,
  generated_at: null,
  min_cohort_n: MIN_COHORT_N,
  global: { n: 0, ...DEFAULT_QUANTILES },
  cohorts: {},
};

const SURFACE_BANDS: Record<string, number[]> = { Appartement: [35, 60, 90], Maison: [80, 120, 160] };
const SPREAD_BANDS = [0.15, 0.3];

function band(v: number, cuts: number[], unit = ''): string {
  const i = cuts.findIndex((c) => v < c);
  if (i === 0) return `<${cuts[0]}${unit}`;
  if (i === -1) return `>=${cuts[cuts.length - 1]}${unit}`;
  return `${cuts[i - 1]}-${cuts[i]}${unit}`;
}

/** Segment of a valuation: type × surface band × dispersion band of its comparables. */
export function cohortOf(typeLocal: string, surface: number, relIqr: number): string {
  const spread = relIqr < SPREAD_BANDS[0] ? 'agree' : relIqr < SPREAD_BANDS[1] ? 'mixed' : 'disagree';
  return `${typeLocal}|${band(surface, SURFACE_BANDS[typeLocal] ?? SURFACE_BANDS.Appartement, 'm2')}|${spread}`;
}

export const spreadOf = (relIqr: number) => Math.max(relIqr, MIN_SPREAD);

/** Quantile with linear interpolation between closest ranks (type 7), of an ascending array. */
export function quantile(sorted: number[], q: number): number {
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  return sorted[lo] + (sorted[Math.min(lo + 1, sorted.length - 1)] - sorted[lo]) * (pos - lo);
}

/**
 * The 50 % interval's quantiles of n scores, split-conformal: the ⌊(n + 1) / 4⌋-th and ⌈3 (n + 1) / 4⌉-th smallest.
 * Under exchangeability they cover at least 50 % of a new target; interpolated quartiles cover slightly less.
 */
export function conformalQuartiles(zs: number[]): { z_low: number; z_high: number } {
  const s = [...zs].sort((a, b) => a - b);
  const n = s.length;
  return { z_low: s[Math.max(1, Math.floor((n + 1) / 4)) - 1], z_high: s[Math.min(n, Math.ceil((3 * (n + 1)) / 4)) - 1] };
}

/**
 * Weight (in targets) of the type's quantiles in a cohort's: z = (n × cohort + COHORT_SHRINKAGE × type) / (n + 100).
 * A cohort of 30 to a few hundred targets alone gives noisy quartiles, whose errors only ever narrow the coverage.
 */
export const COHORT_SHRINKAGE = 100;

const typeOfCohort = (cohort: string) => cohort.split('|')[0];

/**
 * Calibration table from measured targets (their cohort and z): per type (the global basis) and overall, the
 * conformal quartiles; per cohort, its own shrunk toward its type's. Chosen by walk-forward (docs/valuation.md).
 */
export function calibrate(measured: Array<{ cohort: string; z: number }>, generatedAt: string, logBias?: Calibration['log_bias']): Calibration {
  const q = (zs: number[]): CohortQuantiles => ({ n: zs.length, ...conformalQuartiles(zs) });
  const group = (key: (m: { cohort: string }) => string) => {
    const out = new Map<string, number[]>();
    for (const m of measured) out.set(key(m), [...(out.get(key(m)) ?? []), m.z]);
    return [...out].sort(([a], [b]) => (a < b ? -1 : 1));
  };
  // Too few targets to learn even the global quantiles: the conservative default stays (flagged by the estimator).
  const global = measured.length >= MIN_COHORT_N ? q(measured.map((m) => m.z)) : { ...DEFAULT_CALIBRATION.global, n: measured.length };
  const types = Object.fromEntries(group((m) => typeOfCohort(m.cohort)).filter(([, zs]) => zs.length >= MIN_COHORT_N).map(([k, zs]) => [k, q(zs)]));
  const shrunk = (cohort: string, zs: number[]): CohortQuantiles => {
    const own = q(zs);
    const toward = types[typeOfCohort(cohort)] ?? global;
    const mix = (a: number, b: number) => (zs.length * a + COHORT_SHRINKAGE * b) / (zs.length + COHORT_SHRINKAGE);
    return { n: own.n, z_low: mix(own.z_low, toward.z_low), z_high: mix(own.z_high, toward.z_high) };
  };
  return {
    contract_version: CONTRACT_VERSION,
    generated_at: generatedAt,
    min_cohort_n: MIN_COHORT_N,
    global,
    types,
    cohorts: Object.fromEntries(group((m) => m.cohort).map(([k, zs]) => [k, shrunk(k, zs)])),
    ...(logBias ? { log_bias: logBias } : {}),
  };
}

/**
 * The bias correction per type from measured targets (ln(actual / uncorrected mid)): their median, for each type with
 * at least MIN_COHORT_N targets. The estimator's residual bias is a property of the data it runs on (a market moving
 * faster than its past trend, the mix of the comparables), so it is learnt from the data's own earlier months.
 */
export function learnBias(measured: Array<{ typeLocal: string; logRatio: number }>): Record<string, { n: number; value: number }> {
  const byType = new Map<string, number[]>();
  for (const m of measured) byType.set(m.typeLocal, [...(byType.get(m.typeLocal) ?? []), m.logRatio]);
  const out: Record<string, { n: number; value: number }> = {};
  for (const [type, v] of [...byType].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (v.length >= MIN_COHORT_N) out[type] = { n: v.length, value: quantile([...v].sort((a, b) => a - b), 0.5) };
  }
  return out;
}

/** The bias correction (ln) of a type, 0 without a learnt one. */
export const logBiasOf = (calibration: Calibration | undefined, typeLocal: string) => calibration?.log_bias?.[typeLocal]?.value ?? 0;

export const calibrationFile = (dataRoot: string) => path.join(paths.marts(dataRoot), 'valuation_calibration.json');

let cached: { key: string; calibration: Calibration | undefined } | undefined;

/**
 * The published calibration, or undefined when no backtest has run on this data root. Cached per serving file and
 * file modification time, so a new build or a new backtest is picked up without a restart.
 */
export function loadCalibration(dataRoot: string, servingFile: string | undefined): Calibration | undefined {
  const file = calibrationFile(dataRoot);
  const mtime = fs.existsSync(file) ? fs.statSync(file).mtimeMs : 0;
  const key = `${servingFile}|${file}|${mtime}`;
  if (cached?.key !== key) {
    const c = mtime ? (JSON.parse(fs.readFileSync(file, 'utf8')) as Calibration) : undefined;
    cached = { key, calibration: c?.contract_version === CONTRACT_VERSION ? c : undefined };
  }
  return cached.calibration;
}
