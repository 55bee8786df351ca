// The plug-in contract every source implements, so `npm run pipeline -- <source>` is one code path for all of them.
import type { DuckDBConnection } from '../../lib/duck';
import type { Lake, PartitionRecord } from '../lake';

export interface Selection {
  departements: string[];
  annees: number[];
  /** Published format to fetch when a source has several (DVF: 'geo-dvf' or 'dgfip'). */
  format?: string;
  /** Mirror of the official tree; replaces the default publisher URL. */
  baseUrl?: string;
  /** Local folder laid out like the official tree; no network. */
  fromDir?: string;
}

/** One file to fetch and import. `relPath` is its path inside the official tree (also used under --from-dir). */
export interface Part {
  source: string;
  key: string;
  format: string;
  relPath: string;
  url: string;
  annee: number;
  /** Partitions this file owns: importing it replaces exactly these (département, year) partitions. National
   * sources use a scope instead of a département (Filosofi: FR; ANIL: FR-<segment>). */
  departements: string[];
  /** Name of the entry to extract when the file is a ZIP archive holding several (default: its first entry). */
  zipEntry?: string;
  /** Other names the file may have under --from-dir (e.g. the bare CSV instead of the published ZIP). */
  localAlternatives?: string[];
}

export interface LocalFile {
  path: string;
  sha256: string;
  vintage: string;
  url: string;
}

export interface ImportContext {
  lake: Lake;
  conn: DuckDBConnection;
  now: Date;
  log: (message: string) => void;
  /** Step `done` of `total` of the import is starting (for progress bars). */
  progress?: (step: string, done: number, total: number) => void;
}

/** One fetched file to import. */
export interface ImportItem {
  part: Part;
  file: LocalFile;
}

export interface ImportResult {
  partitions: PartitionRecord[];
  /** Lines that belong to no owned partition (unparsable date, other year or département). */
  fileAnomalies: Record<string, number>;
}

export interface Source {
  name: string;
  /** Years fetched when --annees is not given (DVF: the five years before the current one). */
  defaultAnnees?: (now: Date) => number[];
  /** Files to fetch for a selection, in a deterministic order. */
  parts(sel: Selection): Part[];
  /**
   * Parts with the same batch key are imported together by one `importFiles` call: one pass is much faster than
   * one call per file (both cores busy, fixed costs paid once). Parts of one batch must own disjoint partitions.
   */
  batchKey(part: Part): string;
  /** Imports local files into the lake (atomically per partition) and reports what it did, one result per item. */
  importFiles(ctx: ImportContext, items: ImportItem[]): Promise<ImportResult[]>;
}
