// A Chromium page for the end-to-end tests that watches itself: console errors and uncaught exceptions are recorded in
// `problems`, and any request to a host other than the loopback one is aborted and recorded in `outside`.
import type { Browser, BrowserContext, Page } from 'playwright-core';

export interface WatchedPage {
  context: BrowserContext;
  page: Page;
  problems: string[];
  outside: string[];
}

export async function watchedPage(browser: Browser, viewport = { width: 1200, height: 900 }): Promise<WatchedPage> {
  const context = await browser.newContext({ viewport });
  const problems: string[] = [];
  const outside: string[] = [];
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if (url.protocol === 'data:' || url.hostname === '127.0.0.1') return route.continue();
    outside.push(url.href);
    return route.abort();
  });
  const page = await context.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  return { context, page, problems, outside };
}
