// Shared test helpers: temp data folders, the real DVF samples laid out like the official trees, lake readers.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { samplesDir } from '../../lib/config';
import { all, openMemory, type Row } from '../../lib/duck';

export const GEO_SAMPLE = path.join(samplesDir, 'dvf', 'geo-dvf_2021_33_extrait_abzac.csv');
export const RAW_SAMPLE = path.join(samplesDir, 'dvf', 'valeursfoncieres-2020_extrait_dep01.txt');

export function tempDir(prefix = 'foncier-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** A local tree laid out like the official ones: geo-DVF `{annee}/departements/{dep}.csv.gz`, DGFiP `valeursfoncieres-{annee}.txt`. */
export function sampleTree(dir = tempDir('foncier-tree-')): string {
  fs.mkdirSync(path.join(dir, '2021', 'departements'), { recursive: true });
  fs.writeFileSync(path.join(dir, '2021', 'departements', '33.csv.gz'), zlib.gzipSync(fs.readFileSync(GEO_SAMPLE)));
  fs.copyFileSync(RAW_SAMPLE, path.join(dir, 'valeursfoncieres-2020.txt'));
  return dir;
}

export function writeGeoFile(tree: string, annee: number, dep: string, csv: string): void {
  const dir = path.join(tree, String(annee), 'departements');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, `${dep}.csv.gz`), zlib.gzipSync(Buffer.from(csv)));
}

/** Reads rows from Parquet files with a throw-away DuckDB, independently of the code under test. */
export async function queryParquet(sql: string): Promise<Row[]> {
  const { instance, conn } = await openMemory({ threads: 1 });
  try {
    return await all(conn, sql);
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

export function lakeGlob(dataRoot: string, source = 'dvf'): string {
  // DVF's partition axes are code_departement and annee; the national sources' are scope and annee.
  const types = source === 'dvf' ? `{'code_departement': VARCHAR, 'annee': INTEGER}` : `{'annee': INTEGER}`;
  return `read_parquet('${path.join(dataRoot, 'lake', source)}/*/*/*.parquet', hive_partitioning = true, hive_types = ${types})`;
}

/**
 * Splits one CSV line with quotes (enough for the DVF samples). A regular expression, on purpose not lib/csv.ts's
 * scanner: tests compare what the code wrote with the samples through a reader of their own.
 */
export function splitCsv(line: string, sep = ','): string[] {
  const field = new RegExp(`("(?:[^"]|"")*"|[^"${sep}]*)(?:${sep}|$)`, 'y');
  const out: string[] = [];
  for (let at = 0; ; ) {
    field.lastIndex = at;
    const m = field.exec(line)!;
    out.push(m[1].startsWith('"') ? m[1].slice(1, -1).replaceAll('""', '"') : m[1]);
    if (field.lastIndex >= line.length && !m[0].endsWith(sep)) return out;
    at = field.lastIndex;
  }
}
