// The authorization server of remote MCP (docs/decisions.md, Remote MCP with OAuth), as the SDK's OAuthServerProvider:
// the SDK's handlers (api/oauth/router.ts) parse and answer the OAuth requests, this class decides. Clients register
// dynamically (RFC 7591); a key holder approves a client on the authorize page with their API key; codes and tokens
// are random strings stored only as their SHA-256 hash, each bound to one key, one client, its scopes and this
// server's /mcp (RFC 8707). A token acts for its key while the key is active and the consent not revoked.
import crypto from 'node:crypto';
import type { Response } from 'express';
import type { AuthorizationParams, OAuthServerProvider } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import type { OAuthRegisteredClientsStore } from '@modelcontextprotocol/sdk/server/auth/clients.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import {
  InvalidClientMetadataError, InvalidGrantError, InvalidRequestError, InvalidScopeError, InvalidTargetError, InvalidTokenError,
} from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { OAuthClientInformationFull, OAuthTokenRevocationRequest, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { AppContext } from '../context';
import { hashKey, randomBase62, type KeyRecord } from '../store';
import type { NewOAuthToken, OAuthCodeRow } from '../store';
import { renderAuthorizePage } from './page';

/** The scopes: the data tools, and the key's portfolio and alerts apart (the authorize page asks for it explicitly). */
export const SCOPES = {
  read: 'Call the data tools (statistics, sales, valuations, account), charged to the key.',
  portfolio: 'Read and change the key’s portfolio and alerts.',
} as const;
export type Scope = keyof typeof SCOPES;
export const SCOPE_NAMES = Object.keys(SCOPES) as Scope[];
const isScope = (s: string): s is Scope => Object.hasOwn(SCOPES, s);

/** Prefixes tell a credential's kind at a glance: an API key is fk_live_…, never one of these. */
export const ACCESS_TOKEN_PREFIX = 'fk_at_';
export const REFRESH_TOKEN_PREFIX = 'fk_rt_';
export const CODE_PREFIX = 'fk_ac_';

export const ACCESS_TOKEN_SECONDS = 3600;
export const REFRESH_TOKEN_SECONDS = 30 * 24 * 3600;
export const CODE_SECONDS = 300;

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

export const isLoopbackHost = (hostname: string): boolean => LOOPBACK.has(hostname);

/** A redirect URI clients may register: https, or http on a loopback host (RFC 8252); never a fragment. */
export function redirectUriIssue(uri: string): string | undefined {
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return `${uri} is not a URL`;
  }
  if (u.hash) return `${uri} has a fragment`;
  if (u.protocol === 'https:') return undefined;
  if (u.protocol === 'http:' && isLoopbackHost(u.hostname)) return undefined;
  return `${uri} must use https (http only on localhost, 127.0.0.1 or [::1])`;
}

/** The scopes a request names (space-separated), refused when one is unknown; none named means `read`. */
export function parseScopes(scope: string | string[] | undefined): Scope[] {
  const names = (Array.isArray(scope) ? scope : (scope ?? '').split(' ')).filter(Boolean);
  for (const n of names) if (!isScope(n)) throw new InvalidScopeError(`unknown scope ${n} (scopes: ${SCOPE_NAMES.join(', ')})`);
  return names.length ? [...new Set(names as Scope[])] : ['read'];
}

const newSecret = (prefix: string) => prefix + randomBase62(40);

/** Where this server is reached: its issuer (origin) and the resource its tokens are bound to. */
export interface OAuthSite {
  /** https://host (no trailing slash). */
  origin: string;
  /** `${origin}/mcp`. */
  resource: string;
  /** RFC 9728 metadata of the resource: `${origin}/.well-known/oauth-protected-resource/mcp`. */
  resourceMetadata: string;
}

export function siteOf(origin: string): OAuthSite {
  const o = origin.replace(/\/$/, '');
  return { origin: o, resource: `${o}/mcp`, resourceMetadata: `${o}/.well-known/oauth-protected-resource/mcp` };
}

/** What a valid access token stands for. */
export interface TokenGrant {
  key: KeyRecord;
  clientId: string;
  scopes: Scope[];
  /** ISO 8601 UTC. */
  expiresAt: string;
}

export class FoncierOAuthProvider implements OAuthServerProvider {
  constructor(
    private readonly ctx: AppContext,
    readonly site: OAuthSite,
  ) {}

  private now(): string {
    return this.ctx.clock.now().toISOString();
  }

