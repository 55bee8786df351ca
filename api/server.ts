// Starts the API on PORT (default 3000) over the data folder (DATA_DIR).
import type { Server } from 'node:http';
import { createApp } from './app';
import { closeContext, createContext, type AppContext } from './context';
import { startWebhooks } from './webhooks';

export async function startServer(port = Number(process.env.PORT ?? 3000)): Promise<{ server: Server; ctx: AppContext }> {
  const ctx = createContext();
  // Charges a killed process left pending were never answered: give them back before serving (docs/decisions.md).
  const refunded = ctx.credits.refundAbandoned();
  if (refunded) ctx.logger.warn({ refunded }, `refunded ${refunded} charge${refunded > 1 ? 's' : ''} left pending by a process that stopped without answering`);
  await ctx.db.start();
  // Alert scans (after each import, daily at 06:00 UTC) and the delivery worker (docs/decisions.md, Webhooks).
  const webhooks = await startWebhooks(ctx);
  const app = createApp(ctx);
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(port, () => resolve(s));
  });
  // Keep-alive longer than common load balancers' idle timeout, so they never reuse a socket we are closing.
  server.keepAliveTimeout = 65_000;
  const stop = async () => {
    server.close();
    await webhooks.stop();
    await closeContext(ctx);
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return { server, ctx };
}
