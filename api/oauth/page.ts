// The authorize page of remote MCP: where a key holder enters their API key and approves (or denies) a client. Built on
// the server from escaped values (no inline script: the page's behaviour is ./page/authorize.js), served under the
// /docs and /dashboard CSP and styled by the dashboard's stylesheet. Its script posts the decision to /oauth/decision
// and follows the redirect that answer names (a CSP form-action would forbid a form's redirect to the client).
import fs from 'node:fs';
import type { Express, Request, Response } from 'express';
import type { OAuthClientInformationFull } from '@modelcontextprotocol/sdk/shared/auth.js';
import { DOCS_CSP } from '../docs-page';
import { SCOPES, type Scope } from './provider';

const read = (name: string) => fs.readFileSync(new URL(`./page/${name}`, import.meta.url), 'utf8');
const ASSETS: Record<string, { type: string; body: string }> = {
  '/oauth/authorize.js': { type: 'text/javascript; charset=utf-8', body: read('authorize.js') },
  '/oauth/authorize.css': { type: 'text/css; charset=utf-8', body: read('authorize.css') },
};

const HEADERS = { 'Content-Security-Policy': DOCS_CSP, 'X-Content-Type-Options': 'nosniff', 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' };

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ESCAPES[c]);

export interface AuthorizeRequest {
  client: OAuthClientInformationFull;
  redirectUri: string;
  codeChallenge: string;
  state?: string;
  scopes: Scope[];
  resource: string;
}

export function renderAuthorizePage(res: Response, r: AuthorizeRequest): void {
  const name = r.client.client_name?.trim() || 'An unnamed client';
  const hidden = {
    client_id: r.client.client_id,
    redirect_uri: r.redirectUri,
    code_challenge: r.codeChallenge,
    state: r.state ?? '',
    resource: r.resource,
    scope: r.scopes.join(' '),
  };
  const scopeItems = [
    r.scopes.includes('read') ? `<li><label><input type="checkbox" checked disabled> <span><strong>read</strong>: ${esc(SCOPES.read)}</span></label></li>` : '',
    r.scopes.includes('portfolio')
      ? `<li><label><input id="portfolio" type="checkbox"> <span><strong>portfolio</strong>: ${esc(SCOPES.portfolio)} (only if you tick it)</span></label></li>`
      : '',
  ].join('\n');
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Authorize ${esc(name)}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/dashboard/dashboard.css">
<link rel="stylesheet" href="/oauth/authorize.css">
</head>
<body>
<header>
<h1>Authorize an MCP client</h1>
<p><strong id="client-name">${esc(name)}</strong> asks to call this API’s tools on behalf of your API key. If you approve, it is sent back to <code id="redirect-host">${esc(new URL(r.redirectUri).origin)}</code>.</p>
</header>
<main>
<form id="authorize-form" autocomplete="off">
${Object.entries(hidden)
  .map(([k, v]) => `<input type="hidden" name="${k}" value="${esc(v)}">`)
  .join('\n')}
<label for="key">API key</label>
<input id="key" name="api_key" type="password" placeholder="fk_live_…" spellcheck="false" required>
<ul id="scopes">
${scopeItems}
</ul>
<button id="approve" type="submit">Approve</button>
<button id="deny" type="button">Deny</button>
</form>
<p id="status" class="muted" role="status" aria-live="polite"></p>
<p class="muted">This server checks your key and never gives it to the client: the client gets tokens that act for the key (its credits, rate limit and plan) for as long as you do not revoke them (in the dashboard) or the key.</p>
</main>
<script src="/oauth/authorize.js"></script>
</body>
</html>
`;
  res.status(200).set({ ...HEADERS, 'Content-Type': 'text/html; charset=utf-8' }).send(html);
}

/** The page's script and stylesheet, under the same headers. */
export function mountAuthorizeAssets(app: Express): void {
  for (const [urlPath, asset] of Object.entries(ASSETS)) {
    app.get(urlPath, (_req: Request, res: Response) => {
      res.set({ ...HEADERS, 'Cache-Control': 'no-cache', 'Content-Type': asset.type }).send(asset.body);
    });
  }
}
