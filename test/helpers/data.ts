// The datasets tests run on, built once per `npm test` run and shared read-only by every test file.
//
// How a test file gets one:
//   import { testData } from './helpers/data';
//   const dataRoot = await testData('demo');                     // the demo dataset (2019–2025, income and rents)
//   const dataRoot = await testData('sample');                   // the real DVF samples (33 2021, 01 2020)
//   const dataRoot = await testData('demo', { writable: true }); // a private full copy the file may change
// or `startTestApi({ dataRoot: await testData('demo') })` (startTestApi alone uses the shared sample dataset).
//
// The first file that asks builds the dataset (under a lock, so other workers wait instead of building it again) in
// the run's folder that test/global-setup.ts creates; later files reuse it. Each call returns a folder of the caller's
// own: the shared lake, marts, serving database and demo source files are symlinked into it, so the API's keys and
// credits database (api.sqlite) is private to the file. Anything that writes into the data itself (a marts rebuild,
// a backtest, an extra import, deleting the calibration) must ask for `{ writable: true }`: the global teardown
// checksums the shared datasets and fails the run when a test changed them.
import fs from 'node:fs';
import path from 'node:path';
import { inject } from 'vitest';
import { buildMarts } from '../../marts/runner';
import { buildDemo } from '../../pipeline/demo/build';
import { runSource } from '../../pipeline/run';
import { sampleTree, tempDir } from './samples';
import { datasetPaths, fingerprint, type DatasetName } from './shared-data';

const BUILDERS: Record<DatasetName, (dataRoot: string) => Promise<void>> = {
  /** The deterministic demo dataset (generated files in the real formats) with the real pipeline, marts and backtest. */
  demo: (dataRoot) => buildDemo({ dataRoot }),
  /** The geo-DVF (33, 2021) and DGFiP (01, 2020) samples through the real pipeline and marts. */
  sample: async (dataRoot) => {
    const tree = sampleTree();
    await runSource({ source: 'dvf', fromDir: tree, annees: [2021], departements: ['33'], dataRoot });
    await runSource({ source: 'dvf', format: 'dgfip', fromDir: tree, annees: [2020], departements: ['01'], dataRoot });
    await buildMarts({ dataRoot });
  },
};

const BUILD_WAIT_MS = 10 * 60_000;
const built = new Map<DatasetName, Promise<string>>();

/** The shared copy of a dataset, built by whichever worker asks first. */
function shared(name: DatasetName): Promise<string> {
  let p = built.get(name);
  if (!p) {
    p = ensureBuilt(name);
    built.set(name, p);
  }
  return p;
}

async function ensureBuilt(name: DatasetName): Promise<string> {
  const runRoot = inject('foncierTestDataRoot');
  // Outside a vitest run with the global setup (e.g. a script importing the helpers): a private build.
  if (!runRoot) {
    const dir = tempDir(`foncier-${name}-`);
    await BUILDERS[name](dir);
    return dir;
  }
  const p = datasetPaths(runRoot, name);
  const lockOwner = path.join(p.lock, 'pid');
  for (const start = Date.now(); ; await new Promise((r) => setTimeout(r, 250))) {
    if (fs.existsSync(p.ready)) return p.dir;
    if (fs.existsSync(p.failed)) throw new Error(`the shared ${name} dataset failed to build in another worker:\n${fs.readFileSync(p.failed, 'utf8')}`);
    if (takeLock(p.lock)) {
      fs.writeFileSync(lockOwner, String(process.pid));
      await build(name, p);
      return p.dir;
    }
    // Another worker is building it: wait for its marker rather than build the same data twice at once, unless
    // that worker died (a killed run, a crash) without leaving one, in which case its lock is taken over.
    const owner = Number(fs.existsSync(lockOwner) ? fs.readFileSync(lockOwner, 'utf8') : NaN);
    if (owner && !alive(owner) && !fs.existsSync(p.ready)) {
      fs.rmSync(p.lock, { recursive: true, force: true });
      continue;
    }
    if (Date.now() - start > BUILD_WAIT_MS) throw new Error(`timed out waiting for another worker to build the shared ${name} dataset (${p.dir})`);
  }
}

function takeLock(lock: string): boolean {
  try {
    fs.mkdirSync(lock);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Builds the shared copy (after clearing what a dead worker may have left half-built), then marks it ready. */
async function build(name: DatasetName, p: ReturnType<typeof datasetPaths>): Promise<void> {
  try {
    fs.rmSync(p.dir, { recursive: true, force: true });
    await BUILDERS[name](p.dir);
    fs.writeFileSync(p.fingerprint, JSON.stringify(fingerprint(p.dir)));
    fs.writeFileSync(p.ready, new Date().toISOString());
  } catch (e) {
    fs.writeFileSync(p.failed, String((e as Error)?.stack ?? e));
    throw e;
  }
}

/**
 * A data folder of the caller's own over a shared dataset: symlinks to the shared (read-only) data, so that the
 * API's keys and credits database is private; with `writable`, a full private copy the test may change.
 */
export async function testData(name: DatasetName, opts: { writable?: boolean } = {}): Promise<string> {
  const source = await shared(name);
  const runRoot = inject('foncierTestDataRoot');
  const own = runRoot ? fs.mkdtempSync(path.join(runRoot, `files-${name}-`)) : tempDir(`foncier-${name}-own-`);
  if (opts.writable) {
    // verbatimSymlinks: the lake and marts are relative symlinks to their current generation (lib/generations.ts),
    // which must keep pointing inside the copy, not back into the shared dataset.
    fs.cpSync(source, own, { recursive: true, verbatimSymlinks: true });
  } else {
    for (const entry of fs.readdirSync(source)) fs.symlinkSync(path.join(source, entry), path.join(own, entry));
  }
  return own;
}
