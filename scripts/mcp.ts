// `npm run mcp`: the MCP server over stdio, serving the data folder named by DATA_DIR in this process (as `npm start`
// does), every tool call charged to the key in FONCIER_API_KEY. Standard output is the protocol: logs go to standard
// error (or LOG_FILE).
import { pino } from 'pino';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { ENDPOINTS } from '../api/app';
import { closeContext, createContext, openState } from '../api/context';
import { hasServingData } from '../api/db';
import { ApiError } from '../api/errors';
import { createLogger } from '../api/log';
import { createMcpServer, generateTools } from '../api/mcp/tools';
import { authenticate } from '../api/platform';
import { dataDir } from '../lib/config';
import { env } from '../lib/env';
import { checkEnvOrExit } from '../lib/env';

// A bad environment variable stops the command here, with a message naming it.
checkEnvOrExit();

async function main(): Promise<void> {
  if (!hasServingData()) throw new Error(`no serving database in ${dataDir()}: run \`npm start\` (demo data) or \`npm run pipeline\` first`);
  const logger = createLogger(env().LOG_FILE ? {} : { stream: pino.destination(2) });
  const ctx = createContext({ logger });
  await openState(ctx);
  const credential = env().FONCIER_API_KEY?.trim() || undefined;
  // Fail at start rather than on every call: an agent host shows a server that did not start, with this message.
  try {
    await authenticate(ctx, credential);
  } catch (e) {
    if (e instanceof ApiError) throw new Error(`FONCIER_API_KEY: ${e.message}`);
    throw e;
  }
  await ctx.db.start();

  const server = createMcpServer(ctx, generateTools(ENDPOINTS), {
    credential,
    // The access log of this transport: one line per tool call, as REST has one per request.
    onCall: (tool, r, requestId) => logger.info({ request_id: requestId, tool, status: r.status, key_id: r.keyId, credits_used: r.creditsUsed }, `tool ${tool} ${r.status}`),
  });
  const stop = async () => {
    await server.close();
    await closeContext(ctx);
    process.exit(0);
  };
  process.stdin.on('end', stop);
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  await server.connect(new StdioServerTransport());
  logger.info({ data: ctx.db.file }, 'foncier MCP server on stdio');
}

main().catch((e: Error) => {
  process.stderr.write(`mcp failed: ${e.message}\n`);
  process.exit(1);
});
