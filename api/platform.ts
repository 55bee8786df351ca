// What every endpoint shares, in one place: key check, rate limit, validation, response cache, the at-capacity gate,
// an optional pre-check that refuses without charging, credits charged once before the work and settled (kept, or
// refunded when the service fails or the endpoint's refund rule says so), `_credits`, `query_time_ms`, and the OpenAPI
// entry generated from the same zod schemas that validate the request. callEndpoint() is that path without any
// transport: Express (mountEndpoint) is a thin adapter over it, and the MCP server and internal jobs call it directly.
import crypto from 'node:crypto';
import type { Express, Request, Response } from 'express';
import type { OpenAPIRegistry, RouteConfig } from '@asteasolutions/zod-to-openapi';
import { creditsField, type HoldResult } from './credits';
import type { KeyRecord } from './store';
import { PLANS } from './store';
import { round2, z } from './params';
import { ApiError, ERROR_STATUS, fromZodError, invalidParams, type ErrorCode } from './errors';
import { NoDataError, QueryTimeoutError } from './db';
import { cacheKey } from './cache';
import type { AppContext } from './context';
import { assessCoverage, type Coverage, type CoverageAssessment } from './horizon';

type AnyObject = z.ZodObject<z.ZodRawShape>;
type Out<S> = S extends z.ZodType ? z.output<S> : undefined;

export interface EndpointInput<Q, P, B> {
  query: Out<Q>;
  params: Out<P>;
  body: Out<B>;
}

/** What a handler sees of the request: the services, the caller's key, the clock reading of this request. */
export interface Call {
  ctx: AppContext;
  key: KeyRecord;
  now: Date;
  requestId: string;
}

export interface EndpointSpec<Q extends AnyObject | undefined, P extends AnyObject | undefined, B extends z.ZodType | undefined, Prep, R extends AnyObject> {
  method: 'get' | 'post' | 'put' | 'delete';
  /** Express path, e.g. /v1/transactions/:id. */
  path: string;
  tag: string;
  summary: string;
  description?: string;
  query?: Q;
  params?: P;
  body?: B;
  /** The response body without the fields the platform adds (_credits, query_time_ms, cache). */
  response: R;
  /** Credits of one call; a function when the cost depends on the input (e.g. a portfolio's size), or on what the
   * pre-check found (a stored estimate to recompute): it is evaluated after the pre-check, before the charge. */
  credits: number | ((input: EndpointInput<Q, P, B>, prepared: Prep) => number);
  /** Checks and resolution that need no database (defaults, location), run before any charge. Its result is the
   * handler's input and the cache key, so it must be plain data. */
  prepare: (input: EndpointInput<Q, P, B>, call: Call) => Prep;
  /** Checks that need the database and refuse WITHOUT charging by throwing an ApiError (ownership → 404 not_found,
   * the active-alerts cap → 409): run after the capacity gate, before the charge, on cache hits too. */
  precheck?: (prepared: Prep, call: Call) => Promise<void>;
  handler: (prepared: Prep, call: Call) => Promise<z.input<R>>;
  /** The zone, window of sales and sources the answer reads (api/horizon.ts): run before the charge, on cache hits
   * too. A window past the zone's loaded sales adds a notice; a needed source with no data for the zone adds a notice
   * and makes the call free. */
  coverage?: (prepared: Prep, call: Call) => Coverage | Promise<Coverage>;
  /** Cached endpoints: lifetime of an entry, and the `cache` field on responses. */
  cacheTtlSeconds?: number;
  /** Error codes the handler may throw after the charge that give the credits back (direct :id lookups: not_found,
   * specification, Errors). Server errors (5xx) are always refunded. */
  refundOn?: ErrorCode[];
  /** False for endpoints that never query the serving database (they skip the at-capacity gate). */
  usesDatabase?: boolean;
  /** Whether the response carries _credits and query_time_ms (analytic responses); default true. */
  analytic?: boolean;
  status?: number;
  /** Error codes this endpoint can return beyond the common ones, for the documentation. */
  errors?: ErrorCode[];
  /** Query parameters declared only so that they are refused with a precise error (unsupported_location rather than
   * silently ignored): validated, but left out of the OpenAPI document, which must not advertise them. */
  undocumentedQuery?: readonly string[];
  /** The OpenAPI operationId; default derived from the method and path (operationIdOf). */
  operationId?: string;
}

