// The API's only door to the data: the serving DuckDB file opened read-only and hardened, a small connection pool,
// bound parameters, a per-query time budget, and a hot swap to the new file the pipeline publishes (no restart, no
// failed request: queries in flight finish on the generation they started on, which is closed once drained).
import fs from 'node:fs';
import path from 'node:path';
import { dataDir, paths } from '../lib/config';
import { all, columns, DuckDBInstance, run, type DuckDBConnection, type Params } from '../lib/duck';
import { currentServingFile } from '../lib/serving';
import { env } from '../lib/env';
import { SalesIndex } from './sales/memory';

export class QueryTimeoutError extends Error {
  constructor(readonly ms: number) {
    super(`query exceeded its ${ms} ms budget`);
  }
}

export class NoDataError extends Error {
  constructor() {
    super('no serving database yet: run `npm run pipeline` (or `npm start` for the demo data)');
  }
}

interface Generation {
  file: string;
  instance: DuckDBInstance;
  idle: DuckDBConnection[];
  waiters: Array<(c: DuckDBConnection) => void>;
  inFlight: number;
  retired: boolean;
  vintage?: Promise<string | null>;
  /** The in-memory copy of the sales the zone statistics read (api/sales/memory.ts), when loaded. */
  sales?: SalesIndex;
}

export interface ServingDbOptions {
  dataRoot?: string;
  poolSize?: number;
  threads?: number;
  memoryLimit?: string;
  queryTimeoutMs?: number;
  /** How often the CURRENT pointer is checked for a new build. */
  watchIntervalMs?: number;
  /** Where a failing on-swap listener's error goes (default: stderr). */
  onSwapError?: (e: Error) => void;
  /**
   * Load the in-memory sales index with each serving file before serving it (default: SALES_MEMORY_INDEX). A file
   * whose index fails to load is served from DuckDB alone, the error reported to onSwapError.
   */
  salesIndex?: boolean;
}

/** Called after the API switched to a new serving database (its file), e.g. to run the alert scan on new data. */
export type SwapListener = (file: string) => void | Promise<void>;

export class ServingDb {
  private gen: Generation | undefined;
  private readonly swapListeners: SwapListener[] = [];
  /** Set once start() opened the database there was: later switches (even to a first build) fire the listeners. */
  private started = false;
  private watcher: NodeJS.Timeout | undefined;
  private swapping: Promise<void> | undefined;
  readonly opts: Required<ServingDbOptions>;

  constructor(opts: ServingDbOptions = {}) {
    this.opts = {
      dataRoot: opts.dataRoot ?? dataDir(),
      poolSize: opts.poolSize ?? 4,
      threads: opts.threads ?? 2,
      memoryLimit: opts.memoryLimit ?? '2GB',
      queryTimeoutMs: opts.queryTimeoutMs ?? 10_000,
      watchIntervalMs: opts.watchIntervalMs ?? 1_000,
      onSwapError: opts.onSwapError ?? ((e) => console.error(`on-swap listener failed: ${e.message}`)),
      salesIndex: opts.salesIndex ?? env().SALES_MEMORY_INDEX === 'on',
    };
  }

  get file(): string | undefined {
    return this.gen?.file;
  }

  /** The in-memory sales index of the serving file in use, if it has one. */
  get sales(): SalesIndex | undefined {
    return this.gen?.sales;
  }

  /**
   * What may be shown of the served data without a key (GET /health): the file's name, never its path, and the
   * vintage of its sales (latest DVF publication date in the manifest snapshot), read once per file.
   */
  async describe(): Promise<{ name: string; vintage: string | null } | undefined> {
    const g = this.gen;
    if (!g) return undefined;
    g.vintage ??= this.query<{ vintage: string | null }>(
      `select max(p.value->>'vintage') as vintage
       from meta_manifest, json_each(manifest::JSON, '$.sources.dvf.partitions') as p`,
    ).then(([r]) => r?.vintage ?? null, () => null);
    return { name: path.basename(g.file), vintage: await g.vintage };
  }

  /** Opens the current serving file (if any) and starts watching for new builds. */
  async start(): Promise<void> {
    await this.refresh();
    this.started = true;
    this.watcher = setInterval(() => void this.refresh().catch(() => {}), this.opts.watchIntervalMs);
    this.watcher.unref();
  }

  /**
   * Registers a callback fired after every switch to a new serving database (not for the one opened by start(); for
   * the first build published while the API runs without data, yes). It
   * runs once the new generation serves queries; its failure is logged by the caller's promise, never breaks the swap.
   * Returns a function that unregisters it.
   */
  onSwap(listener: SwapListener): () => void {
    this.swapListeners.push(listener);
    return () => {
      const i = this.swapListeners.indexOf(listener);
      if (i >= 0) this.swapListeners.splice(i, 1);
    };
  }

