// MCP over Streamable HTTP at /mcp on the API server. Stateless (no MCP session): each POST builds a server over the
// generated tools for the credential that request carries, answers in plain JSON, and is gone; so a credential is never
// remembered between requests and any instance behind a load balancer can answer. The credential is an API key
// (X-API-Key or Authorization: Bearer fk_live_…, as REST) or an OAuth access token of remote MCP (Authorization:
// Bearer fk_at_…, api/oauth/), which acts for one key within its scopes.
import type { Express, NextFunction, Request, Response } from 'express';
import { hostHeaderValidation } from '@modelcontextprotocol/sdk/server/middleware/hostHeaderValidation.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { InsufficientScopeError, OAuthError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { AppContext } from '../context';
import { ApiError } from '../errors';
import { authenticate, credentialOf, type AnyEndpoint } from '../platform';
import type { KeyRecord } from '../store';
import { ACCESS_TOKEN_PREFIX, type OAuthSite, type Scope } from '../oauth/provider';
import { mountOAuth } from '../oauth/router';
import { createMcpServer, generateTools, type GeneratedTool } from './tools';
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

/** The scope a tool needs: the key's portfolio and alerts apart from the data tools. */
export function scopeOf(t: GeneratedTool): Scope {
  return t.spec.tag === 'Portfolio' || t.spec.tag === 'Alerts' ? 'portfolio' : 'read';
}

const BEARER_RE = /^Bearer\s+(\S+)\s*$/i;

/** `WWW-Authenticate: Bearer …` pointing to the protected-resource metadata (RFC 9728), with an error when there is one. */
function challenge(site: OAuthSite, error?: { code: string; description: string }, scope?: string): string {
  const q = (v: string) => `"${v.replace(/["\\]/g, "'")}"`;
  const parts = [`resource_metadata=${q(site.resourceMetadata)}`];
  if (error) parts.unshift(`error=${q(error.code)}`, `error_description=${q(error.description)}`);
  if (scope) parts.push(`scope=${q(scope)}`);
  return `Bearer ${parts.join(', ')}`;
}

/** The tools/call names of a JSON-RPC message or batch. */
function calledTools(body: unknown): string[] {
  const messages = Array.isArray(body) ? body : [body];
  return messages.flatMap((m: { method?: unknown; params?: { name?: unknown } } | null) =>
    m && m.method === 'tools/call' && typeof m.params?.name === 'string' ? [m.params.name] : [],
  );
}

export function mountMcp(app: Express, ctx: AppContext, endpoints: readonly AnyEndpoint[], opts: { allowedHosts?: string[] } = {}): void {
  const tools = generateTools(endpoints);
  const scopeByName = new Map(tools.map((t) => [t.tool.name, scopeOf(t)]));
  const hosts = opts.allowedHosts ?? allowedHostsFromEnv();
  if (hosts) app.use(MCP_PATH, hostHeaderValidation(hosts));
  const oauth = mountOAuth(app, ctx);

  app.post(MCP_PATH, async (req: Request, res: Response, next: NextFunction) => {
    const s = oauth.siteOf(req);
    const bearer = BEARER_RE.exec(req.get('authorization') ?? '')?.[1];
    const viaToken = s !== undefined && bearer?.startsWith(ACCESS_TOKEN_PREFIX) === true && !req.get('x-api-key');
    let key: KeyRecord;
    let allowed = tools;
    if (viaToken) {
      // An OAuth access token: its key, checked now (revoked key, revoked consent, expiry, audience), and its scopes.
      let needed: string | undefined;
      try {
        const grant = await s.provider.grantOf(bearer!);
        key = grant.key;
        const scopes: Scope[] = grant.scopes;
        allowed = tools.filter((t) => scopes.includes(scopeOf(t)));
        const missing = calledTools(req.body).map((n) => scopeByName.get(n)).find((sc) => sc && !scopes.includes(sc));
        if (missing) {
          // RFC 6750's insufficient_scope, naming the scopes the call needs (the MCP specification's scope challenge).
          needed = [...scopes, missing].join(' ');
          throw new InsufficientScopeError(`this tool needs the ${missing} scope, which this token does not carry`);
        }
      } catch (e) {
        if (!(e instanceof OAuthError)) return next(e);
        const forbidden = e instanceof InsufficientScopeError;
        res.set('WWW-Authenticate', challenge(s.site, { code: e.errorCode, description: e.message }, forbidden ? needed : undefined));
        res.status(forbidden ? 403 : 401).json({ error: e.errorCode, error_description: e.message });
        return;
      }
    } else {
      // An API key, refused like any REST call (401 with the API's error body) before any MCP exchange, tools/list
      // included; the 401 also tells an OAuth client where to authorize.
      try {
        key = await authenticate(ctx, credentialOf(req));
      } catch (e) {
        if (s && e instanceof ApiError && e.status === 401) throw new ApiError(e.code, e.message, { ...e.opts, headers: { ...e.opts.headers, 'WWW-Authenticate': challenge(s.site) } });
        throw e;
      }
    }
    const requestId = res.locals.requestId as string;
    res.locals.keyId = key.id;
    res.locals.creditsUsed = 0;
    const server = createMcpServer(ctx, allowed, {
      credential: viaToken ? key : credentialOf(req),
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
