// Remote MCP with OAuth 2.1, end to end against the real server: the SDK's own client and its OAuth support, knowing
// only the URL …/mcp, discovers the authorization server from the 401, registers, is sent to the authorize page (driven
// here by HTTP as its script would: the browser test drives the page itself), exchanges the code, lists and calls tools
// charged to the key, refreshes; then every refusal, by plain HTTP requests as a client (or an attacker) would send them.
import crypto from 'node:crypto';
import http from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createApp, ENDPOINTS } from '../../../api/app';
import { DOCS_CSP } from '../../../api/docs-page';
import { hashKey } from '../../../api/store';
import { balanceOf, startTestApi, type TestApi } from '../../helpers/api';
import { sqliteState } from '../../helpers/state';
import { until } from '../../helpers/replicas';
import { MemoryOAuthClient, TEST_REDIRECT as REDIRECT } from '../../helpers/mcp-oauth';

const MARKET = { code_postal: '33230', type_local: 'Maison', date_debut: '2021-01-01', date_fin: '2021-12-31' };

let api: TestApi;
beforeAll(async () => {
  // The SDK client reads the system clock: the server's starts at the same instant.
  api = await startTestApi({ now: new Date().toISOString() });
});
afterAll(() => api?.close());

/** The authorize page's hidden fields, as its script sends them. */
function formFields(html: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="(\w+)" value="([^"]*)">/g)) out[m[1]] = m[2].replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  return out;
}

async function decide(fields: Record<string, string>, extra: Record<string, unknown>): Promise<{ status: number; body: any }> {
  const res = await fetch(`${api.url}/oauth/decision`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...fields, ...extra }) });
  return { status: res.status, body: await res.json() };
}

/** Opens the authorize page at `url` and approves with `key`; returns the redirect's parameters. */
async function approveAt(url: URL | string, key: string, portfolio = false): Promise<URLSearchParams> {
  const page = await fetch(url);
  expect(page.status).toBe(200);
  const d = await decide(formFields(await page.text()), { api_key: key, approve: true, portfolio });
  expect(d.status).toBe(200);
  return new URL(d.body.redirect_to).searchParams;
}

const pkce = () => {
  const verifier = crypto.randomBytes(32).toString('base64url');
  return { verifier, challenge: crypto.createHash('sha256').update(verifier).digest('base64url') };
};

async function register(metadata: Record<string, unknown> = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(`${api.url}/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'Raw client', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', ...metadata }),
  });
  return { status: res.status, body: await res.json() };
}

function authorizeUrl(clientId: string, challenge: string, over: Record<string, string> = {}): string {
  const q = new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, code_challenge: challenge, code_challenge_method: 'S256', state: 's', scope: 'read', resource: `${api.url}/mcp`, ...over });
  return `${api.url}/authorize?${q}`;
}

async function token(form: Record<string, string>): Promise<{ status: number; body: any }> {
  const res = await fetch(`${api.url}/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form) });
  return { status: res.status, body: await res.json() };
}

/**
 * One raw client registered for the whole file (the SDK limits registrations to 20 an hour per address), as a
 * platform registers once for all its users.
 */
let shared: Promise<string> | undefined;
const sharedClient = () => (shared ??= register().then((r) => r.body.client_id as string));

/** A code of the shared client approved by `key`, and its verifier. */
async function codeFor(key: string, scope = 'read'): Promise<{ clientId: string; code: string; verifier: string }> {
  const clientId = await sharedClient();
  const p = pkce();
  const params = await approveAt(authorizeUrl(clientId, p.challenge, { scope }), key, scope.includes('portfolio'));
  return { clientId, code: params.get('code')!, verifier: p.verifier };
}

const exchange = (c: { clientId: string; code: string; verifier: string }, over: Record<string, string> = {}) =>
  token({ grant_type: 'authorization_code', client_id: c.clientId, code: c.code, code_verifier: c.verifier, redirect_uri: REDIRECT, resource: `${api.url}/mcp`, ...over });

/** A raw MCP request with a bearer token. */
async function mcp(accessToken: string, message: Record<string, unknown>, url = api.url): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, ...message }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
}
const listTools = { method: 'tools/list', params: {} };

const PORTFOLIO_TOOLS = ENDPOINTS.filter((e) => e.tag === 'Portfolio' || e.tag === 'Alerts').length;

