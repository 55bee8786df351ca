// Client of ADEME's data-fair API (data.ademe.fr): pages one département of a dataset through `/lines` into a local
// file, following the `next` link (its `after` cursor). Resumable from the last completed page (cursor and byte
// length saved on disk after each page), retried on 429/5xx with backoff, skipped when the dataset's data update date
// has not changed since the last complete download.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { parseRetryAfter, readJson, writeJson } from '../../download';

/** One published DPE dataset: its id (renamed before, so configurable) and the field holding the département. */
export interface DataFairDataset {
  id: string;
  departementField: string;
  /** Fields asked for (`select=`): the ones the parser reads; every field when absent. */
  select?: string[];
}

export interface DataFairFetchOptions {
  /** e.g. https://data.ademe.fr/data-fair/api/v1 */
  baseUrl: string;
  dataset: DataFairDataset;
  departement: string;
  /** Output file: NDJSON (one result object a line) for 'json', CSV with one header line for 'csv'. */
  dest: string;
  format?: 'json' | 'csv';
  /** Rows per page (data-fair caps it at 10,000). */
  size?: number;
  /** Fields to fetch (`select=`); default the dataset's `select`, every field when both are absent. */
  select?: string[];
  /** Re-download even when the dataset's update date is unchanged. */
  force?: boolean;
  retries?: number; // retries of one page after its first attempt, default 5
  /** Delay before retry n (1-based) when the server gave no Retry-After; injectable so tests do not wait. */
  backoff?: (attempt: number) => number;
  /** Cap on any wait, Retry-After included. */
  maxDelayMs?: number;
  sleep?: (ms: number) => Promise<void>;
  timeoutMs?: number; // per-request inactivity timeout, default 120 s
  onPage?: (rows: number, total: number | undefined) => void;
}

export interface DataFairFetchResult {
  status: 'downloaded' | 'resumed' | 'not_modified';
  path: string;
  rows: number;
  pages: number;
  /** The dataset's data update date (`dataUpdatedAt`, else `finalizedAt`/`updatedAt`) this file was fetched from. */
  vintage: string | undefined;
}

/** `<dest>.state.json`: where an interrupted download resumes, or what a complete one was made from. */
interface State {
  url: string; // the first page's URL: another query means another download
  vintage: string | undefined;
  next: string | null; // the page to fetch next; null once complete
  bytes: number; // committed length of `<dest>.part`
  rows: number;
  pages: number;
  complete: boolean;
}

export class DataFairError extends Error {
  constructor(message: string, readonly url: string, readonly status?: number) {
    super(message);
    this.name = 'DataFairError';
  }
}

class Transient extends Error {
  constructor(message: string, readonly retryAfterMs?: number) {
    super(message);
  }
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The URL of a département's first page. data-fair's `qs` is Elasticsearch query-string syntax. */
export function firstPageUrl(o: Pick<DataFairFetchOptions, 'baseUrl' | 'dataset' | 'departement' | 'format' | 'size' | 'select'>): string {
  const url = new URL(`${o.baseUrl.replace(/\/$/, '')}/datasets/${encodeURIComponent(o.dataset.id)}/lines`);
  url.searchParams.set('qs', `${o.dataset.departementField}:"${o.departement}"`);
  url.searchParams.set('size', String(o.size ?? 10_000));
  const select = o.select ?? o.dataset.select;
  if (select?.length) url.searchParams.set('select', select.join(','));
  if (o.format === 'csv') url.searchParams.set('format', 'csv');
  return url.toString();
}

/** `rel="next"` of a Link header (data-fair's CSV output carries its cursor there). */
function linkNext(link: string | null): string | null {
  const m = link && /<([^>]+)>\s*;\s*rel="?next"?/i.exec(link);
  return m ? m[1] : null;
}

/** GET with an inactivity timeout; 429/5xx and network failures are Transient, other non-2xx fatal. */
async function getText(url: string, timeoutMs: number): Promise<{ text: string; headers: Headers }> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    const res = await fetch(url, { signal: controller.signal, headers: { accept: 'application/json, text/csv' } });
    if (res.status === 429 || res.status === 408 || res.status >= 500) {
      await res.body?.cancel().catch(() => undefined);
      throw new Transient(`HTTP ${res.status}`, parseRetryAfter(res.headers.get('retry-after')));
    }
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      throw new DataFairError(`GET ${url}: HTTP ${res.status} (not retried)`, url, res.status);
    }
    return { text: await res.text(), headers: res.headers };
  } catch (err) {
    if (err instanceof DataFairError || err instanceof Transient) throw err;
    // A cut connection, a reset or our own timeout: the page is fetched again from its start.
    const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
    throw new Transient(`${err instanceof Error ? err.message : String(err)}${cause}`);
  } finally {
    clearTimeout(timer);
  }
}

