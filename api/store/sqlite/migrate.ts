// The SQLite engine's versioned migrations: numbered files `NNNN_name.sql` in ./migrations, applied in order, the
// number of the last one applied kept in the database's `user_version`.
import fs from 'node:fs';
import path from 'node:path';
import type Database from 'better-sqlite3';

const MIGRATIONS_DIR = path.join(path.dirname(new URL(import.meta.url).pathname), 'migrations');

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** The migrations in order; their numbers must run 1, 2, 3… without a gap. */
export function migrationFiles(dir = MIGRATIONS_DIR): Migration[] {
  return fs
    .readdirSync(dir)
    .filter((f) => /^\d{4}_.+\.sql$/.test(f))
    .sort()
    .map((f, i) => {
      const version = Number(f.slice(0, 4));
      if (version !== i + 1) throw new Error(`migration ${f}: expected version ${i + 1}`);
      return { version, name: f, sql: fs.readFileSync(path.join(dir, f), 'utf8') };
    });
}

/**
 * Brings the database to the last migration; returns its version. One IMMEDIATE transaction takes the write lock before
 * reading user_version, so two processes opening a new file cannot both migrate, and a failing migration leaves the
 * database as it was. A database newer than this code is refused rather than written to.
 */
export function migrate(db: Database.Database, file: string, migrations = migrationFiles()): number {
  return db
    .transaction(() => {
      const version = db.pragma('user_version', { simple: true }) as number;
      if (version > migrations.length) throw new Error(`${file} has schema version ${version}, newer than this code (${migrations.length})`);
      for (const m of migrations.slice(version)) db.exec(m.sql);
      if (version < migrations.length) db.pragma(`user_version = ${migrations.length}`);
      return migrations.length;
    })
    .immediate();
}