describe('an MCP client that knows only …/mcp', () => {
  it('discovers, registers, is approved on the page, calls tools charged to the key, refreshes', async () => {
    const key = api.key({ balance: 100 });
    // The unauthenticated request: the API's error body, and where to find the authorization server.
    const bare = await fetch(`${api.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
    expect(bare.status).toBe(401);
    expect(((await bare.json()) as any).error.code).toBe('missing_bearer_token');
    const metadataUrl = `${api.url}/.well-known/oauth-protected-resource/mcp`;
    expect(bare.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${metadataUrl}"`);
    const prm = (await (await fetch(metadataUrl)).json()) as any;
    expect(prm).toMatchObject({ resource: `${api.url}/mcp`, authorization_servers: [`${api.url}/`], scopes_supported: ['read', 'portfolio'] });
    const asMeta = (await (await fetch(`${api.url}/.well-known/oauth-authorization-server`)).json()) as any;
    expect(asMeta).toMatchObject({ issuer: `${api.url}/`, code_challenge_methods_supported: ['S256'], grant_types_supported: ['authorization_code', 'refresh_token'], registration_endpoint: `${api.url}/register` });

    const provider = new MemoryOAuthClient('Test agent', 'state-123');
    const first = new Client({ name: 'oauth-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), { authProvider: provider });
    await expect(first.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
    // Registered dynamically, and sent to this server's authorize page with PKCE S256 and the resource.
    expect(provider.info?.client_id).toBeTruthy();
    const url = provider.authorizationUrl!;
    expect(url.origin + url.pathname).toBe(`${api.url}/authorize`);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('resource')).toBe(`${api.url}/mcp`);
    const page = await fetch(url);
    expect(page.headers.get('content-security-policy')).toBe(DOCS_CSP);
    const html = await page.text();
    expect(html).toContain('Test agent');
    // The key holder approves the read scope (the portfolio box left unticked).
    const d = await decide(formFields(html), { api_key: key, approve: true, portfolio: false });
    expect(d.status).toBe(200);
    const back = new URL(d.body.redirect_to);
    expect(back.origin + back.pathname).toBe(REDIRECT);
    expect(back.searchParams.get('state')).toBe('state-123');
    expect(back.searchParams.get('iss')).toBe(`${api.url}/`);
    await transport.finishAuth(back.searchParams.get('code')!);
    const tokens = provider.saved!;
    expect(tokens.access_token).toMatch(/^fk_at_/);
    expect(tokens.refresh_token).toMatch(/^fk_rt_/);
    expect(tokens.scope).toBe('read');
    // For /mcp only: REST takes API keys.
    expect((await api.get('/v1/account', undefined, { authorization: `Bearer ${tokens.access_token}` })).body.error.code).toBe('unknown_key');
    // Stored as hashes only: neither the tokens nor the code are anywhere in the state in clear.
    const db = sqliteState(api.ctx).db;
    const everything = JSON.stringify(['oauth_tokens', 'oauth_codes', 'oauth_grants', 'oauth_clients'].map((t) => db.prepare(`select * from ${t}`).all()));
    for (const secret of [tokens.access_token, tokens.refresh_token!, back.searchParams.get('code')!]) expect(everything).not.toContain(secret);
    expect(everything).toContain(hashKey(tokens.access_token));

    const client = new Client({ name: 'oauth-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), { authProvider: provider }));
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(ENDPOINTS.length - PORTFOLIO_TOOLS);
    expect(tools.some((t) => t.name === 'getPortfolio')).toBe(false);
    const r = (await client.callTool({ name: 'getStatsMarket', arguments: MARKET })) as CallToolResult;
    expect(r.isError).toBeFalsy();
    expect((r.structuredContent as any)._credits).toEqual({ used: 5, remaining: 95 });
    expect(balanceOf(api, key)).toBe(95);
    const keyId = (await api.ctx.state.keys.findByKey(key))!.id;
    await until(async () => (await api.ctx.state.requestLog.recent(keyId, 5)).some((l) => l.transport === 'mcp'), 5000, 'the tool call in the request log');
    const logged = await api.ctx.state.requestLog.recent(keyId, 5);
    expect(logged.filter((l) => l.transport === 'mcp')).toEqual([expect.objectContaining({ endpoint: 'GET /v1/stats/market', status: 200, credits: 5 })]);
    // The approval itself is in the key's log too.
    expect(logged.map((l) => l.endpoint)).toContain('POST /oauth/decision');

    // A portfolio tool needs the scope this token lacks: 403 with the scope challenge.
    const denied = await mcp(tokens.access_token, { method: 'tools/call', params: { name: 'getPortfolio', arguments: {} } });
    expect(denied.status).toBe(403);
    expect(denied.body.error).toBe('insufficient_scope');
    expect(denied.headers.get('www-authenticate')).toContain('error="insufficient_scope"');
    expect(denied.headers.get('www-authenticate')).toContain('scope="read portfolio"');

    // An hour later the access token has expired: the SDK refreshes (rotation) and the call goes through.
    api.clock.advance(3601_000);
    expect((await mcp(tokens.access_token, listTools)).status).toBe(401);
    const r2 = (await client.callTool({ name: 'getStatsMarket', arguments: MARKET })) as CallToolResult;
    expect(r2.isError).toBeFalsy();
    expect(balanceOf(api, key)).toBe(95 - (r2.structuredContent as any)._credits.used);
    expect(provider.saved!.access_token).not.toBe(tokens.access_token);
    expect(provider.saved!.refresh_token).not.toBe(tokens.refresh_token);
    await client.close();

    // The dashboard lists the client; revoking it there ends its tokens.
    const list = await api.get('/oauth/authorizations', key);
    expect(list.body.authorizations).toEqual([expect.objectContaining({ client_id: provider.info!.client_id, client_name: 'Test agent', scopes: ['read'] })]);
    expect((await mcp(provider.saved!.access_token, listTools)).status).toBe(200);
    const del = await fetch(`${api.url}/oauth/authorizations/${provider.info!.client_id}`, { method: 'DELETE', headers: { 'X-API-Key': key } });
    expect(del.status).toBe(204);
    expect((await mcp(provider.saved!.access_token, listTools)).status).toBe(401);
    expect((await token({ grant_type: 'refresh_token', client_id: provider.info!.client_id, refresh_token: provider.saved!.refresh_token! })).body.error).toBe('invalid_grant');
    expect((await api.get('/oauth/authorizations', key)).body.authorizations).toEqual([]);
  });

  it('with the portfolio scope ticked, the portfolio tools are listed and callable', async () => {
    const key = api.key();
    const c = await codeFor(key, 'read portfolio');
    const t = await exchange(c);
    expect(t.body.scope).toBe('read portfolio');
    const listed = await mcp(t.body.access_token, listTools);
    expect(listed.body.result.tools).toHaveLength(ENDPOINTS.length);
    const called = await mcp(t.body.access_token, { method: 'tools/call', params: { name: 'getPortfolio', arguments: {} } });
    expect(called.status).toBe(200);
    expect(called.body.result.isError).toBeFalsy();
    // A refresh may narrow the scopes, never widen them again.
    const narrow = await token({ grant_type: 'refresh_token', client_id: c.clientId, refresh_token: t.body.refresh_token, scope: 'read' });
    expect(narrow.body.scope).toBe('read');
    expect((await mcp(narrow.body.access_token, listTools)).body.result.tools).toHaveLength(ENDPOINTS.length - PORTFOLIO_TOOLS);
    const wide = await token({ grant_type: 'refresh_token', client_id: c.clientId, refresh_token: narrow.body.refresh_token, scope: 'read portfolio' });
    expect(wide).toMatchObject({ status: 400, body: { error: 'invalid_scope' } });
  });

  it('the API key keeps working on /mcp beside tokens, in X-API-Key and in Authorization: Bearer', async () => {
    const key = api.key();
    for (const headers of [{ 'X-API-Key': key }, { authorization: `Bearer ${key}` }] as Record<string, string>[]) {
      const res = await fetch(`${api.url}/mcp`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, ...listTools }) });
      expect(res.status).toBe(200);
      expect(((await res.json()) as any).result.tools).toHaveLength(ENDPOINTS.length);
    }
  });
});

describe('refusals', () => {
  it('a wrong PKCE verifier', async () => {
    const c = await codeFor(api.key());
    const r = await exchange(c, { code_verifier: pkce().verifier });
    expect(r).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    // The right verifier still redeems the code (a wrong guess does not burn it for its owner).
    expect((await exchange(c)).status).toBe(200);
  });

  it('a redirect URI not registered exactly: refused at /authorize without redirect, and at /token', async () => {
    const body = { client_id: await sharedClient() };
    const p = pkce();
    for (const other of ['http://localhost:8977/callback', 'https://evil.example/callback', `${REDIRECT}/x`]) {
      const res = await fetch(authorizeUrl(body.client_id, p.challenge, { redirect_uri: other }), { redirect: 'manual' });
      expect(res.status).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      expect(((await res.json()) as any).error).toBe('invalid_request');
    }
    // The same by a form post.
    const posted = await fetch(`${api.url}/authorize`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URL(authorizeUrl(body.client_id, p.challenge, { redirect_uri: 'http://localhost:8977/callback' })).searchParams,
      redirect: 'manual',
    });
    expect(posted.status).toBe(400);
    expect(posted.headers.get('location')).toBeNull();
    // The page's decision checks it again (a tampered form).
    const page = await fetch(authorizeUrl(body.client_id, p.challenge));
    const d = await decide({ ...formFields(await page.text()), redirect_uri: 'https://evil.example/callback' }, { api_key: api.key(), approve: true });
    expect(d).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
    const c = await codeFor(api.key());
    expect((await exchange(c, { redirect_uri: 'http://localhost:8976/other' })).body.error).toBe('invalid_grant');
  });

  it('registration: an http redirect URI outside loopback, or a fragment', async () => {
    for (const uri of ['http://agent.example/callback', 'https://agent.example/cb#x', 'javascript:alert(1)']) {
      const r = await register({ redirect_uris: [uri] });
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('invalid_client_metadata');
    }
    expect(await register({ scope: 'read admin' })).toMatchObject({ status: 400, body: { error: 'invalid_client_metadata' } });
    expect((await register({ redirect_uris: ['https://agent.example/callback'], scope: 'read portfolio' })).status).toBe(201);
  });

  it('an expired code', async () => {
    const c = await codeFor(api.key());
    api.clock.advance(301_000);
    const r = await exchange(c);
    expect(r).toMatchObject({ status: 400, body: { error: 'invalid_grant', error_description: 'this authorization code has expired' } });
  });

  it('a reused code, which also revokes the tokens issued from it', async () => {
    const c = await codeFor(api.key());
    const first = await exchange(c);
    expect(first.status).toBe(200);
    expect((await mcp(first.body.access_token, listTools)).status).toBe(200);
    const again = await exchange(c);
    expect(again).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect((await mcp(first.body.access_token, listTools)).status).toBe(401);
    expect((await token({ grant_type: 'refresh_token', client_id: c.clientId, refresh_token: first.body.refresh_token })).body.error).toBe('invalid_grant');
  });

  it('a reused refresh token revokes every token of its authorization', async () => {
    const c = await codeFor(api.key());
    const t = (await exchange(c)).body;
    const rotated = await token({ grant_type: 'refresh_token', client_id: c.clientId, refresh_token: t.refresh_token });
    expect(rotated.status).toBe(200);
    expect((await mcp(rotated.body.access_token, listTools)).status).toBe(200);
    const replay = await token({ grant_type: 'refresh_token', client_id: c.clientId, refresh_token: t.refresh_token });
    expect(replay.body.error).toBe('invalid_grant');
    expect((await mcp(rotated.body.access_token, listTools)).status).toBe(401);
  });

  it('a token for another resource: refused at /authorize and /token, and a token of another origin refused by /mcp', async () => {
    const body = { client_id: await sharedClient() };
    const p = pkce();
    const res = await fetch(authorizeUrl(body.client_id, p.challenge, { resource: 'https://elsewhere.example/mcp' }), { redirect: 'manual' });
    expect(res.status).toBe(302);
    const to = new URL(res.headers.get('location')!);
    expect(to.origin + to.pathname).toBe(REDIRECT);
    expect(to.searchParams.get('error')).toBe('invalid_target');
    const c = await codeFor(api.key());
    expect((await exchange(c, { resource: 'https://elsewhere.example/mcp' })).body.error).toBe('invalid_target');
    // The same state served at another origin is another resource: this server's tokens are not for it.
    const t = (await exchange((await codeFor(api.key())))).body;
    const other: Server = await new Promise((resolve) => {
      const s = createApp(api.ctx).listen(0, '127.0.0.1', () => resolve(s));
    });
    try {
      const otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
      const r = await mcp(t.access_token, listTools, otherUrl);
      expect(r.status).toBe(401);
      expect(r.body.error).toBe('invalid_token');
      expect(r.headers.get('www-authenticate')).toContain(`resource_metadata="${otherUrl}/.well-known/oauth-protected-resource/mcp"`);
      expect((await mcp(t.access_token, listTools)).status).toBe(200);
    } finally {
      await new Promise((r) => other.close(r));
    }
  });

  it('a revoked key: its tokens stop at once, its refresh token too, and it cannot approve', async () => {
    const key = api.key();
    const c = await codeFor(key);
    const t = (await exchange(c)).body;
    await api.ctx.state.keys.revoke(key);
    const r = await mcp(t.access_token, listTools);
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ error: 'invalid_token', error_description: 'the API key this token acts for has been revoked' });
    expect(r.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token", error_description="[^"]+", resource_metadata="/);
    expect((await token({ grant_type: 'refresh_token', client_id: c.clientId, refresh_token: t.refresh_token })).body.error).toBe('invalid_grant');
    const body = { client_id: await sharedClient() };
    const page = await fetch(authorizeUrl(body.client_id, pkce().challenge));
    expect(await decide(formFields(await page.text()), { api_key: key, approve: true })).toMatchObject({ status: 401, body: { error: 'access_denied' } });
  });

  it('a denial, an unknown key, revocation at /revoke, an unknown token, malformed requests: OAuth error bodies', async () => {
    const body = { client_id: await sharedClient() };
    const page = await fetch(authorizeUrl(body.client_id, pkce().challenge));
    const fields = formFields(await page.text());
    const denied = await decide(fields, { approve: false });
    expect(new URL(denied.body.redirect_to).searchParams.get('error')).toBe('access_denied');
    expect(await decide(fields, { approve: true, api_key: 'fk_live_nothing' })).toMatchObject({ status: 401, body: { error: 'access_denied' } });
    const c = await codeFor(api.key());
    const t = (await exchange(c)).body;
    const rev = await fetch(`${api.url}/revoke`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ client_id: c.clientId, token: t.access_token }) });
    expect(rev.status).toBe(200);
    expect((await mcp(t.access_token, listTools)).status).toBe(401);
    expect((await mcp('fk_at_unknown', listTools)).body).toEqual({ error: 'invalid_token', error_description: 'unknown or revoked access token' });
    expect((await token({ grant_type: 'password', client_id: c.clientId })).body.error).toBe('unsupported_grant_type');
    expect((await token({ grant_type: 'authorization_code', client_id: 'nobody', code: 'x', code_verifier: 'y' })).body.error).toBe('invalid_client');
    const bad = await fetch(`${api.url}/oauth/decision`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"oops' });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: 'invalid_request' });
    const reg = await fetch(`${api.url}/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"oops' });
    expect(await reg.json()).toMatchObject({ error: 'invalid_request' });
  });
});

describe('the origin OAuth is served for', () => {
  /** A request with a Host header of our choosing (fetch would send the URL's). */
  function withHost(host: string, method: string, path: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: any }> {
    const u = new URL(api.url);
    return new Promise((resolve, reject) => {
      const req = http.request({ host: u.hostname, port: u.port, method, path, headers: { host, 'content-type': 'application/json', accept: 'application/json, text/event-stream' } }, (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text ? JSON.parse(text) : undefined }));
      });
      req.on('error', reject);
      req.end(method === 'POST' ? '{}' : undefined);
    });
  }

  it('without PUBLIC_URL, a request to another host gets no OAuth: no metadata, no challenge; the key still works', async () => {
    const meta = await withHost('api.example.com', 'GET', '/.well-known/oauth-protected-resource/mcp');
    expect(meta.status).toBe(404);
    const bare = await withHost('api.example.com', 'POST', '/mcp');
    expect(bare.status).toBe(401);
    expect(bare.body.error.code).toBe('missing_bearer_token');
    expect(bare.headers['www-authenticate']).toBeUndefined();
  });

  it('with PUBLIC_URL, the issuer and the resource are its, whatever the Host header', async () => {
    // A token of the loopback origin, issued before.
    const loopbackToken = (await exchange(await codeFor(api.key()))).body.access_token;
    expect((await mcp(loopbackToken, listTools)).status).toBe(200);
    process.env.PUBLIC_URL = 'https://foncier.example';
    try {
      const prm = await withHost('127.0.0.1', 'GET', '/.well-known/oauth-protected-resource/mcp');
      expect(prm.body).toMatchObject({ resource: 'https://foncier.example/mcp', authorization_servers: ['https://foncier.example/'] });
      const as = await withHost('evil.example', 'GET', '/.well-known/oauth-authorization-server');
      expect(as.body).toMatchObject({ issuer: 'https://foncier.example/', authorization_endpoint: 'https://foncier.example/authorize', token_endpoint: 'https://foncier.example/token' });
      const bare = await withHost('evil.example', 'POST', '/mcp');
      expect(bare.headers['www-authenticate']).toBe('Bearer resource_metadata="https://foncier.example/.well-known/oauth-protected-resource/mcp"');
      // The loopback origin is another resource now: its token is refused, and so is an authorization for it.
      const r = await mcp(loopbackToken, listTools);
      expect(r.status).toBe(401);
      expect(r.body.error_description).toBe(`the access token was issued for ${api.url}/mcp, not https://foncier.example/mcp`);
      const body = { client_id: await sharedClient() };
      const res = await fetch(authorizeUrl(body.client_id, pkce().challenge), { redirect: 'manual' });
      expect(res.status).toBe(302);
      expect(new URL(res.headers.get('location')!).searchParams.get('error')).toBe('invalid_target');
    } finally {
      delete process.env.PUBLIC_URL;
    }
  });
});
