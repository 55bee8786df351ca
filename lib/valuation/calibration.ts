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
  cohorts: Record<string, CohortQuantiles>;
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

/** Calibration table from measured targets (their cohort and z). */
export function calibrate(measured: Array<{ cohort: string; z: number }>, generatedAt: string): Calibration {
  const q = (zs: number[]): CohortQuantiles => {
    const s = [...zs].sort((a, b) => a - b);
    return { n: s.length, z_low: quantile(s, 0.25), z_high: quantile(s, 0.75) };
  };
  const byCohort = new Map<string, number[]>();
  for (const m of measured) byCohort.set(m.cohort, [...(byCohort.get(m.cohort) ?? []), m.z]);
  return {
    contract_version: CONTRACT_VERSION,
    generated_at: generatedAt,
    min_cohort_n: MIN_COHORT_N,
    // Too few targets to learn even the global quantiles: the conservative default stays (flagged by the estimator).
    global: measured.length >= MIN_COHORT_N ? q(measured.map((m) => m.z)) : { ...DEFAULT_CALIBRATION.global, n: measured.length },
    cohorts: Object.fromEntries([...byCohort].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, zs]) => [k, q(zs)])),
  };
}

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
