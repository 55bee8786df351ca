// API replicas as real processes (api/server.ts started by Node with tsx), for the multi-replica tests: each listens on
// its own loopback port, with its own environment (DATA_DIR, DATABASE_URL, leases…), killed as the test says.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { repoRoot } from '../../lib/config';

export interface Replica {
  url: string;
  child: ChildProcess;
  /** Everything it printed (its logs at LOG_LEVEL, warn by default). */
  output(): string;
  /** Resolves with the exit code or signal once the process is gone. */
  exited: Promise<number | NodeJS.Signals | null>;
  kill(signal: NodeJS.Signals): Promise<number | NodeJS.Signals | null>;
}

const started: Replica[] = [];

export function startReplica(env: Record<string, string>): Promise<Replica> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '-e', `import(${JSON.stringify(path.join(repoRoot, 'api/server.ts'))}).then((m) => m.startServer(0)).then(({ server }) => console.log('LISTENING ' + server.address().port))`],
    { cwd: repoRoot, env: { ...process.env, LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`replica did not start in 60 s:\n${out}`)), 60_000);
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = /LISTENING (\d+)/.exec(out);
      if (m && timer) {
        clearTimeout(timer);
        const replica: Replica = {
          url: `http://127.0.0.1:${m[1]}`,
          child,
          output: () => out,
          exited,
          kill(signal) {
            if (child.exitCode === null && child.signalCode === null) child.kill(signal);
            return exited;
          },
        };
        started.push(replica);
        resolve(replica);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then((how) => {
      clearTimeout(timer);
      reject(new Error(`replica exited (${how}) before listening:\n${out}`));
    });
  });
}

/** SIGKILLs whatever a test left running (afterAll). */
export async function killReplicas(): Promise<void> {
  await Promise.all(started.splice(0).map((r) => r.kill('SIGKILL')));
}

/** Polls `cond` every 20 ms until it holds; fails naming `what` after `ms`. */
export async function until(cond: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  for (const end = Date.now() + ms; !(await cond()); ) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
