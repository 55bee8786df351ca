// What every endpoint shares, in one place: key check, rate limit, validation, response cache, the at-capacity gate,
// credits charged once before the work and refunded when the service fails, `_credits`, `query_time_ms`, and the
// OpenAPI entry generated from the same zod schemas that validate the request.
import crypto from 'node:crypto';
import type { Express, Request, Response } from 'express';
import type { OpenAPIRegistry, RouteConfig } from '@asteasolutions/zod-to-openapi';
import type { KeyRecord } from './store';
import { PLANS } from './store';
import { round2, z } from './params';
import { ApiError, ERROR_STATUS, fromZodError, type ErrorCode } from './errors';
import { NoDataError, QueryTimeoutError } from './db';
import { cacheKey } from './cache';
import type { AppContext } from './context';

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
  /** Credits of one call; a function when the cost depends on the input. */
  credits: number | ((input: EndpointInput<Q, P, B>) => number);
  /** Checks and resolution that need no database (defaults, location), run before any charge. Its result is the
   * handler's input and the cache key, so it must be plain data. */
  prepare: (input: EndpointInput<Q, P, B>, call: Call) => Prep;
  handler: (prepared: Prep, call: Call) => Promise<z.input<R>>;
  /** Cached endpoints: lifetime of an entry, and the `cache` field on responses. */
  cacheTtlSeconds?: number;
  /** Direct :id lookups give the credits back on 404 (specification, Errors). */
  refundOnNotFound?: boolean;
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
    }),
  })
  .openapi('Error');

const COMMON_ERRORS: ErrorCode[] = ['invalid_params', 'invalid_request', 'request_too_large', 'missing_bearer_token', 'unknown_key', 'inactive_key', 'insufficient_credits', 'rate_limited', 'at_capacity', 'service_unavailable', 'query_failed'];

const KEY_HEADER_RE = /^Bearer\s+(\S+)\s*$/i;

/** 401 unless the request carries an active key (X-API-Key, or Authorization: Bearer). */
export function authenticate(ctx: AppContext, req: Request): KeyRecord {
  const header = req.get('x-api-key')?.trim() || KEY_HEADER_RE.exec(req.get('authorization') ?? '')?.[1];
  if (!header) throw new ApiError('missing_bearer_token', 'send your API key in the X-API-Key header (or Authorization: Bearer <key>)');
  const key = ctx.store.findByKey(header);
  if (!key) throw new ApiError('unknown_key', 'this API key does not exist');
  if (!key.isActive) throw new ApiError('inactive_key', 'this API key has been revoked');
  return key;
}

/** Applies the key's sliding-window limit and sets the X-RateLimit-* headers. */
export function rateLimit(ctx: AppContext, key: KeyRecord, res: Response): void {
  const limit = ctx.limits.rateLimitPerMinute ?? PLANS[key.plan].rpm;
  const d = ctx.rateLimiter.hit(key.id, limit);
  res.set('X-RateLimit-Limit', String(d.limit));
  res.set('X-RateLimit-Remaining', String(d.remaining));
  if (!d.allowed) {
    throw new ApiError('rate_limited', `rate limit of ${d.limit} requests per minute reached; retry in ${d.retryAfterSeconds} s`, {
      headers: { 'Retry-After': String(d.retryAfterSeconds) },
    });
  }
}

function parse<S extends z.ZodType | undefined>(schema: S, value: unknown, where: 'query' | 'path' | 'body'): Out<S> {
  if (!schema) return undefined as Out<S>;
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

export function mountEndpoint<Q extends AnyObject | undefined, P extends AnyObject | undefined, B extends z.ZodType | undefined, Prep, R extends AnyObject>(
  app: Express,
  registry: OpenAPIRegistry,
  ctx: AppContext,
  spec: EndpointSpec<Q, P, B, Prep, R>,
): void {
  const analytic = spec.analytic ?? true;
  const usesDatabase = spec.usesDatabase ?? true;

  app[spec.method](spec.path, async (req: Request, res: Response) => {
    const started = performance.now();
    const key = authenticate(ctx, req);
    rateLimit(ctx, key, res);
    const input = {
      query: parse(spec.query, req.query, 'query'),
      params: parse(spec.params, req.params, 'path'),
      body: parse(spec.body, req.body, 'body'),
    } as EndpointInput<Q, P, B>;
    const call: Call = { ctx, key, now: ctx.clock.now(), requestId: crypto.randomUUID() };
    const prepared = spec.prepare(input, call);
    const cost = typeof spec.credits === 'function' ? spec.credits(input) : spec.credits;

    const ttl = spec.cacheTtlSeconds;
    // The serving file is part of the key: a new import makes every older entry unreachable.
    const ck = ttl ? cacheKey([spec.method, spec.path, ctx.db.file, prepared]) : undefined;
    const hit = ck ? ctx.cache.get(ck) : undefined;

    let holdsSlot = false;
    if (!hit && usesDatabase) {
      if (ctx.active.queries >= ctx.limits.maxConcurrentQueries) {
        throw new ApiError('at_capacity', `the service is answering ${ctx.limits.maxConcurrentQueries} database requests; retry in 2 s`, {
          headers: { 'Retry-After': '2' },
        });
      }
      ctx.active.queries++;
      holdsSlot = true;
    }
    let body: Record<string, unknown>;
    let charged: { used: number; remaining: number };
    try {
      const c = ctx.credits.charge(key.id, cost, call.requestId);
      if (!c.ok) {
        throw new ApiError('insufficient_credits', `this call costs ${cost} credits and the key has ${c.remaining} left`);
      }
      charged = c;
      if (hit) {
        body = hit.value as Record<string, unknown>;
      } else {
        try {
          body = (await spec.handler(prepared, call)) as Record<string, unknown>;
        } catch (e) {
          const err = toApiError(e);
          if (err.status >= 500 || (err.code === 'not_found' && spec.refundOnNotFound)) {
            charged = { used: 0, remaining: ctx.credits.refund(key.id, cost, call.requestId).remaining };
          }
          if (!(e instanceof ApiError)) ctx.log(`[${call.requestId}] ${spec.method.toUpperCase()} ${spec.path} failed: ${(e as Error)?.stack ?? String(e)}`);
          throw err;
        }
        if (ck && ttl) ctx.cache.set(ck, body, ttl);
      }
    } finally {
      if (holdsSlot) ctx.active.queries--;
    }
    const out: Record<string, unknown> = { ...body };
    if (ttl) out.cache = hit ? { hit: true, ttl_seconds: hit.ttlSeconds } : { hit: false, ttl_seconds: ttl };
    if (analytic) {
      out._credits = ctx.credits.creditsField(charged.used, charged.remaining);
      out.query_time_ms = round2(performance.now() - started);
    }
    res.status(spec.status ?? 200).json(out);
  });

  registerOpenApi(registry, spec, analytic);
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
  const responses: RouteConfig['responses'] = {
    [spec.status ?? 200]: { description: 'Success.', content: { 'application/json': { schema: response } } },
  };
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    responses[status] = { description: `Error: ${list.join(', ')}.`, content: { 'application/json': { schema: errorSchema } } };
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