  private later(seconds: number): string {
    return new Date(this.ctx.clock.now().getTime() + seconds * 1000).toISOString();
  }

  get clientsStore(): OAuthRegisteredClientsStore {
    const oauth = this.ctx.state.oauth;
    const now = () => this.now();
    return {
      async getClient(clientId: string) {
        const row = await oauth.getClient(clientId);
        return row && (JSON.parse(row.metadata) as OAuthClientInformationFull);
      },
      async registerClient(client: Omit<OAuthClientInformationFull, 'client_id' | 'client_id_issued_at'>) {
        const full = client as OAuthClientInformationFull;
        if (!full.client_id) throw new InvalidClientMetadataError('no client_id was issued');
        if (!full.redirect_uris.length) throw new InvalidClientMetadataError('redirect_uris must name at least one URI');
        for (const uri of full.redirect_uris) {
          const issue = redirectUriIssue(uri);
          if (issue) throw new InvalidClientMetadataError(`invalid redirect_uris: ${issue}`);
        }
        const unknown = (full.scope ?? '').split(' ').filter((sc) => sc && !isScope(sc));
        if (unknown.length) throw new InvalidClientMetadataError(`unknown scope ${unknown.join(', ')} (scopes: ${SCOPE_NAMES.join(', ')})`);
        await oauth.registerClient({ client_id: full.client_id, metadata: JSON.stringify(full), created_at: now() });
        return full;
      },
    };
  }

  /** The checks shared by the authorize page and its decision: the resource is this server's /mcp, the scopes known. */
  checkRequest(resource: URL | string | undefined, scope: string | string[] | undefined): Scope[] {
    if (resource !== undefined && String(resource).replace(/\/$/, '') !== this.site.resource) {
      throw new InvalidTargetError(`this server issues tokens for ${this.site.resource} only`);
    }
    return parseScopes(scope);
  }

  /** The authorize page: the SDK has checked the client, the redirect URI and the PKCE challenge's presence. */
  async authorize(client: OAuthClientInformationFull, params: AuthorizationParams, res: Response): Promise<void> {
    const scopes = this.checkRequest(params.resource, params.scopes);
    if (!/^[A-Za-z0-9_-]{43,128}$/.test(params.codeChallenge)) throw new InvalidRequestError('code_challenge must be a base64url S256 challenge (43 characters)');
    renderAuthorizePage(res, { client, redirectUri: params.redirectUri, codeChallenge: params.codeChallenge, state: params.state, scopes, resource: this.site.resource });
  }

  private prunedOn = '';

  /** Stores the key holder's consent and a new code; returns the code (shown to the client once, by the redirect). */
  async approve(key: KeyRecord, client: OAuthClientInformationFull, p: { redirectUri: string; codeChallenge: string; scopes: Scope[] }): Promise<string> {
    const code = newSecret(CODE_PREFIX);
    const row: Omit<OAuthCodeRow, 'used_at'> = {
      code_hash: hashKey(code),
      family: crypto.randomUUID(),
      key_id: key.id,
      client_id: client.client_id,
      redirect_uri: p.redirectUri,
      code_challenge: p.codeChallenge,
      scopes: p.scopes.join(' '),
      resource: this.site.resource,
      expires_at: this.later(CODE_SECONDS),
    };
    await this.ctx.state.oauth.approve(row, this.now());
    // Expired codes and tokens are of no use: deleted at the first approval of each day (per process).
    const day = this.now().slice(0, 10);
    if (day !== this.prunedOn) {
      this.prunedOn = day;
      await this.ctx.state.oauth.prune(this.now());
    }
    return code;
  }

  async challengeForAuthorizationCode(client: OAuthClientInformationFull, authorizationCode: string): Promise<string> {
    const code = await this.ctx.state.oauth.findCode(hashKey(authorizationCode));
    if (!code || code.client_id !== client.client_id) throw new InvalidGrantError('unknown authorization code');
    return code.code_challenge;
  }

  private async activeKey(keyId: string): Promise<KeyRecord> {
    const key = await this.ctx.state.keys.findById(keyId);
    if (!key?.isActive) throw new InvalidGrantError('the API key this authorization acts for has been revoked');
    return key;
  }

