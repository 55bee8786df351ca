// Streamed HTTP downloader for the pipeline's published source files (DVF & co., up to ~500 MB): never holds
// a file in memory, resumes interrupted transfers with Range, retries transient failures, skips unchanged files.
import { createHash, type Hash } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { STATUS_CODES } from 'node:http';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';

export class DownloadError extends Error {
  constructor(message: string, readonly url: string, readonly status?: number, readonly attempts?: number) {
    super(message);
    this.name = 'DownloadError';
  }
}

export interface DownloadResult {
  url: string; path: string;
  status: 'downloaded' | 'resumed' | 'not_modified';
  bytes: number; sha256: string; // of the complete file on disk
  etag?: string; lastModified?: string; // from the response, or kept from the previous download when not_modified
}

export interface DownloadOptions {
  retries?: number; // retries after the first attempt, default 4
  backoffMs?: number; // base delay, multiplied by 4 per retry, default 1000
  maxDelayMs?: number; // cap on any wait, including the server's Retry-After, default 60000
  timeoutMs?: number; // per-attempt inactivity timeout, default 120000
  onProgress?: (received: number, total: number | undefined) => void;
  headers?: Record<string, string>;
}

/** `<dest>.part.meta.json`: written before the first body byte, so a killed run leaves a resumable part. */
interface PartMeta { url: string; etag?: string; lastModified?: string }

/** `<dest>.meta.json`: the validators of the complete file, for conditional GETs next time. */
interface Meta extends PartMeta { sha256: string; bytes: number; completedAt: string }

