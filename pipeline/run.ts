// Pipeline orchestration: fetch every file of a source (mirror, official URL or local tree), skip the unchanged ones,
// import the others into the lake in one DuckDB pass per batch, and record the outcome in the manifest.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pipeline as streamPipeline } from 'node:stream/promises';
import { dataDir, paths } from '../lib/config';
import { lit, openMemory, run } from '../lib/duck';
import { download } from './download';
import { Lake, partitionKey, type PartitionRecord } from '../lib/lake';
import { SOURCES } from './sources';
import type { ImportContext, ImportItem, ImportResult, LocalFile, Part, Selection, Source } from './sources/types';
import { writeReference } from './reference';
import { unzipEntry, unzipFirstEntry } from './unzip';

export { registerSource, SOURCES } from './sources';

export interface PartOutcome {
  part: Part;
  status: 'imported' | 'unchanged' | 'failed';
  rowsRead: number;
  rowsKept: number;
  /** New records of what the source counts (DVF: new sales; see the declaration's countLabel). */
  newCount: number;
  anomalies: Record<string, number>;
  /** Fetch time plus, for an imported file, its share of its batch's import time (in proportion to its lines). */
  seconds: number;
  error?: string;
}

export interface RunHooks {
  onDownloadProgress?: (part: Part, received: number, total: number | undefined) => void;
  onPartStart?: (part: Part) => void;
  onPartDone?: (outcome: PartOutcome) => void;
  /** A batch of changed files is about to be imported in one pass. */
  onImportStart?: (parts: Part[]) => void;
  onImportProgress?: (step: string, done: number, total: number) => void;
  log?: (message: string) => void;
}

export interface RunOptions extends Selection {
  source: string;
  force?: boolean;
  dataRoot?: string;
  now?: Date;
}

export async function sha256File(file: string): Promise<string> {
  const hash = crypto.createHash('sha256');
  await streamPipeline(fs.createReadStream(file), hash);
  return hash.digest('hex');
}

/** Fetches one part to a local file: from a local tree (--from-dir) or over HTTP (streamed, resumable, conditional). */
async function fetchPart(part: Part, opts: RunOptions, hooks: RunHooks): Promise<LocalFile> {
  let file: string;
  let url: string;
  let vintage: string;
  if (opts.fromDir) {
    const names = [part.relPath, part.relPath.replace(/\.zip$/, ''), ...(part.localAlternatives ?? [])];
    const candidates = [...new Set(names)].map((p) => path.join(opts.fromDir!, p));
    // A folder named like the archive (an unzipped copy) is not the file: its alternatives may name a file inside it.
    const found = candidates.find((p) => fs.existsSync(p) && fs.statSync(p).isFile());
    if (!found) throw new Error(`file not found: ${candidates[0]} (expected the official layout under --from-dir)`);
    file = found;
    url = `file://${found}`;
    vintage = fs.statSync(found).mtime.toISOString().slice(0, 10);
  } else {
    const dest = path.join(paths.downloads(opts.dataRoot), part.source, part.relPath);
    const res = await download(part.url, dest, { onProgress: (r, t) => hooks.onDownloadProgress?.(part, r, t) });
    file = res.path;
    url = part.url;
    vintage = (res.lastModified ? new Date(res.lastModified) : new Date()).toISOString().slice(0, 10);
  }
  const sha256 = await sha256File(file);
  if (file.endsWith('.zip') && !part.keepArchive) {
    file = part.zipEntry
      ? await unzipEntry(file, part.zipEntry, path.join(path.dirname(file), path.basename(part.zipEntry)))
      : await unzipFirstEntry(file, file.replace(/\.zip$/, ''));
  }
  return { path: file, sha256, vintage, url };
}

