// A throwaway PostgreSQL server for the tests that need one: its own data folder, a random loopback port, fsync off,
// removed on stop (with `dir`: a cluster kept in that folder across runs, for benchmarks that load their data once).
// It uses the machine's PostgreSQL server binaries (Debian's postgresql package; PG_BIN_DIR to point elsewhere).
// PostgreSQL refuses to run as root, so under root (CI) the server runs as an unprivileged user.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { freePort } from '../../lib/net';

export interface TestPostgres {
  /** postgres:// URL of a database created for the caller (one per call of `database()`). */
  url: string;
  /** A fresh, empty database on the same server. */
  database(name: string): Promise<string>;
  stop(): Promise<void>;
  /** The postmaster's process id (its backends are its children). */
  pid: number;
}

export function postgresBinDir(): string {
  if (process.env.PG_BIN_DIR) return process.env.PG_BIN_DIR;
  const base = '/usr/lib/postgresql';
  const versions = fs.existsSync(base)
    ? fs.readdirSync(base).filter((v) => fs.existsSync(path.join(base, v, 'bin', 'postgres'))).sort((a, b) => Number(b) - Number(a))
    : [];
  if (!versions.length) {
    throw new Error('no PostgreSQL server binaries: install Debian\'s postgresql package or set PG_BIN_DIR');
  }
  return path.join(base, versions[0], 'bin');
}

/** The unprivileged account (uid, gid) the server runs as when the tests run as root. */
function serverAccount(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  for (const user of ['postgres', 'nobody']) {
    try {
      const id = (flag: string) => Number(execFileSync('id', [flag, user], { encoding: 'utf8' }).trim());
      return { uid: id('-u'), gid: id('-g') };
    } catch { /* try the next one */ }
  }
  throw new Error('running as root and no unprivileged account (postgres, nobody) to run PostgreSQL as');
}

/**
 * `durable`: fsync, synchronous_commit and full-page writes as in production (measurements), instead of off.
 * `dir`: the cluster lives in that folder (created on first use, its databases kept, never removed); the server's
 * account must be able to enter its parents. `settings`: more server settings (`-c name=value`).
 */
export async function startPostgres(opts: { durable?: boolean; dir?: string; settings?: Record<string, string> } = {}): Promise<TestPostgres> {
  const bin = postgresBinDir();
  const account = serverAccount();
  // Under /tmp itself (not the test run's private TMPDIR, which the server's account cannot enter).
  const root = opts.dir ? path.resolve(opts.dir) : fs.mkdtempSync(path.join('/tmp', 'foncier-pg-'));
  const dataDir = path.join(root, 'data');
  fs.mkdirSync(root, { recursive: true });
  fs.chmodSync(root, 0o755);
  if (account) fs.chownSync(root, account.uid, account.gid);
  if (!fs.existsSync(path.join(dataDir, 'PG_VERSION'))) {
    fs.rmSync(dataDir, { recursive: true, force: true }); // an interrupted initdb
    execFileSync(path.join(bin, 'initdb'), ['-D', dataDir, '-U', 'foncier', '--auth=trust', '-E', 'UTF8', '--no-sync', '--locale=C'], {
      stdio: 'pipe', ...account,
    });
  }

  const port = await freePort();
  const child: ChildProcess = spawn(path.join(bin, 'postgres'), [
    '-D', dataDir, '-p', String(port), '-k', root, '-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200',
    ...(opts.durable ? [] : ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off']),
    ...Object.entries(opts.settings ?? {}).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
  ], { stdio: ['ignore', 'ignore', 'pipe'], ...account });
  let log = '';
  child.stderr!.on('data', (d: Buffer) => { log += d.toString(); });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`PostgreSQL did not start:\n${log}`);
    try {
      execFileSync(path.join(bin, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(port), '-U', 'foncier', '-d', 'postgres'], { stdio: 'ignore' });
      break;
    } catch {
      if (Date.now() > deadline) { child.kill('SIGKILL'); throw new Error(`PostgreSQL not ready after 30 s:\n${log}`); }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  const urlOf = (db: string) => `postgres://foncier@127.0.0.1:${port}/${db}`;
  const psql = (sql: string) => execFileSync(path.join(bin, 'psql'), ['-h', '127.0.0.1', '-p', String(port), '-U', 'foncier', '-d', 'postgres', '-v', 'ON_ERROR_STOP=1', '-qtA', '-c', sql], { encoding: 'utf8', stdio: 'pipe' });
  const database = async (name: string) => {
    // A kept cluster already has the databases of its earlier runs.
    if (!opts.dir || psql(`SELECT 1 FROM pg_database WHERE datname = '${name.replace(/'/g, "''")}'`).trim() !== '1') psql(`CREATE DATABASE "${name}"`);
    return urlOf(name);
  };
  return {
    url: await database('foncier_test'),
    database,
    pid: child.pid!,
    async stop() {
      child.kill('SIGINT'); // fast shutdown: disconnects the clients
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
      if (!opts.dir) fs.rmSync(root, { recursive: true, force: true });
    },
  };
}
