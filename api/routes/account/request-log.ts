// The key holder's request log, for the dashboard: one row per authenticated call (REST or MCP tool call) with its
// request id, endpoint, status and the credits it finally cost (after any refund). Kept 31 days in api.sqlite, beside
// the keys and the credit ledger (which has charges only, not the refused or free calls a holder wants to see).
import type Database from 'better-sqlite3';
import type { NextFunction, Request, Response } from 'express';
import type { AppContext } from '../../context';

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

export class RequestLog {
  private readonly insert: Database.Statement<[string, string, string, string, string, number, number]>;
  private readonly prune: Database.Statement<[string]>;
  private readonly recentOf: Database.Statement<[string, number], LoggedRequest>;
  private readonly dailyOf: Database.Statement<[string, string], DailyUsage>;
  private prunedOn = '';

  constructor(
    db: Database.Database,
    private readonly now: () => Date,
  ) {
    // Its own table, created here: the keys' schema migrations (api/store.ts) need not know about it.
    db.exec(`create table if not exists request_log (
      id integer primary key,
      key_id text not null,
      at text not null,
      request_id text not null,
      endpoint text not null,
      transport text not null,
      status integer not null,
      credits integer not null
    );
    create index if not exists request_log_key_at on request_log (key_id, at);`);
    this.insert = db.prepare('insert into request_log (key_id, at, request_id, endpoint, transport, status, credits) values (?, ?, ?, ?, ?, ?, ?)');
    this.prune = db.prepare('delete from request_log where at < ?');
    this.recentOf = db.prepare(
      'select request_id, at, endpoint, transport, status, credits from request_log where key_id = ? order by at desc, id desc limit ?',
    );
    this.dailyOf = db.prepare(
      `select substr(at, 1, 10) as date, endpoint, count(*) as requests, sum(credits) as credits
       from request_log where key_id = ? and at >= ? group by date, endpoint order by date, endpoint`,
    );
  }

  record(keyId: string, r: Omit<LoggedRequest, 'at'>): void {
    const now = this.now();
    const day = now.toISOString().slice(0, 10);
    // Once a day per process is enough to keep the table at about a month.
    if (day !== this.prunedOn) {
      this.prune.run(new Date(now.getTime() - RETENTION_DAYS * 86_400_000).toISOString());
      this.prunedOn = day;
    }
    this.insert.run(keyId, now.toISOString(), r.request_id, r.endpoint, r.transport, r.status, r.credits);
  }

  recent(keyId: string, limit: number): LoggedRequest[] {
    return this.recentOf.all(keyId, limit);
  }

  /** Requests and credits per UTC day and endpoint since the start of `since` (a YYYY-MM-DD day). */
  daily(keyId: string, since: string): DailyUsage[] {
    return this.dailyOf.all(keyId, `${since}T00:00:00.000Z`);
  }
}

/** What the routes use of a log: recording never waits (a failure is logged), reading may. */
export interface RequestLogView {
  record(keyId: string, r: Omit<LoggedRequest, 'at'>): void;
  recent(keyId: string, limit: number): LoggedRequest[] | Promise<LoggedRequest[]>;
  daily(keyId: string, since: string): DailyUsage[] | Promise<DailyUsage[]>;
}

/** The log in the PostgreSQL state shared by the replicas (DATABASE_URL). */
class SharedRequestLog implements RequestLogView {
  private prunedOn = '';

  constructor(private readonly ctx: AppContext & { sharedState: NonNullable<AppContext['sharedState']> }) {}

  record(keyId: string, r: Omit<LoggedRequest, 'at'>): void {
    const { requestLog } = this.ctx.sharedState;
    const now = this.ctx.clock.now();
    const day = now.toISOString().slice(0, 10);
    const write = async () => {
      if (day !== this.prunedOn) {
        this.prunedOn = day;
        await requestLog.prune(new Date(now.getTime() - RETENTION_DAYS * 86_400_000).toISOString());
      }
      await requestLog.record(keyId, { ...r, at: now.toISOString() });
    };
    void this.ctx.sharedState.track(write());
  }

  recent(keyId: string, limit: number): Promise<LoggedRequest[]> {
    return this.ctx.sharedState.requestLog.recent(keyId, limit);
  }

  daily(keyId: string, since: string): Promise<DailyUsage[]> {
    return this.ctx.sharedState.requestLog.daily(keyId, `${since}T00:00:00.000Z`);
  }
}

const logs = new WeakMap<AppContext, RequestLogView>();

/** The log of a context's state (one per context, created on first use). */
export function requestLogOf(ctx: AppContext): RequestLogView {
  let log = logs.get(ctx);
  if (!log) {
    const shared = ctx.sharedState;
    log = shared ? new SharedRequestLog({ ...ctx, sharedState: shared }) : new RequestLog(ctx.store.db, () => ctx.clock.now());
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
      if (!keyId || typeof route !== 'string' || skip(route)) return;
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
