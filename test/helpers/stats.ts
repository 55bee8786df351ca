// Plain statistics the tests recompute expected figures with, independently of the SQL under test.

/** Quantile with linear interpolation between closest ranks (the usual "type 7"; DuckDB's quantile_cont). */
export function quantile(sorted: number[], q: number): number {
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  return sorted[lo] + (sorted[Math.min(lo + 1, sorted.length - 1)] - sorted[lo]) * (pos - lo);
}

/** Median (mean of the two middle values of an even count); a test asking for the median of nothing is wrong. */
export function median(values: number[]): number {
  if (!values.length) throw new Error('median of no value');
  return quantile([...values].sort((a, b) => a - b), 0.5);
}

/** Median, or null for no value (as SQL's median). */
export const medianOrNull = (values: number[]) => (values.length ? median(values) : null);

export const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;

/** Rounded to the cent, as the API rounds. */
export const r2 = (v: number) => Math.round(v * 100) / 100;

/** Median rounded to the cent; null for no value. */
export function median2(values: number[]): number | null {
  return values.length ? r2(median(values)) : null;
}