export async function runSource(opts: RunOptions, hooks: RunHooks = {}): Promise<PartOutcome[]> {
  const source = SOURCES[opts.source];
  if (!source) throw new Error(`unknown source ${opts.source} (known: ${Object.keys(SOURCES).join(', ')})`);
  const lake = new Lake(opts.dataRoot ?? dataDir());
  const unlock = lake.lock();
  const { instance, conn } = await openMemory({ memoryLimit: importMemoryLimit() });
  const now = opts.now ?? new Date();
  const outcomes: PartOutcome[] = [];
  let reference: Promise<boolean> | undefined;
  try {
    lake.cleanLeftovers();
    // Spill files go to the data folder (not the current directory) and are removed with the run's other leftovers.
    await run(conn, `SET temp_directory = ${lit(lake.spillDir())}`);

    // 1. Fetch every file and set aside the unchanged ones.
    const src = lake.readManifest().sources[source.name] ?? {};
    const pending: Pending[] = [];
    const unchanged: Pending[] = [];
    for (const part of source.parts(opts)) {
      hooks.onPartStart?.(part);
      const started = performance.now();
      const outcome: PartOutcome = { part, status: 'failed', rowsRead: 0, rowsKept: 0, newCount: 0, anomalies: {}, seconds: 0 };
      outcomes.push(outcome);
      try {
        const file = source.fetch
          ? await source.fetch(part, { fromDir: opts.fromDir, baseUrl: opts.baseUrl, dataRoot: opts.dataRoot, force: opts.force, log: hooks.log })
            .then(async (f) => ({ ...f, sha256: await sha256File(f.path) }))
          : await fetchPart(part, opts, hooks);
        const previous = src.files?.[part.key];
        const intact = previous?.partitions.every((k) => src.partitions?.[k] && fs.existsSync(path.join(lake.root, src.partitions[k].file)));
        if (!opts.force && previous?.sha256 === file.sha256 && intact) {
          outcome.status = 'unchanged';
          unchanged.push({ part, file, outcome });
        } else pending.push({ part, file, outcome });
      } catch (e) {
        outcome.error = (e as Error).message;
      }
      outcome.seconds = (performance.now() - started) / 1000;
      if (pending.at(-1)?.outcome !== outcome && outcome.status !== 'unchanged') hooks.onPartDone?.(outcome);
    }
    // A snapshot is replaced whole: when one of its files changed, the unchanged ones are imported again with it, and
    // when one could not be fetched none is imported (the previous snapshot stays).
    if (source.partitioning === 'snapshot' && pending.length) {
      const missing = outcomes.filter((o) => o.error).map((o) => o.part.key);
      if (missing.length) {
        for (const p of pending.splice(0)) {
          p.outcome.error = `not imported: the snapshot is incomplete without ${missing.join(', ')}`;
          hooks.onPartDone?.(p.outcome);
        }
      } else {
        for (const u of unchanged) u.outcome.status = 'failed'; // set to imported by the batch
        pending.push(...unchanged.splice(0));
      }
    }
    for (const u of unchanged) hooks.onPartDone?.(u.outcome);

    // The reference geography (rewritten only when its package version changes) is built while DuckDB imports: this
    // thread is idle then. It is published by its own lake commit (commits are synchronous, so they never interleave).
    reference = writeReference(lake);
    reference.catch(() => {}); // its error is raised by the `await`s below, not as an unhandled rejection

    // 2. Import the changed files, one DuckDB pass per batch (DVF: all the files of a year).
    const batches = new Map<string, Pending[]>();
    for (const p of pending) {
      const key = source.batchKey(p.part);
      batches.set(key, [...(batches.get(key) ?? []), p]);
    }
    const ctx = { lake, conn, now, log: hooks.log ?? (() => {}), progress: hooks.onImportProgress };
    for (const batch of batches.values()) await importBatch(source, ctx, batch, hooks);
    if (await reference) hooks.log?.('reference geography written to the lake');
  } finally {
    await reference?.catch(() => false); // never leave it writing to the lake after the lock is released
    conn.closeSync();
    instance.closeSync();
    unlock();
  }
  return outcomes;
}

interface Pending extends ImportItem {
  outcome: PartOutcome;
}

/** DuckDB's memory cap for the import: half the RAM, at most 4 GB (a France year fits; more spills to disk). */
function importMemoryLimit(): string {
  return `${Math.max(1, Math.min(4, Math.floor(os.totalmem() / 2 ** 30 / 2)))}GB`;
}

type RunContext = Omit<ImportContext, 'lake'> & { lake: Lake };

/**
 * Imports one batch in one pass; if that fails (e.g. one corrupt file), file by file so a bad file fails alone. The
 * partitions of the files that imported are published with their manifest records in one lake commit.
 */
