// The HTTP application: the platform (request ids, errors, OpenAPI, docs) and the route modules mounted on it.
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import type { AppContext } from './context';
import { mountDocs } from './docs-page';
import { ApiError, ERROR_STATUS, invalidParams } from './errors';
import { accessLog } from './log';
import { errorSchema, mountEndpoint, requestIdOf, toApiError, type AnyEndpoint } from './platform';
import { ALERTS_ENDPOINTS } from './routes/alerts';
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
  ...META_ENDPOINTS,
  ...PORTFOLIO_ENDPOINTS,
  ...ALERTS_ENDPOINTS,
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
  app.use(express.json({ limit: '100kb' }));

  // For load balancers: no key, no credits; 503 until a serving database is loaded. The file's name and vintage only:
  // its absolute path would tell anyone the server's layout.
  app.get('/health', async (_req: Request, res: Response) => {
    const serving = (await ctx.db.describe()) ?? null;
    res.status(serving ? 200 : 503).json({ status: serving ? 'ok' : 'no_data', serving_database: serving });
  });

  const registry = new OpenAPIRegistry();
  registry.register('Error', errorSchema);
  registry.registerComponent('securitySchemes', 'ApiKey', { type: 'apiKey', in: 'header', name: 'X-API-Key' });
  registry.registerComponent('securitySchemes', 'Bearer', { type: 'http', scheme: 'bearer' });
  for (const endpoint of ENDPOINTS) mountEndpoint(app, registry, ctx, endpoint);

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
  mountDocs(app);

  app.use((req: Request) => {
    throw new ApiError('not_found', `no route for ${req.method} ${req.path}`);
  });
  // The one error renderer: every failure, including malformed JSON bodies, leaves in the specified error body.
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const e = err as { type?: string; status?: number };
    let apiError: ApiError;
    if (e?.type === 'entity.parse.failed') apiError = invalidParams([{ param: 'body', issue: 'malformed JSON' }]);
    else if (e?.type === 'entity.too.large') apiError = invalidParams([{ param: 'body', issue: 'larger than 100 kB' }]);
    else if (e?.type && e.status && e.status < 500) apiError = invalidParams([{ param: 'body', issue: String((err as Error).message) }]);
    else {
      apiError = toApiError(err);
      // The access log writes its stack (a client's mistake above never gets one).
      if (!(err instanceof ApiError) && apiError.status >= 500) res.err = err as Error;
    }
    for (const [name, value] of Object.entries(apiError.opts.headers ?? {})) res.set(name, value);
    res.status(apiError.status).json(apiError.bodyFor((res.locals.requestId as string | undefined) ?? requestIdOf(undefined)));
  });
  return app;
}
