// The /docs page against a hand-made OpenAPI 3.1 document (fixtures/openapi.sample.json, generated with
// zod-to-openapi like the API's): spec text is escaped, $refs are resolved into trees, "Try it" builds the URL.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCS_CSP, docsAsset } from '../../api/docs-page';

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
      return res.end(asset.body);
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

describe('/docs page on a fixture document', () => {
  it('shows text from the spec as text, never as markup', async () => {
    const page = await browser.newPage();
    const dialogs: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await page.goto(`${base}/docs`);
    await page.waitForSelector('#endpoints .endpoint');
    await expect(page.locator('#info .desc').textContent()).resolves.toContain('<script>alert(1)</script>');
    await expect(page.locator('#info script').count()).resolves.toBe(0);
    const market = page.locator('.endpoint[data-path="/v1/stats/market"]');
    await expect(market.textContent()).resolves.toContain('Add the price-to-income ratio <b>free</b>');
    expect(dialogs).toEqual([]);
    await page.close();
  });

  it('resolves $ref schemas into nested property trees and reads credits', async () => {
    const page = await browser.newPage();
    await page.goto(`${base}/docs#op-get-v1-transactions`);
    const op = page.locator('.endpoint[data-path="/v1/transactions"]');
    await expect(op.locator('details').getAttribute('open')).resolves.toBe('');
    await expect(op.locator('.credits').textContent()).resolves.toBe('5 credits');
    // transactions: array of Transaction ($ref) whose lots are an array of objects.
    const tree = op.locator('.response ul.tree').first();
    await expect(tree.locator('.prop-name', { hasText: /^surface_carrez$/ }).count()).resolves.toBe(1);
    await expect(tree.textContent()).resolves.toContain('array of Transaction');
    await expect(op.locator('table.errors').textContent()).resolves.toContain('402');
    await page.close();
  });

  it('"Try it" fills path, query, key and body, and pretty-prints the answer', async () => {
    const page = await browser.newPage();
    await page.goto(`${base}/docs`);
    await page.waitForSelector('#endpoints .endpoint');
    const post = page.locator('.endpoint[data-path="/v1/portfolio"][data-method="POST"]');
    await post.locator('summary').click();
    await post.locator('input.api-key').fill('key-1');
    await post.locator('textarea').fill('{"latitude": 48.85, "longitude": 2.35, "type_local": "Maison", "surface": 90}');
    await post.locator('button.send').click();
    await post.locator('pre.body').waitFor();
    await expect(post.locator('.result .status').textContent()).resolves.toBe('201 Created');
    await expect(post.locator('dl.headers').textContent()).resolves.toContain('req-42');
    await expect(post.locator('pre.body').textContent()).resolves.toContain('"label": "<img src=x onerror=alert(2)>"');

    // The key typed in one panel is shared with the others; a missing path parameter stops the request.
    const del = page.locator('.endpoint[data-path="/v1/portfolio/{id}"]');
    await del.locator('summary').click();
    await expect(del.locator('input.api-key').inputValue()).resolves.toBe('key-1');
    await del.locator('button.send').click();
    await expect(del.locator('.problem').textContent()).resolves.toBe('Required: id');
    await del.locator('input[name="id"]').fill('a b/c');
    await del.locator('button.send').click();
    await del.locator('pre.body').waitFor();

    expect(calls.map((c) => c.url)).toEqual(['POST /v1/portfolio', 'DELETE /v1/portfolio/a%20b%2Fc']);
    expect(calls.map((c) => c.key)).toEqual(['key-1', 'key-1']);
    expect(JSON.parse(calls[0].body)).toMatchObject({ type_local: 'Maison', surface: 90 });
    await page.close();
  });
});
