// Thin helpers over @duckdb/node-api shared by the pipeline, the marts and the API:
// plain-JS rows (numbers instead of BigInt where exact, ISO strings for dates) and safe SQL literals.
import {
  DuckDBConnection,
  DuckDBDateValue,
  DuckDBDecimalValue,
  DuckDBInstance,
  DuckDBListValue,
  DuckDBStructValue,
  DuckDBTimestampValue,
  DuckDBTimestampTZValue,
  type DuckDBValue,
} from '@duckdb/node-api';

export type Row = Record<string, unknown>;
export type Params = Record<string, string | number | boolean | null | bigint | string[] | number[]>;

export { DuckDBConnection, DuckDBInstance };

/** Converts one DuckDB value to plain JSON-friendly JS. BIGINTs beyond 2^53 stay strings, never silently rounded. */
export function toJs(v: DuckDBValue): unknown {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint') {
    return v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(v) : v.toString();
  }
  if (typeof v !== 'object') return v;
  if (v instanceof DuckDBDateValue) return v.toString();
  if (v instanceof DuckDBTimestampValue || v instanceof DuckDBTimestampTZValue) {
    return new Date(Number(v.micros / 1000n)).toISOString();
  }
  if (v instanceof DuckDBDecimalValue) return v.toDouble();
  if (v instanceof DuckDBListValue) return v.items.map(toJs);
  if (v instanceof DuckDBStructValue) {
    return Object.fromEntries(Object.entries(v.entries).map(([k, x]) => [k, toJs(x)]));
  }
  return v.toString();
}

/** Runs a query with bound `$name` parameters and returns plain rows. */
export async function all<T = Row>(conn: DuckDBConnection, sql: string, params?: Params): Promise<T[]> {
  const reader = await conn.runAndReadAll(sql, params as never);
  const names = reader.columnNames();
  return reader.getRows().map((r) => {
    const o: Row = {};
    for (let i = 0; i < names.length; i++) o[names[i]] = toJs(r[i]);
    return o as T;
  });
}

/**
 * Runs a query and returns its columns as arrays of plain JS values (DuckDB's own conversion: a BIGINT is a bigint, a
 * DATE a DuckDB value, so callers cast in SQL). Several times cheaper than `all` for a million rows: no row objects.
 */
export async function columns<T extends Record<string, unknown[]>>(conn: DuckDBConnection, sql: string, params?: Params): Promise<T> {
  const reader = await conn.runAndReadAll(sql, params as never);
  return reader.getColumnsObjectJS() as unknown as T;
}

export async function one<T = Row>(conn: DuckDBConnection, sql: string, params?: Params): Promise<T | undefined> {
  return (await all<T>(conn, sql, params))[0];
}

export async function run(conn: DuckDBConnection, sql: string, params?: Params): Promise<void> {
  await conn.run(sql, params as never);
}

/**
 * SQL string literal for values that cannot be bound (file paths in COPY / read_csv, written by the
 * pipeline itself). Never used for request input: the API binds every parameter.
 */
export function lit(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

export async function openMemory(opts: { threads?: number; memoryLimit?: string } = {}): Promise<{
  instance: DuckDBInstance;
  conn: DuckDBConnection;
}> {
  const instance = await DuckDBInstance.create(':memory:', {
    threads: String(opts.threads ?? 2),
    memory_limit: opts.memoryLimit ?? '4GB',
  });
  return { instance, conn: await instance.connect() };
}
