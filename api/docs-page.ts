// The interactive API documentation served at /docs: Swagger UI from the `swagger-ui-dist` package (its bundle and
// stylesheets served from node_modules, never from a CDN, since deployments may have no internet), an HTML shell and
// a small initializer script of ours (api/docs/) that points it at /v1/openapi.json. Try-it calls go to this origin.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Express, Request, Response } from 'express';

const read = (name: string) => fs.readFileSync(new URL(`./docs/${name}`, import.meta.url), 'utf8');

/** swagger-ui-dist's folder, by the package's own helper (its main module would load the 1.7 MB bundle in Node). */
const SWAGGER_UI_DIR: string = (createRequire(import.meta.url)('swagger-ui-dist/absolute-path.js') as () => string)();

export interface DocsAsset {
  type: string;
  /** The file's text (our files, read once at start-up) or its absolute path (the package's files, streamed). */
  body?: string;
  file?: string;
}

const JS = 'text/javascript; charset=utf-8';
const CSS = 'text/css; charset=utf-8';

/** The page's files by URL path: an explicit list, so nothing else of node_modules is ever reachable. */
const ASSETS: Record<string, DocsAsset> = {
  '/docs': { type: 'text/html; charset=utf-8', body: read('index.html') },
  '/docs/init.js': { type: JS, body: read('init.js') },
  '/docs/swagger-ui-bundle.js': { type: JS, file: path.join(SWAGGER_UI_DIR, 'swagger-ui-bundle.js') },
  '/docs/swagger-ui.css': { type: CSS, file: path.join(SWAGGER_UI_DIR, 'swagger-ui.css') },
  '/docs/index.css': { type: CSS, file: path.join(SWAGGER_UI_DIR, 'index.css') },
};
// A missing package file fails the start, not the first visitor.
for (const asset of Object.values(ASSETS)) if (asset.file) fs.accessSync(asset.file, fs.constants.R_OK);

/**
 * Content-Security-Policy of the page and its files (the dashboard uses it too): script and style from this origin
 * only (no inline code, no eval), calls to the same origin, and nothing else; data: images are the stylesheet's SVG
 * icons and the empty favicon. Swagger UI needs no relaxation: React applies its inline styles through the CSSOM,
 * which the CSP does not govern (the e2e tests fail on any CSP violation, reported as a console error).
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

/** A file of the page by its URL path (`/docs`, `/docs/init.js`, `/docs/swagger-ui-bundle.js`…), or undefined. */
export function docsAsset(urlPath: string): DocsAsset | undefined {
  return Object.hasOwn(ASSETS, urlPath) ? ASSETS[urlPath] : undefined;
}

/** Serves the page and its files, each with the page's CSP; nosniff so that a script is only ever run as one. */
export function mountDocs(app: Express): void {
  for (const [urlPath, asset] of Object.entries(ASSETS)) {
    app.get(urlPath, (_req: Request, res: Response) => {
      const headers = { 'Content-Type': asset.type, 'Content-Security-Policy': DOCS_CSP, 'X-Content-Type-Options': 'nosniff' };
      if (asset.body !== undefined) res.set(headers).send(asset.body);
      else res.sendFile(asset.file!, { headers });
    });
  }
}
