// The HTTP application: Express 5 over the serving database. Endpoints are added as route modules on this app.
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import type { ServingDb } from './db';

export interface AppContext {
  db: ServingDb;
}

export function createApp(ctx: AppContext): Express {
  const app = express();
  app.disable('x-powered-by');

  // For load balancers: no key, no credits; 503 until a serving database is loaded.
  app.get('/health', (_req: Request, res: Response) => {
    const ready = ctx.db.file !== undefined;
    res.status(ready ? 200 : 503).json({ status: ready ? 'ok' : 'no_data', serving_database: ctx.db.file ?? null });
  });

  app.use((req: Request, res: Response) => {
    res.status(404).json({ error: { code: 'not_found', message: `no route for ${req.method} ${req.path}` } });
  });
  app.use((err: Error, _req: Request, res: Response, _next: NextFunction) => {
    res.status(500).json({ error: { code: 'query_failed', message: err.message } });
  });
  return app;
}
