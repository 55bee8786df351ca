// The /docs page's files as the API serves them (the browser side is test/e2e/docs*.test.ts): the HTML shell loads
// only same-origin files, has no inline script or style, and each file carries the strict CSP and its content type.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from './helpers/api';
import { tempDir } from './helpers/samples';

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

describe('/docs', () => {
  it('serves an HTML shell without inline script or style, under a CSP that forbids them', async () => {
    const page = await fetchText('/docs');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|sha256-|nonce-/);
    const scripts = [...page.text.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.map((m) => [m[1].trim(), m[2].trim()])).toEqual([['src="/docs/docs.js"', '']]);
    expect(page.text).not.toMatch(/<style\b|\sstyle=|\son[a-z]+=/i);
    expect(page.text).toContain('<link rel="stylesheet" href="/docs/docs.css">');
  });

  it('serves the script and the stylesheet it names, with their types and the same CSP', async () => {
    for (const [path, type] of [['/docs/docs.js', /^text\/javascript/], ['/docs/docs.css', /^text\/css/]] as const) {
      const r = await fetchText(path);
      expect(r.status, path).toBe(200);
      expect(r.headers.get('content-type'), path).toMatch(type);
      expect(r.headers.get('x-content-type-options')).toBe('nosniff');
      expect(r.headers.get('content-security-policy')).toBe((await fetchText('/docs')).headers.get('content-security-policy'));
      expect(r.text.length).toBeGreaterThan(1000);
    }
    // Text from the OpenAPI document must never be parsed as markup.
    expect((await fetchText('/docs/docs.js')).text).not.toMatch(/\.(inner|outer)HTML\s*=|insertAdjacentHTML|document\.write/);
  });

  it('answers other paths under /docs with the JSON 404 body', async () => {
    const r = await fetchText('/docs/other.js');
    expect(r.status).toBe(404);
    expect(JSON.parse(r.text).error.code).toBe('not_found');
  });
});
