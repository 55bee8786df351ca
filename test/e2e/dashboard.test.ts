// End to end: the key holder's dashboard (/dashboard) in headless Chromium against the API on a loopback port (the
// test harness's server over the real DVF samples). The test gives a key some history over three days, REST and MCP,
// then checks that the page shows exactly that key's figures (credits left, per-endpoint totals, the chart's bars,
// every request id), with no console error and no request leaving the machine; screenshot in test-results/.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENDPOINTS } from '../../api/app';
import { DOCS_CSP } from '../../api/docs-page';
import { balanceOf, startTestApi, type TestApi } from '../helpers/api';
import { watchedPage } from '../helpers/browser';

const repoRoot = path.resolve(fileURLToPath(new URL('../..', import.meta.url)));
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SCREENSHOT = path.join(repoRoot, 'test-results', 'dashboard.png');
const DAY = 86_400_000;
const fmt = new Intl.NumberFormat('en-US');
/** Whether the registry has an operation (portfolio and alerts panels show only on servers that have them). */
const has = (op: string) => ENDPOINTS.some((e) => `${e.method.toUpperCase()} ${e.path}` === op);

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

interface Made {
  id: string;
  endpoint: string;
  credits: number;
}

/** Three days of calls by one key; what was made, as the test saw it. */
async function history(key: string): Promise<Made[]> {
  const made: Made[] = [];
  const today = api.clock.now().getTime();
  const rest = async (p: string, endpoint: string, credits: number) => {
    const r = await api.get(p, key);
    expect(r.status, p).toBe(credits > 0 || p.includes('meta') ? 200 : 400);
    made.push({ id: r.headers.get('x-request-id')!, endpoint, credits });
  };
  const market = (year: number) => `/v1/stats/market?code_postal=33230&date_debut=${year}-01-01&date_fin=${year}-12-31`;
  api.clock.set(new Date(today - 3 * DAY));
  await rest(market(2021), 'GET /v1/stats/market', 5);
  await rest(market(2021), 'GET /v1/stats/market', 5);
  await rest('/v1/flips?code_insee=33001&type_local=Maison', 'GET /v1/flips', 10);
  api.clock.set(new Date(today - DAY));
  await rest('/v1/transactions?code_postal=33230&limit=5', 'GET /v1/transactions', 5);
  await rest('/v1/stats/market?code_postal=332', 'GET /v1/stats/market', 0);
  api.clock.set(new Date(today));
  await rest('/v1/meta/sources', 'GET /v1/meta/sources', 0);
  const client = new Client({ name: 'e2e', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), { requestInit: { headers: { 'X-API-Key': key, 'X-Request-Id': 'e2e-mcp-call' } } }));
  await client.callTool({ name: 'getStatsMarket', arguments: { code_postal: '33230', date_debut: '2020-01-01', date_fin: '2021-12-31' } });
  await client.close();
  made.push({ id: 'e2e-mcp-call', endpoint: 'GET /v1/stats/market', credits: 5 });
  if (has('POST /v1/portfolio')) {
    // A land plot: stored without an estimate, for its metadata-only price.
    const r = await fetch(`${api.url}/v1/portfolio`, {
      method: 'POST',
      headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
      body: JSON.stringify({ latitude: 44.98, longitude: -0.2, type_local: 'Terrain', surface: 850, label: 'e2e plot' }),
    });
    expect(r.status).toBe(201);
    made.push({ id: r.headers.get('x-request-id')!, endpoint: 'POST /v1/portfolio', credits: 2 });
  }
  return made;
}