/** Identity, for type inference: the handler's return value is checked against the response schema. */
export function defineEndpoint<Q extends AnyObject | undefined, P extends AnyObject | undefined, B extends z.ZodType | undefined, Prep, R extends AnyObject>(
  spec: EndpointSpec<Q, P, B, Prep, R>,
): EndpointSpec<Q, P, B, Prep, R> {
  return spec;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyEndpoint = EndpointSpec<any, any, any, any, any>;

export const creditsSchema = z
  .object({
    used: z.number().int().openapi({ description: 'Credits charged for this call.' }),
    remaining: z.number().int().openapi({ description: 'Credits left on the key after this call.' }),
    note: z.string().optional().openapi({ description: 'Present when fewer than 20 credits remain.' }),
  })
  .openapi('Credits');

export const cacheSchema = z
  .object({ hit: z.boolean(), ttl_seconds: z.number().int().openapi({ description: 'Seconds the cached answer still lives.' }) })
  .openapi('Cache');

export const errorSchema = z
  .object({
    error: z.object({
      code: z.string().openapi({ description: 'A stable machine-readable code.' }),
      message: z.string(),
      details: z.array(z.object({ param: z.string(), issue: z.string() })).optional().openapi({ description: 'invalid_params only: the offending parameters.' }),
      request_id: z.string().openapi({
        description: 'The request id: the X-Request-Id the client sent when well-formed (1–128 of A–Z a–z 0–9 _ . : -), else one the server made. Echoed in the X-Request-Id header; quote it when reporting a problem.',
      }),
    }),
  })
  .openapi('Error');

const REQUEST_ID_RE = /^[\w.:-]{1,128}$/;

/**
 * The response headers, documented once as components of the OpenAPI document and referenced by every operation's
 * responses: X-Request-Id on every answer (app.ts), the X-RateLimit-* pair once the key is known (rateLimit()), and
 * Retry-After where waiting helps (429 rate_limited; 503 at_capacity and registry_busy).
 */
export const RESPONSE_HEADERS = {
  'X-Request-Id': {
    description: 'The request id: the X-Request-Id the client sent when well-formed (1–128 of A–Z a–z 0–9 _ . : -), else one the server made. Also in error bodies, the logs and the credit ledger.',
    required: true,
    schema: { type: 'string', pattern: REQUEST_ID_RE.source },
  },
  'X-RateLimit-Limit': {
    description: 'Requests a minute allowed to this key (its plan’s limit). Present once the key is authenticated.',
    schema: { type: 'integer', minimum: 1 },
  },
  'X-RateLimit-Remaining': {
    description: 'Requests left to this key in the sliding minute, this one counted. Present once the key is authenticated.',
    schema: { type: 'integer', minimum: 0 },
  },
  'Retry-After': {
    description: 'Seconds to wait before retrying: always on 429 rate_limited and 503 at_capacity, on 503 registry_busy when the registry said.',
    schema: { type: 'integer', minimum: 0 },
  },
} as const;
type HeaderName = keyof typeof RESPONSE_HEADERS;

/** Registers what every operation refers to: the error body, the two ways to send a key, the response headers. */
export function registerCommonComponents(registry: OpenAPIRegistry): void {
  registry.register('Error', errorSchema);
  registry.registerComponent('securitySchemes', 'ApiKey', { type: 'apiKey', in: 'header', name: 'X-API-Key' });
  registry.registerComponent('securitySchemes', 'Bearer', { type: 'http', scheme: 'bearer' });
  for (const [name, header] of Object.entries(RESPONSE_HEADERS)) registry.registerComponent('headers', name, structuredClone(header) as never);
}

/** References to header components, for a response's `headers`. */
export function headerRefs(...names: HeaderName[]): Record<string, { $ref: string }> {
  return Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]));
}

