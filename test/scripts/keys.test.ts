// The keys CLI as an operator runs it: the printed key authenticates, list/revoke/topup act on DATA_DIR, bad input exits 1.
import { execFile, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../api/clock';
import { SqliteState } from '../../api/store/sqlite';
import { repoRoot } from '../../lib/config';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'foncier-keys-cli-'));
const dbFile = path.join(dataDir, 'api.sqlite');

function keys(...args: string[]) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/keys.ts', ...args], {
    cwd: repoRoot,
    env: { ...process.env, DATA_DIR: dataDir },
    encoding: 'utf8',
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The same, without blocking: independent invocations run side by side (each is mostly process start-up). */
function keysAsync(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, ['--import', 'tsx', 'scripts/keys.ts', ...args], { cwd: repoRoot, env: { ...process.env, DATA_DIR: dataDir }, encoding: 'utf8' }, (_err, stdout, stderr) =>
      resolve({ code: child.exitCode, stdout, stderr }),
    );
  });
}

function lookup<T>(fn: (keys: SqliteState['keys']) => T): T {
  const store = new SqliteState(dbFile, systemClock);
  try {
    return fn(store.keys);
  } finally {
    void store.close();
  }
}

afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

describe('npm run keys', () => {
  let key = '';

  it('create prints the key alone on stdout, and that key authenticates', () => {
    const r = keys('create', '--plan', 'Scale', '--label', 'Acme prod');
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n').filter(Boolean);
    expect(lines).toHaveLength(1);
    key = lines.at(-1)!;
    expect(key).toMatch(/^fk_live_[0-9A-Za-z]{32}$/);
    expect(r.stderr).toMatch(/Scale/);
    expect(fs.existsSync(dbFile)).toBe(true);
    const rec = lookup((s) => s.findByKeyNow(key));
    expect(rec).toMatchObject({ plan: 'Scale', label: 'Acme prod', isActive: true, balance: 50_000, topup: 0 });
  });

  it('create --credits sets the starting balance; plan names are case-insensitive', () => {
    const r = keys('create', '--plan', 'free', '--credits', '250');
    expect(r.code).toBe(0);
    const rec = lookup((s) => s.findByKeyNow(r.stdout.trim()));
    expect(rec).toMatchObject({ plan: 'Free', balance: 250 });
  });

  it('list shows the keys with their prefix, never the key', () => {
    const rec = lookup((s) => s.findByKeyNow(key))!;
    const r = keys('list');
    expect(r.code).toBe(0);
    const header = r.stdout.split('\n')[0];
    for (const col of ['id', 'prefix', 'label', 'plan', 'active', 'balance', 'top-up', 'created']) expect(header).toContain(col);
    const row = r.stdout.split('\n').find((l) => l.startsWith(rec.id))!;
    expect(row).toContain(key.slice(0, 12));
    expect(row).toContain('Acme prod');
    expect(row).toContain('50,000');
    expect(r.stdout).not.toContain(key);
  });

  it('topup adds credits to the key', () => {
    const id = lookup((s) => s.findByKeyNow(key))!.id;
    const r = keys('topup', id, '1000');
    expect(r.code).toBe(0);
    expect(lookup((s) => s.findByKeyNow(key))).toMatchObject({ balance: 50_000, topup: 1_000 });
  });

  it('revoke by prefix deactivates the key', () => {
    const r = keys('revoke', key.slice(0, 12));
    expect(r.code).toBe(0);
    expect(lookup((s) => s.findByKeyNow(key))!.isActive).toBe(false);
    expect(keys('list').stdout.split('\n').find((l) => l.includes(key.slice(0, 12)))).toMatch(/\bno\b/);
  });

  it('roll prints a new secret for the same key; the old one works through --grace-hours, or stops at once', () => {
    const first = keys('create', '--plan', 'Indie').stdout.trim();
    const id = lookup((s) => s.findByKeyNow(first))!.id;
    const r = keys('roll', id, '--grace-hours', '2');
    expect(r.code).toBe(0);
    const second = r.stdout.trim();
    expect(second).toMatch(/^fk_live_[0-9A-Za-z]{32}$/);
    expect(r.stderr).toMatch(new RegExp(`Rolled ${id} \\(Indie\\): the old secret ${first.slice(0, 12)}… works until \\d{4}-`));
    expect(lookup((s) => [s.findByKeyNow(first)?.id, s.findByKeyNow(second)?.id])).toEqual([id, id]);
    const third = keys('roll', second.slice(0, 12));
    expect(third.code).toBe(0);
    expect(third.stderr).toMatch(/the old secret stopped at once/);
    expect(lookup((s) => [s.findByKeyNow(first), s.findByKeyNow(second), s.findByKeyNow(third.stdout.trim())?.id])).toEqual([undefined, undefined, id]);
    const tooLong = keys('roll', id, '--grace-hours', '169');
    expect([tooLong.code, tooLong.stdout]).toEqual([1, '']);
    expect(tooLong.stderr).toMatch(/--grace-hours must be at most 168/);
  });

  it('exits 1 with a clear message on bad input', async () => {
    const badTopups = ['0', '-5', 'ten', '1.5'];
    const [badPlan, noPlan, unknownKey, unknownTopup, badCredits, unknownCommand, none, ...topups] = await Promise.all([
      keysAsync('create', '--plan', 'Gold'),
      keysAsync('create'),
      keysAsync('revoke', 'key_doesnotexist'),
      keysAsync('topup', 'key_doesnotexist', '5'),
      keysAsync('create', '--plan', 'Free', '--credits', 'lots'),
      keysAsync('frobnicate'),
      keysAsync(),
      ...badTopups.map((n) => keysAsync('topup', key.slice(0, 12), n)),
    ]);
    expect(badPlan.code).toBe(1);
    expect(badPlan.stdout).toBe('');
    expect(badPlan.stderr).toMatch(/unknown plan "Gold".*Free, Indie, Agent, Scale, Enterprise/);

    expect(noPlan.code).toBe(1);
    expect(noPlan.stderr).toMatch(/--plan is required/);

    expect(unknownKey.code).toBe(1);
    expect(unknownKey.stderr).toMatch(/no API key matches "key_doesnotexist"/);
    expect(unknownTopup.code).toBe(1);

    badTopups.forEach((n, i) => {
      const r = topups[i];
      expect(r.code, n).toBe(1);
      expect(r.stderr).toMatch(/credits must be a positive integer/);
    });
    expect(badCredits.code).toBe(1);
    expect(unknownCommand.code).toBe(1);
    expect(none.code).toBe(1);
  });
});