describe('/dashboard', () => {
  it('shows the figures of the key whose usage the test created', async () => {
    const key = api.key({ plan: 'Agent', balance: 8000 });
    const made = await history(key);
    const spent = made.reduce((a, m) => a + m.credits, 0);
    expect(balanceOf(api, key)).toBe(8000 - spent);
    const expected = new Map<string, { requests: number; credits: number }>();
    for (const m of made) {
      const e = expected.get(m.endpoint) ?? { requests: 0, credits: 0 };
      e.requests++;
      e.credits += m.credits;
      expected.set(m.endpoint, e);
    }

    const { context, page, problems, outside } = await watchedPage(browser);

    const res = await page.goto(`${api.url}/dashboard`);
    expect(res?.status()).toBe(200);
    expect(res?.headers()['content-security-policy']).toBe(DOCS_CSP);

    // A wrong key: the API's message, no figures.
    await page.fill('#key', 'fk_live_doesNotExist');
    await page.click('button[type=submit]');
    await page.waitForSelector('#status.error');
    await expect(page.locator('#status').textContent()).resolves.toContain('unknown_key');
    await expect(page.locator('#account').isHidden()).resolves.toBe(true);
    // The browser logs the refused request (one: the page checks the key before asking for the rest), and only it.
    expect(problems).toEqual(['console: Failed to load resource: the server responded with a status of 401 (Unauthorized)']);
    problems.length = 0;

    await page.fill('#key', key);
    await page.click('button[type=submit]');
    await page.waitForSelector('#requests tbody tr[data-request-id]');

    const figure = (name: string) => page.locator(`[data-figure=${name}] dd`).textContent();
    await expect(figure('plan')).resolves.toBe('Agent');
    await expect(figure('remaining')).resolves.toBe(fmt.format(8000 - spent));
    await expect(figure('monthly')).resolves.toBe(`${fmt.format(8000 - spent)} / ${fmt.format(10_000)}`);
    const now = api.clock.now();
    await expect(figure('resets')).resolves.toBe(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString().slice(0, 10));

    // Totals per endpoint: the test's calls (the page's own /v1/account* calls may or may not be counted yet).
    const totals = await page.$$eval('#totals tbody tr[data-endpoint]', (rows) =>
      rows.map((r) => [r.getAttribute('data-endpoint'), ...[...r.querySelectorAll('td.num')].map((td) => Number(td.textContent!.replace(/,/g, '')))]),
    );
    expect(totals.filter(([e]) => !String(e).startsWith('GET /v1/account')).sort()).toEqual(
      [...expected].map(([e, v]) => [e, v.requests, v.credits]).sort(),
    );

    // The chart's bars add up, per endpoint and per day, to the credits the test spent.
    const bars = await page.$$eval('#chart rect', (rs) => rs.map((r) => ({ date: r.getAttribute('data-date'), series: r.getAttribute('data-series'), value: Number(r.getAttribute('data-value')) })));
    expect(await page.getAttribute('#chart svg', 'data-metric')).toBe('credits');
    for (const [endpoint, e] of expected) {
      expect(bars.filter((b) => b.series === endpoint).reduce((a, b) => a + b.value, 0), endpoint).toBe(e.credits);
    }
    const day = (offset: number) => new Date(now.getTime() - offset * DAY).toISOString().slice(0, 10);
    expect(bars.filter((b) => b.date === day(3)).reduce((a, b) => a + b.value, 0)).toBe(20);
    expect(bars.filter((b) => b.date === day(1)).reduce((a, b) => a + b.value, 0)).toBe(5);

    // Every request the test made is listed, with its endpoint and credits.
    const listed = await page.$$eval('#requests tbody tr[data-request-id]', (rows) =>
      rows.map((r) => ({ id: r.getAttribute('data-request-id'), endpoint: r.children[2].textContent, credits: Number(r.children[5].textContent) })),
    );
    for (const m of made) expect(listed).toContainEqual({ id: m.id, endpoint: m.endpoint, credits: m.credits });
    await expect(page.locator('#requests tbody tr[data-request-id="e2e-mcp-call"] td').nth(3).textContent()).resolves.toBe('mcp');

    // Portfolio and alerts: shown where the server has them; an Agent key is told alerts need another plan.
    await expect(page.locator('#portfolio').isVisible()).resolves.toBe(has('GET /v1/portfolio'));
    if (has('GET /v1/portfolio')) {
      await expect(page.locator('#properties tbody tr').textContent()).resolves.toContain('e2e plot');
    }
    await expect(page.locator('#alerts').isVisible()).resolves.toBe(has('GET /v1/alerts'));
    if (has('GET /v1/alerts')) await expect(page.locator('#alerts-note').textContent()).resolves.toContain('Scale and Enterprise');

    mkdirSync(path.dirname(SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });

    // The key is kept for the tab: a reload shows the figures again.
    await page.reload();
    await page.waitForSelector('#requests tbody tr[data-request-id]');

    expect(problems).toEqual([]);
    expect(outside).toEqual([]);
    await context.close();
  });
});
