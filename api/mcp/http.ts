// MCP over Streamable HTTP at /mcp on the API server. Stateless (no MCP session): each POST builds a server over the
// generated tools for the key that request carries (X-API-Key or Authorization: Bearer, as REST), answers in plain
// JSON, and is gone; so a key is never remembered between requests and any instance behind a load balancer can answer.
import type { Express, NextFunction, Request, Response } from 'express';
import { hostHeaderValidation } from '@modelcontextprotocol/sdk/server/middleware/hostHeaderValidation.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { AppContext } from '../context';
import { authenticate, credentialOf, type AnyEndpoint } from '../platform';
import { createMcpServer, generateTools } from './tools';
import { env } from '../../lib/env';

export const MCP_PATH = '/mcp';

/**
 * DNS-rebinding protection (docs/decisions.md, MCP server): off by default, because /mcp, unlike the local servers the
 * protection is meant for, refuses every request without an API key, which a rebinding page does not have. Set
 * MCP_ALLOWED_HOSTS (comma-separated host names, no port, IPv6 in brackets) to refuse any other Host header with 403.
 */
export function allowedHostsFromEnv(): string[] | undefined {
  const list = env().MCP_ALLOWED_HOSTS;
  return list.length ? list : undefined;
}

export function mountMcp(app: Express, ctx: AppContext, endpoints: readonly AnyEndpoint[], opts: { allowedHosts?: string[] } = {}): void {
  const tools = generateTools(endpoints);
  const hosts = opts.allowedHosts ?? allowedHostsFromEnv();
  if (hosts) app.use(MCP_PATH, hostHeaderValidation(hosts));

  app.post(MCP_PATH, async (req: Request, res: Response, next: NextFunction) => {
    const credential = credentialOf(req);
    // Refused like any REST call (401 with the API's error body) before any MCP exchange, tools/list included.
    const key = await authenticate(ctx, credential);
    const requestId = res.locals.requestId as string;
    res.locals.keyId = key.id;
    res.locals.creditsUsed = 0;
    const server = createMcpServer(ctx, tools, {
      credential,
      requestId: () => requestId,
      onCall: (_name, r) => {
        res.locals.creditsUsed = (res.locals.creditsUsed as number) + r.creditsUsed;
      },
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    } catch (e) {
      next(e);
    }
  });

  // Stateless: no server-initiated stream to open (GET) and no session to end (DELETE).
  const notAllowed = (_req: Request, res: Response) => {
    res.status(405).set('Allow', 'POST').json({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this MCP endpoint is stateless, use POST.' }, id: null });
  };
  app.get(MCP_PATH, notAllowed);
  app.delete(MCP_PATH, notAllowed);
}
