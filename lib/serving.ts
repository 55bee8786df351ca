// Where the current serving database is (`data/serving/CURRENT` names it; the marts build swaps that pointer
// atomically), and what it and the valuation calibration were made from, so a run can tell stale outputs from fresh
// ones after an interrupted build (docs/data.md, "Interruptions").
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { dataDir, paths } from './config';
import { writeFileAtomic } from './files';

export function currentServingFile(root = dataDir()): string | undefined {
  const dir = paths.serving(root);
  const pointer = path.join(dir, 'CURRENT');
  if (!fs.existsSync(pointer)) return undefined;
  const file = path.join(dir, fs.readFileSync(pointer, 'utf8').trim());
  return fs.existsSync(file) ? file : undefined;
}

/** What a serving build was made from: written beside it (`<file>.from.json`) before CURRENT points at it. */
export interface ServingStamp {
  /** sha256 of the lake manifest the build read (every lake commit changes it). */
  manifest_sha256: string;
  built_at: string;
}

/** sha256 of the lake's manifest as it is now ('' when the lake has none). */
export function lakeManifestHash(root = dataDir()): string {
  const file = paths.manifest(root);
  return fs.existsSync(file) ? crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex') : '';
}

export const servingStampFile = (servingFile: string) => `${servingFile}.from.json`;

export function readServingStamp(servingFile: string): ServingStamp | undefined {
  const f = servingStampFile(servingFile);
  return fs.existsSync(f) ? (JSON.parse(fs.readFileSync(f, 'utf8')) as ServingStamp) : undefined;
}

/** Which serving file the published calibration was learnt on (written after each backtest). */
export const calibrationStampFile = (root: string) => path.join(paths.marts(root), 'valuation_calibration.from.json');

export function writeCalibrationStamp(root: string, servingFile: string): void {
  const file = calibrationStampFile(root);
  writeFileAtomic(file, JSON.stringify({ serving_file: path.basename(servingFile) }) + '\n');
}

/**
 * Whether the serving database is older than the lake (missing, made from another manifest, or from an unknown one),
 * and whether the calibration is older than the serving database.
 */
export function staleness(root = dataDir()): { marts: boolean; calibration: boolean } {
  const serving = currentServingFile(root);
  const stamp = serving ? readServingStamp(serving) : undefined;
  const marts = !serving || stamp?.manifest_sha256 !== lakeManifestHash(root);
  const calFile = calibrationStampFile(root);
  const cal = fs.existsSync(calFile) ? (JSON.parse(fs.readFileSync(calFile, 'utf8')) as { serving_file?: string }) : undefined;
  const calibration = marts || !serving || cal?.serving_file !== path.basename(serving);
  return { marts, calibration };
}
