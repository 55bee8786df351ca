// The /docs page's files as the API serves them (the browser side is test/e2e/docs*.test.ts): an HTML shell that
// loads only same-origin files and has no inline script or style, our initializer, and Swagger UI's bundle and
// stylesheets byte for byte from the installed swagger-ui-dist package; each under the page's CSP.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCS_CSP } from '../../../api/docs-page';
import { startTestApi, type TestApi } from '../../helpers/api';
import { tempDir } from '../../helpers/samples';

let api: TestApi;
beforeAll(async () => {
  // No serving database is needed for static files.
  api = await startTestApi({ dataRoot: tempDir('foncier-docs-') });
});
afterAll(() => api.close());

const fetchText = async (path: string) => {
  const res = await fetch(api.url + path);
  return { status: res.status, headers: res.headers, text: await res.text() };
};

// The package's folder found independently of api/docs-page.ts (which uses the package's own helper).
const distDir = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

describe('/docs', () => {
  it('serves an HTML shell without inline script or style, under a CSP that forbids them', async () => {
    const page = await fetchText('/docs');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).toBe(DOCS_CSP);
    const directives = Object.fromEntries(csp.split('; ').map((d) => [d.split(' ')[0], d.split(' ').slice(1).join(' ')]));
    expect(directives).toEqual({
      'default-src': "'none'",
      'script-src': "'self'",
      'style-src': "'self'",
      'connect-src': "'self'",
      'img-src': "'self' data:",
      'base-uri': "'none'",
      'form-action': "'none'",
      'frame-ancestors': "'none'",
    });
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|sha256-|nonce-/);
    const scripts = [...page.text.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.map((m) => [m[1].trim(), m[2].trim()])).toEqual([
      ['src="/docs/swagger-ui-bundle.js"', ''],
      ['src="/docs/init.js"', ''],
    ]);
    expect(page.text).not.toMatch(/<style\b|\sstyle=|\son[a-z]+=/i);
    expect([...page.text.matchAll(/<link rel="stylesheet" href="([^"]+)">/g)].map((m) => m[1])).toEqual(['/docs/swagger-ui.css', '/docs/index.css']);
    expect(page.text).not.toMatch(/(src|href)="(https?:)?\/\//);
  });

  it('serves Swagger UI byte for byte from the installed swagger-ui-dist, with types, nosniff and the same CSP', async () => {
    const files = [
      ['/docs/swagger-ui-bundle.js', 'swagger-ui-bundle.js', /^text\/javascript/],
      ['/docs/swagger-ui.css', 'swagger-ui.css', /^text\/css/],
      ['/docs/index.css', 'index.css', /^text\/css/],
    ] as const;
    for (const [urlPath, file, type] of files) {
      const r = await fetchText(urlPath);
      expect(r.status, urlPath).toBe(200);
      expect(r.headers.get('content-type'), urlPath).toMatch(type);
      expect(r.headers.get('x-content-type-options')).toBe('nosniff');
      expect(r.headers.get('content-security-policy')).toBe(DOCS_CSP);
      expect(r.text, urlPath).toBe(readFileSync(path.join(distDir, file), 'utf8'));
    }
  });

  it('serves our initializer: the API document, the key kept in the browser, no outside host', async () => {
    const r = await fetchText('/docs/init.js');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(r.headers.get('content-security-policy')).toBe(DOCS_CSP);
    expect(r.text).toContain("url: '/v1/openapi.json'");
    expect(r.text).toContain('persistAuthorization: true');
    expect(r.text).toContain('validatorUrl: null');
    expect(r.text).toContain('queryConfigEnabled: false');
    expect(r.text).not.toMatch(/https?:\/\//);
  });

  it('answers other paths under /docs, the rest of the package included, with the JSON 404 body', async () => {
    for (const p of ['/docs/other.js', '/docs/package.json', '/docs/swagger-ui-bundle.js.map', '/docs/swagger-initializer.js', '/docs/..%2Fpackage.json']) {
      const r = await fetchText(p);
      expect(r.status, p).toBe(404);
      expect(JSON.parse(r.text).error.code).toBe('not_found');
    }
  });
});
