// Query-string parameter schemas shared by the route modules: strict parsing of the strings Express hands over
// (a number is a number, a boolean is true/false, a date is a real YYYY-MM-DD day), with messages that name the rule.
// Out-of-range values are refused, never clamped.
import { z } from 'zod';
import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';

extendZodWithOpenApi(z);
export { z };

const NUMBER_RE = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** What a repeated parameter (?a=1&a=2, an array in Express's query) becomes, so that its message can say so. */
const REPEATED = Symbol('repeated');

/** A repeated parameter is an error rather than a silent pick of one value. (Express 5's simple query parser keeps
 * brackets in the name: ?a[]=1 is a parameter named "a[]", unknown, so ignored.) */
function single(v: unknown): unknown {
  return Array.isArray(v) ? REPEATED : v;
}

/** The message for a value that is not one plain string, or `fallback`. */
function shapeIssue(fallback: string) {
  return (issue: { input?: unknown }) => (issue.input === REPEATED ? 'was given more than once: give it once' : fallback);
}

function toNumber(v: unknown): unknown {
  v = single(v);
  if (typeof v === 'string' && NUMBER_RE.test(v.trim())) return Number(v.trim());
  return v;
}

/**
 * Examples in the OpenAPI document, for every parameter helper below: `example` is the value /docs ("Try it out")
 * prefills, so the prefilled values of one operation must form one valid request, with one location
 * (test/api/docs/prefill.test.ts runs them); `examples` are documented without being prefilled: the other location
 * parameters of an operation, the alternatives.
 */
interface Examples<T> {
  example?: T;
  examples?: T[];
}

/** A numeric query parameter. Both bounds are required: every number reaching SQL fits the column types and DuckDB's
 * integers (no bigint overflow), and the range is published in the OpenAPI document (docs/decisions.md, API limits). */
export function numberParam(opts: { min: number; max: number; int?: boolean; description: string } & Examples<number>) {
  const { min, max, int } = opts;
  const range = `between ${min} and ${max}`;
  let n = z.number({ error: shapeIssue(int ? 'must be an integer' : 'must be a number') });
  if (int) n = n.int({ error: 'must be an integer' });
  n = n.min(min, { error: `must be ${range}` }).max(max, { error: `must be ${range}` });
  return z.preprocess(toNumber, n).openapi({ description: opts.description, example: opts.example, examples: opts.examples });
}

export function booleanParam(description: string) {
  return z
    .preprocess(
      (v) => {
        v = single(v);
        if (v === 'true' || v === '1') return true;
        if (v === 'false' || v === '0') return false;
        return v;
      },
      z.boolean({ error: shapeIssue('must be true or false') }),
    )
    .openapi({ description, type: 'boolean' });
}

/** The calendar date a YYYY-MM-DD string names, or undefined when it is not one (2025-02-30 is not). */
export function parseDay(s: string): Date | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(s)) return undefined;
  const d = new Date(`${s}T00:00:00Z`);
  return Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== s ? undefined : d;
}

/** A day; `example` is prefilled in /docs (a window's two ends go together, e.g. 2024-01-01 and 2024-12-31). */
export function dateParam(description: string, example?: string) {
  return z
    .preprocess(single, z.string({ error: shapeIssue('must be a date YYYY-MM-DD') }))
    .refine((s) => parseDay(s) !== undefined, { error: 'must be a date YYYY-MM-DD' })
    .openapi({ description, format: 'date', ...(example ? { example } : { examples: ['2024-01-01'] }) });
}

export function enumParam<const T extends readonly [string, ...string[]]>(values: T, description: string) {
  return z
    .preprocess(single, z.enum(values, { error: shapeIssue(`must be one of ${values.join(', ')}`) }))
    .openapi({ description });
}

/**
 * A code typed as a string (postal code, INSEE code, département, SIREN) given as a JSON number, as some MCP clients
 * and JSON bodies send it: a non-negative integer becomes its decimal digits (75015 → "75015") and the code's own
 * pattern judges them, so a number that lost its leading zero (1000 for "01000") is refused with the message a string
 * would get. Query strings are always strings: REST is unchanged.
 */
export function codeFromNumber(v: unknown): unknown {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? String(v) : v;
}

/**
 * A parameter the operation requires although zod lets it be absent: `prepare` checks it, so that a request without
 * any location gets missing_location (specification, Location filter) and one missing a single field gets
 * invalid_params naming it. The mark is published: `required` in the OpenAPI parameter and in the MCP tool's schema.
 */
export const required = <T extends z.ZodType>(schema: T) => schema.optional().openapi({ param: { required: true } });

export function stringParam(opts: { description: string; pattern?: RegExp; issue?: string; max?: number; code?: boolean } & Examples<string>) {
  let s = z.string({ error: shapeIssue('must be a string') }).trim().min(1, { error: 'must not be empty' }).max(opts.max ?? 200, {
    error: `must be at most ${opts.max ?? 200} characters`,
  });
  if (opts.pattern) s = s.regex(opts.pattern, { error: opts.issue ?? `must match ${opts.pattern}` });
  return z.preprocess(opts.code ? (v) => codeFromNumber(single(v)) : single, s).openapi({ description: opts.description, example: opts.example, examples: opts.examples });
}

/** A 5-character INSEE commune code: digits, or 2A/2B and three digits in Corsica (either case). The case is spelled
 * out in the class rather than with an `i` flag, which JSON Schema patterns cannot carry (the OpenAPI document would
 * publish the flag inside the pattern). Documented with an example, prefilled only where the operation asks. */
export function inseeCodeParam(description: string, examples: Examples<string> = { examples: ['33063'] }) {
  return stringParam({ description, code: true, pattern: /^(\d{5}|2[ABab]\d{3})$/, issue: 'must be a 5-character INSEE commune code (digits, or 2A/2B and 3 digits in Corsica)', ...examples });
}

export const TYPE_LOCAL_4 = ['Maison', 'Appartement', 'Terrain', 'Local commercial'] as const;

/** Rounded to the cent (or the hundredth of a millisecond); null stays null. */
export function round2<T extends number | null>(v: T): T {
  return (v === null ? null : Math.round(v * 100) / 100) as T;
}

/** 'YYYY-MM-DD' of a UTC day. */
export function isoDay(d: Date): string {
  return d.toISOString().slice(0, 10);
}

/** The same calendar day `years` earlier (29 February falls on 1 March). */
export function yearsBefore(d: Date, years: number): Date {
  return new Date(Date.UTC(d.getUTCFullYear() - years, d.getUTCMonth(), d.getUTCDate()));
}
