// The HTTP application: the platform (request ids, errors, OpenAPI, docs) and the route modules mounted on it.
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import type { AppContext } from './context';
import { mountDocs } from './docs-page';
import { ApiError, ERROR_STATUS, invalidParams } from './errors';
import { accessLog } from './log';
import { MCP_PATH, mountMcp } from './mcp/http';
import { z } from './params';
import { headerRefs, mountEndpoint, operationIdOf, registerCommonComponents, requestIdOf, toApiError, type AnyEndpoint } from './platform';
import { ACCOUNT_ENDPOINTS, mountDashboard, mountKeyRoutes, recordRequests } from './routes/account';
import { BUSINESSES_ENDPOINTS } from './routes/businesses';
import { ALERTS_ENDPOINTS } from './routes/alerts';
import { DPE_ENDPOINTS } from './routes/dpe';
import { BDNB_ENDPOINTS } from './routes/bdnb';
import { FLIPS_ENDPOINTS } from './routes/flips';
import { HEATMAP_ENDPOINTS } from './routes/heatmap';
import { MARKET_ENDPOINTS } from './routes/market';
import { META_ENDPOINTS } from './routes/meta';
import { PORTFOLIO_ENDPOINTS } from './routes/portfolio';
import { PROPERTY_HISTORY_ENDPOINTS } from './routes/property-history';
import { STATS_ENDPOINTS } from './routes/stats';
import { TRANSACTIONS_ENDPOINTS } from './routes/transactions';
import { VALUATION_ENDPOINTS } from './routes/valuation';

/**
 * Every endpoint of the API. Route folders follow the URL families (folder = first path segment after /v1, the
 * market-* trio shares market/, comparables and estimate share valuation/); a new family is one more line here.
 */
export const ENDPOINTS: AnyEndpoint[] = [
  ...TRANSACTIONS_ENDPOINTS,
  ...STATS_ENDPOINTS,
  ...MARKET_ENDPOINTS,
  ...HEATMAP_ENDPOINTS,
  ...PROPERTY_HISTORY_ENDPOINTS,
  ...VALUATION_ENDPOINTS,
  ...FLIPS_ENDPOINTS,
  ...DPE_ENDPOINTS,
  ...BUSINESSES_ENDPOINTS,
  ...BDNB_ENDPOINTS,
  ...META_ENDPOINTS,
  ...ACCOUNT_ENDPOINTS,
  ...PORTFOLIO_ENDPOINTS,
  ...ALERTS_ENDPOINTS,
];

/**
 * The tags of the document, in the order /docs shows them, each with what it groups. Every endpoint's `tag` is one of
 * these (test/api/platform/openapi.test.ts).
 */
export const TAGS = [
  { name: 'Transactions', description: 'DVF sales (Demandes de valeurs foncières, geo-DVF): a zone’s sales page by page, one sale by id.' },
  { name: 'Market statistics', description: 'Prices per m² and volumes of a zone over a window, their trends and comparisons; price-to-income ratio, rental yield, resales.' },
  { name: 'Market analytics', description: 'Activity, score and overview of a zone, price heatmaps, and the sales history of one property.' },
  { name: 'Valuation', description: 'Comparable sales and an estimate for a property, with intervals calibrated by a published backtest.' },
  { name: 'Energy (DPE)', description: 'ADEME energy diagnostics: the diagnostic matched to a sale, the classes of a zone and the price gaps between them.' },
  { name: 'Buildings (BDNB)', description: 'CSTB’s national building database: the building of a sale, construction ages and renovation potential of a zone.' },
  { name: 'Businesses', description: 'SIRENE: real-estate businesses around a point, and one legal unit asked live of INSEE.' },
  { name: 'Portfolio', description: 'Properties kept under your key, each with its stored estimate.' },
  { name: 'Alerts', description: 'Webhooks on newly imported sales matching your criteria (Scale and Enterprise plans).' },
  { name: 'Account', description: 'Your key: plan, credits left, usage per endpoint and recent requests; rolling its secret, revoking it; a free key.' },
  { name: 'Meta', description: 'The data sources loaded: coverage, vintages, licences and attributions.' },
  { name: 'Service', description: 'Health check and this document: no key, no credits.' },
];

