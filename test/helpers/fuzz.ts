// Property-based fuzzing of the HTTP API, generated from the served OpenAPI document: every
// documented operation, every parameter, so a new endpoint is covered without editing anything. Requests mix valid
// values (examples, enum members, in-range numbers) with hostile ones (wrong types, huge and non-finite numbers, empty
// and 10,000-character strings, control and non-ASCII characters, SQL and path-traversal strings, repeated and
// bracketed parameters, broken percent-encoding, bad JSON bodies, bodies that are not what Content-Encoding says, bad
// path ids). `problems` states what a response must never do: a 5xx, a 4xx without the JSON error body, a stack
// trace, a file path or SQL text. Used by test/api/platform/fuzz.test.ts (bounded) and scripts/fuzz.ts (long runs).
import http from 'node:http';
import fc from 'fast-check';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import SwaggerParser from '@apidevtools/swagger-parser';
import { ERROR_STATUS } from '../../api/errors';
import type { Limits } from '../../api/context';
import { RegistryClient, registryConfigFromEnv } from '../../lib/registry';

export interface FuzzRequest {
  /** `METHOD path` of the documented operation the request was built from. */
  op: string;
  method: string;
  /** Path and query string, already encoded (possibly badly, on purpose). */
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** The raw values sent, which an answer may legitimately echo (so they are removed before the leak checks). */
  sent: string[];
}

export interface FuzzResponse {
  status: number;
  contentType: string;
  text: string;
}

interface Param {
  name: string;
  in: 'query' | 'path' | 'header' | 'cookie';
  required?: boolean;
  schema: Record<string, any>;
}

interface Operation {
  method: string;
  path: string;
  parameters: Param[];
  hasBody: boolean;
  /** Validators of the documented success bodies, by status. */
  success: Map<number, ValidateFunction>;
}

export interface FuzzTarget {
  operations: Operation[];
}

/** The operations of a served OpenAPI document, dereferenced, with validators for their documented 2xx bodies. */
export async function fuzzTarget(doc: unknown): Promise<FuzzTarget> {
  const deref = (await SwaggerParser.dereference(structuredClone(doc) as never)) as any;
  const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false });
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries<Record<string, any>>(deref.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      const success = new Map<number, ValidateFunction>();
      for (const [status, r] of Object.entries<any>(op.responses ?? {})) {
        const schema = r.content?.['application/json']?.schema;
        if (Number(status) < 300 && schema) success.set(Number(status), ajv.compile(schema));
      }
      operations.push({ method: method.toUpperCase(), path, parameters: op.parameters ?? [], hasBody: !!op.requestBody, success });
    }
  }
  return { operations };
}

// ---- values ---------------------------------------------------------------------------------------------------------

const LONG = 'a'.repeat(10_000);
const HOSTILE = [
  '', ' ', '  ', 'NaN', 'Infinity', '-Infinity', '+Infinity', '-0', '0x10', '0b11', '1_000', '1,5', '1e309', '1e-400', '-1e300',
  '18446744073709551616', '9223372036854775807', '-9223372036854775809', '1e19', '1e300', '0.1.2', '٣٣', '３３０６３', '１',
  'true', 'false', 'null', 'undefined', '[]', '{}', '[object Object]', '__proto__', 'constructor', 'toString',
  "'", '"', '\\', "' OR '1'='1", "1 OR 1=1", "1; DROP TABLE ventes; --", "'); COPY ventes TO '/tmp/x.csv'; --",
  "' UNION SELECT * FROM read_csv('/etc/passwd') --", '$1', '$loc_cp', '%', '%%', '%s%s%s', '${7*7}', '{{7*7}}',
  '../../etc/passwd', '..\\..\\windows\\win.ini', '/etc/passwd', 'file:///etc/passwd', '....//....//', '\u0000', 'a\u0000b',
  '\u0001\u0002\u001f\u007f', '\r\nX-Injected: 1', '\t', '\u202e', '\ufeff', '\ud800', '\udfff', 'é', 'Saint-Étienne', '日本語',
  '𝕏𝕐', '🏠', 'İ', 'ß', LONG, '9'.repeat(400), '2A', '2a004', '2B033', '75115', '00000', '99999', '2025-02-30', '2025-13-01',
  '0000-00-00', '9999-12-31', '2024-1-1', '20240101',
];

/** Any string, hostile ones weighted in. */
const anyString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...HOSTILE) },
  { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  { weight: 1, arbitrary: fc.double().map(String) },
  { weight: 1, arbitrary: fc.bigInt().map(String) },
  { weight: 1, arbitrary: fc.integer().map(String) },
);

