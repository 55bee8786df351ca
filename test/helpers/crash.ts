// Kill tests: run a CLI in a child process that pauses at a named point (FONCIER_TEST_PAUSE, lib/generations.ts) and
// SIGKILL it there: as abrupt as a crash or an OOM kill, no cleanup runs.
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../../lib/config';

export function killAtPause(script: string, args: string[], env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
      cwd: repoRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`never paused:\n${out}`)); }, 90_000);
    const onData = (d: Buffer) => {
      out += d.toString();
      if (out.includes(`PAUSED ${env.FONCIER_TEST_PAUSE}`)) child.kill('SIGKILL');
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (signal === 'SIGKILL' && out.includes('PAUSED')) resolve(out);
      else reject(new Error(`exited ${code ?? signal} without pausing:\n${out}`));
    });
  });
}

/** What a reader of `dir` can see: every file (through symlinks) with its hash, `*.tmp*` leftovers included. */
export function snapshotFiles(dir: string, filter: (name: string) => boolean = () => true): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    if (!fs.existsSync(d)) return;
    for (const e of fs.readdirSync(d)) {
      const p = path.join(d, e);
      if (fs.statSync(p).isDirectory()) walk(p);
      else if (filter(e)) out[path.relative(dir, p)] = crypto.createHash('sha256').update(fs.readFileSync(p)).digest('hex');
    }
  };
  walk(dir);
  return out;
}
