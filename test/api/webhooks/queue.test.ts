// The delivery queue's rows hold typed payload fields (the state's migration 0004): the body rebuilt at delivery is the
// webhook payload, identical at every attempt; rows queued before the migration keep their exact body; a pair is
// never queued twice, also within one batch and across batches.
import Database from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FixedClock } from '../../../api/clock';
import { SqliteState } from '../../../api/store/sqlite';
import { SqliteDeliveries } from '../../../api/store/sqlite/deliveries';
import { migrationFiles } from '../../../api/store/sqlite/migrate';
import type { Match, TransactionPayload } from '../../../api/webhooks/queue';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
function tmpFile(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'foncier-queue-'));
  dirs.push(dir);
  return path.join(dir, 'store.sqlite');
}

const NOW = new Date('2026-04-15T06:00:00.000Z');
const tx = (id: string, over: Partial<TransactionPayload> = {}): TransactionPayload => ({
  id, date_mutation: '2025-03-02', valeur_fonciere: 187500.5, prix_m2: 3012.34, type_local: 'Appartement', surface_reelle_bati: 62.25,
  nombre_pieces_principales: 3, commune: 'Bordeaux', code_postal: '33000', latitude: 44.837789, longitude: -0.57918, ...over,
});

// The body as the specification's second transaction shape, written out here independently of queue.ts.
const expectedBody = (deliveryId: string, alertId: string, t: TransactionPayload) =>
  `{"event":"new_transaction","alert_id":${JSON.stringify(alertId)},"delivery_id":${JSON.stringify(deliveryId)},"created_at":"${NOW.toISOString()}",` +
  `"transaction":{"id":${JSON.stringify(t.id)},"date_mutation":${JSON.stringify(t.date_mutation)},"valeur_fonciere":${t.valeur_fonciere},` +
  `"prix_m2":${t.prix_m2},"type_local":${JSON.stringify(t.type_local)},"surface_reelle_bati":${t.surface_reelle_bati},` +
  `"nombre_pieces_principales":${t.nombre_pieces_principales},"commune":${JSON.stringify(t.commune)},"code_postal":${JSON.stringify(t.code_postal)},` +
  `"latitude":${t.latitude},"longitude":${t.longitude}}}`;

function withAlerts(store: SqliteState, ids: string[]): void {
  const key = store.keys.createKeyNow({ plan: 'Enterprise' }).id;
  const insert = store.db.prepare(`insert into alerts (id, key_id, seq, webhook_url, secret, is_active, created_at, updated_at) values (?, ?, ?, 'https://example.org/x', 'whsec_x', 1, '', '')`);
  ids.forEach((id, i) => insert.run(id, key, i + 1));
}

