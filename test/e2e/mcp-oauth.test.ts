// End to end in headless Chromium: the authorize page of remote MCP. The SDK's MCP client, knowing only …/mcp, is sent
// to the page; the key holder (the browser) enters a wrong key (refused on the page), then theirs, ticks the portfolio
// scope and approves; the browser lands on the client's redirect URI with the code, which the client exchanges, then
// lists every tool and calls a paid one charged to the key. A second request is denied. Then the dashboard lists the
// client and revokes it, and its token stops working. No console error but the refused key's 401, no request leaving
// the machine; screenshots in test-results/.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENDPOINTS } from '../../api/app';
import { DOCS_CSP } from '../../api/docs-page';
import { balanceOf, startTestApi, type TestApi } from '../helpers/api';
import { MemoryOAuthClient, TEST_REDIRECT as REDIRECT } from '../helpers/mcp-oauth';

const repoRoot = path.resolve(fileURLToPath(new URL('../..', import.meta.url)));
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SCREENSHOTS = path.join(repoRoot, 'test-results');

let api: TestApi;
let browser: Browser;
beforeAll(async () => {
  api = await startTestApi({ now: new Date().toISOString() });
  browser = await chromium.launch({ executablePath: CHROMIUM });
});
afterAll(async () => {
  await browser?.close();
  await api?.close();
});

/** A browser context that answers the client's redirect URI itself (the agent's callback) and lets nothing else out. */
async function openContext(): Promise<{ context: BrowserContext; problems: string[]; outside: string[]; callbacks: URL[] }> {
  const context = await browser.newContext({ viewport: { width: 1000, height: 800 } });
  const problems: string[] = [];
  const outside: string[] = [];
  const callbacks: URL[] = [];
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if (url.origin + url.pathname === REDIRECT) {
      callbacks.push(url);
      return route.fulfill({ status: 200, contentType: 'text/plain', body: 'back at the agent' });
    }
    if (url.protocol === 'data:' || url.hostname === '127.0.0.1') return route.continue();
    outside.push(url.href);
    return route.abort();
  });
  return { context, problems, outside, callbacks };
}

async function mcpStatus(token: string): Promise<number> {
  const res = await fetch(`${api.url}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });
  await res.body?.cancel();
  return res.status;
}

describe('the authorize page of remote MCP', () => {
  it('a key holder approves an agent with their key, denies another, and revokes the first in the dashboard', async () => {
    const key = api.key({ plan: 'Agent', balance: 500 });
    const agent = new MemoryOAuthClient('Browser-test agent', 'e2e-state');
    const transport = new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), { authProvider: agent });
    await expect(new Client({ name: 'e2e', version: '1' }).connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);

    const { context, problems, outside, callbacks } = await openContext();
    const page = await context.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    const res = await page.goto(agent.authorizationUrl!.href);
    expect(res?.status()).toBe(200);
    expect(res?.headers()['content-security-policy']).toBe(DOCS_CSP);
    await expect(page.locator('#client-name').textContent()).resolves.toBe('Browser-test agent');
    await expect(page.locator('#redirect-host').textContent()).resolves.toBe('http://localhost:8976');
    // The portfolio scope is asked for explicitly: unticked until the key holder ticks it.
    await expect(page.locator('#portfolio').isChecked()).resolves.toBe(false);

    // A wrong key: refused on the page, nothing sent to the agent.
    await page.fill('#key', 'fk_live_doesNotExist');
    await page.click('#approve');
    await page.waitForSelector('#status.error');
    await expect(page.locator('#status').textContent()).resolves.toContain('access_denied');
    expect(callbacks).toEqual([]);
    expect(problems).toEqual(['console: Failed to load resource: the server responded with a status of 401 (Unauthorized)']);
    problems.length = 0;

    await page.fill('#key', key);
    await page.check('#portfolio');
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SCREENSHOTS, 'mcp-authorize.png'), fullPage: true });
    await Promise.all([page.waitForURL((u) => u.href.startsWith(REDIRECT)), page.click('#approve')]);
    expect(callbacks).toHaveLength(1);
    const back = callbacks[0];
    expect(back.searchParams.get('state')).toBe('e2e-state');
    await transport.finishAuth(back.searchParams.get('code')!);
    expect(agent.saved?.scope).toBe('read portfolio');

    const client = new Client({ name: 'e2e', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), { authProvider: agent }));
    expect((await client.listTools()).tools).toHaveLength(ENDPOINTS.length);
    const r = (await client.callTool({ name: 'getStatsMarket', arguments: { code_postal: '33230', date_debut: '2021-01-01', date_fin: '2021-12-31' } })) as CallToolResult;
    expect(r.isError).toBeFalsy();
    const used = (r.structuredContent as { _credits: { used: number } })._credits.used;
    expect(used).toBeGreaterThan(0);
    expect(balanceOf(api, key)).toBe(500 - used);
    await client.close();

    // Another agent's request, denied: the browser goes back to that agent with access_denied.
    const other = new MemoryOAuthClient('Browser-test agent', 'e2e-state');
    await expect(new Client({ name: 'e2e', version: '1' }).connect(new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), { authProvider: other }))).rejects.toBeInstanceOf(UnauthorizedError);
    await page.goto(other.authorizationUrl!.href);
    await Promise.all([page.waitForURL((u) => u.href.startsWith(REDIRECT)), page.click('#deny')]);
    expect(callbacks).toHaveLength(2);
    expect(callbacks[1].searchParams.get('error')).toBe('access_denied');
    expect(callbacks[1].searchParams.has('code')).toBe(false);

    // The dashboard lists the approved agent (not the denied one) and revokes it: its token stops at once.
    expect(await mcpStatus(agent.saved!.access_token)).toBe(200);
    await page.goto(`${api.url}/dashboard`);
    await page.fill('#key', key);
    await page.click('button[type=submit]');
    const row = page.locator(`#authorization-list tbody tr[data-client-id="${agent.info!.client_id}"]`);
    await row.waitFor();
    await expect(page.locator('#authorization-list tbody tr').count()).resolves.toBe(1);
    await expect(row.locator('td').nth(0).textContent()).resolves.toBe('Browser-test agent (localhost:8976)');
    await expect(row.locator('td').nth(1).textContent()).resolves.toBe('read, portfolio');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'mcp-authorizations.png'), fullPage: true });
    await row.locator('button[data-revoke]').click();
    await page.waitForSelector('#authorization-list tbody tr', { state: 'detached' });
    await expect(page.locator('#authorizations-note').textContent()).resolves.toBe('No MCP client authorized.');
    expect(await mcpStatus(agent.saved!.access_token)).toBe(401);

    expect(problems).toEqual([]);
    expect(outside).toEqual([]);
    await context.close();
  });
});