async function withRetries<T>(url: string, o: DataFairFetchOptions, fn: () => Promise<T>): Promise<T> {
  const retries = o.retries ?? 5;
  const backoff = o.backoff ?? ((n: number) => 1000 * 4 ** (n - 1));
  const sleep = o.sleep ?? defaultSleep;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (!(err instanceof Transient)) throw err;
      if (attempt > retries) throw new DataFairError(`GET ${url} failed after ${attempt} attempts: ${err.message}`, url);
      await sleep(Math.min(err.retryAfterMs ?? backoff(attempt), o.maxDelayMs ?? 120_000));
    }
  }
}

/** The dataset's data update date, from its metadata (`/datasets/<id>`); undefined when the metadata has none. */
export async function datasetVintage(o: Pick<DataFairFetchOptions, 'baseUrl' | 'dataset'> & Partial<DataFairFetchOptions>): Promise<string | undefined> {
  const url = `${o.baseUrl.replace(/\/$/, '')}/datasets/${encodeURIComponent(o.dataset.id)}`;
  const { text } = await withRetries(url, o as DataFairFetchOptions, () => getText(url, o.timeoutMs ?? 120_000));
  const meta = JSON.parse(text) as Record<string, unknown>;
  const v = meta.dataUpdatedAt ?? meta.finalizedAt ?? meta.updatedAt;
  return typeof v === 'string' ? v : undefined;
}

/** One page's content to append (NDJSON or CSV without its header after the first page) and the next page's URL. */
function splitPage(text: string, headers: Headers, format: 'json' | 'csv', first: boolean): { chunk: string; rows: number; next: string | null; total?: number } {
  if (format === 'json') {
    const body = JSON.parse(text) as { total?: number; next?: string; results?: unknown[] };
    if (!Array.isArray(body.results)) throw new Transient('page without a results array');
    const chunk = body.results.map((r) => JSON.stringify(r) + '\n').join('');
    return { chunk, rows: body.results.length, next: body.next ?? null, total: body.total };
  }
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  while (lines.length && lines[lines.length - 1] === '') lines.pop();
  const data = first ? lines : lines.slice(1);
  const rows = Math.max(0, lines.length - 1);
  return { chunk: data.length ? data.join('\n') + '\n' : '', rows, next: linkNext(headers.get('link')) };
}

/** Downloads one département of a dataset into `dest` (atomically: `<dest>.part` renamed when complete). */
export async function fetchDepartement(o: DataFairFetchOptions): Promise<DataFairFetchResult> {
  const format = o.format ?? 'json';
  const part = `${o.dest}.part`;
  const stateFile = `${o.dest}.state.json`;
  await fsp.mkdir(path.dirname(o.dest), { recursive: true });
  const url = firstPageUrl({ ...o, format });
  const vintage = await datasetVintage(o);
  let state = await readJson<State>(stateFile);
  if (state?.url !== url) state = undefined;

  if (state?.complete && !o.force && vintage !== undefined && state.vintage === vintage && fs.existsSync(o.dest)) {
    return { status: 'not_modified', path: o.dest, rows: state.rows, pages: state.pages, vintage };
  }
  // A cursor is only valid for the version of the data it was issued on.
  const resuming = !!state && !state.complete && state.next !== null && state.vintage === vintage && fs.existsSync(part);
  if (resuming) {
    // Bytes past the committed length belong to a page that was being written when the run stopped.
    await fsp.truncate(part, state!.bytes);
  } else {
    state = { url, vintage, next: url, bytes: 0, rows: 0, pages: 0, complete: false };
    await fsp.writeFile(part, '');
    await writeJson(stateFile, state);
  }
  const s = state!;
  while (s.next) {
    const pageUrl: string = s.next;
    const page = await withRetries(pageUrl, o, async () => {
      const { text, headers } = await getText(pageUrl, o.timeoutMs ?? 120_000);
      return splitPage(text, headers, format, s.pages === 0);
    });
    await fsp.appendFile(part, page.chunk);
    s.bytes += Buffer.byteLength(page.chunk);
    s.rows += page.rows;
    s.pages += 1;
    // A page with no row ends the walk even if the server still sends a link (data-fair does on the last page).
    s.next = page.rows > 0 ? page.next : null;
    await writeJson(stateFile, s);
    o.onPage?.(s.rows, page.total);
  }
  await fsp.rename(part, o.dest);
  s.complete = true;
  await writeJson(stateFile, s);
  return { status: resuming ? 'resumed' : 'downloaded', path: o.dest, rows: s.rows, pages: s.pages, vintage };
}
