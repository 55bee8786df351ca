// Driving Swagger UI (the /docs page) from Playwright: shared by test/e2e/docs*.test.ts.
import type { Locator, Page } from 'playwright-core';

/** The operation block of one method and path. */
export function operation(page: Page, method: string, apiPath: string): Locator {
  return page.locator(`.opblock.opblock-${method.toLowerCase()}`).filter({ has: page.locator(`.opblock-summary-path[data-path="${apiPath}"]`) });
}

/** "METHOD /path" of every operation block rendered (all tags are expanded by default). */
export async function renderedEndpoints(page: Page): Promise<string[]> {
  return page.$$eval('#swagger-ui .opblock', (els) =>
    els.map((el) => `${el.querySelector('.opblock-summary-method')?.textContent?.trim()} ${el.querySelector('.opblock-summary-path')?.getAttribute('data-path')}`),
  );
}

/** Enters a key for the X-API-Key scheme in the Authorize dialog and closes it. */
export async function authorize(page: Page, key: string): Promise<void> {
  await page.locator('.auth-wrapper button.authorize').click();
  const scheme = page.locator('.modal-ux .auth-container').filter({ hasText: 'X-API-Key' });
  await scheme.locator('input').fill(key);
  await scheme.locator('button.authorize').click();
  await page.locator('.modal-ux button.close-modal').click();
}

/**
 * Opens an operation and switches it to "Try it out". Swagger UI resolves an operation's $refs when it is opened and
 * re-renders it, which can swallow a click made meanwhile: the button is clicked again until "Execute" shows.
 */
export async function tryItOut(op: Locator): Promise<void> {
  if (!(await op.locator('.opblock-body').count())) await op.locator('.opblock-summary-control').click();
  for (let i = 0; i < 5 && !(await op.locator('button.execute').isVisible()); i++) {
    await op.locator('button.try-out__btn:not(.cancel)').click();
    await op.locator('button.execute').waitFor({ timeout: 2000 }).catch(() => undefined);
  }
}
