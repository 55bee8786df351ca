// Alert deliveries end to end: the real pipeline imports DVF releases into a running API, the on-swap scan enqueues
// the matches, the worker delivers them to a local HTTPS receiver that verifies every signature with the
// `standardwebhooks` package. First import → deliveries; the same release again → none; a new release → only its
// sales; retries on the injected clock; 410 deactivates; the address rule at delivery; the daily scan; the lease.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAILY_SCAN_CRON, startWebhooks, type Webhooks } from '../../../api/webhooks';
import { scanDaily } from '../../../api/webhooks/scan';
import { buildMarts } from '../../../marts/runner';
import { runSource } from '../../../pipeline/run';
import type { FixedClock } from '../../../api/clock';
import { startTestApi, type TestApi } from '../../helpers/api';
import { sampleTree, tempDir } from '../../helpers/samples';
import { startReceiver, type Receiver } from '../../helpers/webhook-receiver';

const T1 = '2022-06-15T12:00:00.000Z';
const T2 = '2022-11-02T08:30:00.000Z';
const MINUTE = 60_000;

let api: TestApi;
let receiver: Receiver;
let hooks: Webhooks;
let key: string;
const tree = sampleTree();

beforeAll(async () => {
  receiver = await startReceiver();
  // No data yet: the API starts empty and sees the first import arrive.
  api = await startTestApi({ dataRoot: tempDir('foncier-webhooks-'), now: T1 });
  Object.assign(api.ctx.webhooks, { allowedHosts: ['127.0.0.1'], ca: receiver.ca, timeoutMs: 5_000 });
  hooks = await startWebhooks(api.ctx, { cron: false, pollMs: 20, leaseMs: 5_000 });
  key = api.key({ plan: 'Scale' });
}, 60_000);

afterAll(async () => {
  await hooks?.stop();
  await api?.close();
  await receiver?.close();
});

