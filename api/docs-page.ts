// The interactive API documentation served at /docs: the static files of api/docs/ (the HTML shell, its script and
// its stylesheet), read once at start-up and served under a Content-Security-Policy that allows no inline code.
// Nothing is fetched from outside, since deployments may have no internet. The script is type-checked with the DOM
// library by api/docs/tsconfig.json (part of `npm run typecheck`).
import fs from 'node:fs';
import type { Express, Request, Response } from 'express';

const read = (name: string) => fs.readFileSync(new URL(`./docs/${name}`, import.meta.url), 'utf8');

export interface DocsAsset {
  type: string;
  body: string;
}

/** The page's files by URL path. */
const ASSETS: Record<string, DocsAsset> = {
  '/docs': { type: 'text/html; charset=utf-8', body: read('index.html') },
  '/docs/docs.js': { type: 'text/javascript; charset=utf-8', body: read('docs.js') },
  '/docs/docs.css': { type: 'text/css; charset=utf-8', body: read('docs.css') },
};

/**
 * Content-Security-Policy of the page and its files: script and style from this origin only (no inline code),
 * calls to the same origin, and nothing else; the data: image is the empty favicon.
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The /docs page's HTML shell: static, the same string every time. */
export function docsPageHtml(): string {
  return ASSETS['/docs'].body;
}

/** A file of the page by its URL path (`/docs`, `/docs/docs.js`, `/docs/docs.css`), or undefined. */
export function docsAsset(urlPath: string): DocsAsset | undefined {
  return Object.hasOwn(ASSETS, urlPath) ? ASSETS[urlPath] : undefined;
}

/** Serves the page and its files, each with the page's CSP; nosniff so that a script is only ever run as one. */
export function mountDocs(app: Express): void {
  for (const [urlPath, asset] of Object.entries(ASSETS)) {
    app.get(urlPath, (_req: Request, res: Response) => {
      res.set({ 'Content-Type': asset.type, 'Content-Security-Policy': DOCS_CSP, 'X-Content-Type-Options': 'nosniff' }).send(asset.body);
    });
  }
}
