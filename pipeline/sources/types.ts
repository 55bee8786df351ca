// The pipeline half of the source contract: a plug-in is a source declaration (lib/sources/types.ts: partitioning,
// defaults, lake schema, count label) plus the files to fetch and their import, so `npm run pipeline -- <source>` is
// one code path for every source. docs/adding-a-source.md walks through adding one.
import type { DuckDBConnection } from '../../lib/duck';
import type { LakeTransaction, PartitionRecord } from '../../lib/lake';
import type { PartitionValues, SourceDeclaration } from '../../lib/sources/types';

export interface Selection {
  /** Départements to fetch (sources with a département axis; ignored by the others). */
  departements: string[];
  /** Years or vintages to fetch (ignored by a snapshot source). */
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
  /** The year or vintage of the file, when the source has one. */
  annee?: number;
  /**
   * Partitions this file owns: importing it replaces exactly these. Empty when they are only known once the file is
   * read (a snapshot's date).
   */
  partitions: PartitionValues[];
  /** Name of the entry to extract when the file is a ZIP archive holding several (default: its first entry). */
  zipEntry?: string;
  /** The import reads the ZIP archive itself (several entries, extracted while another file imports): not extracted at fetch. */
  keepArchive?: boolean;
  /** Other names the file may have under --from-dir (e.g. the bare CSV instead of the published ZIP). */
  localAlternatives?: string[];
}

export interface FetchOptions {
  fromDir?: string;
  baseUrl?: string;
  dataRoot?: string;
  force?: boolean;
  log?: (message: string) => void;
}

export interface LocalFile {
  path: string;
  sha256: string;
  vintage: string;
  url: string;
}

export interface ImportContext {
  /** The batch's lake transaction: `publishPartition` stages a partition; the run commits it with its manifest records. */
  lake: LakeTransaction;
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

export interface Source extends SourceDeclaration {
  /** Files to fetch for a selection, in a deterministic order. */
  parts(sel: Selection): Part[];
  /**
   * Parts with the same batch key are imported together by one `importFiles` call: one pass is much faster than
   * one call per file (both cores busy, fixed costs paid once). Parts of one batch must own disjoint partitions.
   */
  batchKey(part: Part): string;
  /** Imports local files (staging their partitions in `ctx.lake`) and reports what it did, one result per item. */
  importFiles(ctx: ImportContext, items: ImportItem[]): Promise<ImportResult[]>;
  /**
   * Fetches a part itself instead of one HTTP file or one file under --from-dir (a paged API such as ADEME's data-fair,
   * or several files per part): returns the local file to import, whose sha256 decides whether it changed.
   */
  fetch?(part: Part, opts: FetchOptions): Promise<Omit<LocalFile, 'sha256'>>;
}
