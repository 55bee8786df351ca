// End to end: keys from the dashboard (/dashboard) in headless Chromium against the API on a loopback port, its clock
// the test's. A key holder rolls a key with a grace period (the page shows the new secret once and uses it; the old
// secret works until the grace period ends on the server's clock, then is refused), then revokes it after a
// confirmation step; a visitor gets Free keys until the address's daily limit, refused with the API's error. Every
// action is in the key's request log; no console error but the refusals the test provokes; nothing leaves the machine;
// screenshot after the roll in test-results/.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { balanceOf, startTestApi, type TestApi } from '../helpers/api';
import { watchedPage, type WatchedPage } from '../helpers/browser';
import { sqliteState } from '../helpers/state';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SCREENSHOT = path.join(path.resolve(fileURLToPath(new URL('../..', import.meta.url))), 'test-results', 'dashboard-keys.png');
const SECRET_RE = /^fk_live_[0-9A-Za-z]{32}$/;

let api: TestApi;
let browser: Browser;
const savedLimit = process.env.FREE_KEYS_PER_ADDRESS_PER_DAY;
beforeAll(async () => {
  process.env.FREE_KEYS_PER_ADDRESS_PER_DAY = '2';
  api = await startTestApi({ now: '2026-03-10T09:00:00Z' });
  browser = await chromium.launch({ executablePath: CHROMIUM });
});
afterAll(async () => {
  await browser?.close();
  await api?.close();
  if (savedLimit === undefined) delete process.env.FREE_KEYS_PER_ADDRESS_PER_DAY;
  else process.env.FREE_KEYS_PER_ADDRESS_PER_DAY = savedLimit;
});

/** A watched page (test/helpers/browser.ts) on /dashboard. */
async function open(): Promise<WatchedPage> {
  const w = await watchedPage(browser);
  const res = await w.page.goto(`${api.url}/dashboard`);
  expect(res?.status()).toBe(200);
  return w;
}

/** Signs the page in with a key and waits for its figures. */
async function signIn(page: Page, key: string): Promise<void> {
  await page.fill('#key', key);
  await page.click('#key-form button[type=submit]');
  await page.locator('#status', { hasText: key.slice(0, 12) }).waitFor();
  await page.locator('#key-actions').waitFor();
}

const refusedLoad = (status: string) => `console: Failed to load resource: the server responded with a status of ${status}`;