/** The headers of an endpoint's answer with this status (401s come before the key, so without the rate-limit pair). */
function responseHeaders(status: number): Record<string, { $ref: string }> {
  const names: HeaderName[] = ['X-Request-Id'];
  if (status !== 401) names.push('X-RateLimit-Limit', 'X-RateLimit-Remaining');
  if (status === 429 || status === 503) names.push('Retry-After');
  return headerRefs(...names);
}

const COMMON_ERRORS: ErrorCode[] = ['invalid_params', 'invalid_request', 'request_too_large', 'missing_bearer_token', 'unknown_key', 'inactive_key', 'insufficient_credits', 'rate_limited', 'at_capacity', 'service_unavailable', 'query_failed'];

const KEY_HEADER_RE = /^Bearer\s+(\S+)\s*$/i;

/** The one id of a request: the client's X-Request-Id when it is a sane token, else a new one (ledger, logs, errors). */
export function requestIdOf(given: string | undefined): string {
  return given && REQUEST_ID_RE.test(given) ? given : crypto.randomUUID();
}

/** The credential an HTTP request carries: X-API-Key, or Authorization: Bearer <key>. */
export function credentialOf(req: Request): string | undefined {
  return req.get('x-api-key')?.trim() || KEY_HEADER_RE.exec(req.get('authorization') ?? '')?.[1];
}

/** 401 unless the credential is an active key. */
export async function authenticate(ctx: AppContext, credential: string | undefined): Promise<KeyRecord> {
  if (!credential) throw new ApiError('missing_bearer_token', 'send your API key in the X-API-Key header (or Authorization: Bearer <key>)');
  const key = await ctx.state.keys.findByKey(credential);
  if (!key) throw new ApiError('unknown_key', 'this API key does not exist');
  if (!key.isActive) throw new ApiError('inactive_key', 'this API key has been revoked');
  return key;
}

/** Applies the key's sliding-window limit; writes the X-RateLimit-* headers into `headers`, throws 429 past it. */
export async function rateLimit(ctx: AppContext, key: KeyRecord, headers: Record<string, string>): Promise<void> {
  const limit = ctx.limits.rateLimitPerMinute ?? PLANS[key.plan].rpm;
  // The state keeps the key's window: across replicas on PostgreSQL, in this process's memory on SQLite.
  const d = await ctx.state.rateLimit.hit(key.id, limit);
  headers['X-RateLimit-Limit'] = String(d.limit);
  headers['X-RateLimit-Remaining'] = String(d.remaining);
  if (!d.allowed) {
    throw new ApiError('rate_limited', `rate limit of ${d.limit} requests per minute reached; retry in ${d.retryAfterSeconds} s`, {
      headers: { 'Retry-After': String(d.retryAfterSeconds) },
    });
  }
}

/** A request body that is not JSON (another Content-Type): refused as a whole rather than field by field. */
export const NOT_JSON = Symbol('not JSON');

function parse<S extends z.ZodType | undefined>(schema: S, value: unknown, where: 'query' | 'path' | 'body'): Out<S> {
  if (!schema) return undefined as Out<S>;
  if (value === NOT_JSON) throw invalidParams([{ param: 'body', issue: 'must be JSON: send it with Content-Type: application/json' }]);
  const r = schema.safeParse(value ?? {});
  if (!r.success) throw fromZodError(r.error, where);
  return r.data as Out<S>;
}

/** Maps what a handler throws to the API's error type. */
export function toApiError(e: unknown): ApiError {
  if (e instanceof ApiError) return e;
  if (e instanceof NoDataError) return new ApiError('service_unavailable', e.message);
  if (e instanceof QueryTimeoutError) return new ApiError('query_failed', `the query was stopped after ${e.ms} ms`);
  return new ApiError('query_failed', 'unexpected error while answering this request');
}

