// Numeric options of the lab programs: node:util parseArgs gives strings, these turn them into checked numbers.

/** `value` (digits, `_` allowed as a separator: 20_000_000) as a positive number, `fallback` when absent. */
export function positive(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value.replace(/_/g, ''));
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number (got "${value}")`);
  return n;
}

/** As positive(), and an integer. */
export function count(value: string | undefined, name: string, fallback: number): number {
  const n = positive(value, name, fallback);
  if (!Number.isInteger(n)) throw new Error(`--${name} must be a whole number (got "${value}")`);
  return n;
}

/** `value` as an integer of any sign (a seed). */
export function integer(value: string, name: string): number {
  const n = Number(value.replace(/_/g, ''));
  if (!Number.isInteger(n)) throw new Error(`--${name} must be a whole number (got "${value}")`);
  return n;
}
