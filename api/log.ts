// Structured logs (pino): one JSON line per request from pino-http, and the server's own events. Level and destination
// come from LOG_LEVEL (default info; `silent` turns logs off) and LOG_FILE (default standard output), see README.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pino, type DestinationStream, type Level, type Logger } from 'pino';
import { pinoHttp, type HttpLogger } from 'pino-http';
import { env, LOG_LEVELS } from '../lib/env';

export type { Logger };


export interface LoggerOptions {
  level?: string;
  /** A file to append to (its folder is created); default standard output. */
  file?: string;
  /** Tests: any writable stream. */
  stream?: DestinationStream;
}

/** The process logger; options default to LOG_LEVEL and LOG_FILE. */
export function createLogger(opts: LoggerOptions = {}): Logger {
  const level = opts.level ?? env().LOG_LEVEL;
  if (!(LOG_LEVELS as readonly string[]).includes(level)) throw new Error(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${level}"`);
  const file = opts.file ?? env().LOG_FILE;
  // Synchronous writes: a killed process has still written every line of the requests it answered.
  const dest = opts.stream ?? (file ? pino.destination({ dest: file, mkdir: true, append: true, sync: true }) : pino.destination(1));
  return pino({ level, base: undefined, timestamp: pino.stdTimeFunctions.isoTime }, dest);
}

type Res = ServerResponse & { locals?: Record<string, unknown>; err?: unknown };
type Req = IncomingMessage & { originalUrl?: string };

/**
 * The access log: one line per request with its id, method, path and query string, status, duration, the credits it
 * used and the key's id (never the key: no header is logged). Stack traces only for server errors that were not
 * foreseen (`res.err`, set by the error paths for 5xx): a client's mistake is one short line, so it cannot flood the log.
 */
export function accessLog(logger: Logger): HttpLogger {
  return pinoHttp({
    logger,
    // The request-id middleware runs first and has decided the id.
    genReqId: (req, res) => ((res as Res).locals?.requestId as string | undefined) ?? String(req.id ?? ''),
    customAttributeKeys: { reqId: 'request_id', responseTime: 'duration_ms' },
    wrapSerializers: false,
    serializers: {
      req: (req: Req) => ({ method: req.method, url: req.originalUrl ?? req.url }),
      res: (res: Res) => ({ status: res.statusCode }),
      err: pino.stdSerializers.err,
    },
    quietReqLogger: true,
    customProps: (_req, res) => {
      const locals = (res as Res).locals ?? {};
      return locals.keyId ? { key_id: locals.keyId, credits_used: locals.creditsUsed ?? 0 } : {};
    },
    customLogLevel: (_req, res, err): Level => (res.statusCode >= 500 || err ? 'error' : 'info'),
    customSuccessMessage: (req, res) => `${req.method} ${(req as Req).originalUrl ?? req.url} ${res.statusCode}`,
    customErrorMessage: (req, res) => `${req.method} ${(req as Req).originalUrl ?? req.url} ${res.statusCode}`,
    // pino-http invents an Error (with a meaningless stack) for any 5xx; only a real cause is worth a stack.
    customErrorObject: (_req, res, _err, val: Record<string, unknown>) => ((res as Res).err ? val : { ...val, err: undefined }),
  });
}
