// The SQLite engine adopts a state database written before the state module existed (fixtures/main-state.sql: a dump
// of a file made by the former single-file Store, whose request_log table was created outside the migrations): opened
// by the engine, it is migrated in place with every row kept, ends with the schema of a new file, and serves on.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { FixedClock } from '../../../api/clock';
import { openStore, type StateStore } from '../../../api/store';

const FIXTURE = path.join(import.meta.dirname, 'fixtures', 'main-state.sql');
const KEY_A = 'key_PtxPSpE3S9WMau2E';
const KEY_B = 'key_ex8Bvc3EIObag2SY';
const PROPERTY = 'prop_SF7UnGw20PU1vtNT';
const ALERT = 'alert_X3zdt2EnVZEXDWSl';

const dirs: string[] = [];
const states: StateStore[] = [];
afterEach(async () => {
  for (const s of states.splice(0)) await s.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function tempFile(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'foncier-adopt-'));
  dirs.push(dir);
  return path.join(dir, 'api.sqlite');
}

/** The former code's database, restored from its dump. */
function formerDatabase(): string {
  const file = tempFile();
  const db = new Database(file);
  db.exec(fs.readFileSync(FIXTURE, 'utf8'));
  db.close();
  return file;
}

function inspect(file: string) {
  const db = new Database(file, { readonly: true });
  try {
    const version = db.pragma('user_version', { simple: true }) as number;
    const schema = (db.prepare("select type, name, sql from sqlite_master where name not like 'sqlite_%' order by type, name").all() as Array<{ type: string; name: string; sql: string | null }>).map(
      (r) => ({ ...r, sql: r.sql?.replace(/\s+/g, ' ').replace(/\( /g, '(').replace(/ \)/g, ')').trim() ?? null }),
    );
    const counts = Object.fromEntries(
      ['api_keys', 'credit_ledger', 'portfolio_properties', 'alerts', 'alert_deliveries', 'request_log', 'service_state'].map((t) => [t, (db.prepare(`select count(*) as n from ${t}`).get() as { n: number }).n]),
    );
    return { version, schema, counts };
  } finally {
    db.close();
  }
}

describe('SQLite engine: adopting a database of the former code', () => {
  it('the fixture is the former schema, at version 4, with its request_log made outside the migrations', () => {
    const before = inspect(formerDatabase());
    expect(before.version).toBe(4);
    expect(before.counts).toEqual({ api_keys: 2, credit_ledger: 7, portfolio_properties: 1, alerts: 1, alert_deliveries: 2, request_log: 1, service_state: 1 });
  });

  it('migrates in place: every row kept, the same schema as a new file, the latest version', async () => {
    const file = formerDatabase();
    const before = inspect(file);
    const state = openStore({ file, clock: new FixedClock('2026-10-06T08:00:00.000Z') });
    states.push(state);
    await state.ready();
    await state.close();
    const after = inspect(file);
    expect(after.counts).toEqual(before.counts);

    const freshFile = tempFile();
    const fresh = openStore({ file: freshFile, clock: new FixedClock() });
    await fresh.close();
    const made = inspect(freshFile);
    expect(after.version).toBe(made.version);
    expect(after.version).toBeGreaterThan(4);
    expect(after.schema).toEqual(made.schema);
  });

  it('serves the adopted rows through the interface: keys, balances, pending charges, portfolio, alerts, deliveries, log', async () => {
    const clock = new FixedClock('2026-10-06T08:00:00.000Z');
    const state = openStore({ file: formerDatabase(), clock });
    states.push(state);
    await state.ready();

    const a = await state.keys.findById(KEY_A);
    expect(a).toMatchObject({ plan: 'Indie', label: 'adopted indie', isActive: true, topup: 300, period: '2026-10' });
    // 2,000 a month: 10 kept, 7 refunded, 5 still pending.
    expect((await state.credits.balance(KEY_A))!.remaining).toBe(2_000 - 10 - 5 + 300);
    expect((await state.keys.findById(KEY_B))!.isActive).toBe(false);
    expect((await state.keys.listKeys()).map((k) => k.id)).toEqual([KEY_A, KEY_B]);
    // The pending charge its (dead) process left: refunded once, as any abandoned one.
    expect(await state.credits.refundAbandoned(() => true)).toBe(1);
    expect((await state.credits.balance(KEY_A))!.remaining).toBe(2_000 - 10 + 300);

    expect(JSON.parse((await state.portfolio.get(KEY_A, PROPERTY))!.data)).toMatchObject({ label: 'T3 Lyon', surface: 58 });
    expect(await state.alerts.get(KEY_A, ALERT)).toMatchObject({ label: 'Lyon 3e', secret: 'whsec_adopted', is_active: 1, prix_max: 400_000 });
    const log = await state.deliveries.list(ALERT, 10, 0);
    expect(log.items.map((i) => [i.transaction_id, i.status]).sort()).toEqual([['t_pending', 'pending'], ['t_sent', 'succeeded']]);
    const due = await state.deliveries.due(clock.now(), 10);
    expect(due).toHaveLength(1);
    expect(JSON.parse(due[0].payload).transaction.id).toBe('t_pending');
    expect((await state.requestLog.recent(KEY_A, 10)).map((r) => r.request_id)).toEqual(['req_kept']);
    expect(await state.serviceState.get('alerts.scan.imported_at')).toBe('2026-10-01T00:00:00.000Z');

    // And writes on: a new key, a second alert after the adopted one.
    const c = await state.keys.createKey({ plan: 'Free' });
    expect((await state.credits.charge(c.id, 3, 'r'))).toEqual({ ok: true, used: 3, remaining: 97 });
    expect(await state.alerts.insert(KEY_A, 'alert_new', 'whsec_new', { label: 'n', webhook_url: 'https://h.example.org', code_postal: null, commune: null, code_departement: '69', type_local: null, prix_min: null, prix_max: null, surface_min: null, surface_max: null }, clock.now().toISOString(), 20)).toBe(true);
    expect((await state.alerts.list(KEY_A, 10, 0)).rows.map((r) => r.id)).toEqual([ALERT, 'alert_new']);
  });

  it('refuses a database newer than the code rather than writing to it', async () => {
    const file = formerDatabase();
    const db = new Database(file);
    db.pragma('user_version = 999');
    db.close();
    expect(() => openStore({ file, clock: new FixedClock() })).toThrow(/newer than this code/);
  });
});
