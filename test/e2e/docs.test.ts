// End to end: the real server (`scripts/start.ts`, demo data built on first start) serves /docs (Swagger UI from
// swagger-ui-dist), which headless Chromium renders from /v1/openapi.json without any request leaving the machine;
// "Try it out" calls the API with the key entered in the Authorize dialog, and the values it prefills answer 2xx on the
// first operation of every tag.
// E2E_BASE_URL points the test at a server already running instead (its keys from E2E_API_KEY or DATA_DIR).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCS_CSP } from '../../api/docs-page';
import { authorize, operation, renderedEndpoints, tryItOut } from './docs-swagger-ui';
import { freePort } from '../../lib/net';

const repoRoot = path.resolve(fileURLToPath(new URL('../..', import.meta.url)));
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SCREENSHOT = path.join(repoRoot, 'test-results', 'docs.png');
const REQUIRED = ['GET /v1/transactions', 'GET /v1/transactions/{id}', 'GET /v1/stats/market', 'GET /v1/meta/sources'];
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

let base = process.env.E2E_BASE_URL?.replace(/\/+$/, '') ?? '';
let dataDir = process.env.DATA_DIR ?? path.join(repoRoot, 'data');
let server: ChildProcess | undefined;
let serverExit: Promise<void> | undefined;
const serverLog: string[] = [];
let browser: Browser;

function recentLog(): string {
  return serverLog.join('').split('\n').slice(-40).join('\n');
}

async function waitForHealth(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (server && server.exitCode !== null) throw new Error(`server exited with ${server.exitCode}:\n${recentLog()}`);
    try {
      const res = await fetch(`${url}/health`);
      if (res.status === 200) return;
    } catch {
      // Not listening yet (the demo dataset is being built).
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`no 200 from ${url}/health after ${timeoutMs / 1000} s:\n${recentLog()}`);
}

function isLoopback(raw: string): boolean {
  const url = new URL(raw);
  return url.protocol === 'data:' || url.protocol === 'blob:' || LOOPBACK.has(url.hostname);
}

/** A page that records console errors, uncaught exceptions and any request to a non-loopback host (aborted). */
async function watchedPage(): Promise<{ context: BrowserContext; page: Page; problems: string[]; outside: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const problems: string[] = [];
  const outside: string[] = [];
  await context.route('**/*', (route) => {
    if (isLoopback(route.request().url())) return route.continue();
    outside.push(route.request().url());
    return route.abort();
  });
  const page = await context.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('request', (r) => {
    if (!isLoopback(r.url()) && !outside.includes(r.url())) outside.push(r.url());
  });
  return { context, page, problems, outside };
}

async function apiKey(): Promise<string> {
  if (process.env.E2E_API_KEY) return process.env.E2E_API_KEY;
  const { stdout } = await promisify(execFile)('npx', ['tsx', 'scripts/keys.ts', 'create', '--plan', 'Scale', '--label', 'e2e'], {
    cwd: repoRoot,
    env: { ...process.env, DATA_DIR: dataDir },
  });
  return stdout.trim().split('\n').pop()!.trim();
}

beforeAll(async () => {
  if (!base) {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'foncier-e2e-'));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    // Own process group (detached), so afterAll can stop npx, tsx and node together.
    server = spawn('npx', ['tsx', 'scripts/start.ts'], {
      cwd: repoRoot,
      // The prefilled alert's webhook host is allow-listed, so that creating it asks no DNS server about example.com.
      env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), WEBHOOK_ALLOWED_HOSTS: 'example.com' },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    serverExit = new Promise((resolve) => server!.once('exit', () => resolve()));
    const keep = (chunk: Buffer) => {
      serverLog.push(chunk.toString());
      if (serverLog.length > 400) serverLog.splice(0, serverLog.length - 400);
    };
    server.stdout!.on('data', keep);
    server.stderr!.on('data', keep);
  }
  await waitForHealth(base, 300_000);
  browser = await chromium.launch({ executablePath: CHROMIUM });
});

afterAll(async () => {
  await browser?.close();
  if (server?.pid && server.exitCode === null) {
    process.kill(-server.pid, 'SIGTERM');
    const stopped = await Promise.race([serverExit!.then(() => true), new Promise((r) => setTimeout(() => r(false), 10_000))]);
    if (!stopped) process.kill(-server.pid, 'SIGKILL');
  }
  if (server) rmSync(dataDir, { recursive: true, force: true });
});