describe('/dashboard keys', () => {
  it('rolls a key (the old secret refused once its grace period ended) and revokes it after a confirmation', async () => {
    const old = api.key({ plan: 'Indie', balance: 1500 });
    const id = sqliteState(api.ctx).keys.findByKeyNow(old)!.id;
    expect((await api.get('/v1/meta/sources', old)).status).toBe(200);
    const { context, page, problems, outside } = await open();
    await signIn(page, old);
    await expect(page.locator('#previous-secret').isHidden()).resolves.toBe(true);

    // Roll, the old secret kept for an hour.
    await page.selectOption('#roll-grace', '3600');
    await page.click('#roll-button');
    await page.waitForSelector('#roll-result:not([hidden])');
    const secret = (await page.locator('#roll-secret').textContent())!;
    expect(secret).toMatch(SECRET_RE);
    expect(secret).not.toBe(old);
    await expect(page.locator('#roll-note').textContent()).resolves.toBe(`The previous secret ${old.slice(0, 12)}… keeps working until 2026-03-10 10:00:00 UTC.`);
    // The page goes on with the new secret: same key, same credits, the old secret's expiry shown.
    await page.locator('#status', { hasText: secret.slice(0, 12) }).waitFor();
    await expect(page.locator('[data-figure=key] dd').textContent()).resolves.toContain(secret.slice(0, 12));
    await expect(page.locator('[data-figure=remaining] dd').textContent()).resolves.toBe('1,500');
    await expect(page.locator('#previous-secret').textContent()).resolves.toBe(`The previous secret ${old.slice(0, 12)}… keeps working until 2026-03-10 10:00:00 UTC.`);
    expect(await page.evaluate("sessionStorage.getItem('foncier-dashboard-key')")).toBe(secret);
    expect(sqliteState(api.ctx).keys.findByKeyNow(secret)!.id).toBe(id);
    expect(balanceOf(api, secret)).toBe(1500);
    mkdirSync(path.dirname(SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });

    // The old secret works through its grace period, and not a millisecond after.
    api.clock.set('2026-03-10T09:59:59.999Z');
    expect((await api.get('/v1/account', old)).status).toBe(200);
    api.clock.set('2026-03-10T10:00:00.000Z');
    const late = await api.get('/v1/account', old);
    expect([late.status, late.body.error.code]).toEqual([401, 'unknown_key']);
    await page.fill('#key', old);
    await page.click('#key-form button[type=submit]');
    await page.waitForSelector('#status.error');
    await expect(page.locator('#status').textContent()).resolves.toContain('unknown_key');
    await expect(page.locator('#key-actions').isHidden()).resolves.toBe(true);
    expect(problems.splice(0)).toEqual([refusedLoad('401 (Unauthorized)')]);

    // The new secret: the roll is in the key's request log, the old secret no longer mentioned.
    await signIn(page, secret);
    await expect(page.locator('#previous-secret').isHidden()).resolves.toBe(true);
    const endpoints = await page.$$eval('#requests tbody tr[data-request-id]', (rows) => rows.map((r) => r.children[2].textContent));
    expect(endpoints).toContain('POST /v1/account/roll');
    expect(endpoints).toContain('GET /v1/meta/sources');

    // Revoke: the first click only asks; cancelling keeps the key.
    await page.click('#revoke-start');
    await page.waitForSelector('#revoke-confirm:not([hidden])');
    await expect(page.locator('#revoke-question').textContent()).resolves.toContain(id);
    await page.click('#revoke-cancel');
    await expect(page.locator('#revoke-confirm').isHidden()).resolves.toBe(true);
    expect((await api.get('/v1/account', secret)).status).toBe(200);
    await page.click('#revoke-start');
    await page.click('#revoke-confirm-button');
    await page.locator('#status', { hasText: 'revoked' }).waitFor();
    await expect(page.locator('#status').textContent()).resolves.toBe(`Key ${id} (${secret.slice(0, 12)}…) revoked on 2026-03-10 10:00:00 UTC.`);
    await expect(page.locator('#key-actions').isHidden()).resolves.toBe(true);
    await expect(page.locator('#account').isHidden()).resolves.toBe(true);
    expect(await page.evaluate("sessionStorage.getItem('foncier-dashboard-key')")).toBeNull();
    const after = await api.get('/v1/account', secret);
    expect([after.status, after.body.error.code]).toEqual([401, 'inactive_key']);
    const log = (await sqliteState(api.ctx).requestLog.recent(id, 100)).map((q) => `${q.endpoint} ${q.status}`);
    expect(log).toEqual(expect.arrayContaining(['POST /v1/account/revoke 200', 'POST /v1/account/roll 200']));

    expect(problems).toEqual([]);
    expect(outside).toEqual([]);
    await context.close();
  });

  it('gives a visitor Free keys until the address’s daily limit, then shows the API’s refusal', async () => {
    api.clock.set('2026-03-11T22:00:00Z');
    const { context, page, problems, outside } = await open();
    await page.waitForSelector('#free-key:not([hidden])');

    await page.fill('#free-key-label', 'e2e visitor');
    await page.click('#free-key-button');
    await page.waitForSelector('#free-key-result:not([hidden])');
    const first = (await page.locator('#free-key-secret').textContent())!;
    expect(first).toMatch(SECRET_RE);
    const rec = sqliteState(api.ctx).keys.findByKeyNow(first)!;
    expect(rec).toMatchObject({ plan: 'Free', label: 'e2e visitor', isActive: true });
    await expect(page.locator('#free-key-status').textContent()).resolves.toBe(`Created ${rec.id}: Free plan, 100 credits until 2026-04-01.`);

    // "Use this key" signs the page in with it; its creation is its first request.
    await page.click('#free-key-use');
    await page.locator('#status', { hasText: first.slice(0, 12) }).waitFor();
    await expect(page.locator('[data-figure=plan] dd').textContent()).resolves.toBe('Free');
    await expect(page.locator('[data-figure=remaining] dd').textContent()).resolves.toBe('100');
    const endpoints = await page.$$eval('#requests tbody tr[data-request-id]', (rows) => rows.map((r) => r.children[2].textContent));
    // (The page's own GET /v1/account* calls may be logged already: they run side by side.)
    expect(endpoints.at(-1)).toBe('POST /v1/account/free-key');
    expect(endpoints.filter((e) => !e!.startsWith('GET /v1/account'))).toEqual(['POST /v1/account/free-key']);

    // The second key of the day is the last one for this address (FREE_KEYS_PER_ADDRESS_PER_DAY=2 here).
    await page.fill('#free-key-label', '');
    await page.click('#free-key-button');
    await expect.poll(async () => (await page.locator('#free-key-result').isVisible()) && (await page.locator('#free-key-secret').textContent()) !== first).toBe(true);
    const second = (await page.locator('#free-key-secret').textContent())!;
    expect(second).toMatch(SECRET_RE);
    await page.click('#free-key-button');
    await page.waitForSelector('#free-key-status.error');
    await expect(page.locator('#free-key-status').textContent()).resolves.toBe(
      'free_key_limit_reached: this address has had its 2 free keys of the day (UTC); retry in 7200 s, or ask the operator for a key',
    );
    await expect(page.locator('#free-key-result').isHidden()).resolves.toBe(true);
    expect(problems.splice(0)).toEqual([refusedLoad('429 (Too Many Requests)')]);
    expect((await sqliteState(api.ctx).keys.listKeys()).filter((k) => k.plan === 'Free').map((k) => k.id).sort()).toEqual(
      [first, second].map((k) => sqliteState(api.ctx).keys.findByKeyNow(k)!.id).sort(),
    );

    // The next UTC day, the address may have keys again.
    api.clock.set('2026-03-12T00:00:00Z');
    await page.click('#free-key-button');
    await page.waitForSelector('#free-key-result:not([hidden])');
    await expect(page.locator('#free-key-status').textContent()).resolves.toMatch(/^Created key_\w+: Free plan/);

    expect(problems).toEqual([]);
    expect(outside).toEqual([]);
    await context.close();
  });
});
