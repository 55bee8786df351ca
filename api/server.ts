// Starts the API on PORT (default 3000) over the data folder (DATA_DIR).
import { STATUS_CODES, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { createApp } from './app';
import { closeContext, createContext, openState, type AppContext } from './context';
import { ApiError } from './errors';
import { requestIdOf } from './platform';
import { startWebhooks } from './webhooks';
import { env } from '../lib/env';

/** The API error for a request Node's HTTP parser refused before Express saw it. */
function parserError(code: string | undefined): ApiError {
  if (code === 'HPE_HEADER_OVERFLOW') return new ApiError('request_too_large', 'the request line and headers exceed 16 kB');
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return new ApiError('request_timeout', 'the request was not received in time');
  if (code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW') return new ApiError('request_too_large', 'the chunk extensions exceed 16 kB');
  return new ApiError('invalid_request', 'the request is not valid HTTP/1.1 (request line, header names or values, framing)');
}

/**
 * Node answers requests its parser refuses (headers over 16 kB, control characters in a header value, a broken
 * request line) with an empty body. This handler sends the API's JSON error body instead, under the same rule Node
 * applies: only while no response has started on the socket, so a reply is never spliced into another one.
 */
export function answerParserErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const e = parserError(err.code);
    // Its own id: the request never reached the middleware that reads X-Request-Id, and its headers may be the fault.
    const requestId = requestIdOf(undefined);
    const body = JSON.stringify(e.bodyFor(requestId));
    socket.once('finish', () => socket.destroy());
    socket.end(
      `HTTP/1.1 ${e.status} ${STATUS_CODES[e.status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `X-Request-Id: ${requestId}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}

/** How long a graceful stop lets the requests in flight finish before closing their connections. */
const STOP_DEADLINE_MS = 20_000;

export async function startServer(port = env().PORT): Promise<{ server: Server; ctx: AppContext }> {
  const ctx = createContext();
  // The state (PostgreSQL with DATABASE_URL, else the SQLite file) settled of what dead processes left pending.
  await openState(ctx);
  await ctx.db.start();
  // Alert scans (after each import, daily at 06:00 UTC) and the delivery worker (docs/decisions.md, Webhooks).
  const webhooks = await startWebhooks(ctx);
  const app = createApp(ctx);
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(port, () => resolve(s));
  });
  answerParserErrors(server);
  // Keep-alive longer than common load balancers' idle timeout, so they never reuse a socket we are closing.
  server.keepAliveTimeout = 65_000;
  // A graceful stop (SIGTERM from an orchestrator, SIGINT): no new connection; the requests in flight finish and their
  // charges settle; then the deliveries in flight end, and the state is closed (on PostgreSQL, the lease given up).
  const stop = async () => {
    const closed = new Promise((resolve) => server.close(resolve));
    server.closeIdleConnections();
    const idle = setInterval(() => server.closeIdleConnections(), 100);
    const deadline = setTimeout(() => server.closeAllConnections(), STOP_DEADLINE_MS);
    await closed;
    clearInterval(idle);
    clearTimeout(deadline);
    await webhooks.stop();
    await closeContext(ctx);
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return { server, ctx };
}