describe('delivery queue', () => {
  it('rebuilds the webhook payload from the typed columns, the same at every attempt', async () => {
    const store = new SqliteState(tmpFile(), new FixedClock(NOW));
    withAlerts(store, ['alert_a', 'alert_b']);
    const nulls = tx('42', { prix_m2: null, surface_reelle_bati: null, nombre_pieces_principales: null, commune: null, code_postal: null, latitude: null, longitude: null, type_local: 'Dépendance' });
    const matches: Match[] = [{ alert_id: 'alert_a', transaction: tx('7') }, { alert_id: 'alert_b', transaction: nulls }];
    expect(await store.deliveries.enqueue(matches, NOW)).toBe(2);
    const due = await store.deliveries.due(NOW, 10);
    expect(due.map((d) => d.payload)).toEqual([expectedBody(due[0].id, 'alert_a', tx('7')), expectedBody(due[1].id, 'alert_b', nulls)]);
    expect(due[0].id).toMatch(/^msg_[0-9a-z]{9}[0-9A-Za-z]{12}$/);
    await store.deliveries.recordAttempt(due[0], 'test', { status: 500 }, NOW, [0, 0, 0]);
    const again = (await store.deliveries.due(NOW, 10)).find((d) => d.id === due[0].id);
    expect(again?.attempts).toBe(1);
    expect(again?.payload).toBe(due[0].payload);
    await store.close();
  });

  it('never queues a pair twice: within one batch, across batches, and more rows than one statement takes', async () => {
    const store = new SqliteState(tmpFile(), new FixedClock(NOW));
    withAlerts(store, ['alert_a', 'alert_b']);
    const n = 1000; // several multi-row statements and a remainder
    const batch = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => ({ alert_id: (from + i) % 2 ? 'alert_b' : 'alert_a', transaction: tx(String(Math.floor((from + i) / 2))) }));
    const first = batch(0, n);
    expect(await store.deliveries.enqueue([...first, ...first.slice(0, 77)], NOW)).toBe(n);
    expect(await store.deliveries.enqueue(batch(n - 101, n + 203), NOW)).toBe(203);
    const rows = store.db.prepare('select alert_id, transaction_id, id from alert_deliveries').all() as Array<{ alert_id: string; transaction_id: string; id: string }>;
    expect(rows).toHaveLength(n + 203);
    expect(new Set(rows.map((r) => `${r.alert_id}/${r.transaction_id}`)).size).toBe(n + 203);
    expect(new Set(rows.map((r) => r.id)).size).toBe(n + 203);
    await store.close();
  });

  it('migrates rows queued with their JSON body to typed columns, the body unchanged', async () => {
    const file = tmpFile();
    const old = new Database(file);
    old.exec(migrationFiles().slice(0, 3).map((m) => m.sql).join(';\n'));
    old.pragma('user_version = 3');
    old.exec(`insert into api_keys (id, key_hash, prefix, plan, is_active, balance, topup, period, created_at) values ('key_1', 'h', 'p', 'Enterprise', 1, 0, 0, '2026-04', '')`);
    old.exec(`insert into alerts (id, key_id, seq, webhook_url, secret, is_active, created_at, updated_at) values ('alert_a', 'key_1', 1, 'https://example.org/x', 'whsec_x', 1, '', '')`);
    const t = tx('123456');
    const id = 'msg_00000000aAbBcCdDeEfF';
    const body = expectedBody(id, 'alert_a', t);
    old.prepare(`insert into alert_deliveries (id, seq, alert_id, transaction_id, payload, status, attempts, next_attempt_at, created_at) values (?, 1, 'alert_a', ?, ?, 'pending', 0, ?, ?)`).run(id, t.id, body, NOW.toISOString(), NOW.toISOString());
    old.close();
    const store = new SqliteState(file, new FixedClock(NOW));
    expect(store.db.pragma('user_version', { simple: true })).toBe(migrationFiles().length);
    expect((await store.deliveries.due(NOW, 10)).map((d) => [d.id, d.payload])).toEqual([[id, body]]);
    expect(await store.deliveries.enqueue([{ alert_id: 'alert_a', transaction: t }], NOW)).toBe(0);
    await store.close();
  });
});

describe('claims on SQLite: one worker at a time', () => {
  it('lets one owner claim, passes on when the holder releases or its lease expires, never the same delivery twice', async () => {
    const store = new SqliteState(tmpFile(), new FixedClock(NOW));
    withAlerts(store, ['alert_a']);
    await store.deliveries.enqueue([1, 2, 3].map((i) => ({ alert_id: 'alert_a', transaction: tx(String(i)) })), NOW);
    let wall = Date.parse('2026-04-15T06:00:00.000Z');
    const q = new SqliteDeliveries(store.db, () => wall);

    const a1 = await q.claim('a', NOW, 2, 1_000);
    expect(a1.map((d) => JSON.parse(d.payload).transaction.id)).toEqual(['1', '2']);
    // The holder is not handed what it holds already; another owner gets nothing while the lease lives.
    expect((await q.claim('a', NOW, 5, 1_000)).map((d) => JSON.parse(d.payload).transaction.id)).toEqual(['3']);
    expect(await q.claim('b', NOW, 5, 1_000)).toEqual([]);
    expect(await q.anyDue(NOW, 'b')).toBe(false);
    expect(await q.anyDue(NOW, 'a')).toBe(false); // it holds all three
    expect(await q.confirm(a1[0], 'a', 1_000)).toBe(true);
    expect(await q.confirm(a1[0], 'b', 1_000)).toBe(false);
    expect(await q.recordAttempt(a1[0], 'a', { status: 204 }, NOW, [60_000])).toBe('succeeded');

    // The lease expires (its process died): another owner takes over every unrecorded delivery, the old holder none.
    wall += 1_001;
    const b1 = await q.claim('b', NOW, 5, 1_000);
    expect(b1.map((d) => JSON.parse(d.payload).transaction.id)).toEqual(['2', '3']);
    expect(await q.claim('a', NOW, 5, 1_000)).toEqual([]);
    expect(await q.confirm(a1[1], 'a', 1_000)).toBe(false);

    // A graceful stop gives the lease back at once.
    await q.release('b');
    expect((await q.claim('a', NOW, 5, 1_000)).map((d) => JSON.parse(d.payload).transaction.id)).toEqual(['2', '3']);
    await store.close();
  });
});
