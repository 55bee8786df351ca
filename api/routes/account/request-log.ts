// The key holder's request log, for the dashboard: one row per authenticated call (REST or MCP tool call) with its
// request id, endpoint, status and the credits it finally cost (after any refund). Kept 31 days in the state, beside
// the keys and the credit ledger (which has charges only, not the refused or free calls a holder wants to see).
import type { NextFunction, Request, Response } from 'express';
import type { AppContext } from '../../context';
import type { RequestLogStore } from '../../store';

export const RETENTION_DAYS = 31;

export interface LoggedRequest {
  request_id: string;
  at: string;
  endpoint: string;
  transport: 'rest' | 'mcp';
  status: number;
  credits: number;
}

export interface DailyUsage {
  date: string;
  endpoint: string;
  requests: number;
  credits: number;
}

/**
 * The log as the routes use it, over the state's request log (api/store/): recording never makes the answer wait (a
 * failure is logged), and prunes the rows past the retention once a day per process, which keeps the table at about a
 * month.
 */
export class RequestLog {
  private prunedOn = '';

  constructor(
    private readonly store: RequestLogStore,
    private readonly now: () => Date,
    private readonly onError: (e: Error) => void,
  ) {}

  record(keyId: string, r: Omit<LoggedRequest, 'at'>): void {
    const now = this.now();
    const day = now.toISOString().slice(0, 10);
    const write = async () => {
      if (day !== this.prunedOn) {
        this.prunedOn = day;
        await this.store.prune(new Date(now.getTime() - RETENTION_DAYS * 86_400_000).toISOString());
      }
      await this.store.record(keyId, { ...r, at: now.toISOString() });
    };
    // The state tracks its writes in flight: closing it (a graceful stop) waits for them.
    void write().catch((e: Error) => this.onError(e));
  }

  recent(keyId: string, limit: number): Promise<LoggedRequest[]> {
    return this.store.recent(keyId, limit);
  }

  /** Requests and credits per UTC day and endpoint since the start of `since` (a YYYY-MM-DD day). */
  daily(keyId: string, since: string): Promise<DailyUsage[]> {
    return this.store.daily(keyId, `${since}T00:00:00.000Z`);
  }
}

const logs = new WeakMap<AppContext, RequestLog>();

/** The log of a context's state (one per context, created on first use). */
export function requestLogOf(ctx: AppContext): RequestLog {
  let log = logs.get(ctx);
  if (!log) {
    const onError = (e: Error) => ctx.logger.error({ err: e }, 'request log write failed');
    log = new RequestLog(ctx.state.requestLog, () => ctx.clock.now(), onError);
    logs.set(ctx, log);
  }
  return log;
}

/** How the log names an endpoint: as the registry and the OpenAPI document spell it, `GET /v1/stats/market`. */
export const endpointLabel = (method: string, path: string) => `${method.toUpperCase()} ${path}`;

/**
 * Express middleware recording every REST call of an authenticated key once answered: the endpoint adapter
 * (mountEndpoint) leaves the key id and the credits in res.locals. /mcp is left to the MCP server, which records each
 * tool call instead of the POST that carried it.
 */
export function recordRequests(ctx: AppContext, skip: (path: string) => boolean) {
  return (req: Request, res: Response, next: NextFunction) => {
    res.on('finish', () => {
      const keyId = res.locals.keyId as string | undefined;
      const route = (req as Request & { route?: { path?: unknown } }).route?.path;
      if (!keyId || res.locals.unlogged === true || typeof route !== 'string' || skip(route)) return;
      requestLogOf(ctx).record(keyId, {
        request_id: res.locals.requestId as string,
        endpoint: endpointLabel(req.method, route),
        transport: 'rest',
        status: res.statusCode,
        credits: (res.locals.creditsUsed as number | undefined) ?? 0,
      });
    });
    next();
  };
}
