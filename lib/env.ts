// Every environment variable the product reads, in one zod schema: its form, default, bounds and meaning. Each entry
// point validates the whole environment before doing anything (`checkEnvOrExit`), so a bad value stops the process
// with a message naming the variable and the expected form; code reads values through `env()`. The README's table is
// generated from this file (`npm run docs:config`), and a test fails when it is stale.
import { z } from 'zod';

interface Variable<T> {
  schema: z.ZodType<T>;
  /** The expected form, in words, for the error message and the README. */
  form: string;
  /** The default in the README's words ('' when unset means "off" or "none"). */
  shownDefault: string;
  description: string;
}

function integer(min: number, max: number, dflt: number, description: string): Variable<number> {
  return {
    // Digits only: Number('') is 0 and Number('1e3') is 1000; neither is what a person who wrote the value meant.
    schema: z
      .string()
      .regex(/^\d+$/)
      .transform(Number)
      .pipe(z.number().int().min(min).max(max))
      .optional()
      .transform((v) => v ?? dflt),
    form: `an integer from ${min} to ${max}`,
    shownDefault: String(dflt),
    description,
  };
}

function text(dflt: string | undefined, form: string, description: string, pattern?: RegExp): Variable<string | undefined> {
  const base = pattern ? z.string().regex(pattern) : z.string().min(1);
  return {
    schema: base.optional().transform((v) => v ?? dflt),
    form,
    shownDefault: dflt ?? '',
    description,
  };
}

function oneOf<const T extends readonly [string, ...string[]]>(values: T, dflt: T[number], description: string): Variable<T[number]> {
  return {
    schema: z.enum(values).optional().transform((v) => v ?? dflt),
    form: `one of ${values.join(', ')}`,
    shownDefault: dflt,
    description,
  };
}

function hostList(description: string): Variable<string[]> {
  return {
    schema: z
      .string()
      .optional()
      .transform((v) => (v ?? '').split(',').map((h) => h.trim()).filter(Boolean))
      .pipe(z.array(z.string().regex(/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)$/))),
    form: 'comma-separated host names or IP literals (IPv6 in brackets), no port',
    shownDefault: '',
    description,
  };
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export const VARIABLES = {
  DATA_DIR: text('data', 'a folder path', 'The data folder of every command: the lake, the marts, the serving database, and the state database (SQLite).'),
  PORT: integer(0, 65535, 3000, 'The port the API listens on (0: any free port).'),
  LOG_LEVEL: oneOf(LOG_LEVELS, 'info', 'The level of the structured logs; `silent` turns them off.'),
  LOG_FILE: text(undefined, 'a file path', 'Append the logs to this file (its folder is created) instead of standard output.'),
  DATABASE_URL: text(undefined, 'a postgres:// or postgresql:// URL', 'Keep the state (keys, credits, portfolio, alerts, webhook queue, request log) in this PostgreSQL database instead of the SQLite file of the data folder: required for several API replicas.', /^postgres(ql)?:\/\/\S+$/),
  STATE_LEASE_MS: integer(100, 3_600_000, 30_000, 'With DATABASE_URL: how long a replica counts as alive after its last heartbeat; the charges a dead replica left pending are refunded by a live one this long after it died.'),
  DATABASE_POOL_SIZE: integer(1, 1000, 10, 'With DATABASE_URL: connections to PostgreSQL per API process.'),
  SALES_MEMORY_INDEX: oneOf(['on', 'off'] as const, 'on', 'Answer the zone statistics (`stats/market` and the routes built on it) from an in-memory copy of the sales loaded with each serving database (about 1.1 GB and 20–40 s of loading for 20 M sales); `off` reads DuckDB for every query.'),
  CAPACITY_WAIT_MS: integer(0, 1000, 50, 'How long a request waits for one of the 15 database slots before `503 at_capacity`, in milliseconds (0: refused at once).'),
  DENSE_QUERY_BUDGET_MS: integer(1, 600_000, 3000, 'The time budget of a comparables search (`/v1/comparables`, `/v1/estimate`), in milliseconds.'),
  FONCIER_MARTS_MEMORY_LIMIT: text('8GB', 'a DuckDB memory size such as 8GB, 512MB or 1.5GiB', 'The memory limit of the marts build (DuckDB), for machines with more or less memory.', /^\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)$/i),
  INSEE_SIRENE_API_KEY: text(undefined, 'an API Sirene application key', 'The key of an application subscribed to INSEE\'s API Sirene (portail-api.insee.fr), used by `GET /v1/businesses/:siren` (503 `registry_unavailable` without it).'),
  INSEE_SIRENE_BASE_URL: text('https://api.insee.fr/api-sirene/3.11', 'an http:// or https:// URL', 'The API Sirene base URL (a mirror or a local imitation, called without a key when none is set).', /^https?:\/\/\S+$/),
  WEBHOOK_TIMEOUT_MS: integer(100, 600_000, 10_000, 'A webhook receiver\'s deadline to answer, in milliseconds.'),
  WEBHOOK_CONCURRENCY: integer(1, 1024, 16, 'Webhook deliveries in flight at once per process.'),
  WEBHOOK_LEASE_MS: integer(100, 3_600_000, 30_000, 'The webhook worker lease: a process that dies holding it delays deliveries at most that long.'),
  WEBHOOK_ALLOWED_HOSTS: hostList('Receivers exempt from the private-address rule (tests, a private network); empty in production.'),
  WEBHOOK_CA_FILE: text(undefined, 'a PEM file path', 'Extra trusted CA certificates for the receivers\' TLS, added to Node\'s (e.g. a private CA).'),
  FREE_KEYS: oneOf(['on', 'off'] as const, 'on', 'Whether `/dashboard` gives visitors Free-plan keys without an operator (`POST /v1/account/free-key`); `off` withdraws the offer (404).'),
  FREE_KEYS_PER_ADDRESS_PER_DAY: integer(1, 100_000, 3, 'Free keys one client address (an IPv4 address, or an IPv6 /64) may receive per UTC day; past it 429 `free_key_limit_reached`.'),
  MCP_ALLOWED_HOSTS: hostList('Turns on DNS-rebinding protection on `/mcp`: any other `Host` header is refused with 403.'),
  PUBLIC_URL: text(undefined, 'the https:// origin clients reach the API at (http:// only for localhost or 127.0.0.1), no path', 'The API\'s public origin: the OAuth issuer of remote MCP and the resource its tokens are bound to (`<PUBLIC_URL>/mcp`). Unset, a request to a loopback address uses its own origin (local development) and remote MCP authorization is off for any other host (the API-key header keeps working).', /^(https:\/\/[A-Za-z0-9.-]+(:\d+)?|http:\/\/(localhost|127\.0\.0\.1)(:\d+)?)\/?$/),
  FONCIER_API_KEY: text(undefined, 'an API key (fk_live_…)', 'The key `npm run mcp` (stdio) acts for.'),
  SAMPLES_DIR: text(undefined, 'a folder path', 'Another copy of the real published samples (default `../shared/data`), for the tests and the data report.'),
  FONCIER_TEST_PAUSE: text(undefined, 'a pause point name', 'Tests only: the pipeline pauses at this named point so a test can kill it there.'),
} satisfies Record<string, Variable<unknown>>;

