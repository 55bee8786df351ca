// Starts the API on PORT (default 3000) over the serving database of DATA_DIR.
import type { Server } from 'node:http';
import { createApp } from './app';
import { ServingDb } from './db';

export async function startServer(port = Number(process.env.PORT ?? 3000)): Promise<{ server: Server; db: ServingDb }> {
  const db = new ServingDb();
  await db.start();
  const app = createApp({ db });
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(port, () => resolve(s));
  });
  const stop = async () => {
    server.close();
    await db.close();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return { server, db };
}
