// The services handed to every route (STYLE.md: injected, not imported). Tests build one over a temp data folder
// with a FixedClock; `npm start` builds one over DATA_DIR.
import { dataDir } from '../lib/config';
import { ResponseCache } from './cache';
import { Capacity } from './capacity';
import { systemClock, type Clock } from './clock';
import { RegistryClient, registryConfigFromEnv } from '../lib/registry';
import { ServingDb, type ServingDbOptions } from './db';
import { createLogger, type Logger } from './log';
import { openStore, type OpenStateOptions, type StateStore } from './store';
import { webhookConfigFromEnv, type WebhookConfig } from './webhooks/config';
import { env } from '../lib/env';

export interface Limits {
  /** Requests doing database work at once; above it 503 at_capacity (specification, Limits). */
  maxConcurrentQueries: number;
  /** How long a request waits for a free database slot before 503 at_capacity (api/capacity.ts); 0: no wait. */
  capacityWaitMs: number;
  /** Overrides the plans' requests per minute (load tests only). */
  rateLimitPerMinute?: number;
  /** Time budget of the comparables search of comparables/estimate; beyond it 504 dense_query_timeout. */
  denseQueryBudgetMs: number;
}

export interface AppContext {
  db: ServingDb;
  /** The API's own state (api/store/): keys, credits, rate limit, portfolio, alerts, webhooks, request log. */
  state: StateStore;
  cache: ResponseCache;
  clock: Clock;
  limits: Limits;
  /** The database slots: requests holding one, and those waiting for one (api/capacity.ts). */
  active: Capacity;
  /** INSEE's business registry (GET /v1/businesses/:siren). */
  registry: RegistryClient;
  /** Structured logs (api/log.ts): LOG_LEVEL, LOG_FILE. */
  logger: Logger;
  /** Alert deliveries (api/webhooks/config.ts): WEBHOOK_* variables. */
  webhooks: WebhookConfig;
}

export interface ContextOptions {
  dataRoot?: string;
  clock?: Clock;
  limits?: Partial<Limits>;
  db?: ServingDbOptions;
  /** Default: createLogger() from LOG_LEVEL and LOG_FILE; tests pass a silent one. */
  logger?: Logger;
  /** Default: configured from INSEE_SIRENE_API_KEY / INSEE_SIRENE_BASE_URL. */
  registry?: RegistryClient;
  /** Default: webhookConfigFromEnv(); tests allow their loopback receiver and trust its CA. */
  webhooks?: Partial<WebhookConfig>;
  /** Default: the SQLite file of the data folder, or PostgreSQL when DATABASE_URL is set (api/store/index.ts). */
  state?: Pick<OpenStateOptions, 'databaseUrl' | 'leaseMs' | 'poolSize' | 'env'>;
}

export function createContext(opts: ContextOptions = {}): AppContext {
  const root = opts.dataRoot ?? dataDir();
  const clock = opts.clock ?? systemClock;
  const logger = opts.logger ?? createLogger();
  const limits: Limits = {
    maxConcurrentQueries: 15,
    capacityWaitMs: env().CAPACITY_WAIT_MS,
    denseQueryBudgetMs: env().DENSE_QUERY_BUDGET_MS,
    ...opts.limits,
  };
  return {
    db: new ServingDb({ ...opts.db, dataRoot: root }),
    state: openStore({
      ...opts.state,
      dataRoot: root,
      clock,
      onError: (e) => logger.error({ err: e }, 'state database error'),
      onRefunded: (replicas, n) => logger.warn({ replicas, refunded: n }, `refunded ${n} charge(s) left pending by replica(s) whose lease expired`),
    }),
    cache: new ResponseCache(() => clock.now().getTime()),
    clock,
    limits,
    active: new Capacity(() => limits.maxConcurrentQueries, () => limits.capacityWaitMs),
    registry: opts.registry ?? new RegistryClient(registryConfigFromEnv(), () => clock.now().getTime()),
    logger,
    webhooks: { ...webhookConfigFromEnv(), ...opts.webhooks },
  };
}

/**
 * Before serving (the server, the stdio MCP server): the state connected and migrated, and this process one of its
 * serving processes, the charges that dead processes left pending (their clients never got an answer) refunded
 * (docs/decisions.md, Pending charges; docs/state.md).
 */
export async function openState(ctx: AppContext): Promise<void> {
  await ctx.state.ready();
  const refunded = await ctx.state.serve();
  if (refunded) ctx.logger.warn({ refunded }, `refunded ${refunded} charge${refunded > 1 ? 's' : ''} left pending by a process that stopped without answering`);
}

export async function closeContext(ctx: AppContext): Promise<void> {
  await ctx.db.close();
  await ctx.state.close();
}