async function importBatch(source: Source, runCtx: RunContext, batch: Pending[], hooks: RunHooks): Promise<void> {
  const started = performance.now();
  hooks.onImportStart?.(batch.map((p) => p.part));
  const attempt = async (items: Pending[]) => {
    const tx = runCtx.lake.transaction();
    const results = await source.importFiles({ ...runCtx, lake: tx }, items);
    return { tx, results };
  };
  let results: Array<ImportResult | Error>;
  const txs = [];
  try {
    const r = await attempt(batch);
    txs.push(r.tx);
    results = r.results;
  } catch (e) {
    if (batch.length === 1) results = [e as Error];
    else {
      runCtx.log(`one-pass import of ${batch.length} files failed (${(e as Error).message}); importing them one by one`);
      results = [];
      for (const item of batch) {
        try {
          const r = await attempt([item]);
          txs.push(r.tx);
          results.push(r.results[0]);
        } catch (err) {
          results.push(err as Error);
        }
      }
    }
  }
  recordImports(source, txs, batch.flatMap((p, i) => {
    const r = results[i];
    return r instanceof Error ? [] : [{ part: p.part, file: p.file, partitions: r.partitions }];
  }), runCtx.now);

  // Each file is charged its share of the batch's time, in proportion to its lines.
  const rowsOf = (r: ImportResult | Error) =>
    r instanceof Error ? 0 : r.partitions.reduce((a, p) => a + p.rows_read, 0) + Object.values(r.fileAnomalies).reduce((a, b) => a + b, 0);
  const totalRows = results.reduce((a, r) => a + rowsOf(r), 0);
  const seconds = (performance.now() - started) / 1000;
  batch.forEach(({ part, outcome }, i) => {
    const result = results[i];
    outcome.seconds += totalRows ? (seconds * rowsOf(result)) / totalRows : seconds / batch.length;
    if (result instanceof Error) outcome.error = result.message;
    else {
      outcome.status = 'imported';
      for (const p of result.partitions) {
        outcome.rowsRead += p.rows_read;
        outcome.rowsKept += p.rows_kept;
        outcome.newCount += p.new_count;
        for (const [k, v] of Object.entries(p.anomalies)) outcome.anomalies[k] = (outcome.anomalies[k] ?? 0) + v;
      }
      // Lines outside every owned partition: a geo-DVF file books them on its partition, unless it has none.
      if (part.partitions.length > 1 || !result.partitions.length) {
        for (const [k, v] of Object.entries(result.fileAnomalies)) outcome.anomalies[k] = (outcome.anomalies[k] ?? 0) + v;
        outcome.rowsRead += Object.values(result.fileAnomalies).reduce((a, b) => a + b, 0);
      }
    }
    hooks.onPartDone?.(outcome);
  });
}

/**
 * Publishes a batch: the staged partitions of the files that imported and their manifest records, in one lake commit
 * (so the manifest never lists a partition that is not there, nor misses one that is). A snapshot source keeps only
 * its latest snapshot: the previous partitions leave the lake in the same commit.
 */
function recordImports(source: Source, txs: Array<ReturnType<Lake['transaction']>>, imported: Array<{ part: Part; file: LocalFile; partitions: PartitionRecord[] }>, now: Date) {
  if (!imported.length) return;
  const tx = txs[0];
  // files imported one by one after a failed one-pass import were staged in their own transactions: merge them
  for (const other of txs.slice(1)) tx.absorb(other);
  const manifest = tx.lake.readManifest();
  const previous = manifest.sources[source.name]?.partitions ?? {};
  const fresh = new Set(imported.flatMap((i) => i.partitions.map((p) => partitionKey(p.partition))));
  const dropped = source.partitioning === 'snapshot' ? Object.keys(previous).filter((k) => !fresh.has(k)) : [];
  for (const k of dropped) tx.removeFile(previous[k].file);
  tx.commit((m) => {
    const src = (m.sources[source.name] ??= {});
    src.partitions ??= {};
    src.files ??= {};
    for (const k of dropped) delete src.partitions[k];
    for (const { part, file, partitions } of imported) {
      for (const p of partitions) src.partitions[partitionKey(p.partition)] = p;
      src.files[part.key] = {
        source_url: file.url, sha256: file.sha256, vintage: file.vintage, imported_at: now.toISOString(),
        rows: partitions.reduce((a, p) => a + p.rows_kept, 0),
        partitions: partitions.map((p) => partitionKey(p.partition)),
      };
    }
    if (dropped.length) {
      for (const [key, f] of Object.entries(src.files)) if (f.partitions.some((k) => dropped.includes(k))) delete src.files[key];
    }
    const all = Object.values(src.partitions);
    src.rows = all.reduce((a, p) => a + p.rows_kept, 0);
    src.vintage = all.map((p) => p.vintage).sort().at(-1);
  });
}