export interface CallRequest {
  /** The raw credential (authenticated here), or the record of a key an internal job already holds (trusted). */
  key: string | KeyRecord | undefined;
  /** Raw input, validated by the endpoint's zod schemas: query-string values, path parameters, the JSON body. */
  input?: { query?: unknown; params?: unknown; body?: unknown };
  /** From requestIdOf(): recorded with the charge, returned in error bodies. */
  requestId: string;
  /**
   * The transport settles a successful answer's charge itself, once the answer is handed to it (HTTP: right after the
   * response is written to the socket): a process killed between the decision and the write leaves it pending, and
   * the start-up recovery refunds it, since the client never got the answer. Default: kept once the answer is decided.
   */
  settleOnDelivery?: boolean;
}

export interface CallResult {
  status: number;
  /** The response body, or the error body {error: {code, message, details?, request_id}}. */
  body: Record<string, unknown>;
  /** X-RateLimit-*, Retry-After: a transport that has headers sends them. */
  headers: Record<string, string>;
  /** Set when the answer is an error; `cause` is what was thrown: a transport logs its stack when it is a 5xx that
   * is not an ApiError (an unforeseen failure), and nothing more for the rest. */
  error?: ApiError;
  cause?: unknown;
  /** The caller's key id once authenticated (logs: never the key itself). */
  keyId?: string;
  /** Credits the call finally cost (0 when refused or refunded). */
  creditsUsed: number;
  /** With settleOnDelivery: keep (delivered true) or refund (false) the pending charge of a successful answer. */
  settle?: (delivered: boolean) => void;
}

/**
 * One call of an endpoint, whatever the transport: authenticate → validate → prepare → cache → capacity → rate limit
 * → pre-check → charge (pending) → handler → settle (keep, or refund on 5xx and the endpoint's refundOn
 * codes). Never throws: errors come back as an ApiError and its body.
 */
export async function callEndpoint<Q extends AnyObject | undefined, P extends AnyObject | undefined, B extends z.ZodType | undefined, Prep, R extends AnyObject>(
  ctx: AppContext,
  spec: EndpointSpec<Q, P, B, Prep, R>,
  req: CallRequest,
): Promise<CallResult> {
  const started = performance.now();
  const headers: Record<string, string> = {};
  let key: KeyRecord | undefined;
  let charge: Extract<HoldResult, { ok: true }> | undefined;
  let holdsSlot = false;
  try {
    const caller = (key = typeof req.key === 'object' ? req.key : await authenticate(ctx, req.key));
    let input: EndpointInput<Q, P, B>;
    let call: Call;
    let prepared: Prep;
    try {
      input = {
        query: parse(spec.query, req.input?.query, 'query'),
        params: parse(spec.params, req.input?.params, 'path'),
        body: parse(spec.body, req.input?.body, 'body'),
      } as EndpointInput<Q, P, B>;
      call = { ctx, key: caller, now: ctx.clock.now(), requestId: req.requestId };
      prepared = spec.prepare(input, call);
    } catch (e) {
      // A request refused for its parameters counts against the rate limit like any other (which may refuse it first).
      await rateLimit(ctx, caller, headers);
      throw e;
    }

    const ttl = spec.cacheTtlSeconds;
    // The serving file is part of the key: a new import makes every older entry unreachable.
    const ck = ttl ? cacheKey([spec.method, spec.path, ctx.db.file, prepared]) : undefined;
    const hit = ck ? ctx.cache.get(ck) : undefined;
    if (!hit && (spec.usesDatabase ?? true)) {
      // Before the rate limit and any charge: a refusal writes nothing to the state (docs/decisions.md, Capacity).
      holdsSlot = await ctx.active.acquire();
      if (!holdsSlot) {
        throw new ApiError('at_capacity', `the service is answering ${ctx.limits.maxConcurrentQueries} database requests; retry in 2 s`, {
          headers: { 'Retry-After': '2' },
        });
      }
    }
    await rateLimit(ctx, key, headers);
    if (spec.precheck) await spec.precheck(prepared, call);
    const cost = typeof spec.credits === 'function' ? spec.credits(input, prepared) : spec.credits;

    const held = await ctx.state.credits.hold(key.id, cost, req.requestId);
    if (!held.ok) throw new ApiError('insufficient_credits', `this call costs ${cost} credits and the key has ${held.remaining} left`);
    charge = held;
    // After the charge, so that a key without the credits is refused before any query; a needed source with no data
    // for the zone gives the charge back at once (api/horizon.ts).
    const coverage: CoverageAssessment | undefined = spec.coverage ? await assessCoverage(call, await spec.coverage(prepared, call)) : undefined;
    if (coverage?.missing.length && cost > 0) {
      const back = await ctx.state.credits.refundCharge(held.chargeId);
      charge = { ...held, chargeId: undefined, used: 0, remaining: back?.remaining ?? held.remaining + cost };
    }
    let body: Record<string, unknown>;
    if (hit) {
      body = hit.value as Record<string, unknown>;
    } else {
      body = (await spec.handler(prepared, call)) as Record<string, unknown>;
      if (ck && ttl) ctx.cache.set(ck, body, ttl);
    }
    // The answer is decided: the charge is final (docs/decisions.md, Pending charges), or once delivered.
    const { chargeId } = charge;
    let settle: CallResult['settle'];
    if (req.settleOnDelivery) {
      let settled = false;
      settle = (delivered) => {
        if (settled) return;
        settled = true;
        void settleCharge(ctx, chargeId, delivered).catch((e: Error) => ctx.logger.error({ err: e, chargeId }, 'charge settlement failed'));
      };
    } else await settleCharge(ctx, chargeId, true);
    const out: Record<string, unknown> = { ...body };
    if (coverage?.notices.length) out.notice = [body.notice, ...coverage.notices].filter(Boolean).join(' ');
    if (ttl) out.cache = hit ? { hit: true, ttl_seconds: hit.ttlSeconds } : { hit: false, ttl_seconds: ttl };
    if (spec.analytic ?? true) {
      out._credits = creditsField(charge.used, charge.remaining, ctx.clock.now());
      out.query_time_ms = round2(performance.now() - started);
    }
    return { status: spec.status ?? 200, body: out, headers, keyId: key.id, creditsUsed: charge.used, settle };
  } catch (e) {
    const error = toApiError(e);
    let creditsUsed = 0;
    if (charge) {
      const keep = !(error.status >= 500 || spec.refundOn?.includes(error.code));
      await settleCharge(ctx, charge.chargeId, keep);
      if (keep) creditsUsed = charge.used;
    }
    return { status: error.status, body: error.bodyFor(req.requestId), headers: { ...headers, ...error.opts.headers }, error, cause: e, keyId: key?.id, creditsUsed };
  } finally {
    if (holdsSlot) ctx.active.release();
  }
}

