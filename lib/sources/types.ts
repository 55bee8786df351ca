// The declarative half of the source contract: what a source publishes and how it sits in the lake. It lives in lib/
// so the marts (empty tables of the right shape) and the API (`/v1/meta/sources`) read it without importing the
// pipeline; the pipeline's plug-in (files to fetch, import) extends it in pipeline/sources/types.ts.

/** DuckDB type of a lake column. */
export type ColumnType = 'VARCHAR' | 'INTEGER' | 'BIGINT' | 'DOUBLE' | 'BOOLEAN' | 'DATE' | 'TIMESTAMP';

/** Lake columns (column → type, in file order), the partition axes excluded (they live in the folder names). */
export type LakeSchema = Record<string, ColumnType>;

/**
 * How a source's files map to lake partitions. Each partition is one folder `<source>/<axis>=<value>/…/data.parquet`,
 * with the axes in the order declared; its manifest key is its values joined by `/` (DVF `33/2021`, Filosofi
 * `FR/2020`, a snapshot `2025-06-01`).
 * - `departement-year` (DVF): axes code_departement, annee.
 * - `departement` (DPE, BDNB): axis code_departement.
 * - `national-vintage` (Filosofi, ANIL): axes scope (which national file: `FR`, or `FR-<segment>` when a vintage is
 *   published as several national files) and annee (the vintage year).
 * - `snapshot` (SIRENE): axis snapshot (the `YYYY-MM-DD` date of the stock file); an import replaces the previous
 *   snapshot, so the lake holds one.
 */
export type PartitioningKind = 'departement-year' | 'departement' | 'national-vintage' | 'snapshot';

export const PARTITION_AXES: Record<PartitioningKind, Array<{ name: string; type: ColumnType }>> = {
  'departement-year': [{ name: 'code_departement', type: 'VARCHAR' }, { name: 'annee', type: 'INTEGER' }],
  departement: [{ name: 'code_departement', type: 'VARCHAR' }],
  'national-vintage': [{ name: 'scope', type: 'VARCHAR' }, { name: 'annee', type: 'INTEGER' }],
  snapshot: [{ name: 'snapshot', type: 'VARCHAR' }],
};

/** One partition's axis values, in axis order (e.g. `{ code_departement: '33', annee: 2021 }`). */
export type PartitionValues = Record<string, string | number>;

export interface SourceDeclaration {
  /** Lake folder, CLI name and `source` of `/v1/meta/sources`. */
  name: string;
  /** One line for `/v1/meta/sources` (`description`). */
  label: string;
  license: string;
  attribution: string;
  partitioning: PartitioningKind;
  /** What the CLI fetches when it is not told. */
  defaults: {
    /** Départements covered (undefined when the source has no département axis). */
    departements?: string[];
    /** Years or vintages fetched when --annees is not given (undefined for a snapshot). */
    annees?: (now: Date) => number[];
    /** First year the publisher covers: --annees below it is refused. */
    minAnnee?: number;
  };
  schema: LakeSchema;
  /** What a partition's records count, e.g. DVF `mutations` (sales): the manifest's `count` / `new_count`. */
  countLabel: string;
  /** The mart whose row count is the served rows of `/v1/meta/sources`, and its date column if any. */
  served?: { table: string; dateColumn?: string };
}

export function partitionAxes(decl: Pick<SourceDeclaration, 'partitioning'>) {
  return PARTITION_AXES[decl.partitioning];
}
