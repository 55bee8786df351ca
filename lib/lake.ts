// The Parquet lake: one file per partition (`<source>/<axis>=<value>/…/data.parquet`, axes declared by the source)
// and a manifest (vintage, sha256, rows, anomalies per partition). Shared by the pipeline (which writes it) and the
// marts (which read it), so the marts never import pipeline internals.
//
// `data/lake` is a symlink to one generation under `data/.lake/generations/` (lib/generations.ts): an import stages
// its partition files, then `commit` builds the next generation (hard links to the unchanged files, the new
// partitions, the updated manifest) and switches the link in one rename. Partitions and the manifest therefore
// always change together: after a kill at any instant the lake is the old generation or the new one.
import fs from 'node:fs';
import path from 'node:path';
import { paths } from './config';
import { lit } from './duck';
import { GenerationalDir, maybePauseForTests } from './generations';
import { partitionAxes, type PartitionValues, type SourceDeclaration } from './sources/types';
import { pidIsAlive } from './files';

export interface PartitionRecord {
  /** Axis values, in the source's axis order (DVF `{ code_departement: '33', annee: 2021 }`). */
  partition: PartitionValues;
  file: string; // relative to the lake root
  source_url: string;
  source_format: string;
  vintage: string;
  sha256: string;
  rows_read: number;
  rows_kept: number;
  /** How many of what the source counts (its declaration's `countLabel`: DVF mutations, Filosofi communes). */
  count: number;
  /** How many of them are new since the previous import of the partition. */
  new_count: number;
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

/** Manifest key of a partition: its values joined by `/` (`33/2021`, `FR/2020`, `2025-06-01`). */
export const partitionKey = (values: PartitionValues): string => Object.values(values).join('/');

/** Lake path (relative to the root) of a partition's file. */
export const partitionRel = (source: string, values: PartitionValues): string =>
  [source, ...Object.entries(values).map(([k, v]) => `${k}=${v}`), 'data.parquet'].join('/');

/**
 * Records written before partitions were generic carry `code_departement`/`annee` and DVF's `mutations`: read them
 * as generic records so an old lake keeps working until its partitions are re-imported.
 */
export function upgradeRecord(r: PartitionRecord & { code_departement?: string; annee?: number; mutations?: number; new_mutations?: number }): PartitionRecord {
  if (r.partition) return r;
  const { code_departement, annee, mutations, new_mutations, ...rest } = r;
  return { ...rest, partition: { code_departement: code_departement!, annee: annee! }, count: mutations ?? r.rows_kept, new_count: new_mutations ?? 0 };
}

export class Lake {
  /** `data/lake`: what readers open (a symlink to the current generation). */
  readonly root: string;
  /** `data/.lake`: generations, staging area and lock, beside the lake so every rename stays on one filesystem. */
  readonly work: string;
  private readonly generations: GenerationalDir;

  constructor(dataRoot?: string) {
    this.root = paths.lake(dataRoot);
    this.work = path.join(path.dirname(this.root), '.lake');
    this.generations = new GenerationalDir(this.root, path.join(this.work, 'generations'));
  }

  readManifest(): Manifest {
    // through the link, or the plain folder of a lake from before generations (migrated by the next writer)
    const file = path.join(this.root, 'manifest.json');
    if (!fs.existsSync(file)) return { schema_version: 1, updated_at: null, sources: {} };
    const m = JSON.parse(fs.readFileSync(file, 'utf8')) as Manifest;
    for (const src of Object.values(m.sources)) {
      for (const [k, p] of Object.entries(src.partitions ?? {})) src.partitions![k] = upgradeRecord(p);
    }
    return m;
  }

  /** Absolute paths of the partition files the manifest lists for a source (optionally filtered), sorted. */
  partitionFiles(source: string, filter?: (p: PartitionValues) => boolean, manifest = this.readManifest()): string[] {
    return Object.values(manifest.sources[source]?.partitions ?? {})
      .filter((p) => !filter || filter(p.partition))
      .map((p) => path.join(this.root, p.file))
      .filter((f) => fs.existsSync(f))
      .sort();
  }

  /** Alias kept for the importers: the files of the source's current partitions. */
  existingPartitionFiles(source: string, filter?: (p: PartitionValues) => boolean): string[] {
    return this.partitionFiles(source, filter);
  }

  /** A scratch folder on the lake's filesystem, so moving its files into a generation is a rename. */
  makeStagingDir(): string {
    const dir = path.join(this.work, 'staging', `${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`);
    fs.mkdirSync(dir, { recursive: true });
    return dir;
  }

  /** Where DuckDB may spill during an import (removed with the other leftovers). */
  spillDir(): string {
    return path.join(this.work, 'staging', 'duckdb-tmp');
  }