/**
 * Keeps (true) or refunds (false) a pending charge. The state tracks the settlements it has not finished: closing it
 * (a graceful stop) waits for those a transport started without awaiting them.
 */
function settleCharge(ctx: AppContext, chargeId: number | undefined, keep: boolean): Promise<unknown> {
  return keep ? ctx.state.credits.keep(chargeId) : ctx.state.credits.refundCharge(chargeId);
}

/** The HTTP adapter: one Express route per endpoint, over callEndpoint(). */
export function mountEndpoint<Q extends AnyObject | undefined, P extends AnyObject | undefined, B extends z.ZodType | undefined, Prep, R extends AnyObject>(
  app: Express,
  registry: OpenAPIRegistry,
  ctx: AppContext,
  spec: EndpointSpec<Q, P, B, Prep, R>,
): void {
  app[spec.method](spec.path, async (req: Request, res: Response) => {
    const requestId = (res.locals.requestId as string | undefined) ?? requestIdOf(req.get('x-request-id'));
    // A body the JSON parser left alone (sent as text/plain, a form…) is not JSON: one error says so.
    const body = spec.body && req.body === undefined && req.is('application/json') === false ? NOT_JSON : req.body;
    const r = await callEndpoint(ctx, spec, { key: credentialOf(req), input: { query: req.query, params: req.params, body }, requestId, settleOnDelivery: true });

    // For the access log (api/log.ts): the key's id and credits, and the stack of an unforeseen server error.
    res.locals.keyId = r.keyId;
    res.locals.creditsUsed = r.creditsUsed;
    // A request refused at capacity did nothing and cost nothing: it is not written to the key's request log either.
    if (r.error?.code === 'at_capacity') res.locals.unlogged = true;
    if (r.status >= 500 && r.cause !== undefined && !(r.cause instanceof ApiError)) res.err = r.cause as Error;
    res.set(r.headers).status(r.status).json(r.body);
    // The answer has just been handed to the socket (written synchronously when it can be): a successful answer's
    // charge is kept now, or refunded when the connection was already gone. A crash before this line leaves it pending
    // and the start-up recovery refunds it; after it, the kernel still delivers what it holds.
    r.settle?.(Boolean(res.socket && !res.socket.destroyed));
  });

  registerOpenApi(registry, spec, spec.analytic ?? true);
}

