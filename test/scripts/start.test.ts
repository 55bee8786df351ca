// `npm start` on a data folder that is not the demo's (no demo key is made there): it says how to create a key, and the
// command it prints gives a key the running server accepts.
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../lib/config';
import { freePort } from '../../lib/net';
import { testData } from '../helpers/data';

let stop: (() => Promise<void>) | undefined;
afterAll(() => stop?.());

describe('npm start on a data folder without the demo', () => {
  it('prints how to create a key, and that command makes a key the server accepts', async () => {
    // A private copy: the server's start-up and its webhook worker may write into the folder.
    const dataDir = await testData('sample', { writable: true });
    const port = await freePort();
    const env = { ...process.env, DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'silent' };
    const server = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise<void>((resolve) => server.once('exit', () => resolve()));
    stop = async () => {
      if (server.exitCode === null) server.kill('SIGTERM');
      await exited;
    };
    let out = '';
    server.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    server.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    for (const deadline = Date.now() + 120_000; !/create a key with/.test(out); await new Promise((r) => setTimeout(r, 200))) {
      if (server.exitCode !== null || Date.now() > deadline) throw new Error(`no hint from npm start:\n${out}`);
    }
    expect(out).not.toMatch(/Demo API key/);
    const hint = /create a key with\s+npm run (keys -- create [^\n]*?)\s+\(DATA_DIR=([^)]+)\)/.exec(out);
    expect(hint, out).not.toBeNull();
    expect(hint![2]).toBe(dataDir);

    // The printed command, as npm would run it: `npm run keys -- <args>` is `tsx scripts/keys.ts <args>`.
    const args = [...hint![1].replace(/^keys -- /, '').matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]);
    const created = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'scripts/keys.ts', ...args], { cwd: repoRoot, env });
    const key = created.stdout.trim().split('\n').pop()!;
    const account = await fetch(`http://127.0.0.1:${port}/v1/account`, { headers: { 'X-API-Key': key } });
    expect(account.status).toBe(200);
    expect(((await account.json()) as { key: { plan: string; label: string } }).key).toMatchObject({ plan: 'Scale', label: 'my app' });
  }, 240_000);
});
