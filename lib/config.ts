// Paths and settings shared by the pipeline, the marts and the API: everything lives under DATA_DIR.
import path from 'node:path';
import { env, envValue } from './env';

export function dataDir(): string {
  return path.resolve(env().DATA_DIR!);
}

export const paths = {
  lake: (root = dataDir()) => path.join(root, 'lake'),
  downloads: (root = dataDir()) => path.join(root, 'downloads'),
  marts: (root = dataDir()) => path.join(root, 'marts'),
  serving: (root = dataDir()) => path.join(root, 'serving'),
  manifest: (root = dataDir()) => path.join(root, 'lake', 'manifest.json'),
  demoSource: (root = dataDir()) => path.join(root, 'demo-source'),
};

/** Repository root (where package.json lives), for SQL files and shared samples. */
export const repoRoot = path.resolve(new URL('..', import.meta.url).pathname);

/** The real published samples of ../shared/data, used by tests and by the data report. */
export const samplesDir = path.resolve(envValue('SAMPLES_DIR') ?? path.join(repoRoot, '..', 'shared', 'data'));
