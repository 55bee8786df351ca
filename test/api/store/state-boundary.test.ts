// The state's boundary (docs/state.md): every SQL statement on the state database, and every handle on it, is inside
// api/store/. Outside it, code reaches the state through the StateStore interface only: no database driver import, no
// engine-internal import, no connection handle, no SQL naming a state table. Scans api/, lib/, scripts/ and lab/.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../../lib/config';
import { importsOf } from '../../layering.test';

const SCANNED = ['api', 'lib', 'scripts', 'lab'];
const STORE_DIR = path.join(repoRoot, 'api', 'store') + path.sep;

/** Every table the state's migrations create, read from the migration files of both engines. */
function stateTables(): string[] {
  const tables = new Set<string>();
  for (const engine of ['sqlite', 'postgres']) {
    const dir = path.join(STORE_DIR, engine, 'migrations');
    if (!fs.existsSync(dir)) continue;
    for (const f of fs.readdirSync(dir).filter((x) => x.endsWith('.sql'))) {
      for (const m of fs.readFileSync(path.join(dir, f), 'utf8').matchAll(/create\s+table\s+(?:if\s+not\s+exists\s+)?"?(\w+)"?/gi)) tables.add(m[1].toLowerCase());
    }
  }
  return [...tables].sort();
}

function sourceFiles(): string[] {
  return SCANNED.filter((d) => fs.existsSync(path.join(repoRoot, d))).flatMap((dir) =>
    fs
      .readdirSync(path.join(repoRoot, dir), { recursive: true, encoding: 'utf8' })
      .filter((f) => /\.(ts|mts|cts|js|mjs)$/.test(f) && !f.split(path.sep).includes('node_modules'))
      .map((f) => path.join(repoRoot, dir, f))
      .filter((f) => !f.startsWith(STORE_DIR) && !OTHER_POSTGRES.includes(path.relative(repoRoot, f))),
  );
}

/** Files that use PostgreSQL for something else than the state: the benchmark's PostgreSQL copy of the sales. */
const OTHER_POSTGRES = ['lab/bench/postgres-side.ts', 'lab/test/postgres-side.test.ts'];

/** What a file outside api/store/ does to the state other than through the interface; empty when nothing. */
export function violations(file: string, code: string, tables: string[]): string[] {
  const out: string[] = [];
  for (const spec of importsOf(code)) {
    if (spec === 'better-sqlite3' || spec === 'pg' || spec.startsWith('pg/')) out.push(`imports the database driver ${spec}`);
    if (spec.startsWith('.')) {
      const target = path.resolve(path.dirname(file), spec);
      // The store's entry (api/store, api/store/index) is the interface; its engines' modules are not.
      const rel = path.relative(STORE_DIR, target);
      if (!rel.startsWith('..') && rel !== '' && rel !== 'index' && rel !== 'index.ts' && !path.isAbsolute(rel)) out.push(`imports the store's internal ${spec}`);
    }
  }
  // A handle on a state database: the SQLite connection of the former Store, or a PostgreSQL pool of the state.
  if (/\b(?:store|state|sharedState)\s*\.\s*(?:db|pool)\b/.test(code)) out.push('uses a state database handle');
  if (/\bsharedState\b/.test(code)) out.push('reaches the PostgreSQL state beside the interface (sharedState)');
  const tableAlt = tables.join('|');
  const sql = new RegExp(`\\b(?:from|into|update|join|table)\\s+(?:${tableAlt})\\b`, 'i');
  const m = sql.exec(code);
  if (m) out.push(`SQL on the state table in "${m[0]}"`);
  return out;
}

describe('the state boundary', () => {
  const tables = stateTables();

  it('knows the state tables from the migrations (so the SQL check below can fail)', () => {
    expect(tables).toEqual(expect.arrayContaining(['api_keys', 'credit_ledger', 'alerts', 'alert_deliveries', 'portfolio_properties', 'request_log', 'service_state']));
  });

  it('flags each way around the interface (so the scan below can fail)', () => {
    const f = path.join(repoRoot, 'api', 'routes', 'x.ts');
    expect(violations(f, `import Database from 'better-sqlite3';`, tables)).toEqual(['imports the database driver better-sqlite3']);
    expect(violations(f, `import pg from 'pg';`, tables)).toEqual(['imports the database driver pg']);
    expect(violations(f, `import { SqliteState } from '../store/sqlite';`, tables)).toEqual(["imports the store's internal ../store/sqlite"]);
    expect(violations(f, `import { PgCredits } from '../store/postgres/credits';`, tables)).toEqual(["imports the store's internal ../store/postgres/credits"]);
    expect(violations(f, `import { createState } from '../store';`, tables)).toEqual([]);
    expect(violations(f, `import type { StateStore } from '../store/index';`, tables)).toEqual([]);
    expect(violations(f, `ctx.store.db.prepare('select 1')`, tables)).toEqual(['uses a state database handle']);
    expect(violations(f, `const q = 'select count(*) from request_log where key_id = ?';`, tables)).toEqual(['SQL on the state table in "from request_log"']);
    expect(violations(f, `await conn.query("insert into alert_deliveries (id) values ($1)")`, tables)).toEqual(['SQL on the state table in "into alert_deliveries"']);
    // The serving database's SQL (DuckDB over the marts) is not the state's.
    expect(violations(f, `select * from ventes join communes using (code_commune)`, tables)).toEqual([]);
  });

  it('no file of api/, lib/, scripts/ or lab/ outside api/store/ touches the state but through the interface', () => {
    const offenders = sourceFiles().flatMap((file) => violations(file, fs.readFileSync(file, 'utf8'), tables).map((v) => `${path.relative(repoRoot, file)}: ${v}`));
    expect(offenders).toEqual([]);
  });
});
