// Imports the DPE files of whole départements from a folder laid out like the data-fair client's downloads
// (<dir>/<dataset id>/<dep>.csv[.gz] | .ndjson | .json): every dataset of a département is staged in one pass (so a
// replacement across datasets is seen), then published as the département's `dpe` partitions and recorded in the
// manifest. Used by the demo build and --from-dir until the source plug-in contract wraps it.
import fs from 'node:fs';
import path from 'node:path';
import { openMemory } from '../../../lib/duck';
import { Lake, type PartitionRecord } from '../../lake';
import { DPE_SOURCE, publishDpeDepartement } from './lake';
import { stageDpeFiles, type DpeFile } from './parse';

/** The datasets read, in order (ids are configuration: ADEME has renamed them before). */
export const DPE_DEFAULT_DATASETS = ['dpe03existant', 'dpe02neuf', 'dpe-france'];
const EXTENSIONS = ['.csv.gz', '.csv', '.ndjson', '.json'];

export interface DpeDepartementImport {
  departement: string;
  files: string[];
  rowsRead: number;
  rows: number;
  anomalies: Record<string, number>;
  partitions: PartitionRecord[];
}

/** The files of one département under `dir`, one per dataset that has it. */
export function dpeFilesOf(dir: string, dep: string, datasets = DPE_DEFAULT_DATASETS): DpeFile[] {
  return datasets.flatMap((dataset) => {
    const hit = EXTENSIONS.map((ext) => path.join(dir, dataset, `${dep}${ext}`)).find((f) => fs.existsSync(f));
    return hit ? [{ path: hit, dataset }] : [];
  });
}

export async function importDpeDepartements(opts: { dataRoot?: string; fromDir: string; departements: string[]; datasets?: string[]; now?: Date; log?: (m: string) => void }): Promise<DpeDepartementImport[]> {
  const lake = new Lake(opts.dataRoot);
  const unlock = lake.lock();
  const { instance, conn } = await openMemory({ threads: 2, memoryLimit: '2GB' });
  const now = opts.now ?? new Date();
  const out: DpeDepartementImport[] = [];
  try {
    for (const dep of opts.departements) {
      const files = dpeFilesOf(opts.fromDir, dep, opts.datasets);
      if (!files.length) continue;
      const staged = await stageDpeFiles(conn, files);
      const anomalies = Object.fromEntries(Object.entries(staged.anomalies).filter(([, n]) => n > 0));
      const partitions = await publishDpeDepartement({ lake, conn, now }, dep, {
        source_url: `file://${path.resolve(opts.fromDir)}`, source_format: files.map((f) => f.dataset).join('+'), vintage: now.toISOString().slice(0, 10),
        sha256: '', mutations: 0, new_mutations: 0, anomalies,
      });
      opts.log?.(`dpe ${dep}: ${staged.rows} diagnostics from ${files.length} files; ${Object.entries(anomalies).map(([k, n]) => `${k} ${n}`).join(', ') || 'no anomaly'}`);
      out.push({ departement: dep, files: files.map((f) => f.path), rowsRead: staged.rowsRead, rows: staged.rows, anomalies, partitions });
    }
    const manifest = lake.readManifest();
    const src = (manifest.sources[DPE_SOURCE] ??= {});
    src.partitions = Object.fromEntries(Object.entries(src.partitions ?? {}).filter(([k]) => !out.some((o) => k.startsWith(`${o.departement}/`))));
    for (const o of out) for (const p of o.partitions) src.partitions[`${p.code_departement}/${p.annee}`] = p;
    const all = Object.values(src.partitions);
    src.rows = all.reduce((a, p) => a + p.rows_kept, 0);
    src.vintage = all.map((p) => p.vintage).sort().at(-1);
    lake.writeManifest(manifest);
    return out;
  } finally {
    conn.closeSync();
    instance.closeSync();
    unlock();
  }
}