async function send(method: string, path: string, body?: unknown) {
  const request = () => fetch(api.url + path, { method, headers: { 'X-API-Key': key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  // A GET after a long wait may reuse a keep-alive socket the server is just closing (ECONNRESET): asked again once.
  const res = await request().catch((e: Error) => (method === 'GET' ? request() : Promise.reject(e)));
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

async function createAlert(path: string, criteria: Record<string, unknown>): Promise<string> {
  const r = await send('POST', '/v1/alerts', { webhook_url: receiver.url + path, ...criteria });
  expect(r.status).toBe(201);
  receiver.secrets.set(r.body.alert.id, r.body.signing_secret);
  return r.body.alert.id;
}

/** Imports a release at `now`, builds the serving database, and waits for the on-swap scan and the deliveries. */
async function importRelease(run: () => Promise<unknown>): Promise<{ enqueued: number }> {
  const before = hooks.lastImportScan;
  await run();
  await buildMarts({ dataRoot: api.dataRoot });
  for (let t = 0; hooks.lastImportScan === before && t < 400; t++) await new Promise((r) => setTimeout(r, 25));
  const report = await hooks.lastImportScan!;
  await hooks.worker.drain();
  return report;
}

const release1 = () => runSource({ source: 'dvf', fromDir: tree, annees: [2021], departements: ['33'], dataRoot: api.dataRoot, now: new Date(T1) });
const release2 = () => runSource({ source: 'dvf', format: 'dgfip', fromDir: tree, annees: [2020], departements: ['01'], dataRoot: api.dataRoot, now: new Date(T2) });

interface Sale {
  id: string;
  code_postal: string | null;
  code_departement: string;
  commune: string | null;
  type_local: string;
  valeur_fonciere: number;
  surface_reelle_bati: number | null;
}

/** Every sale served, read without the scan's SQL: the test filters them in JavaScript. */
const sales = async () =>
  (await api.ctx.db.query<Sale & { id: bigint }>('select id, code_postal, code_departement, commune, type_local, valeur_fonciere, surface_reelle_bati from ventes')).map((s) => ({ ...s, id: String(s.id) }));

const deliveredTo = (alertId: string) => receiver.received.filter((r) => r.payload.alert_id === alertId);
const ids = (list: Array<{ payload: { transaction: { id: string } } }>) => list.map((r) => r.payload.transaction.id).sort();

const alerts: Record<string, string> = {};
const clock = () => api.ctx.clock as FixedClock;

describe('deliveries after imports', () => {
  it('first import: every matching sale is delivered once, signed, with the webhook payload', async () => {
    alerts.all33230 = await createAlert('/ok', { code_postal: '33230' });
    alerts.houses = await createAlert('/ok', { label: 'houses', filters: { commune: 'abzac', type_local: 'Maison', prix_min: 100_000, prix_max: 250_000, surface_min: 60 } });
    alerts.dep01 = await createAlert('/ok', { code_departement: '01' });
    alerts.inactive = await createAlert('/ok', { code_postal: '33230' });
    expect((await send('PUT', `/v1/alerts/${alerts.inactive}`, { is_active: false })).status).toBe(200);

    const report = await importRelease(release1);
    const all = await sales();
    const expected33230 = all.filter((s) => s.code_postal === '33230').map((s) => s.id).sort();
    const expectedHouses = all
      .filter((s) => s.commune?.toUpperCase() === 'ABZAC' && s.type_local === 'Maison' && s.valeur_fonciere >= 100_000 && s.valeur_fonciere <= 250_000 && (s.surface_reelle_bati ?? -1) >= 60)
      .map((s) => s.id)
      .sort();
    expect(expected33230.length).toBeGreaterThan(20);
    expect(expectedHouses.length).toBeGreaterThan(0);
    expect(expectedHouses.length).toBeLessThan(expected33230.length);
    expect(report.enqueued).toBe(expected33230.length + expectedHouses.length);

    expect(ids(deliveredTo(alerts.all33230))).toEqual(expected33230);
    expect(ids(deliveredTo(alerts.houses))).toEqual(expectedHouses);
    expect(deliveredTo(alerts.dep01)).toEqual([]);
    expect(deliveredTo(alerts.inactive)).toEqual([]);
    expect(receiver.received.every((r) => r.verifyError === undefined)).toBe(true);
    expect(new Set(receiver.received.map((r) => r.id)).size).toBe(receiver.received.length);

    const one = deliveredTo(alerts.houses)[0];
    const sale = (await api.ctx.db.query<Record<string, unknown>>(
      `select date_mutation::VARCHAR as d, valeur_fonciere, prix_m2, type_local, surface_reelle_bati, nombre_pieces_principales, commune, code_postal, latitude, longitude from ventes where id = $id`,
      { id: BigInt(one.payload.transaction.id) },
    ))[0];
    expect(one.payload).toEqual({
      event: 'new_transaction',
      alert_id: alerts.houses,
      delivery_id: one.id,
      created_at: T1,
      transaction: {
        id: one.payload.transaction.id, date_mutation: sale.d, valeur_fonciere: sale.valeur_fonciere, prix_m2: Math.round((sale.prix_m2 as number) * 100) / 100,
        type_local: 'Maison', surface_reelle_bati: sale.surface_reelle_bati, nombre_pieces_principales: sale.nombre_pieces_principales,
        commune: sale.commune, code_postal: sale.code_postal, latitude: sale.latitude, longitude: sale.longitude,
      },
    });
    expect(Math.abs(Number(one.timestamp) - Date.now() / 1000)).toBeLessThan(120);

    const list = await send('GET', `/v1/alerts/${alerts.houses}/deliveries`);
    expect(list.body.total).toBe(expectedHouses.length);
    expect(list.body.deliveries[0]).toMatchObject({ status: 'succeeded', attempts: 1, response_status: 204, next_attempt_at: null, last_error: null });
  }, 120_000);

  it('re-import of the same release: nothing new is delivered', async () => {
    const count = receiver.received.length;
    const report = await importRelease(async () => {
      await release1();
      await runSource({ source: 'dvf', fromDir: tree, annees: [2021], departements: ['33'], dataRoot: api.dataRoot, now: new Date(T2), force: true });
    });
    expect(report.enqueued).toBe(0);
    expect(receiver.received.length).toBe(count);
  }, 120_000);

  it('a new release: only its sales, and failures retried at 1, 5 and 25 minutes on the injected clock, then failed', async () => {
    clock().set(T2);
    alerts.fail = await createAlert('/fail', { code_departement: '01', type_local: 'Maison' });
    alerts.gone = await createAlert('/gone', { code_departement: '01' });
    const count33230 = deliveredTo(alerts.all33230).length;
    await importRelease(release2);

    const all = await sales();
    const expected01 = all.filter((s) => s.code_departement === '01').map((s) => s.id).sort();
    expect(expected01.length).toBeGreaterThan(0);
    expect(ids(deliveredTo(alerts.dep01))).toEqual(expected01);
    expect(deliveredTo(alerts.all33230).length).toBe(count33230);
    expect(receiver.received.every((r) => r.verifyError === undefined)).toBe(true);

    const failing = all.filter((s) => s.code_departement === '01' && s.type_local === 'Maison').length;
    expect(failing).toBeGreaterThan(0);
    expect(deliveredTo(alerts.fail).length).toBe(failing);

    // Not before the delay; at 1, then 5, then 25 minutes after each failure; then failed.
    for (const [delay, attempts] of [[1, 2], [5, 3], [25, 4]]) {
      clock().advance(delay * MINUTE - 1);
      await hooks.worker.drain();
      expect(deliveredTo(alerts.fail).length).toBe(failing * (attempts - 1));
      clock().advance(1);
      await hooks.worker.drain();
      expect(deliveredTo(alerts.fail).length).toBe(failing * attempts);
    }
    clock().advance(24 * 60 * MINUTE);
    await hooks.worker.drain();
    expect(deliveredTo(alerts.fail).length).toBe(failing * 4);
    // Each retry is the same delivery: same webhook-id, freshly signed.
    const perId = new Map<string, number>();
    for (const r of deliveredTo(alerts.fail)) perId.set(r.id, (perId.get(r.id) ?? 0) + 1);
    expect([...perId.values()].every((n) => n === 4)).toBe(true);
    const failList = (await send('GET', `/v1/alerts/${alerts.fail}/deliveries`)).body;
    expect(failList.deliveries.every((d: { status: string; attempts: number; response_status: number }) => d.status === 'failed' && d.attempts === 4 && d.response_status === 500)).toBe(true);

    // 410 Gone: the alert is deactivated after its first answer, and its other deliveries wait.
    const gone = (await send('GET', '/v1/alerts')).body.alerts.find((a: { id: string }) => a.id === alerts.gone);
    expect(gone).toMatchObject({ is_active: false, deactivated_reason: expect.stringMatching(/410 Gone/) });
    expect(deliveredTo(alerts.gone).length).toBeGreaterThanOrEqual(1);
    expect(deliveredTo(alerts.gone).length).toBeLessThanOrEqual(api.ctx.webhooks.concurrency);
    const goneList = (await send('GET', `/v1/alerts/${alerts.gone}/deliveries?limit=100`)).body;
    expect(goneList.deliveries.filter((d: { status: string }) => d.status === 'failed')).toHaveLength(deliveredTo(alerts.gone).length);
  }, 120_000);

  it('a receiver that does not answer within the timeout fails the attempt (retried later)', async () => {
    api.ctx.webhooks.timeoutMs = 1_000;
    const hang = await createAlert('/hang', { code_departement: '01', type_local: 'Maison' });
    try {
      const started = Date.now();
      expect((await scanDaily(api.ctx)).enqueued).toBeGreaterThan(0);
      await hooks.worker.drain();
      expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
      const list = (await send('GET', `/v1/alerts/${hang}/deliveries`)).body;
      // Most reach the receiver; on a loaded machine a TLS handshake may itself outlast the 1 s deadline.
      expect(deliveredTo(hang).length).toBeGreaterThan(0);
      expect(deliveredTo(hang).length).toBeLessThanOrEqual(list.total);
      expect(list.deliveries.every((d: { status: string; attempts: number; response_status: null; last_error: string }) =>
        d.status === 'pending' && d.attempts === 1 && d.response_status === null && /no answer within 1000 ms/.test(d.last_error))).toBe(true);
    } finally {
      await send('PUT', `/v1/alerts/${hang}`, { is_active: false });
      api.ctx.webhooks.timeoutMs = 5_000;
    }
  }, 60_000);

  it('the daily scan covers the last 48 hours of imports, and the queue never enqueues a pair twice', async () => {
    clock().set(new Date(new Date(T2).getTime() + 47 * 60 * MINUTE));
    const late = await createAlert('/ok', { code_departement: '01' });
    const r = await scanDaily(api.ctx);
    const expected01 = (await sales()).filter((s) => s.code_departement === '01').length;
    expect(r.enqueued).toBe(expected01); // only the new alert's: dep01 already has them
    await hooks.worker.drain();
    expect(deliveredTo(late).length).toBe(expected01);

    clock().set(new Date(new Date(T2).getTime() + 49 * 60 * MINUTE));
    const later = await createAlert('/ok', { code_departement: '01' });
    expect((await scanDaily(api.ctx)).enqueued).toBe(0);
    expect(deliveredTo(later)).toEqual([]);
  });

  it('checks the address again at delivery: a host no longer allowed is refused without connecting', async () => {
    clock().set(new Date(new Date(T2).getTime() + 60 * MINUTE));
    const alert = await createAlert('/ok', { code_departement: '01' });
    api.ctx.webhooks.allowedHosts = [];
    try {
      const count = receiver.received.length;
      await scanDaily(api.ctx);
      await hooks.worker.drain();
      expect(receiver.received.length).toBe(count);
      const list = (await send('GET', `/v1/alerts/${alert}/deliveries`)).body;
      expect(list.total).toBeGreaterThan(0);
      expect(list.deliveries.every((d: { status: string; attempts: number; last_error: string }) => d.status === 'pending' && d.attempts === 1 && /refused without connecting/.test(d.last_error))).toBe(true);
    } finally {
      api.ctx.webhooks.allowedHosts = ['127.0.0.1'];
    }
  });
});

describe('the daily scan schedule', () => {
  it('runs at 06:00 UTC every day', async () => {
    const cron = await import('node-cron');
    const task = cron.schedule(DAILY_SCAN_CRON, () => {}, { timezone: 'UTC', name: 'schedule-check' });
    try {
      const runs = task.getNextRuns(3).map((d) => d.toISOString());
      expect(runs.every((r) => r.slice(11, 19) === '06:00:00')).toBe(true);
      expect(new Set(runs.map((r) => r.slice(0, 10))).size).toBe(3);
    } finally {
      await task.destroy();
    }
  });
});