  /** A new access and refresh token of a family, as stored and as answered. */
  private tokens(family: string, keyId: string, clientId: string, scopes: string): { rows: NewOAuthToken[]; answer: OAuthTokens } {
    const access = newSecret(ACCESS_TOKEN_PREFIX);
    const refresh = newSecret(REFRESH_TOKEN_PREFIX);
    const base = { family, key_id: keyId, client_id: clientId, scopes, resource: this.site.resource, created_at: this.now() };
    return {
      rows: [
        { ...base, token_hash: hashKey(access), kind: 'access', expires_at: this.later(ACCESS_TOKEN_SECONDS) },
        { ...base, token_hash: hashKey(refresh), kind: 'refresh', expires_at: this.later(REFRESH_TOKEN_SECONDS) },
      ],
      answer: { access_token: access, token_type: 'Bearer', expires_in: ACCESS_TOKEN_SECONDS, refresh_token: refresh, scope: scopes },
    };
  }

  async exchangeAuthorizationCode(client: OAuthClientInformationFull, authorizationCode: string, _verifier?: string, redirectUri?: string, resource?: URL): Promise<OAuthTokens> {
    const used = await this.ctx.state.oauth.useCode(hashKey(authorizationCode), this.now());
    if (!used || used.code.client_id !== client.client_id) throw new InvalidGrantError('unknown authorization code');
    if (used.reused) throw new InvalidGrantError('this authorization code was already used: the tokens issued from it are revoked');
    const { code } = used;
    if (code.expires_at <= this.now()) throw new InvalidGrantError('this authorization code has expired');
    if (redirectUri !== undefined && redirectUri !== code.redirect_uri) throw new InvalidGrantError('redirect_uri differs from the authorization request’s');
    if (resource !== undefined && resource.href.replace(/\/$/, '') !== code.resource) throw new InvalidTargetError(`this code is for ${code.resource}`);
    await this.activeKey(code.key_id);
    const t = this.tokens(code.family, code.key_id, client.client_id, code.scopes);
    if (!(await this.ctx.state.oauth.issue(t.rows))) throw new InvalidGrantError('the key holder revoked this authorization');
    return t.answer;
  }

  async exchangeRefreshToken(client: OAuthClientInformationFull, refreshToken: string, scopes?: string[], resource?: URL): Promise<OAuthTokens> {
    this.checkRequest(resource, undefined);
    const hash = hashKey(refreshToken);
    const old = await this.ctx.state.oauth.findToken(hash);
    if (!old || old.kind !== 'refresh' || old.client_id !== client.client_id) throw new InvalidGrantError('unknown refresh token');
    // A narrower set may be asked for (RFC 6749 §6), never a wider one.
    const granted = old.scopes.split(' ');
    const asked = scopes?.length ? parseScopes(scopes) : granted;
    if (asked.some((s) => !granted.includes(s))) throw new InvalidScopeError(`this refresh token carries the scopes ${old.scopes} only`);
    await this.activeKey(old.key_id);
    const t = this.tokens(old.family, old.key_id, client.client_id, asked.join(' '));
    const r = await this.ctx.state.oauth.rotate(hash, client.client_id, this.now(), t.rows);
    if (!r) throw new InvalidGrantError('this refresh token has expired or its authorization was revoked');
    if (r.reused) throw new InvalidGrantError('this refresh token was already used: every token of its authorization is revoked');
    return t.answer;
  }

  /** The access token's grant, or InvalidTokenError: unknown, expired, for another resource, or its key revoked. */
  async grantOf(token: string): Promise<TokenGrant> {
    const row = await this.ctx.state.oauth.findToken(hashKey(token));
    if (!row || row.kind !== 'access') throw new InvalidTokenError('unknown or revoked access token');
    if (row.expires_at <= this.now()) throw new InvalidTokenError('the access token has expired');
    if (row.resource !== this.site.resource) throw new InvalidTokenError(`the access token was issued for ${row.resource}, not ${this.site.resource}`);
    const key = await this.ctx.state.keys.findById(row.key_id);
    if (!key?.isActive) throw new InvalidTokenError('the API key this token acts for has been revoked');
    return { key, clientId: row.client_id, scopes: row.scopes.split(' ').filter(isScope), expiresAt: row.expires_at };
  }

  async verifyAccessToken(token: string): Promise<AuthInfo> {
    const g = await this.grantOf(token);
    return { token, clientId: g.clientId, scopes: g.scopes, expiresAt: Math.floor(Date.parse(g.expiresAt) / 1000), resource: new URL(this.site.resource), extra: { keyId: g.key.id } };
  }

  async revokeToken(client: OAuthClientInformationFull, request: OAuthTokenRevocationRequest): Promise<void> {
    // RFC 7009: an unknown token, or another client's, is not an error.
    await this.ctx.state.oauth.revokeToken(hashKey(request.token), client.client_id);
  }
}
