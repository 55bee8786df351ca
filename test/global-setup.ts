// Once per `npm test` run: the folder where the shared datasets of test/helpers/data.ts are built (lazily, by the
// first test file that needs each) and where the run's temporary folders go, and at the end a check that no test file
// wrote into the datasets, then its removal.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { DATASETS, datasetPaths, fingerprint } from './helpers/shared-data';

export default function setup(project: TestProject) {
  const runRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'foncier-test-run-'));
  project.provide('foncierTestDataRoot', runRoot);
  // Every temporary folder of the run (tempDir(), mkdtemp in os.tmpdir()) goes into the run's folder: the workers,
  // forked after this, inherit TMPDIR, and the teardown removes it all (runs used to leave thousands behind in /tmp).
  const tmp = path.join(runRoot, 'tmp');
  fs.mkdirSync(tmp);
  process.env.TMPDIR = tmp;
  return () => {
    try {
      const changed: string[] = [];
      for (const name of DATASETS) {
        const p = datasetPaths(runRoot, name);
        if (!fs.existsSync(p.ready)) continue;
        const before: Record<string, string> = JSON.parse(fs.readFileSync(p.fingerprint, 'utf8'));
        const after = fingerprint(p.dir);
        for (const rel of new Set([...Object.keys(before), ...Object.keys(after)])) {
          if (before[rel] !== after[rel]) changed.push(`${name}/${rel} (${!after[rel] ? 'deleted' : !before[rel] ? 'added' : 'modified'})`);
        }
      }
      if (changed.length) {
        // vitest prints an error thrown here but would still exit 0.
        process.exitCode = 1;
        throw new Error(
          `a test wrote into a shared read-only dataset; ask testData(name, { writable: true }) for a private copy:\n  ${changed.join('\n  ')}`,
        );
      }
    } finally {
      fs.rmSync(runRoot, { recursive: true, force: true });
    }
  };
}