/** A failure worth another attempt. */
class Transient extends Error {
  constructor(message: string, readonly status?: number, readonly retryAfterMs?: number) {
    super(message);
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function readJson<T>(file: string): Promise<T | undefined> {
  try {
    return JSON.parse(await fsp.readFile(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

// Through a temp file and a rename, so a crash never leaves truncated JSON behind.
export async function writeJson(file: string, value: unknown): Promise<void> {
  await fsp.writeFile(`${file}.tmp`, JSON.stringify(value, null, 2) + '\n');
  await fsp.rename(`${file}.tmp`, file);
}

async function sizeOf(file: string): Promise<number | undefined> {
  return fsp.stat(file).then((s) => s.size, () => undefined);
}

async function hashFile(file: string): Promise<Hash> {
  const hash = createHash('sha256');
  for await (const chunk of fs.createReadStream(file)) hash.update(chunk as Buffer);
  return hash;
}

const removeAll = (...files: string[]) => Promise.all(files.map((f) => fsp.rm(f, { force: true })));

function httpStatus(res: Response): string {
  return `HTTP ${res.status} ${res.statusText || STATUS_CODES[res.status] || ''}`.trimEnd();
}

export function parseRetryAfter(value: string | null): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

// undici hides the useful part ("other side closed", ECONNREFUSED) in `cause`.
function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  return err.cause instanceof Error ? `${err.message}: ${err.cause.message}` : err.message;
}

// Local disk errors (ENOSPC, EACCES) carry a path; network errors from fetch never do. Retrying the former is futile.
const isLocalIoError = (err: unknown) => err instanceof Error && typeof (err as NodeJS.ErrnoException).path === 'string';

export async function download(url: string, dest: string, opts: DownloadOptions = {}): Promise<DownloadResult> {
  if (!/^https?:\/\//i.test(url)) throw new DownloadError(`GET ${url}: only http(s) URLs are supported`, url);
  const retries = opts.retries ?? 4;
  const backoffMs = opts.backoffMs ?? 1000;
  const maxDelayMs = opts.maxDelayMs ?? 60_000;
  await fsp.mkdir(path.dirname(dest), { recursive: true });
  // Only trust the previous download if the file on disk is still the one the meta describes.
  const meta = await readJson<Meta>(`${dest}.meta.json`);
  const prev = meta?.url === url && meta.bytes === (await sizeOf(dest)) ? meta : undefined;

  for (let attempt = 1; ; attempt++) {
    try {
      return await attemptOnce(url, dest, prev, opts);
    } catch (err) {
      if (err instanceof DownloadError) throw new DownloadError(err.message, url, err.status, attempt);
      if (isLocalIoError(err)) throw err;
      const transient = err instanceof Transient ? err : undefined;
      if (attempt > retries) {
        const what = `${attempt} attempt${attempt > 1 ? 's' : ''}`;
        throw new DownloadError(`GET ${url} failed after ${what}: ${describe(err)}`, url, transient?.status, attempt);
      }
      await sleep(Math.min(transient?.retryAfterMs ?? backoffMs * 4 ** (attempt - 1), maxDelayMs));
    }
  }
}

async function attemptOnce(url: string, dest: string, prev: Meta | undefined, opts: DownloadOptions): Promise<DownloadResult> {
  const part = `${dest}.part`;
  const partMetaFile = `${part}.meta.json`;
  const metaFile = `${dest}.meta.json`;
  // A part without its meta (or from another URL) cannot be validated with If-Range: start over.
  let partMeta = await readJson<PartMeta>(partMetaFile);
  let offset = (partMeta?.url === url && (await sizeOf(part))) || 0;
  if (!offset) {
    await removeAll(part, partMetaFile);
    partMeta = undefined;
  }
  // Hashing the part before the request keeps the inactivity timer from firing on a slow disk.
  let hash = offset ? await hashFile(part) : createHash('sha256');

  const timeoutMs = opts.timeoutMs ?? 120_000;
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  const get = () => {
    const headers = new Headers(opts.headers);
    // fetch would transparently gunzip a Content-Encoding: gzip body, breaking Content-Length and Range arithmetic.
    if (!headers.has('accept-encoding')) headers.set('accept-encoding', 'identity');
    if (offset) {
      headers.set('range', `bytes=${offset}-`);
      // If-Range needs a strong validator; without it the server may splice two versions of the file.
      const validator = partMeta?.etag && !partMeta.etag.startsWith('W/') ? partMeta.etag : partMeta?.lastModified;
      if (validator) headers.set('if-range', validator);
    } else if (prev) {
      if (prev.etag) headers.set('if-none-match', prev.etag);
      if (prev.lastModified) headers.set('if-modified-since', prev.lastModified);
    }
    return fetch(url, { headers, signal: controller.signal });
  };
  const drop = (res: Response) => res.body?.cancel().catch(() => undefined);

  try {
    let res = await get();
    if (res.status === 416 && offset) {
      await drop(res);
      await removeAll(part, partMetaFile);
      [offset, partMeta, hash] = [0, undefined, createHash('sha256')];
      res = await get();
    }
    timer.refresh();
    const etag = res.headers.get('etag') ?? undefined;
    const lastModified = res.headers.get('last-modified') ?? undefined;
    const unchanged = (): DownloadResult => ({
      url, path: dest, status: 'not_modified', bytes: prev!.bytes, sha256: prev!.sha256,
      etag: etag ?? prev!.etag, lastModified: lastModified ?? prev!.lastModified,
    });

    if (res.status === 304 && prev) return unchanged();
    if (res.status >= 500 || res.status === 408 || res.status === 429) {
      await drop(res);
      throw new Transient(httpStatus(res), res.status, parseRetryAfter(res.headers.get('retry-after')));
    }
    if (res.status !== 200 && !(res.status === 206 && offset)) {
      await drop(res);
      throw new DownloadError(`GET ${url}: ${httpStatus(res)} (not retried)`, url, res.status);
    }
    if (res.status === 200 && prev?.etag && etag === prev.etag) {
      await drop(res);
      await removeAll(part, partMetaFile); // any part belonged to a version that is no longer served
      return unchanged();
    }

    let total: number | undefined;
    if (res.status === 206) {
      const range = res.headers.get('content-range') ?? '';
      const m = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(range);
      if (!m || Number(m[1]) !== offset || (partMeta?.etag && etag && etag !== partMeta.etag)) {
        await drop(res);
        await removeAll(part, partMetaFile);
        throw new Transient(`unusable 206 response (Content-Range "${range}", ETag ${etag}); restarting`);
      }
      total = m[3] === '*' ? undefined : Number(m[3]);
    } else {
      // 200, whether fresh or because If-Range failed: the part, if any, is overwritten from byte zero.
      [offset, hash] = [0, createHash('sha256')];
      const length = res.headers.get('content-length');
      total = length && !res.headers.get('content-encoding') ? Number(length) : undefined;
      partMeta = { url, etag, lastModified };
      await writeJson(partMetaFile, partMeta);
    }

    let received = offset;
    const meter = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        timer.refresh();
        hash.update(chunk);
        received += chunk.length;
        opts.onProgress?.(received, total);
        callback(null, chunk);
      },
    });
    const body = Readable.fromWeb((res.body ?? new Blob([]).stream()) as NodeReadableStream<Uint8Array>);
    await pipeline(body, meter, fs.createWriteStream(part, { flags: offset ? 'a' : 'w' }));
    if (total !== undefined && received !== total) {
      if (received > total) await removeAll(part, partMetaFile); // corrupt beyond repair by Range
      throw new Transient(`truncated body: received ${received} of ${total} bytes`);
    }

    const sha256 = hash.digest('hex');
    const final = { etag: etag ?? partMeta?.etag, lastModified: lastModified ?? partMeta?.lastModified };
    const record: Meta = { url, ...final, sha256, bytes: received, completedAt: new Date().toISOString() };
    if (prev?.sha256 === sha256) {
      // Same bytes under new validators: keep the file (and its mtime) but remember the validators.
      await removeAll(part, partMetaFile);
      await writeJson(metaFile, record);
      return { url, path: dest, status: 'not_modified', bytes: received, sha256, ...final };
    }
    // Old validators must never describe new bytes, should we crash between these steps.
    await removeAll(metaFile);
    await fsp.rename(part, dest);
    await writeJson(metaFile, record);
    await removeAll(partMetaFile);
    return { url, path: dest, status: res.status === 206 ? 'resumed' : 'downloaded', bytes: received, sha256, ...final };
  } catch (err) {
    if (timedOut && !(err instanceof DownloadError)) throw new Transient(`no data received for ${timeoutMs} ms`);
    throw err;
  } finally {
    clearTimeout(timer);
  }
}
