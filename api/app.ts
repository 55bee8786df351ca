// The HTTP application: the platform (request ids, errors, OpenAPI, docs) and the route modules mounted on it.
import crypto from 'node:crypto';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import type { AppContext } from './context';
import { DOCS_CSP, docsPageHtml } from './docs-page';
import { ApiError, ERROR_STATUS, invalidParams } from './errors';
import { z } from './params';
import { errorSchema, mountEndpoint, operationIdOf, toApiError, type AnyEndpoint } from './platform';
import { ANALYTICS_ENDPOINTS } from './routes/analytics';
import { FLIPS_ENDPOINTS } from './routes/flips';
import { INCOME_ENDPOINTS } from './routes/income';
import { metaSources } from './routes/meta';
import { PLACES_ENDPOINTS } from './routes/places';
import { statsMarket } from './routes/stats/market';
import { getTransaction, searchTransactions } from './routes/transactions';
import { VALUATION_ENDPOINTS } from './routes/valuation';

/** Every endpoint of the API; a new route module is one more line here. */
export const ENDPOINTS: AnyEndpoint[] = [
  searchTransactions,
  getTransaction,
  statsMarket,
  ...ANALYTICS_ENDPOINTS,
  ...PLACES_ENDPOINTS,
  ...VALUATION_ENDPOINTS,
  ...INCOME_ENDPOINTS,
  ...FLIPS_ENDPOINTS,
  metaSources,
];

const REQUEST_ID_RE = /^[\w.:-]{1,128}$/;

export function createApp(ctx: AppContext): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  // Echo the caller's X-Request-Id when it is a sane token, else make one; present on every response.
  app.use((req: Request, res: Response, next: NextFunction) => {
    const given = req.get('x-request-id');
    res.set('X-Request-Id', given && REQUEST_ID_RE.test(given) ? given : crypto.randomUUID());
    next();
  });
  // A path whose percent-encoding does not decode (/%ZZ, a truncated UTF-8 sequence) is the client's mistake: refuse it
  // here, before the router's own decoding throws a URIError deep inside a route.
  app.use((req: Request, _res: Response, next: NextFunction) => {
    try {
      decodeURIComponent(req.path);
    } catch {
      throw new ApiError('invalid_request', 'the URL path holds a malformed percent-encoding (%XX with two hex digits, valid UTF-8)');
    }
    next();
  });
  app.use(express.json({ limit: '100kb' }));

  // For load balancers: no key, no credits; 503 until a serving database is loaded.
  app.get('/health', (_req: Request, res: Response) => {
    const ready = ctx.db.file !== undefined;
    res.status(ready ? 200 : 503).json({ status: ready ? 'ok' : 'no_data', serving_database: ctx.db.file ?? null });
  });

  const registry = new OpenAPIRegistry();
  registry.register('Error', errorSchema);
  registry.registerComponent('securitySchemes', 'ApiKey', { type: 'apiKey', in: 'header', name: 'X-API-Key' });
  registry.registerComponent('securitySchemes', 'Bearer', { type: 'http', scheme: 'bearer' });
  for (const endpoint of ENDPOINTS) mountEndpoint(app, registry, ctx, endpoint);
  registerServiceRoutes(registry);

  const document = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'foncier API',
      version: '1.0.0',
      description:
        'French property-market statistics from open data (DVF sales, DPE, BDNB, Filosofi, ANIL, SIRENE). Every call is ' +
        'charged in credits; errors are `{"error": {"code", "message", "details"?}}` with codes: ' +
        Object.entries(ERROR_STATUS)
          .map(([code, status]) => `\`${code}\` (${status})`)
          .join(', ') +
        '.',
    },
    servers: [{ url: '/' }],
  });
  app.get('/v1/openapi.json', (_req: Request, res: Response) => {
    res.json(document);
  });
  app.get('/docs', (_req: Request, res: Response) => {
    res.type('html').set('Content-Security-Policy', DOCS_CSP).send(docsPageHtml());
  });

  app.use((req: Request) => {
    throw new ApiError('not_found', `no route for ${req.method} ${req.path}`);
  });
  // The one error renderer: every failure, including malformed JSON bodies, leaves in the specified error body.
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const apiError = clientErrorOf(err) ?? toApiError(err);
    if (!(err instanceof ApiError) && apiError.status >= 500) ctx.log(`unhandled error: ${(err as Error)?.stack ?? String(err)}`);
    for (const [name, value] of Object.entries(apiError.opts.headers ?? {})) res.set(name, value);
    res.status(apiError.status).json(apiError.body);
  });
  return app;
}

/** /health and the document itself, which answer without a key and outside the endpoint registry. */
function registerServiceRoutes(registry: OpenAPIRegistry): void {
  const health = z
    .object({
      status: z.enum(['ok', 'no_data']).openapi({ description: 'no_data (with 503) until a serving database is loaded.' }),
      serving_database: z.string().nullable().openapi({ description: 'The serving database in use; null without one.' }),
    })
    .openapi('Health');
  const json = (description: string, schema: z.ZodType) => ({ description, content: { 'application/json': { schema } } });
  registry.registerPath({
    method: 'get',
    path: '/health',
    operationId: operationIdOf('get', '/health'),
    tags: ['Service'],
    summary: 'Liveness and readiness, for load balancers',
    description: 'No key, no credits.',
    security: [],
    responses: { 200: json('A serving database is loaded.', health), 503: json('No serving database yet.', health) },
  });
  registry.registerPath({
    method: 'get',
    path: '/v1/openapi.json',
    operationId: 'getOpenApiDocument',
    tags: ['Service'],
    summary: 'This OpenAPI 3.1 document',
    description: 'No key, no credits.',
    security: [],
    responses: { 200: json('The OpenAPI document.', z.object({ openapi: z.string() }).passthrough().openapi('OpenApiDocument')) },
  });
}

/**
 * The API error for a failure the client caused before any route ran (body-parser's and the router's http-errors,
 * which carry a 4xx `status`), or undefined. body-parser tags its own errors with a `type`; a body that is not what
 * its Content-Encoding says (zlib's Z_DATA_ERROR, Z_BUF_ERROR) and a path parameter that does not decode (URIError)
 * carry only the status.
 */
function clientErrorOf(err: unknown): ApiError | undefined {
  if (err instanceof ApiError) return err;
  const e = err as { type?: string; status?: unknown; code?: unknown } | undefined;
  if (typeof e?.status !== 'number' || e.status < 400 || e.status >= 500) return undefined;
  switch (e.type) {
    case 'entity.parse.failed':
      return invalidParams([{ param: 'body', issue: 'malformed JSON' }]);
    case 'entity.too.large':
      return invalidParams([{ param: 'body', issue: 'larger than 100 kB' }]);
    case 'encoding.unsupported':
      return new ApiError('invalid_request', 'unsupported Content-Encoding: send identity, gzip, deflate or br');
    case 'charset.unsupported':
      return new ApiError('invalid_request', 'unsupported charset: send the JSON body in UTF-8');
  }
  if (typeof e.code === 'string' && e.code.startsWith('Z_')) {
    return new ApiError('invalid_request', 'the body could not be decompressed as its Content-Encoding header says');
  }
  if (err instanceof URIError) return new ApiError('invalid_request', 'the URL path holds a malformed percent-encoding');
  return new ApiError('invalid_request', 'the request could not be read');
}
