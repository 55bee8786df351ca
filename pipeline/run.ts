// Pipeline orchestration: for each file of a source, fetch it (mirror, official URL or local tree), skip it when
// unchanged, import it into the lake, and record the outcome in the manifest; then build the marts.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pipeline as streamPipeline } from 'node:stream/promises';
import { dataDir, paths } from '../lib/config';
import { openMemory } from '../lib/duck';
import { download } from './download';
import { Lake, type Manifest, type PartitionRecord } from './lake';
import { dvfSource } from './sources/dvf';
import type { LocalFile, Part, Selection, Source } from './sources/types';
import { writeReference } from './reference';
import { unzipFirstEntry } from './unzip';

export const SOURCES: Record<string, Source> = { dvf: dvfSource };

export interface PartOutcome {
  part: Part;
  status: 'imported' | 'unchanged' | 'failed';
  rowsRead: number;
  rowsKept: number;
  newMutations: number;
  anomalies: Record<string, number>;
  seconds: number;
  error?: string;
}

export interface RunHooks {
  onDownloadProgress?: (part: Part, received: number, total: number | undefined) => void;
  onPartStart?: (part: Part) => void;
  onPartDone?: (outcome: PartOutcome) => void;
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
    const candidates = [part.relPath, part.relPath.replace(/\.zip$/, '')].map((p) => path.join(opts.fromDir!, p));
    const found = candidates.find((p) => fs.existsSync(p));
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
  if (file.endsWith('.zip')) file = await unzipFirstEntry(file, file.replace(/\.zip$/, ''));
  return { path: file, sha256, vintage, url };
}

export async function runSource(opts: RunOptions, hooks: RunHooks = {}): Promise<PartOutcome[]> {
  const source = SOURCES[opts.source];
  if (!source) throw new Error(`unknown source ${opts.source} (known: ${Object.keys(SOURCES).join(', ')})`);
  const lake = new Lake(opts.dataRoot ?? dataDir());
  const unlock = lake.lock();
  const { instance, conn } = await openMemory();
  const outcomes: PartOutcome[] = [];
  try {
    lake.cleanLeftovers();
    if (await writeReference(lake)) hooks.log?.('reference geography written to the lake');
    for (const part of source.parts(opts)) {
      hooks.onPartStart?.(part);
      const started = performance.now();
      const outcome: PartOutcome = { part, status: 'failed', rowsRead: 0, rowsKept: 0, newMutations: 0, anomalies: {}, seconds: 0 };
      try {
        const file = await fetchPart(part, opts, hooks);
        const manifest = lake.readManifest();
        const src = (manifest.sources[source.name] ??= {});
        const previous = src.files?.[part.key];
        const intact = previous?.partitions.every((k) => src.partitions?.[k] && fs.existsSync(path.join(lake.root, src.partitions[k].file)));
        if (!opts.force && previous?.sha256 === file.sha256 && intact) {
          outcome.status = 'unchanged';
        } else {
          const result = await source.importFile({ lake, conn, now: opts.now ?? new Date(), log: hooks.log ?? (() => {}) }, part, file);
          recordImport(lake, source.name, part, file, result.partitions, opts.now ?? new Date());
          outcome.status = 'imported';
          for (const p of result.partitions) {
            outcome.rowsRead += p.rows_read;
            outcome.rowsKept += p.rows_kept;
            outcome.newMutations += p.new_mutations;
            for (const [k, v] of Object.entries(p.anomalies)) outcome.anomalies[k] = (outcome.anomalies[k] ?? 0) + v;
          }
          if (part.departements.length > 1) {
            for (const [k, v] of Object.entries(result.fileAnomalies)) outcome.anomalies[k] = (outcome.anomalies[k] ?? 0) + v;
            outcome.rowsRead += Object.values(result.fileAnomalies).reduce((a, b) => a + b, 0);
          }
        }
      } catch (e) {
        outcome.error = (e as Error).message;
      }
      outcome.seconds = (performance.now() - started) / 1000;
      outcomes.push(outcome);
      hooks.onPartDone?.(outcome);
    }
  } finally {
    conn.closeSync();
    instance.closeSync();
    unlock();
  }
  return outcomes;
}

/** Manifest update after a file's partitions were swapped in: re-read so that nothing written meanwhile is lost. */
function recordImport(lake: Lake, source: string, part: Part, file: LocalFile, partitions: PartitionRecord[], now: Date) {
  const manifest: Manifest = lake.readManifest();
  const src = (manifest.sources[source] ??= {});
  src.partitions ??= {};
  src.files ??= {};
  for (const p of partitions) src.partitions[`${p.code_departement}/${p.annee}`] = p;
  src.files[part.key] = {
    source_url: file.url, sha256: file.sha256, vintage: file.vintage, imported_at: now.toISOString(),
    rows: partitions.reduce((a, p) => a + p.rows_kept, 0),
    partitions: partitions.map((p) => `${p.code_departement}/${p.annee}`),
  };
  const all = Object.values(src.partitions);
  src.rows = all.reduce((a, p) => a + p.rows_kept, 0);
  src.vintage = all.map((p) => p.vintage).sort().at(-1);
  lake.writeManifest(manifest);
}
