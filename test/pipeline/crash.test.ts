// The pipeline SIGKILLed during the marts build, between the Parquet marts and the serving
// database, or before the valuation calibration. Readers never see a mixed state, a plain rerun (every file
// unchanged) finishes the interrupted step, and leftovers are gone after it.
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { all, DuckDBInstance } from '../../lib/duck';
import { currentServingFile, readServingStamp, staleness } from '../../lib/serving';
import { afterImport } from '../../marts/after-import';
import { pipelineCommand } from '../../pipeline/cli';
import { runSource } from '../../pipeline/run';
import { killAtPause, snapshotFiles } from '../helpers/crash';
import { sampleTree, tempDir } from '../helpers/samples';

/** Departements served by the current serving database. */
async function servedDepartements(data: string): Promise<string[]> {
  const instance = await DuckDBInstance.create(currentServingFile(data)!, { access_mode: 'READ_ONLY' });
  const conn = await instance.connect();
  try {
    return (await all<{ d: string }>(conn, 'select distinct code_departement d from ventes order by d')).map((r) => r.d);
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

const calibrationFrom = (data: string) => JSON.parse(fs.readFileSync(path.join(data, 'marts', 'valuation_calibration.from.json'), 'utf8')).serving_file;

/** Leftovers of interrupted runs anywhere in the data folder: temporary files, unpublished generations, half builds. */
function leftovers(data: string): string[] {
  const found: string[] = [];
  for (const f of Object.keys(snapshotFiles(data))) if (/\.tmp(-\d+)?$|(^|\/)\.building-|\.staging/.test(f)) found.push(f);
  for (const store of ['.lake/generations', '.marts/generations']) {
    const dir = path.join(data, store);
    if (fs.existsSync(dir) && fs.readdirSync(dir).length !== 1) found.push(`${store}: ${fs.readdirSync(dir).join(', ')}`);
  }
  return found;
}

describe('a pipeline killed after its import', () => {
  const tree = sampleTree();
  // the killed command: DGFiP 2020 for département 01, on top of an imported and served geo-DVF 2021 for 33
  const args = ['dvf', '--source', 'dgfip', '--departements', '01', '--annees', '2020', '--from-dir', tree];
  let base: string;
  beforeAll(async () => {
    base = tempDir('foncier-crash-base-');
    await runSource({ source: 'dvf', fromDir: tree, annees: [2021], departements: ['33'], dataRoot: base });
    await afterImport({ dataRoot: base });
  });
  const copyOfBase = () => {
    const data = tempDir('foncier-crash-');
    fs.cpSync(base, data, { recursive: true, verbatimSymlinks: true });
    return data;
  };

  it('killed between the Parquet marts and the serving swap: readers see the old marts, a plain rerun rebuilds', async () => {
    const data = copyOfBase();
    const marts = () => snapshotFiles(path.join(data, 'marts'));
    const martsBefore = marts();
    const servingBefore = currentServingFile(data);
    expect(await servedDepartements(data)).toEqual(['33']);

    await killAtPause('pipeline/cli.ts', args, { DATA_DIR: data, FONCIER_TEST_PAUSE: 'marts-before-swap' });
    // the lake holds 01, the served data does not: the marts folder is entirely the old one (no new file, no .tmp)
    expect(marts()).toEqual(martsBefore);
    expect(currentServingFile(data)).toBe(servingBefore);
    expect(staleness(data)).toEqual({ marts: true, calibration: true });

    vi.spyOn(console, 'log').mockImplementation(() => {});
    try {
      const code = await pipelineCommand(args, { dataRoot: data });
      expect(code).toBe(0);
    } finally {
      vi.restoreAllMocks();
    }
    expect(currentServingFile(data)).not.toBe(servingBefore);
    expect(await servedDepartements(data)).toEqual(['01', '33']);
    expect(staleness(data)).toEqual({ marts: false, calibration: false });
    expect(calibrationFrom(data)).toBe(path.basename(currentServingFile(data)!));
    expect(Object.keys(marts()).sort()).toEqual(Object.keys(martsBefore).sort());
    expect(marts()).not.toEqual(martsBefore);
    expect(leftovers(data)).toEqual([]);
  });

  it('killed before the calibration: a plain rerun keeps the serving database and recalibrates on it', async () => {
    const data = copyOfBase();
    await killAtPause('pipeline/cli.ts', args, { DATA_DIR: data, FONCIER_TEST_PAUSE: 'before-calibration' });
    const serving = currentServingFile(data)!;
    expect(readServingStamp(serving)).toBeDefined();
    expect(await servedDepartements(data)).toEqual(['01', '33']);
    expect(staleness(data)).toEqual({ marts: false, calibration: true });
    expect(calibrationFrom(data)).not.toBe(path.basename(serving));

    const r = await afterImport({ dataRoot: data }); // what a plain rerun and `npm start` call
    expect(r.marts).toBeUndefined();
    expect(r.backtest).toBeDefined();
    expect(currentServingFile(data)).toBe(serving);
    expect(calibrationFrom(data)).toBe(path.basename(serving));
    expect(staleness(data)).toEqual({ marts: false, calibration: false });
    expect(await afterImport({ dataRoot: data })).toEqual({ ok: true }); // fresh: nothing to do
  });

  it('killed during the lake publication: the lake is the old generation, marts and serving untouched', async () => {
    const data = copyOfBase();
    // what readers open: the lake, the Parquet marts and the serving folder
    const visible = () => ['lake', 'marts', 'serving'].map((d) => snapshotFiles(path.join(data, d)));
    const before = visible();
    await killAtPause('pipeline/cli.ts', args, { DATA_DIR: data, FONCIER_TEST_PAUSE: 'before-swap' });
    expect(visible()).toEqual(before);
    expect(staleness(data)).toEqual({ marts: false, calibration: false });
    expect(leftovers(data)).not.toEqual([]); // the unpublished generation, until the next run

    vi.spyOn(console, 'log').mockImplementation(() => {});
    try {
      expect(await pipelineCommand(args, { dataRoot: data })).toBe(0);
    } finally {
      vi.restoreAllMocks();
    }
    expect(await servedDepartements(data)).toEqual(['01', '33']);
    expect(leftovers(data)).toEqual([]);
  });
});