type Variables = typeof VARIABLES;
export type Env = { [K in keyof Variables]: z.output<Variables[K]['schema']> };

export class EnvError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid environment:\n  ${problems.join('\n  ')}`);
  }
}

/** Parses the variables of `source`; an empty value counts as unset. Throws EnvError naming every bad variable. */
export function parseEnv(source: NodeJS.ProcessEnv = process.env): Env {
  const out: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [name, v] of Object.entries(VARIABLES) as [string, Variable<unknown>][]) {
    const raw = source[name] === '' ? undefined : source[name];
    const r = v.schema.safeParse(raw);
    if (r.success) out[name] = r.data;
    else problems.push(`${name} must be ${v.form} (got ${JSON.stringify(raw)})`);
  }
  if (problems.length) throw new EnvError(problems);
  return out as Env;
}

/** One variable alone, for values needed while modules load (before an entry point has checked the rest). */
export function envValue<K extends keyof Env>(name: K, source: NodeJS.ProcessEnv = process.env): Env[K] {
  const v = VARIABLES[name] as Variable<Env[K]>;
  const raw = source[name] === '' ? undefined : source[name];
  const r = v.schema.safeParse(raw);
  if (!r.success) throw new EnvError([`${name} must be ${v.form} (got ${JSON.stringify(raw)})`]);
  return r.data;
}

let cached: { raw: string; env: Env } | undefined;

/** The process environment, parsed once and again only if one of its variables changes (tests set some). */
export function env(): Env {
  const raw = JSON.stringify(Object.keys(VARIABLES).map((k) => process.env[k] ?? null));
  if (cached?.raw !== raw) cached = { raw, env: parseEnv(process.env) };
  return cached.env;
}

/** For entry points, first thing: a bad variable stops the process with its message (no stack trace), exit code 2. */
export function checkEnvOrExit(): Env {
  try {
    return env();
  } catch (e) {
    if (!(e instanceof EnvError)) throw e;
    process.stderr.write(`foncier: ${e.message}\n`);
    process.exit(2);
  }
}

/** The README's table of variables, generated from VARIABLES. */
export function envTableMarkdown(): string {
  const cell = (s: string) => s.replace(/\|/g, '\\|');
  const rows = Object.entries(VARIABLES).map(([name, v]: [string, Variable<unknown>]) =>
    `| \`${name}\` | ${cell(v.form)} | ${v.shownDefault ? `\`${cell(v.shownDefault)}\`` : '—'} | ${cell(v.description)} |`);
  return ['| Variable | Form | Default | Meaning |', '|---|---|---|---|', ...rows].join('\n');
}
