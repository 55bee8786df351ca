import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../lib/config';
import { EnvError, parseEnv, VARIABLES } from '../../lib/env';
import { README, readmeWithEnvTable } from '../../scripts/docs-config';
import { tempDir } from '../helpers/samples';

const problemsOf = (source: NodeJS.ProcessEnv): string[] => {
  try {
    parseEnv(source);
    return [];
  } catch (e) {
    if (!(e instanceof EnvError)) throw e;
    return e.problems;
  }
};

describe('the environment schema', () => {
  it('gives every variable its default when unset or empty', () => {
    const e = parseEnv({ PORT: '', LOG_LEVEL: '' });
    expect(e).toMatchObject({ DATA_DIR: 'data', PORT: 3000, LOG_LEVEL: 'info', DENSE_QUERY_BUDGET_MS: 3000,
      FONCIER_MARTS_MEMORY_LIMIT: '8GB', WEBHOOK_TIMEOUT_MS: 10_000, WEBHOOK_CONCURRENCY: 16, WEBHOOK_LEASE_MS: 30_000,
      WEBHOOK_ALLOWED_HOSTS: [], MCP_ALLOWED_HOSTS: [], DATABASE_URL: undefined });
  });

  it('reads good values in their own form', () => {
    const e = parseEnv({ PORT: '8080', FONCIER_MARTS_MEMORY_LIMIT: '1.5GiB', WEBHOOK_ALLOWED_HOSTS: ' a.example , 127.0.0.1,[::1] ',
      DATABASE_URL: 'postgres://u@db:5432/foncier', LOG_LEVEL: 'silent' });
    expect(e).toMatchObject({ PORT: 8080, FONCIER_MARTS_MEMORY_LIMIT: '1.5GiB', WEBHOOK_ALLOWED_HOSTS: ['a.example', '127.0.0.1', '[::1]'],
      DATABASE_URL: 'postgres://u@db:5432/foncier', LOG_LEVEL: 'silent' });
  });

  it.each([
    ['PORT', 'abc', 'PORT must be an integer from 0 to 65535 (got "abc")'],
    ['PORT', '70000', 'PORT must be an integer from 0 to 65535 (got "70000")'],
    ['PORT', '1e3', 'PORT must be an integer from 0 to 65535 (got "1e3")'],
    ['FONCIER_MARTS_MEMORY_LIMIT', 'lots', 'FONCIER_MARTS_MEMORY_LIMIT must be a DuckDB memory size such as 8GB, 512MB or 1.5GiB (got "lots")'],
    ['LOG_LEVEL', 'loud', 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "loud")'],
    ['DATABASE_URL', 'mysql://x', 'DATABASE_URL must be a postgres:// or postgresql:// URL (got "mysql://x")'],
    ['WEBHOOK_CONCURRENCY', '0', 'WEBHOOK_CONCURRENCY must be an integer from 1 to 1024 (got "0")'],
    ['MCP_ALLOWED_HOSTS', 'api.example.org:443', 'MCP_ALLOWED_HOSTS must be comma-separated host names or IP literals (IPv6 in brackets), no port (got "api.example.org:443")'],
  ])('refuses %s=%s naming the variable and the expected form', (name, value, message) => {
    expect(problemsOf({ [name]: value })).toEqual([message]);
  });

  it('names every bad variable at once', () => {
    expect(problemsOf({ PORT: 'x', DENSE_QUERY_BUDGET_MS: '-1' }).map((p) => p.split(' ')[0])).toEqual(['PORT', 'DENSE_QUERY_BUDGET_MS']);
  });

  it('is the only reader of process.env in the product', () => {
    const offenders: string[] = [];
    const walk = (dir: string) => {
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (p.endsWith('.ts') && p !== path.join(repoRoot, 'lib', 'env.ts') && /process\.env\.[A-Z]/.test(fs.readFileSync(p, 'utf8'))) {
          offenders.push(path.relative(repoRoot, p));
        }
      }
    };
    for (const d of ['api', 'lib', 'marts', 'pipeline', 'scripts']) walk(path.join(repoRoot, d));
    expect(offenders).toEqual([]);
  });

  it('documents every variable in the README table (npm run docs:config)', () => {
    const readme = fs.readFileSync(README, 'utf8');
    expect(readmeWithEnvTable(readme), 'README.md table is stale: run npm run docs:config').toBe(readme);
    for (const name of Object.keys(VARIABLES)) expect(readme).toContain(`| \`${name}\` |`);
  });
});

describe('a bad variable stops a command before it does anything', () => {
  const run = (script: string, args: string[], extra: Record<string, string>) => {
    const dataDir = path.join(tempDir('foncier-env-'), 'data');
    const r = spawnSync(process.execPath, ['--import', 'tsx', script, ...args], {
      cwd: repoRoot, encoding: 'utf8', timeout: 60_000,
      env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...extra },
    });
    return { ...r, dataDirExists: fs.existsSync(dataDir) };
  };

  it.each([
    ['npm start', 'scripts/start.ts', [], { PORT: 'abc' }, 'PORT must be an integer from 0 to 65535 (got "abc")'],
    ['npm start', 'scripts/start.ts', [], { FONCIER_MARTS_MEMORY_LIMIT: 'lots' }, 'FONCIER_MARTS_MEMORY_LIMIT must be'],
    ['npm run marts', 'marts/cli.ts', [], { FONCIER_MARTS_MEMORY_LIMIT: 'lots' }, 'FONCIER_MARTS_MEMORY_LIMIT must be'],
    ['npm run keys', 'scripts/keys.ts', ['list'], { DATABASE_URL: 'sqlite://x' }, 'DATABASE_URL must be'],
  ] as const)('%s with %o', (_cmd, script, args, extra, message) => {
    const r = run(script, [...args], extra);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(message);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(r.dataDirExists).toBe(false); // nothing built, nothing created
  });
});
