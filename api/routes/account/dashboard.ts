// The key holder's dashboard at /dashboard: the static files of ./dashboard/ (HTML shell, script, stylesheet), read once
// and served under the /docs page's CSP (scripts and styles from this origin only, calls to this origin only). The
// page holds no data: it calls the 0-credit /v1/account endpoints with the key its user types in.
import fs from 'node:fs';
import type { Express, Request, Response } from 'express';
import { DOCS_CSP } from '../../docs-page';

const read = (name: string) => fs.readFileSync(new URL(`./dashboard/${name}`, import.meta.url), 'utf8');

const ASSETS: Record<string, { type: string; body: string }> = {
  '/dashboard': { type: 'text/html; charset=utf-8', body: read('index.html') },
  '/dashboard/dashboard.js': { type: 'text/javascript; charset=utf-8', body: read('dashboard.js') },
  '/dashboard/dashboard.css': { type: 'text/css; charset=utf-8', body: read('dashboard.css') },
};

export function mountDashboard(app: Express): void {
  for (const [urlPath, asset] of Object.entries(ASSETS)) {
    app.get(urlPath, (_req: Request, res: Response) => {
      res.set({ 'Content-Type': asset.type, 'Content-Security-Policy': DOCS_CSP, 'X-Content-Type-Options': 'nosniff', 'Cache-Control': 'no-cache' }).send(asset.body);
    });
  }
}
