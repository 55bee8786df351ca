// Killing the pipeline in the middle of a partition leaves the lake readable and identical to before.
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../lib/config';
import { runSource } from '../pipeline/run';
import { lakeGlob, queryParquet, sampleTree, tempDir } from './helpers/samples';

/** What a reader can see: every *.parquet file of the lake and the manifest, with their hashes. */
function snapshot(dataRoot: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.parquet') || e.name === 'manifest.json') {
        out[path.relative(dataRoot, p)] = crypto.createHash('sha256').update(fs.readFileSync(p)).digest('hex');
      }
    }
  };
  walk(path.join(dataRoot, 'lake'));
  return out;
}

function runCliUntilPaused(args: string[], env: Record<string, string>): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'pipeline/cli.ts', ...args], {
      cwd: repoRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`never paused:\n${out}`)); }, 60_000);
    const onData = (d: Buffer) => {
      out += d.toString();
      if (out.includes('PAUSED before-swap')) {
        child.kill('SIGKILL'); // as abrupt as a crash or an OOM kill: no cleanup runs
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (signal === 'SIGKILL' && out.includes('PAUSED')) resolve();
      else reject(new Error(`exited ${code ?? signal} without pausing:\n${out}`));
    });
  });
}

describe('interrupted import', () => {
  it('a kill between staging and swap leaves the lake identical and readable; the next run completes', async () => {
    const tree = sampleTree();
    const data = tempDir();
    await runSource({ source: 'dvf', fromDir: tree, annees: [2021], departements: ['33'], dataRoot: data, now: new Date('2025-01-01T00:00:00Z') });
    const before = snapshot(data);
    const [{ n: rowsBefore }] = await queryParquet(`select count(*) n from ${lakeGlob(data)}`);

    await runCliUntilPaused(['dvf', '--departements', '33', '--annees', '2021', '--from-dir', tree, '--force', '--no-marts'],
      { DATA_DIR: data, FONCIER_TEST_PAUSE: 'before-swap' });

    expect(snapshot(data)).toEqual(before);
    const [{ n: rowsAfterKill }] = await queryParquet(`select count(*) n from ${lakeGlob(data)}`);
    expect(rowsAfterKill).toBe(rowsBefore);
    // the killed run left its unpublished generation (lib/generations.ts) and its lock behind: the next run must
    // cope with both
    const generations = path.join(data, '.lake', 'generations');
    expect(fs.readdirSync(generations)).toHaveLength(2);

    const [outcome] = await runSource({ source: 'dvf', fromDir: tree, annees: [2021], departements: ['33'], dataRoot: data, force: true });
    expect(outcome.status).toBe('imported');
    expect(fs.readdirSync(path.join(data, 'lake', 'dvf', 'code_departement=33', 'annee=2021'))).toEqual(['data.parquet']);
    expect(fs.readdirSync(generations)).toHaveLength(1);
    const [{ n: rowsAfter }] = await queryParquet(`select count(*) n from ${lakeGlob(data)}`);
    expect(rowsAfter).toBe(rowsBefore);
  });
});
