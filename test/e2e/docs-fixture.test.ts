// The /docs page (Swagger UI) against a hand-made OpenAPI 3.1 document (fixtures/openapi.sample.json, generated with
// zod-to-openapi like the API's): markup in the spec's text or in a response never runs, $ref schemas are shown
// resolved, and "Try it out" builds the request (key from the Authorize dialog, JSON body, encoded path parameter).
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCS_CSP, docsAsset } from '../../api/docs-page';
import { authorize, operation, tryItOut } from './docs-swagger-ui';

const spec = readFileSync(new URL('./fixtures/openapi.sample.json', import.meta.url), 'utf8');
const calls: { url: string; key?: string; body: string }[] = [];
let server: http.Server;
let base: string;
let browser: Browser;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    // The page and its static files, as the API serves them.
    const asset = docsAsset(req.url ?? '');
    if (asset) {
      res.writeHead(200, { 'content-type': asset.type, 'content-security-policy': DOCS_CSP });
      return res.end(asset.body ?? readFileSync(asset.file!));
    }
    if (req.url === '/v1/openapi.json') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(spec);
    }
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      calls.push({ url: `${req.method} ${req.url}`, key: req.headers['x-api-key'] as string | undefined, body });
      res.writeHead(201, { 'content-type': 'application/json', 'x-request-id': 'req-42', 'x-ratelimit-remaining': '7' });
      res.end(JSON.stringify({ property: { id: 'p1', label: '<img src=x onerror=alert(2)>' } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium' });
});

afterAll(async () => {
  await browser?.close();
  await new Promise((r) => server?.close(r));
});

/** A page that records dialogs (an alert() would mean markup from the spec or a response ran) and console errors. */
async function openDocs(): Promise<{ page: Page; dialogs: string[]; errors: string[] }> {
  const page = await browser.newPage();
  const dialogs: string[] = [];
  const errors: string[] = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${base}/docs`);
  await page.waitForSelector('#swagger-ui .opblock');
  return { page, dialogs, errors };
}

describe('/docs (Swagger UI) on a fixture document', () => {
  it('never runs markup from the spec text', async () => {
    const { page, dialogs, errors } = await openDocs();
    await expect(page.locator('#swagger-ui .info .description').textContent()).resolves.toContain('X-API-Key');
    await expect(page.locator('#swagger-ui .info script').count()).resolves.toBe(0);
    await expect(page.locator('#swagger-ui script').count()).resolves.toBe(0);
    expect(dialogs).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('shows $ref schemas resolved into nested properties', async () => {
    const { page } = await openDocs();
    const op = operation(page, 'get', '/v1/transactions');
    await op.locator('.opblock-summary-control').click();
    // The 200 response's schema: an array of Transaction ($ref), expanded down to its properties.
    const response = op.locator('.responses-table tr.response[data-code="200"]');
    await response.locator('button[data-name="model"]').click();
    const model = response.locator('.model-box');
    const transactions = model.locator('li.json-schema-2020-12-property').filter({ has: page.locator('.json-schema-2020-12__title', { hasText: /^transactions$/ }) });
    await expect(model.textContent()).resolves.not.toContain('surface_carrez');
    await transactions.locator('button.json-schema-2020-12-expand-deep-button').first().click();
    // The items' $ref is followed: Transaction's own fields, and the array of objects nested in it, are listed.
    await expect.poll(async () => (await transactions.textContent()) ?? '').toContain('surface_carrez');
    await expect(transactions.textContent()).resolves.toMatch(/Stable transaction identifier.*lots.*Lots of the sale.*surface_carrez/s);
    await page.close();
  });

  it('"Try it out" sends the Authorize key, the JSON body and an encoded path, and shows the answer as text', async () => {
    const { page, dialogs, errors } = await openDocs();
    await authorize(page, 'key-1');

    const post = operation(page, 'post', '/v1/portfolio');
    await tryItOut(post);
    await post.locator('textarea.body-param__text').fill('{"latitude": 48.85, "longitude": 2.35, "type_local": "Maison", "surface": 90}');
    await post.locator('button.execute').click();
    const live = post.locator('.live-responses-table');
    await live.waitFor();
    await expect(live.locator('tr.response .response-col_status').textContent()).resolves.toMatch(/^\s*201\b/);
    await expect(live.locator('pre:has(.headerline)').textContent()).resolves.toContain('req-42');
    await expect(live.locator('.highlight-code pre').textContent()).resolves.toContain('"label": "<img src=x onerror=alert(2)>"');

    // A missing required path parameter stops the request; a given one is encoded.
    const del = operation(page, 'delete', '/v1/portfolio/{id}');
    await tryItOut(del);
    await del.locator('button.execute').click();
    await expect.poll(() => del.locator('.parameters input.invalid').count()).toBe(1);
    await del.locator('.parameters input').fill('a b/c');
    await del.locator('button.execute').click();
    await del.locator('.live-responses-table').waitFor();

    expect(calls.map((c) => c.url)).toEqual(['POST /v1/portfolio', 'DELETE /v1/portfolio/a%20b%2Fc']);
    expect(calls.map((c) => c.key)).toEqual(['key-1', 'key-1']);
    expect(JSON.parse(calls[0].body)).toMatchObject({ type_local: 'Maison', surface: 90 });
    expect(dialogs).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });
});