  /** A set of partition files to publish together with a manifest update. */
  transaction(): LakeTransaction {
    return new LakeTransaction(this);
  }

  /**
   * Publishes staged files (lake-relative path → staged file) and a manifest update as one new generation. Files
   * listed in `remove` (lake-relative) are left out of it. Synchronous: two commits never interleave.
   */
  commit(files: Map<string, string>, remove: Set<string>, update: (m: Manifest) => void): void {
    const manifest = this.readManifest();
    update(manifest);
    manifest.updated_at = new Date().toISOString();
    const next = this.generations.begin((rel) => rel !== 'manifest.json' && !files.has(rel) && !remove.has(rel));
    for (const [rel, staged] of files) {
      fs.mkdirSync(path.dirname(path.join(next, rel)), { recursive: true });
      fs.renameSync(staged, path.join(next, rel));
    }
    fs.writeFileSync(path.join(next, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
    maybePauseForTests('lake-before-swap');
    this.generations.publish(next, 'before-swap');
    maybePauseForTests('lake-after-swap');
  }

  /** Removes leftovers of interrupted runs (staging folders, unpublished generations). Call it holding the lock. */
  cleanLeftovers(): void {
    fs.rmSync(path.join(this.work, 'staging'), { recursive: true, force: true });
    this.generations.cleanLeftovers();
  }

  /** Deletes the whole lake (every generation). */
  remove(): void {
    this.generations.remove();
  }

  /** One writer at a time per data folder (imports and marts builds): a second would race on the same files. */
  lock(): () => void {
    fs.mkdirSync(this.work, { recursive: true });
    const file = path.join(this.work, 'lock');
    try {
      fs.writeFileSync(file, String(process.pid), { flag: 'wx' });
    } catch {
      const pid = Number(fs.readFileSync(file, 'utf8'));
      if (pid && pidIsAlive(pid)) throw new Error(`another pipeline (pid ${pid}) is running on ${this.root}`);
      fs.writeFileSync(file, String(process.pid)); // stale lock of a killed run
    }
    return () => fs.rmSync(file, { force: true });
  }

  /**
   * SQL that reads a source for the marts: the files the manifest lists (so a model never sees a file the manifest
   * does not describe), with the partition axes as columns; a source with nothing loaded reads as an empty table of
   * its declared shape, so its marts build empty and the API says the data is not loaded.
   */
  readSql(decl: SourceDeclaration, manifest = this.readManifest()): string {
    const axes = partitionAxes(decl);
    const files = this.partitionFiles(decl.name, undefined, manifest);
    if (!files.length) {
      const cols = [...Object.entries(decl.schema), ...axes.map((a) => [a.name, a.type] as const)].map(([c, t]) => `NULL::${t} AS ${c}`);
      return `(select ${cols.join(', ')} where false)`;
    }
    const types = axes.map((a) => `${lit(a.name)}: ${a.type}`).join(', ');
    return `read_parquet([${files.map(lit).join(', ')}], hive_partitioning = true, hive_types = {${types}})`;
  }
}

/** The partitions an import stages, published with their manifest records by one `commit`. */
export class LakeTransaction {
  private readonly files = new Map<string, string>();
  private readonly removed = new Set<string>();
  constructor(readonly lake: Lake) {}

  get root(): string {
    return this.lake.root;
  }

  existingPartitionFiles(source: string, filter?: (p: PartitionValues) => boolean): string[] {
    return this.lake.partitionFiles(source, filter);
  }

  makeStagingDir(): string {
    return this.lake.makeStagingDir();
  }

  /** Adds a staged file as a partition of the next commit; returns its lake-relative path. */
  publishPartition(stagedFile: string, source: string, values: PartitionValues): string {
    const rel = partitionRel(source, values);
    this.putFile(rel, stagedFile);
    return rel;
  }

  /** Adds any staged file (e.g. `reference/communes.parquet`) to the next commit. */
  putFile(rel: string, stagedFile: string): void {
    // moved out of the writer's staging folder, which the writer may remove before the commit
    const held = path.join(this.lake.makeStagingDir(), path.basename(rel));
    fs.renameSync(stagedFile, held);
    this.files.set(rel, held);
  }

  /** Leaves a lake file out of the next generation (a partition the import supersedes). */
  removeFile(rel: string): void {
    this.removed.add(rel);
  }

  /** Takes over another transaction's staged files (published by this one's commit). */
  absorb(other: LakeTransaction): void {
    for (const [rel, f] of other.files) this.files.set(rel, f);
    for (const rel of other.removed) this.removed.add(rel);
    other.files.clear();
    other.removed.clear();
  }

  commit(update: (m: Manifest) => void): void {
    this.lake.commit(this.files, this.removed, update);
    this.files.clear();
    this.removed.clear();
  }
}


