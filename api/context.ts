// The services handed to every route (STYLE.md: injected, not imported). Tests build one over a temp data folder
// with a FixedClock; `npm start` builds one over DATA_DIR.
import { dataDir } from '../lib/config';
import { ResponseCache } from './cache';
import { systemClock, type Clock } from './clock';
import { RegistryClient, registryConfigFromEnv } from '../lib/registry';
import { ServingDb, type ServingDbOptions } from './db';
import { createLogger, type Logger } from './log';
import { openStore, type DeliveryStore, type StateStore } from './store';
import { PgState, stateConfigFromEnv } from './store/postgres';
import { webhookConfigFromEnv, type WebhookConfig } from './webhooks/config';

export interface Limits {
  /** Requests doing database work at once; above it 503 at_capacity (specification, Limits). */
  maxConcurrentQueries: number;
  /** Overrides the plans' requests per minute (load tests only). */
  rateLimitPerMinute?: number;
  /** Time budget of the comparables search of comparables/estimate; beyond it 504 dense_query_timeout (DECISIONS.md). */
  denseQueryBudgetMs: number;
}

export interface AppContext {
  db: ServingDb;
  /** The API's own state (api/store/): keys, credits, rate limit, portfolio, alerts, webhooks, request log. */
  state: StateStore;
  cache: ResponseCache;
  clock: Clock;
  limits: Limits;
  /** Requests currently holding a database slot. */
  active: { queries: number };
  /** INSEE's business registry (GET /v1/businesses/:siren). */
  registry: RegistryClient;
  /** Structured logs (api/log.ts): LOG_LEVEL, LOG_FILE. */
  logger: Logger;
  /** Alert deliveries (api/webhooks/config.ts): WEBHOOK_* variables. */
  webhooks: WebhookConfig;
  /**
   * The state on PostgreSQL, shared by every replica, when DATABASE_URL is set (api/store/postgres): keys, credits, the
   * rate limit, the request log and the webhook queue then live there rather than in `store`. Opened by startServer.
   */
  sharedState?: PgState;
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
}

export function createContext(opts: ContextOptions = {}): AppContext {
  const root = opts.dataRoot ?? dataDir();
  const clock = opts.clock ?? systemClock;
  return {
    db: new ServingDb({ ...opts.db, dataRoot: root }),
    state: openStore({ dataRoot: root, clock }),
    cache: new ResponseCache(() => clock.now().getTime()),
    clock,
    limits: {
      maxConcurrentQueries: 15,
      denseQueryBudgetMs: Number(process.env.DENSE_QUERY_BUDGET_MS ?? 3000),
      ...opts.limits,
    },
    active: { queries: 0 },
    registry: opts.registry ?? new RegistryClient(registryConfigFromEnv(), () => clock.now().getTime()),
    logger: opts.logger ?? createLogger(),
    webhooks: { ...webhookConfigFromEnv(), ...opts.webhooks },
  };
}

/**
 * Before serving (the server, the stdio MCP server): with DATABASE_URL, opens the PostgreSQL state as one replica (its
 * lease's first beat refunds the charges of dead replicas); without it, refunds the charges a killed process left
 * pending in the SQLite file, whose clients never got an answer (docs/decisions.md, Pending charges).
 */
export async function openState(ctx: AppContext, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  await ctx.state.ready();
  const state = stateConfigFromEnv(env);
  if (state.databaseUrl) {
    ctx.sharedState = await PgState.open(state.databaseUrl, {
      clock: ctx.clock,
      leaseMs: state.leaseMs,
      poolSize: state.poolSize,
      replica: true,
      onError: (e) => ctx.logger.error({ err: e }, 'state database error'),
      onRefunded: (replicas, n) => ctx.logger.warn({ replicas, refunded: n }, `refunded ${n} charge(s) left pending by replica(s) whose lease expired`),
    });
    return;
  }
  const refunded = await ctx.state.credits.refundAbandoned();
  if (refunded) ctx.logger.warn({ refunded }, `refunded ${refunded} charge${refunded > 1 ? 's' : ''} left pending by a process that stopped without answering`);
}

/** The portfolio, alerts and deliveries log the routes read: PostgreSQL's when DATABASE_URL opened it, else ctx.state. */
export function routeStateOf(ctx: AppContext): Pick<StateStore, 'portfolio' | 'alerts'> & { deliveries: Pick<DeliveryStore, 'list'> } {
  const shared = ctx.sharedState;
  if (!shared) return ctx.state;
  return { portfolio: shared.portfolio, alerts: shared.alerts, deliveries: { list: (id, limit, offset) => shared.alerts.deliveries(id, limit, offset) } };
}

export async function closeContext(ctx: AppContext): Promise<void> {
  await ctx.db.close();
  await ctx.sharedState?.close();
  await ctx.state.close();
}