describe('/docs', () => {
  it('renders every operation of /v1/openapi.json offline, without errors', async () => {
    const spec = (await (await fetch(`${base}/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    const methods = ['get', 'post', 'put', 'patch', 'delete'];
    const expected = Object.entries(spec.paths).flatMap(([p, item]) =>
      methods.filter((m) => item[m]).map((m) => `${m.toUpperCase()} ${p}`),
    );
    expect(expected).toEqual(expect.arrayContaining(REQUIRED));

    const { context, page, problems, outside } = await watchedPage();
    const res = await page.goto(`${base}/docs`);
    expect(res?.status()).toBe(200);
    expect(res?.headers()['content-security-policy']).toBe(DOCS_CSP);
    await page.waitForSelector('#swagger-ui .opblock');

    const shown = await renderedEndpoints(page);
    expect(shown).toEqual(expect.arrayContaining(REQUIRED));
    expect([...shown].sort()).toEqual([...expected].sort());
    await expect(page.title()).resolves.toMatch(/documentation/);
    await expect(page.locator('#swagger-ui .info .title').textContent()).resolves.toContain('foncier API');

    // Opening an operation shows its parameters and its responses, errors included.
    const market = operation(page, 'GET', '/v1/stats/market');
    await market.locator('.opblock-summary-control').click();
    // The operation's body is drawn after the click (and Swagger UI may redraw it): wait for it before reading.
    await market.locator('.parameters .parameter__name').first().waitFor();
    await expect.poll(() => market.locator('.parameters .parameter__name').allTextContents()).toEqual(
      expect.arrayContaining([expect.stringContaining('code_postal')]),
    );
    await market.locator('.responses-table tr.response').first().waitFor();
    const statuses = await market.locator('.responses-table tr.response .response-col_status').allTextContents();
    expect(statuses.map((s) => s.trim())).toEqual(expect.arrayContaining(['200', '400', '402']));

    mkdirSync(path.dirname(SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });

    // The filter box narrows the list to the matching tag.
    await page.fill('.operation-filter-input', 'Market statistics');
    await expect.poll(() => renderedEndpoints(page)).not.toContain('GET /v1/transactions');
    expect(await renderedEndpoints(page)).toContain('GET /v1/stats/market');

    expect(problems).toEqual([]);
    expect(outside).toEqual([]);
    await context.close();
  });

  it('"Try it" sends the key entered in Authorize, shows status, headers and the JSON body, and keeps the key', async () => {
    const key = await apiKey();
    const { context, page, problems, outside } = await watchedPage();
    const sent: (string | undefined)[] = [];
    page.on('request', (r) => {
      if (new URL(r.url()).pathname === '/v1/meta/sources') sent.push(r.headers()['x-api-key']);
    });
    await page.goto(`${base}/docs`);
    await page.waitForSelector('#swagger-ui .opblock');

    await authorize(page, key);

    const op = operation(page, 'GET', '/v1/meta/sources');
    await tryItOut(op);
    await op.locator('button.execute').click();
    const live = op.locator('.live-responses-table');
    await live.waitFor();

    expect(sent).toEqual([key]);
    await expect(live.locator('tr.response .response-col_status').textContent()).resolves.toMatch(/^\s*200\b/);
    await expect(live.locator('pre:has(.headerline)').textContent()).resolves.toContain('x-request-id');
    const body = (await live.locator('.highlight-code pre').textContent()) ?? '';
    expect(() => JSON.parse(body)).not.toThrow();
    expect(body).toContain('\n  '); // pretty-printed

    // The key is kept in the browser (persistAuthorization) and sent again when the page is opened anew (without the
    // operation's deep link, which would reopen it), without retyping it.
    await page.goto('about:blank');
    await page.goto(`${base}/docs`);
    await page.waitForSelector('#swagger-ui .opblock');
    await tryItOut(op);
    await op.locator('button.execute').click();
    await live.waitFor();
    expect(sent).toEqual([key, key]);

    expect(problems).toEqual([]);
    expect(outside).toEqual([]);
    await context.close();
  });

  // Twelve operations opened, executed and closed: about 10 s each on a busy 2-core machine.
  it('"Try it out" with the prefilled values answers 2xx on the first operation of every tag', async () => {
    const spec = (await (await fetch(`${base}/v1/openapi.json`)).json()) as { tags: { name: string; description: string }[] };
    const key = await apiKey();
    const { context, page, problems, outside } = await watchedPage();
    await page.goto(`${base}/docs`);
    await page.waitForSelector('#swagger-ui .opblock');
    await authorize(page, key);

    // The tags show in the document's order, each with its description.
    const tags = spec.tags.map((t) => t.name);
    const headings = await page.$$eval('#swagger-ui h3.opblock-tag', (els) => els.map((el) => [el.getAttribute('data-tag'), el.textContent ?? '']));
    expect(headings.map(([tag]) => tag)).toEqual(tags);
    headings.forEach(([, text], i) => expect(text).toContain(spec.tags[i].description));
    const answers: string[] = [];
    for (const tag of tags) {
      const op = page.locator('.opblock-tag-section').filter({ has: page.locator(`h3.opblock-tag[data-tag="${tag}"]`) }).locator('.opblock').first();
      const name = `${await op.locator('.opblock-summary-method').textContent()} ${await op.locator('.opblock-summary-path').getAttribute('data-path')}`;
      await tryItOut(op);
      await op.locator('button.execute').click();
      const live = op.locator('.live-responses-table');
      await live.waitFor();
      const status = ((await live.locator('tr.response .response-col_status').textContent()) ?? '').trim();
      const body = ((await live.locator('.highlight-code pre').first().textContent()) ?? '').slice(0, 300);
      answers.push(`${tag}: ${name} → ${/^2\d\d\b/.test(status) ? '2xx' : `${status} ${body}`}`);
      // Closed again: every open operation, its answer highlighted, slows down each redraw of the page.
      await op.locator('.opblock-summary-control').click();
      await op.locator('.opblock-body').waitFor({ state: 'detached' });
    }
    expect(answers).toEqual(answers.map((a) => a.replace(/ → .*$/s, ' → 2xx')));

    expect(problems).toEqual([]);
    expect(outside).toEqual([]);
    await context.close();
  }, 600_000);
});