export function createApp(ctx: AppContext): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  // One id per request (docs/decisions.md, Request ids): the caller's X-Request-Id when it is a sane token, else a new
  // one; echoed on every response and used by the credit ledger, the logs and every error body.
  app.use((req: Request, res: Response, next: NextFunction) => {
    res.locals.requestId = requestIdOf(req.get('x-request-id'));
    res.set('X-Request-Id', res.locals.requestId as string);
    next();
  });
  app.use(accessLog(ctx.logger));
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
  app.use(recordRequests(ctx, (route) => route === MCP_PATH));
  app.use(express.json({ limit: '100kb' }));

  // For load balancers: no key, no credits; 503 until a serving database is loaded. The file's name and vintage only:
  // its absolute path would tell anyone the server's layout.
  app.get('/health', async (_req: Request, res: Response) => {
    const [serving, stateOk] = await Promise.all([ctx.db.describe().then((d) => d ?? null), ctx.state.ping()]);
    const status = !stateOk ? 'state_unavailable' : serving ? 'ok' : 'no_data';
    res.status(status === 'ok' ? 200 : 503).json({
      status,
      serving_database: serving,
      state_database: { engine: ctx.state.engine, reachable: stateOk },
    });
  });

  const registry = new OpenAPIRegistry();
  registerCommonComponents(registry);
  for (const endpoint of ENDPOINTS) mountEndpoint(app, registry, ctx, endpoint);
  // Rolling and revoking a key, free keys: documented, not MCP tools (api/routes/account/keys.ts).
  mountKeyRoutes(app, registry, ctx);
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
        '. Every source is published under the Licence Ouverte 2.0 (Etalab), whose one duty, attribution, carries over to ' +
        'the answers: cite the sources as `/v1/meta/sources` names them.',
      // Whoever runs this server answers for it: /docs and the key holders' /dashboard are served here, and a problem is
      // reported with the X-Request-Id of the request.
      contact: { name: 'The operator of this foncier server' },
      license: { name: 'Licence Ouverte 2.0 (Etalab)', url: 'https://www.etalab.gouv.fr/licence-ouverte-open-licence/' },
    },
    tags: TAGS,
    servers: [{ url: '/' }],
  });
  app.get('/v1/openapi.json', (_req: Request, res: Response) => {
    res.json(document);
  });
  mountDocs(app);
  mountMcp(app, ctx, ENDPOINTS);
  mountDashboard(app);

  app.use((req: Request) => {
    throw new ApiError('not_found', `no route for ${req.method} ${req.path}`);
  });
  // The one error renderer: every failure, including malformed JSON bodies, leaves in the specified error body.
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const apiError = clientErrorOf(err) ?? toApiError(err);
    // The access log writes its stack (a client's mistake never gets one).
    if (!(err instanceof ApiError) && apiError.status >= 500) res.err = err as Error;
    for (const [name, value] of Object.entries(apiError.opts.headers ?? {})) res.set(name, value);
    res.status(apiError.status).json(apiError.bodyFor((res.locals.requestId as string | undefined) ?? requestIdOf(undefined)));
  });
  return app;
}

/** /health and the document itself, which answer without a key and outside the endpoint registry. */
function registerServiceRoutes(registry: OpenAPIRegistry): void {
  const health = z
    .object({
      status: z.enum(['ok', 'no_data', 'state_unavailable']).openapi({
        description: 'no_data (with 503) until a serving database is loaded; state_unavailable (503) when the state database (keys, credits) does not answer.',
      }),
      serving_database: z
        .object({ name: z.string().openapi({ description: 'File name of the serving database.' }), vintage: z.string().nullable() })
        .nullable()
        .openapi({ description: 'The serving database in use (its name and vintage, never its path); null without one.' }),
      state_database: z
        .object({
          engine: z.enum(['sqlite', 'postgresql']).openapi({ description: 'sqlite: the file of the data folder; postgresql: DATABASE_URL, shared by the replicas.' }),
          reachable: z.boolean(),
        })
        .openapi({ description: 'The database of keys, credits and alerts (never its address).' }),
    })
    .openapi('Health');
  const json = (description: string, schema: z.ZodType) => ({ description, headers: headerRefs('X-Request-Id'), content: { 'application/json': { schema } } });
  registry.registerPath({
    method: 'get',
    path: '/health',
    operationId: operationIdOf('get', '/health'),
    tags: ['Service'],
    summary: 'Liveness and readiness, for load balancers',
    description: 'No key, no credits.',
    security: [],
    responses: { 200: json('A serving database is loaded and the state database answers.', health), 503: json('No serving database yet, or the state database does not answer.', health) },
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
