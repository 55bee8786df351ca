// Every endpoint of the registry (ENDPOINTS in api/app.ts) has a shared-contract case (test/helpers/contract.ts) in
// some test file. The cases live beside each endpoint's own tests, in files run by other workers, so they are found
// in the test sources; describeContract itself refuses a name that is not an endpoint.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENDPOINTS } from '../../../api/app';
import { repoRoot } from '../../../lib/config';
import { endpointName } from '../../helpers/contract';

function testSources(): Array<{ file: string; text: string }> {
  const dir = path.join(repoRoot, 'test');
  return fs
    .readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.test.ts') && !f.startsWith(`e2e${path.sep}`))
    .map((f) => ({ file: f, text: fs.readFileSync(path.join(dir, f), 'utf8') }));
}

describe('shared contract coverage', () => {
  const sources = testSources();
  const calls = sources.flatMap(({ file, text }) => [...text.matchAll(/^\s*describeContract\(\s*([^,]*)/gm)].map((m) => ({ file, arg: m[1].trim() })));
  const named = calls.map((c) => ({ ...c, name: /^'([^']+)'$/.exec(c.arg)?.[1] ?? /^"([^"]+)"$/.exec(c.arg)?.[1] }));

  it('names every case with a string literal (so that this scan sees them all)', () => {
    expect(calls.length).toBeGreaterThan(0);
    expect(named.filter((c) => c.name === undefined).map((c) => `${c.file}: describeContract(${c.arg}`)).toEqual([]);
  });

  it('has a case for every endpoint of ENDPOINTS', () => {
    const covered = new Set(named.map((c) => c.name));
    const missing = ENDPOINTS.map(endpointName).filter((n) => !covered.has(n));
    expect(missing, 'endpoints without a describeContract case').toEqual([]);
  });
});
