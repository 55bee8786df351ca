// The Parquet lake: one file per partition (`<source>/code_departement=XX/annee=YYYY/data.parquet`),
// replaced by an atomic rename so readers see the old partition or the new one, never half of either,
// and a manifest (vintage, sha256, rows, anomalies) per partition, itself written atomically.
import fs from 'node:fs';
import path from 'node:path';
import { paths } from '../lib/config';

export interface PartitionRecord {
  code_departement: string;
  annee: number;
  file: string; // relative to the lake root
  source_url: string;
  source_format: string;
  vintage: string;
  sha256: string;
  rows_read: number;
  rows_kept: number;
  mutations: number;
  new_mutations: number;
  anomalies: Record<string, number>;
  imported_at: string;
}

export interface SourceRecord {
  vintage?: string;
  rows?: number;
  files?: Record<string, { source_url: string; sha256: string; vintage: string; rows: number; imported_at: string; partitions: string[] }>;
  partitions?: Record<string, PartitionRecord>;
}

export interface Manifest {
  schema_version: 1;
  updated_at: string | null;
  sources: Record<string, SourceRecord>;
  reference?: Record<string, string>;
}

export class Lake {
  readonly root: string;
  constructor(dataRoot?: string) {
    this.root = paths.lake(dataRoot);
  }

  partitionDir(source: string, dep: string, annee: number): string {
    return path.join(this.root, source, `code_departement=${dep}`, `annee=${annee}`);
  }

  partitionFile(source: string, dep: string, annee: number): string {
    return path.join(this.partitionDir(source, dep, annee), 'data.parquet');
  }

  /** Glob DuckDB reads for a source; temporary files never match it (they do not end in .parquet). */
  glob(source: string): string {
    return path.join(this.root, source, '*', '*', '*.parquet');
  }

  existingPartitionFiles(source: string, filter?: (dep: string, annee: number) => boolean): string[] {
    const dir = path.join(this.root, source);
    if (!fs.existsSync(dir)) return [];
    const out: string[] = [];
    for (const d of fs.readdirSync(dir)) {
      const dep = /^code_departement=(.+)$/.exec(d)?.[1];
      if (!dep) continue;
      for (const y of fs.readdirSync(path.join(dir, d))) {
        const annee = Number(/^annee=(\d{4})$/.exec(y)?.[1]);
        const f = path.join(dir, d, y, 'data.parquet');
        if (annee && fs.existsSync(f) && (!filter || filter(dep, annee))) out.push(f);
      }
    }
    return out.sort();
  }

  /** A scratch folder on the lake's filesystem, so the final rename stays atomic. */
  makeStagingDir(): string {
    const dir = path.join(this.root, '.staging', `${process.pid}-${Date.now()}`);
    fs.mkdirSync(dir, { recursive: true });
    return dir;
  }

  /** Swaps a staged file in as the partition's data file: rename(2) over the old file is atomic. */
  publishPartition(stagedFile: string, source: string, dep: string, annee: number): string {
    const target = this.partitionFile(source, dep, annee);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    const tmp = `${target}.tmp-${process.pid}`;
    fs.renameSync(stagedFile, tmp);
    maybePauseForTests('before-swap');
    fs.renameSync(tmp, target);
    return path.relative(this.root, target);
  }

  /** Removes leftovers of interrupted runs (staging folders, half-moved temporary files). */
  cleanLeftovers(): void {
    fs.rmSync(path.join(this.root, '.staging'), { recursive: true, force: true });
    const walk = (dir: string) => {
      if (!fs.existsSync(dir)) return;
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (/\.tmp-\d+$/.test(e.name)) fs.rmSync(p, { force: true });
      }
    };
    walk(this.root);
  }

  readManifest(): Manifest {
    const file = paths.manifest(path.dirname(this.root));
    if (!fs.existsSync(file)) return { schema_version: 1, updated_at: null, sources: {} };
    return JSON.parse(fs.readFileSync(file, 'utf8')) as Manifest;
  }

  writeManifest(m: Manifest): void {
    const file = paths.manifest(path.dirname(this.root));
    fs.mkdirSync(path.dirname(file), { recursive: true });
    m.updated_at = new Date().toISOString();
    writeFileAtomic(file, JSON.stringify(m, null, 2) + '\n');
  }

  /** One pipeline at a time per data folder: a second run would race on the same partitions. */
  lock(): () => void {
    fs.mkdirSync(this.root, { recursive: true });
    const file = path.join(this.root, '.lock');
    try {
      fs.writeFileSync(file, String(process.pid), { flag: 'wx' });
    } catch {
      const pid = Number(fs.readFileSync(file, 'utf8'));
      if (pid && isAlive(pid)) throw new Error(`another pipeline (pid ${pid}) is running on ${this.root}`);
      fs.writeFileSync(file, String(process.pid)); // stale lock of a killed run
    }
    return () => fs.rmSync(file, { force: true });
  }
}

export function writeFileAtomic(file: string, content: string): void {
  const tmp = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, content);
  fs.renameSync(tmp, file);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Test hook: FONCIER_TEST_PAUSE=<point> makes the process stop at that point (SIGSTOP-like sleep) so a test
 * can kill it there and check that the lake is unchanged. Inert in production (variable unset).
 */
export function maybePauseForTests(point: string): void {
  if (process.env.FONCIER_TEST_PAUSE !== point) return;
  process.stdout.write(`PAUSED ${point}\n`);
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60_000);
}