/**
 * The operationId of an operation: the method, then each path segment after /v1 in camelCase, a path parameter
 * becoming By<Name> (GET /v1/stats/pouvoir-achat → getStatsPouvoirAchat, GET /v1/transactions/:id →
 * getTransactionsById). Stable as long as the method and path are, which the API's versioning guarantees.
 */
export function operationIdOf(method: string, path: string): string {
  const words = path
    .replace(/^\/v1(?=\/|$)/, '')
    .split('/')
    .filter(Boolean)
    .flatMap((seg) => (seg.startsWith(':') || seg.startsWith('{') ? ['by', ...seg.replace(/[:{}]/g, '').split(/[^A-Za-z0-9]+/)] : seg.split(/[^A-Za-z0-9]+/)))
    .filter(Boolean);
  return method.toLowerCase() + words.map((w) => w[0].toUpperCase() + w.slice(1)).join('');
}

function registerOpenApi(registry: OpenAPIRegistry, spec: AnyEndpoint, analytic: boolean): void {
  const operationId = spec.operationId ?? operationIdOf(spec.method, spec.path);
  let response: AnyObject = spec.response;
  if (spec.cacheTtlSeconds) response = response.extend({ cache: cacheSchema });
  if (spec.coverage && !('notice' in response.shape)) response = response.extend({ notice: z.string().optional() });
  if (analytic) {
    response = response.extend({
      _credits: creditsSchema,
      query_time_ms: z.number().openapi({ description: 'Server processing time in milliseconds.' }),
    });
  }
  // Every success body is a named component, so typed clients get a name for it rather than a path into `paths`.
  response = response.openapi(`${operationId[0].toUpperCase()}${operationId.slice(1)}Response`);
  const codes = [...COMMON_ERRORS, ...(spec.errors ?? [])];
  const byStatus = new Map<number, string[]>();
  for (const code of codes) {
    const status = ERROR_STATUS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const success = spec.status ?? 200;
  const responses: RouteConfig['responses'] = {
    [success]: { description: 'Success.', headers: responseHeaders(success), content: { 'application/json': { schema: response } } },
  };
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    responses[status] = { description: `Error: ${list.join(', ')}.`, headers: responseHeaders(status), content: { 'application/json': { schema: errorSchema } } };
  }
  const cost = typeof spec.credits === 'number' ? `${spec.credits} credits` : 'credits depend on the input';
  const hidden = spec.undocumentedQuery ?? [];
  const query = spec.query && hidden.length ? (spec.query as AnyObject).omit(Object.fromEntries(hidden.map((k) => [k, true]))) : spec.query;
  registry.registerPath({
    method: spec.method,
    path: spec.path.replace(/:(\w+)/g, '{$1}'),
    operationId,
    tags: [spec.tag],
    summary: spec.summary,
    description: [`**${cost}**${spec.cacheTtlSeconds ? `, cached ${spec.cacheTtlSeconds / 3600} h` : ''}.`, spec.description].filter(Boolean).join('\n\n'),
    security: [{ ApiKey: [] }, { Bearer: [] }],
    request: {
      ...(query ? { query } : {}),
      ...(spec.params ? { params: spec.params } : {}),
      ...(spec.body ? { body: { content: { 'application/json': { schema: spec.body } }, required: true } } : {}),
    },
    responses,
    ...(typeof spec.credits === 'number' ? { 'x-credits': spec.credits } : {}),
  } as RouteConfig);
}
