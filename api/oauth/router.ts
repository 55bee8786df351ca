// The authorization server's HTTP side: the SDK's router (RFC 8414 metadata, RFC 9728 protected-resource metadata for
// /mcp, dynamic registration, /authorize, /token, /revoke) over FoncierOAuthProvider, plus what is ours: the exact
// redirect-URI rule in front of /authorize, the authorize page's decision (/oauth/decision), and the key holder's
// list of authorized clients (/oauth/authorizations, for the dashboard). Every OAuth failure leaves as an OAuth error
// body ({"error", "error_description"}), never a stack trace.
import express, { type Express, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { z } from 'zod';
import { mcpAuthRouter } from '@modelcontextprotocol/sdk/server/auth/router.js';
import { AccessDeniedError, InvalidClientError, InvalidRequestError, OAuthError, ServerError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { AppContext } from '../context';
import { ApiError } from '../errors';
import { authenticate, credentialOf } from '../platform';
import { env } from '../../lib/env';
import { FoncierOAuthProvider, SCOPE_NAMES, parseScopes, siteOf, type OAuthSite, type Scope } from './provider';
import { mountAuthorizeAssets } from './page';

/** The paths the SDK's router answers, and ours: failures there are OAuth error bodies. */
const OAUTH_PATHS = ['/authorize', '/token', '/register', '/revoke', '/oauth/decision'];

/** The OAuth error body of a failure, with its status (400, or 500 for the server's own). */
function sendOAuthError(res: Response, e: unknown, status?: number): void {
  const err = e instanceof OAuthError ? e : new ServerError('internal server error');
  res.status(status ?? (err instanceof ServerError ? 500 : 400)).set('Cache-Control', 'no-store').json(err.toResponseObject());
}

/**
 * The origin OAuth is served for on this request: PUBLIC_URL when set; else the request's own origin when it is a
 * loopback one (local development); else none (remote MCP authorization off, the API-key header still works).
 */
function originOf(req: Request): string | undefined {
  const configured = env().PUBLIC_URL;
  if (configured) return configured.replace(/\/$/, '');
  const host = req.get('host');
  if (!host) return undefined;
  try {
    const u = new URL(`http://${host}`);
    return u.hostname === 'localhost' || u.hostname === '127.0.0.1' ? u.origin : undefined;
  } catch {
    return undefined;
  }
}

export interface OAuthServer {
  /** The request's site and its provider, or undefined when OAuth is off for it. */
  siteOf(req: Request): { site: OAuthSite; provider: FoncierOAuthProvider } | undefined;
}

const DecisionSchema = z.object({
  client_id: z.string().min(1),
  redirect_uri: z.string().min(1),
  code_challenge: z.string().regex(/^[A-Za-z0-9_-]{43,128}$/),
  state: z.string().optional(),
  resource: z.string().min(1),
  scope: z.string(),
  approve: z.boolean(),
  portfolio: z.boolean().optional(),
  api_key: z.string().optional(),
});

/** The client's redirect URI with the authorization response's parameters (and RFC 9207's iss). */
function redirectTo(uri: string, site: OAuthSite, params: Record<string, string | undefined>): string {
  const u = new URL(uri);
  for (const [k, v] of Object.entries({ ...params, iss: `${site.origin}/` })) if (v) u.searchParams.set(k, v);
  return u.href;
}

/** express-rate-limit warns when a limiter is made while a request is answered: ours are, once per origin, on purpose. */
const LIMITER = { validate: { creationStack: false } };
const TOKEN_REQUESTS_PER_15_MIN = 1000;

export function mountOAuth(app: Express, ctx: AppContext): OAuthServer {
  // One router per origin served: in production the one of PUBLIC_URL; in local development the loopback origins.
  const sites = new Map<string, { site: OAuthSite; provider: FoncierOAuthProvider; router: RequestHandler }>();
  const entryOf = (req: Request) => {
    const origin = originOf(req);
    if (!origin) return undefined;
    let s = sites.get(origin);
    if (!s) {
      const site = siteOf(origin);
      const provider = new FoncierOAuthProvider(ctx, site);
      const router = mcpAuthRouter({
        provider,
        issuerUrl: new URL(`${site.origin}/`),
        resourceServerUrl: new URL(site.resource),
        serviceDocumentationUrl: new URL(`${site.origin}/docs`),
        scopesSupported: SCOPE_NAMES,
        resourceName: 'foncier MCP',
        // The SDK's per-address rate limits (built with the origin's router, on its first request): its own for
        // registration (20 an hour) and the authorize page (100 in 15 minutes), human-paced; /token and /revoke
        // raised, since a hosted platform refreshes the tokens of all its users from a few addresses.
        authorizationOptions: { rateLimit: LIMITER },
        tokenOptions: { rateLimit: { ...LIMITER, max: TOKEN_REQUESTS_PER_15_MIN } },
        clientRegistrationOptions: { rateLimit: LIMITER },
        revocationOptions: { rateLimit: { ...LIMITER, max: TOKEN_REQUESTS_PER_15_MIN } },
      });
      s = { site, provider, router };
      // Loopback origins differ by port only; a handful at most is ever in use.
      if (sites.size >= 16) sites.clear();
      sites.set(origin, s);
    }
    return s;
  };
  const server: OAuthServer = { siteOf: entryOf };

  // Redirect URIs are matched exactly, a loopback one included (the SDK would let its port vary): refused here, before
  // any redirect.
  app.use('/authorize', express.urlencoded({ extended: false }), async (req: Request, res: Response, next: NextFunction) => {
    const s = server.siteOf(req);
    if (!s) return next();
    const p = (req.method === 'POST' ? req.body : req.query) as Record<string, unknown> | undefined;
    const clientId = typeof p?.client_id === 'string' ? p.client_id : undefined;
    const redirectUri = typeof p?.redirect_uri === 'string' ? p.redirect_uri : undefined;
    if (!clientId || redirectUri === undefined) return next();
    try {
      const client = await s.provider.clientsStore.getClient(clientId);
      if (client && !client.redirect_uris.includes(redirectUri)) {
        return sendOAuthError(res, new InvalidRequestError('redirect_uri is not one the client registered (matched exactly)'));
      }
    } catch (e) {
      return sendOAuthError(res, e);
    }
    next();
  });
  app.use((req: Request, res: Response, next: NextFunction) => {
    const s = entryOf(req);
    if (!s) return next();
    s.router(req, res, next);
  });

  app.post('/oauth/decision', async (req: Request, res: Response) => {
    res.set('Cache-Control', 'no-store');
    const s = server.siteOf(req);
    if (!s) return sendOAuthError(res, new InvalidRequestError('remote MCP authorization is not configured on this server (PUBLIC_URL)'));
    const parsed = DecisionSchema.safeParse(req.body);
    if (!parsed.success) return sendOAuthError(res, new InvalidRequestError(`malformed decision: ${parsed.error.issues.map((i) => i.path.join('.') || i.message).join(', ')}`));
    const d = parsed.data;
    try {
      const client = await s.provider.clientsStore.getClient(d.client_id);
      if (!client) throw new InvalidClientError('unknown client_id');
      if (!client.redirect_uris.includes(d.redirect_uri)) throw new InvalidRequestError('redirect_uri is not one the client registered (matched exactly)');
      const requested = s.provider.checkRequest(d.resource, d.scope);
      if (!d.approve) return res.json({ redirect_to: redirectTo(d.redirect_uri, s.site, { error: 'access_denied', error_description: 'the key holder denied the request', state: d.state }) });
      const key = d.api_key ? await ctx.state.keys.findByKey(d.api_key.trim()) : undefined;
      if (!key?.isActive) {
        return sendOAuthError(res, new AccessDeniedError(key ? 'this API key has been revoked' : 'this API key does not exist'), 401);
      }
      // The approval goes into the key's request log (api/routes/account/request-log.ts).
      res.locals.keyId = key.id;
      // The portfolio scope only when the key holder ticked it.
      const scopes = requested.filter((sc: Scope) => sc !== 'portfolio' || d.portfolio === true);
      if (!scopes.length) return res.json({ redirect_to: redirectTo(d.redirect_uri, s.site, { error: 'access_denied', error_description: 'no scope was approved', state: d.state }) });
      const code = await s.provider.approve(key, client, { redirectUri: d.redirect_uri, codeChallenge: d.code_challenge, scopes });
      res.json({ redirect_to: redirectTo(d.redirect_uri, s.site, { code, state: d.state }) });
    } catch (e) {
      sendOAuthError(res, e);
    }
  });

  // The key holder's authorized clients (the dashboard): authenticated by the API key itself, never by a token.
  app.get('/oauth/authorizations', async (req: Request, res: Response) => {
    const key = await authenticate(ctx, credentialOf(req));
    res.locals.keyId = key.id;
    const grants = await ctx.state.oauth.grants(key.id);
    res.set('Cache-Control', 'no-store').json({
      authorizations: grants.map((g) => {
        const meta = JSON.parse(g.metadata) as { client_name?: string; client_uri?: string; redirect_uris?: string[] };
        return {
          client_id: g.client_id,
          client_name: meta.client_name ?? null,
          client_uri: meta.client_uri ?? null,
          redirect_uris: meta.redirect_uris ?? [],
          scopes: parseScopes(g.scopes),
          authorized_at: g.created_at,
          updated_at: g.updated_at,
        };
      }),
    });
  });
  app.delete('/oauth/authorizations/:client_id', async (req: Request, res: Response) => {
    const key = await authenticate(ctx, credentialOf(req));
    res.locals.keyId = key.id;
    const clientId = String(req.params.client_id);
    if (!(await ctx.state.oauth.revokeGrant(key.id, clientId))) throw new ApiError('not_found', `no authorization of client ${clientId} for this key`);
    res.status(204).end();
  });

  mountAuthorizeAssets(app);

  // A body the app's parsers refused on an OAuth path (malformed JSON, too large) is an OAuth error too.
  app.use(OAUTH_PATHS, (err: unknown, _req: Request, res: Response, next: NextFunction) => {
    const status = (err as { status?: unknown } | undefined)?.status;
    if (typeof status === 'number' && status >= 400 && status < 500) return sendOAuthError(res, new InvalidRequestError('the request body could not be read'));
    next(err);
  });
  return server;
}