  /** Switches to the file CURRENT points at when it changed. Safe to call concurrently. */
  async refresh(): Promise<void> {
    const file = currentServingFile(this.opts.dataRoot);
    if (!file || file === this.gen?.file) return;
    this.swapping ??= this.swapTo(file).finally(() => (this.swapping = undefined));
    await this.swapping;
  }

  private async swapTo(file: string): Promise<void> {
    const next = await this.openGeneration(file);
    const previous = this.gen;
    this.gen = next;
    if (previous) {
      previous.retired = true;
      this.closeIfDrained(previous);
    }
    // listeners run after the swap, outside it: a slow or failing listener never delays or undoes it
    if (this.started) {
      for (const l of [...this.swapListeners]) void Promise.resolve().then(() => l(file)).catch((e: Error) => this.opts.onSwapError(e));
    }
  }

  private async openGeneration(file: string): Promise<Generation> {
    // A published serving file is never written again, so a WAL beside it can only be junk (DuckDB lets a connection
    // write its own database's WAL path even when locked down, see below): never let it be replayed.
    fs.rmSync(`${file}.wal`, { force: true });
    const instance = await DuckDBInstance.create(file, {
      access_mode: 'READ_ONLY',
      threads: String(this.opts.threads),
      memory_limit: this.opts.memoryLimit,
      autoinstall_known_extensions: 'false',
      autoload_known_extensions: 'false',
    });
    const idle: DuckDBConnection[] = [await instance.connect()];
    // No request can make DuckDB read or write any file but its own database, attach another database, load or install
    // an extension, or change a setting afterwards (docs/decisions.md, DuckDB lockdown). No allowed_directories: with
    // external access off, DuckDB only admits the database file itself, its WAL names and its spill folder
    // (`<file>.tmp`), which it adds on its own. Instance-wide; lock_configuration last, it freezes everything.
    await run(idle[0], 'SET enable_external_access = false');
    await run(idle[0], 'SET lock_configuration = true');
    for (let i = 1; i < this.opts.poolSize; i++) idle.push(await instance.connect());
    // Loaded before the file is served, so that every answer of a serving file comes from the same path.
    let sales: SalesIndex | undefined;
    if (this.opts.salesIndex) {
      sales = await SalesIndex.load(idle[0]).catch((e: Error) => {
        this.opts.onSwapError(new Error(`in-memory sales index of ${path.basename(file)} not loaded: ${e.message}`));
        return undefined;
      });
    }
    return { file, instance, idle, waiters: [], inFlight: 0, retired: false, sales };
  }

  private closeIfDrained(g: Generation): void {
    if (!g.retired || g.inFlight > 0) return;
    for (const c of g.idle) c.closeSync();
    g.idle = [];
    g.instance.closeSync();
  }

  private acquire(g: Generation): Promise<DuckDBConnection> {
    const c = g.idle.pop();
    if (c) return Promise.resolve(c);
    return new Promise((resolve) => g.waiters.push(resolve));
  }

  private release(g: Generation, c: DuckDBConnection): void {
    const waiter = g.waiters.shift();
    if (waiter) waiter(c);
    else g.idle.push(c);
  }

  /** Runs one query with bound `$name` parameters on a pooled connection, within the time budget. */
  query<T = Record<string, unknown>>(sql: string, params?: Params, opts: { timeoutMs?: number } = {}): Promise<T[]> {
    return this.withConnection((conn) => all<T>(conn, sql, params), opts);
  }

  /** As `query`, the result as arrays per column (`columns` of lib/duck.ts): for results of a million rows. */
  queryColumns<T extends Record<string, unknown[]>>(sql: string, params?: Params, opts: { timeoutMs?: number } = {}): Promise<T> {
    return this.withConnection((conn) => columns<T>(conn, sql, params), opts);
  }

  private async withConnection<R>(read: (conn: DuckDBConnection) => Promise<R>, opts: { timeoutMs?: number }): Promise<R> {
    const g = this.gen;
    if (!g) throw new NoDataError();
    g.inFlight++;
    const conn = await this.acquire(g);
    const budget = opts.timeoutMs ?? this.opts.queryTimeoutMs;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      conn.interrupt();
    }, budget);
    try {
      const rows = await read(conn);
      // An interrupt that arrives as the query finishes is lost: the budget was still exceeded.
      if (timedOut) throw new QueryTimeoutError(budget);
      return rows;
    } catch (e) {
      if (timedOut) throw new QueryTimeoutError(budget);
      throw e;
    } finally {
      clearTimeout(timer);
      this.release(g, conn);
      g.inFlight--;
      this.closeIfDrained(g);
    }
  }

  async close(): Promise<void> {
    if (this.watcher) clearInterval(this.watcher);
    await this.swapping;
    if (this.gen) {
      this.gen.retired = true;
      this.closeIfDrained(this.gen);
      this.gen = undefined;
    }
  }
}

/** Whether a serving database exists under the data folder (used by `npm start` to decide on the demo build). */
export function hasServingData(root = dataDir()): boolean {
  return fs.existsSync(paths.serving(root)) && currentServingFile(root) !== undefined;
}