/** A value the parameter's schema accepts: its example, an enum member, an in-range number, a real date. */
function valid(schema: Record<string, any>): fc.Arbitrary<string> {
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum.map(String));
  if (schema.type === 'boolean') return fc.constantFrom('true', 'false');
  if (schema.type === 'number' || schema.type === 'integer') {
    const min = typeof schema.minimum === 'number' ? schema.minimum : 0;
    const max = typeof schema.maximum === 'number' ? schema.maximum : 1000;
    const any = schema.type === 'integer' ? fc.integer({ min: Math.ceil(min), max: Math.floor(Math.min(max, 2 ** 31)) }).map(String) : fc.double({ min, max, noNaN: true }).map(String);
    return schema.example === undefined ? any : fc.oneof(fc.constant(String(schema.example)), any);
  }
  if (schema.format === 'date') return fc.date({ min: new Date('2019-01-01'), max: new Date('2026-02-15'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10));
  return schema.example === undefined ? fc.string({ minLength: 1, maxLength: 12 }) : fc.constant(String(schema.example));
}

/** A value a parameter's schema accepts (or nearly: its bounds and just past them). */
function plausible(schema: Record<string, any>): fc.Arbitrary<string> {
  const options: fc.Arbitrary<string>[] = [];
  if (schema.example !== undefined) options.push(fc.constant(String(schema.example)));
  if (Array.isArray(schema.enum)) options.push(fc.constantFrom(...schema.enum.map(String)));
  if (schema.type === 'number' || schema.type === 'integer') {
    const min = typeof schema.minimum === 'number' ? schema.minimum : -1e6;
    const max = typeof schema.maximum === 'number' ? schema.maximum : 1e6;
    const edges = [min, max, min - 1, max + 1, (min + max) / 2].map(String);
    options.push(fc.constantFrom(...edges));
    options.push(schema.type === 'integer' ? fc.integer({ min: Math.ceil(Math.max(min, -(2 ** 31))), max: Math.floor(Math.min(max, 2 ** 31)) }).map(String) : fc.double({ min, max, noNaN: true }).map(String));
  }
  if (schema.type === 'boolean') options.push(fc.constantFrom('true', 'false', '1', '0', 'yes', 'TRUE'));
  if (schema.format === 'date') {
    options.push(fc.date({ min: new Date('2010-01-01'), max: new Date('2030-12-31'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)));
  }
  if (options.length === 0) options.push(fc.string({ minLength: 1, maxLength: 12 }));
  return fc.oneof(...options);
}

/** Percent-encodes every byte of the string's UTF-8 except the unreserved characters (lone surrogates become U+FFFD,
 * as Buffer writes them, where encodeURIComponent would throw). */
function encode(s: string): string {
  let out = '';
  for (const b of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(b);
    out += /[A-Za-z0-9\-_.~]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Broken percent-encodings and raw characters that survive Node's client check, spliced into a path or query. */
const BAD_ENCODINGS = ['%', '%Z', '%ZZ', '%E0%A4%A', '%C0', '%FF%FE', '%00', '%2e%2e%2f', '..', '//', '%ED%A0%80', '~', '%25'];

const BAD_BODIES = ['{', '{"a":', '[1,2', 'nul', '"\u0000', '{"a":1}}', '{"__proto__":{"polluted":1}}', '['.repeat(5000), '{"a":' + '9'.repeat(1000) + '}', '\uFEFF{}', 'x'.repeat(120_000)];

// ---- requests -------------------------------------------------------------------------------------------------------

/** `arb` one time in `n`, else null (fc.option's `freq` is the other way round: nil one time in freq). */
function oneIn<T>(n: number, arb: fc.Arbitrary<T>): fc.Arbitrary<T | null> {
  return fc.oneof({ weight: n - 1, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: arb });
}

const NO_EXTRAS = {
  repeat: null,
  bracket: null,
  unknown: null,
  badEncoding: null,
  method: null,
  auth: 'key' as const,
  body: null,
  gzipLie: null,
  requestId: null,
};

/** How hostile a request is: `clean` holds only valid values (so it reaches the handlers and their SQL), `one` makes
 * exactly one parameter hostile among valid ones (so that value, not another, meets the code past validation), and
 * `chaos` mixes hostile values and malformed HTTP everywhere. */
type Mode = 'clean' | 'one' | 'chaos';

const HOSTILE_NUMBERS = [
  'NaN', 'Infinity', '-Infinity', '1e19', '1e300', '1e400', '-1e300', '18446744073709551616', '9223372036854775807', '9223372036854775808',
  '-9223372036854775809', '4294967296', '2147483648', '-2147483649', '-1', '-0', '0', '0.5', '1e-300', '5e-324', '1.7976931348623157e308',
];

/**
 * Values that make a request answerable on the demo dataset, by parameter set: most operations need a location,
 * which no single parameter is required to be, so without an anchor nearly every generated request would stop at
 * missing_location and never bring a hostile value to the code behind validation. The first set whose parameters the
 * operation documents is added to clean and one-hostile-parameter requests (a new operation with a location filter
 * is anchored without editing this list).
 */
const ANCHORS: Record<string, string[]>[] = [
  { address: ['6 avenue Charles de Gaulle', '12 rue de Vaugirard'], code_postal: ['23000', '75015'] },
  { code_postal: ['75015', '33000', '13001', '23000'] },
  { code_insee: ['33063', '23001', '75115'] },
  { commune: ['PARIS 15', 'BORDEAUX', 'GUERET'] },
  { code_departement: ['33', '75', '23'] },
];

/** A hostile value for a parameter: numbers get mostly numeric trouble (huge, non-finite, fractional, negative). */
function hostileValue(p: Param): fc.Arbitrary<string> {
  const numeric = p.schema.type === 'number' || p.schema.type === 'integer';
  if (!numeric) return fc.oneof(plausible(p.schema), anyString);
  return fc.oneof(
    { weight: 2, arbitrary: plausible(p.schema) },
    { weight: 1, arbitrary: anyString },
    { weight: 4, arbitrary: fc.constantFrom(...HOSTILE_NUMBERS) },
    { weight: 1, arbitrary: fc.double().map(String) },
    { weight: 1, arbitrary: fc.bigInt().map(String) },
  );
}

function requestFor(op: Operation, key: string, mode: Mode): fc.Arbitrary<FuzzRequest> {
  const clean = mode !== 'chaos';
  const query = op.parameters.filter((p) => p.in === 'query');
  const pathParams = op.parameters.filter((p) => p.in === 'path');
  const valueFor = (p: Param) => (clean ? valid(p.schema) : hostileValue(p));
  // About two optional parameters per request, however many the operation has.
  const optionalOneIn = Math.max(2, Math.ceil(query.filter((p) => !p.required).length / 2));
  const chosen = fc.tuple(
    ...query.map((p) =>
      // Required parameters nearly always, optional ones now and then (each one more is a chance of an unrelated
      // refusal that would hide the value under test).
      p.required ? fc.option(valueFor(p).map((v) => [p.name, v] as [string, string]), { freq: 10 }) : oneIn(optionalOneIn, valueFor(p).map((v) => [p.name, v] as [string, string])),
    ),
  );
  const pathValues = fc.tuple(
    ...pathParams.map((p) =>
      clean ? valid(p.schema) : fc.oneof(
        { weight: 2, arbitrary: plausible(p.schema) },
        { weight: 2, arbitrary: anyString },
        { weight: 1, arbitrary: fc.constantFrom('-1', '0', '1.5', '99999999999999999999', '1e3', "1'", '..', '%2e%2e') },
      ),
    ),
  );
  const extras = clean ? fc.constant(NO_EXTRAS) : fc.record({
    repeat: oneIn(6, fc.nat()),
    bracket: oneIn(8, fc.tuple(fc.nat(), fc.constantFrom('[]', '[a]', '[0]', '[__proto__]'), anyString)),
    unknown: oneIn(8, fc.tuple(fc.constantFrom('foo', 'id', 'key', 'api_key', '__proto__', 'constructor', ''), anyString)),
    badEncoding: oneIn(12, fc.tuple(fc.constantFrom(...BAD_ENCODINGS), fc.boolean())),
    method: oneIn(20, fc.constantFrom('POST', 'PUT', 'DELETE', 'PATCH')),
    auth: fc.constantFrom('key', 'key', 'key', 'key', 'key', 'key', 'bearer', 'none', 'garbage'),
    body: oneIn(op.hasBody ? 2 : 10, fc.oneof(fc.constantFrom(...BAD_BODIES), fc.json())),
    gzipLie: oneIn(15, fc.constantFrom('gzip', 'deflate', 'br', 'x-unknown')),
    requestId: oneIn(10, anyString),
  });
  const all = [...query, ...pathParams];
  const victim =
    mode === 'one' && all.length
      ? fc.nat({ max: all.length - 1 }).chain((i) => hostileValue(all[i]).map((v) => ({ param: all[i], value: v })))
      : fc.constant(null);
  const names = new Set(query.map((p) => p.name));
  const anchorSet = mode === 'chaos' ? undefined : ANCHORS.find((a) => Object.keys(a).every((k) => names.has(k)));
  const anchor = anchorSet ? fc.tuple(...Object.entries(anchorSet).map(([k, vs]) => fc.constantFrom(...vs).map((v) => [k, v] as [string, string]))) : fc.constant([] as [string, string][]);
  return fc.tuple(chosen, pathValues, extras, victim, anchor).map(([picked, pathVals, x, bad, anchored]) => {
    let pairs = picked.filter((p): p is [string, string] => p !== null);
    pairs = [...anchored, ...pairs.filter(([k]) => !anchored.some(([a]) => a === k))];
    if (bad?.param.in === 'query') pairs = [...pairs.filter(([k]) => k !== bad.param.name), [bad.param.name, bad.value]];
    if (bad?.param.in === 'path') pathVals[pathParams.indexOf(bad.param)] = bad.value;
    const sent: string[] = [];
    if (x.repeat !== null && pairs.length) pairs.push(pairs[x.repeat % pairs.length]);
    if (x.bracket !== null && pairs.length) pairs.push([pairs[x.bracket[0] % pairs.length][0] + x.bracket[1], x.bracket[2]]);
    if (x.unknown !== null) pairs.push(x.unknown);
    let qs = pairs.map(([k, v]) => (sent.push(k, v), `${encode(k)}=${encode(v)}`)).join('&');
    let path = op.path.replace(/\{(\w+)\}/g, (_m, name: string) => {
      // An empty id would turn `/v1/portfolio/{id}` into the list route `/v1/portfolio/` (Express ignores a trailing
      // slash), whose body is not this operation's: a blank id is sent as a space instead.
      const v = pathVals[pathParams.findIndex((p) => p.name === name)] || ' ';
      sent.push(v);
      // Raw only what Node's client accepts in a path (it throws on characters outside U+0021–U+00FF).
      return (v.startsWith('%') && !/[^\u0021-\u00ff]/.test(v)) || v === '..' ? v : encode(v);
    });
    if (x.badEncoding) {
      if (x.badEncoding[1] || !qs) path += x.badEncoding[0];
      else qs += x.badEncoding[0];
    }
    const headers: Record<string, string> = {};
    if (x.auth === 'key') headers['X-API-Key'] = key;
    else if (x.auth === 'bearer') headers.Authorization = `Bearer ${key}`;
    else if (x.auth === 'garbage') headers['X-API-Key'] = 'fk_live_' + 'x'.repeat(40);
    // Header values: what Node's client lets through (no control characters; the server-side refusals of those are
    // tested with raw sockets in api-hardening.test.ts).
    if (x.requestId !== null) {
      const id = x.requestId.replace(/[^\x20-\x7e]/g, '').slice(0, 300);
      headers['X-Request-Id'] = id;
      sent.push(id);
    }
    let body: Buffer | undefined;
    if (x.body !== null) {
      body = Buffer.from(x.body);
      headers['Content-Type'] = 'application/json';
    }
    if (x.gzipLie !== null) {
      body ??= Buffer.from('{"not":"compressed"}');
      headers['Content-Type'] = 'application/json';
      headers['Content-Encoding'] = x.gzipLie;
    }
    return { op: `${op.method} ${op.path}`, method: x.method ?? op.method, path: qs ? `${path}?${qs}` : path, headers, body, sent };
  });
}

/** Requests over every operation of the target, each operation equally likely: a quarter clean, half with one hostile
 * parameter, a quarter chaos. */
export function requestArbitrary(target: FuzzTarget, key: string): fc.Arbitrary<FuzzRequest> {
  return fc.oneof(
    ...target.operations.map((op) =>
      fc.oneof({ weight: 1, arbitrary: requestFor(op, key, 'clean') }, { weight: 2, arbitrary: requestFor(op, key, 'one') }, { weight: 1, arbitrary: requestFor(op, key, 'chaos') }),
    ),
  );
}

// ---- sending and checking -------------------------------------------------------------------------------------------

const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });

/** Sends the request as built (node:http, which keeps a malformed path as is), and reads the whole answer. */
export function send(baseUrl: string, req: FuzzRequest, timeoutMs = 30_000): Promise<FuzzResponse> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const r = http.request(
      {
        host: url.hostname,
        port: url.port,
        method: req.method,
        path: req.path,
        agent,
        headers: { ...req.headers, ...(req.body ? { 'Content-Length': String(req.body.length) } : {}) },
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    r.on('timeout', () => r.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    r.on('error', reject);
    r.end(req.body);
  });
}

const LEAKS: [string, RegExp][] = [
  ['stack trace', /\n\s+at |\bat (?:async )?[\w$.<>]+ \((?:file:|node:|\/)|\bat (?:file|node):/],
  ['file path', /(?:^|[\s"'(=:])\/(?:work|tmp|home|usr|var|etc|root|opt|srv|app|proc)\/|[\w-]+\.(?:ts|mjs|cjs):\d+|node_modules/],
  ['SQL text', /\b(?:select|insert|update|delete|copy)\b[^"]{0,200}\b(?:from|into|to)\b[^"]{0,100}\b(?:where|ventes|adresses_\w+|read_\w+)\b|\$loc_\w+/i],
  ['database error', /\b(?:Binder|Parser|Conversion|Catalog|Invalid Input|Out of Range|Constraint|Internal|INTERNAL) Error\b|DuckDB|SQLITE_\w+/],
];

/** What is wrong with an answer; empty when it is acceptable. */
export function problems(target: FuzzTarget, req: FuzzRequest, res: FuzzResponse): string[] {
  const out: string[] = [];
  if (res.status >= 500) out.push(`server error ${res.status}`);
  if (res.status >= 400) {
    let body: any;
    try {
      body = JSON.parse(res.text);
    } catch {
      out.push(`${res.status} without a JSON body: ${JSON.stringify(res.text.slice(0, 200))}`);
    }
    if (body !== undefined) {
      const code = body?.error?.code;
      if (!/application\/json/.test(res.contentType)) out.push(`${res.status} with Content-Type ${res.contentType}`);
      if (typeof code !== 'string' || !(code in ERROR_STATUS)) out.push(`${res.status} with an unknown error code ${JSON.stringify(code)}`);
      else if (ERROR_STATUS[code as keyof typeof ERROR_STATUS] !== res.status) out.push(`code ${code} with status ${res.status}`);
      if (typeof body?.error?.message !== 'string' || !body.error.message) out.push('error without a message');
    }
  }
  // An answer may echo what was sent (a commune name that matches nothing): remove the values before looking for leaks.
  let text = res.text;
  for (const v of [...req.sent].sort((a, b) => b.length - a.length)) {
    if (v.length < 2) continue;
    for (const form of [v, JSON.stringify(v).slice(1, -1), v.trim(), JSON.stringify(v.trim()).slice(1, -1)]) if (form) text = text.split(form).join('');
  }
  for (const [what, re] of LEAKS) {
    const m = re.exec(text);
    if (m) out.push(`${what} in the body: …${text.slice(Math.max(0, m.index - 60), m.index + 80)}…`);
  }
  // A success on a documented operation must match its documented schema.
  const op = target.operations.find((o) => `${o.method} ${o.path}` === req.op);
  const validate = op && req.method === op.method ? op.success.get(res.status) : undefined;
  if (validate) {
    let body: unknown;
    try {
      body = JSON.parse(res.text);
    } catch {
      out.push(`${res.status} success without JSON`);
    }
    if (body !== undefined && !validate(body)) out.push(`${res.status} body does not match the documented schema: ${JSON.stringify(validate.errors?.slice(0, 2))}`);
  }
  return out;
}

/** A short, replayable description of a failing request. */
export function describeRequest(req: FuzzRequest): string {
  const headers = Object.entries(req.headers)
    .filter(([k]) => k !== 'X-API-Key' && k !== 'Authorization')
    .map(([k, v]) => `${k}: ${v.slice(0, 60)}`)
    .join(', ');
  return `${req.method} ${req.path.slice(0, 300)}${headers ? ` [${headers}]` : ''}${req.body ? ` body ${JSON.stringify(req.body.toString('utf8').slice(0, 80))}` : ''}`;
}

/**
 * The API set up for fuzzing (test and script alike): limits raised so that only the request decides the answer (no
 * 429 or 503 from the fuzzer's own pace, no timeout on a loaded machine), and businesses/:siren answered by a stand-in
 * registry that knows no SIREN (404), never the network; unconfigured it would answer its documented 503.
 */
export function fuzzApiOptions(): { now: string; limits: Partial<Limits>; registry: RegistryClient } {
  return {
    now: '2026-02-15T12:00:00Z',
    limits: { rateLimitPerMinute: 1_000_000_000, denseQueryBudgetMs: 60_000 },
    registry: new RegistryClient(
      { ...registryConfigFromEnv({ INSEE_SIRENE_API_KEY: 'fuzz' }), requestsPerInterval: 1_000_000_000 },
      undefined,
      (async () => new Response('{"header":{"statut":404}}', { status: 404 })) as typeof fetch,
    ),
  };
}
