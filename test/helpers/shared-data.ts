// The layout of a run's shared datasets, used both by the test workers (test/helpers/data.ts) and by the global
// setup in vitest's main process (test/global-setup.ts), so it imports neither vitest's runtime nor the pipeline.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export const DATASETS = ['demo', 'sample'] as const;
export type DatasetName = (typeof DATASETS)[number];

declare module 'vitest' {
  export interface ProvidedContext {
    /** The run's folder for shared datasets (test/global-setup.ts). */
    foncierTestDataRoot: string;
  }
}

/** Where the shared copy of a dataset lives, and its markers. */
export function datasetPaths(runRoot: string, name: DatasetName) {
  return {
    dir: path.join(runRoot, name),
    lock: path.join(runRoot, `${name}.lock`),
    ready: path.join(runRoot, `${name}.ready`),
    failed: path.join(runRoot, `${name}.failed`),
    fingerprint: path.join(runRoot, `${name}.fingerprint.json`),
  };
}

/** sha256 of every file under dir, by relative path: what the teardown compares to catch writes into shared data. */
export function fingerprint(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const rel of fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort()) {
    const file = path.join(dir, rel);
    if (fs.lstatSync(file).isFile()) out[rel] = crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
  }
  return out;
}
