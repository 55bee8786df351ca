// Where the current serving database is: `data/serving/CURRENT` names it; the marts build swaps that pointer atomically.
import fs from 'node:fs';
import path from 'node:path';
import { dataDir, paths } from './config';

export function currentServingFile(root = dataDir()): string | undefined {
  const dir = paths.serving(root);
  const pointer = path.join(dir, 'CURRENT');
  if (!fs.existsSync(pointer)) return undefined;
  const file = path.join(dir, fs.readFileSync(pointer, 'utf8').trim());
  return fs.existsSync(file) ? file : undefined;
}
