// The typed client as a user installs it: `npm pack` in clients/typescript (its prepack compiles it to dist/), the
// tarball installed into a new plain Node ESM project with no registry and an empty npm cache (its one dependency,
// openapi-fetch, is already in the project, as after the user's own install), the program of its README type-checked
// there by tsc under NodeNext, declarations included, then run against the real server on loopback.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api';
import { testData } from '../helpers/data';
import { tempDir } from '../helpers/samples';

const run = promisify(execFile);
const repoRoot = path.resolve(import.meta.dirname, '..', '..');
const clientDir = path.join(repoRoot, 'clients', 'typescript');
const README_EXAMPLE = /<!-- The block below is type-checked and run[^>]*-->\n```ts\n([\s\S]*?)```/;

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ dataRoot: await testData('demo'), now: '2026-02-15T12:00:00Z' });
});
afterAll(() => api.close());

/** The installed package's own dependencies, copied from the repository's node_modules as a registry would give them. */
function seedDependencies(project: string): void {
  const pkg = JSON.parse(fs.readFileSync(path.join(clientDir, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  const wanted = Object.keys(pkg.dependencies);
  for (let i = 0; i < wanted.length; i++) {
    const name = wanted[i];
    fs.cpSync(path.join(repoRoot, 'node_modules', name), path.join(project, 'node_modules', name), { recursive: true });
    const deps = JSON.parse(fs.readFileSync(path.join(repoRoot, 'node_modules', name, 'package.json'), 'utf8')).dependencies ?? {};
    for (const d of Object.keys(deps)) if (!wanted.includes(d)) wanted.push(d);
  }
}

describe('the client package', () => {
  it('packs, installs offline, type-checks and runs the README program in a NodeNext project', async () => {
    const packed = tempDir('foncier-client-pack-');
    await run('npm', ['pack', '--pack-destination', packed], { cwd: clientDir });
    const tarballs = fs.readdirSync(packed).filter((f) => f.endsWith('.tgz'));
    expect(tarballs).toHaveLength(1);

    const project = tempDir('foncier-client-project-');
    fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'client-check', private: true, type: 'module' }));
    seedDependencies(project);
    // --offline with a cache of its own, empty: nothing may come from a registry or from this machine's npm cache.
    const npmArgs = ['--offline', '--cache', path.join(project, '.npm-cache'), '--no-audit', '--no-fund', '--ignore-scripts'];
    await run('npm', ['install', ...npmArgs, path.join(packed, tarballs[0])], { cwd: project });
    const installed = path.join(project, 'node_modules', 'foncier-client');
    expect(fs.readdirSync(path.join(installed, 'dist')).sort()).toEqual(
      ['index.d.ts', 'index.js', 'operations.d.ts', 'operations.js', 'schema.d.ts', 'schema.js'],
    );

    const example = README_EXAMPLE.exec(fs.readFileSync(path.join(clientDir, 'README.md'), 'utf8'))?.[1];
    expect(example).toContain("from 'foncier-client'");
    fs.writeFileSync(path.join(project, 'example.ts'), example!);
    // The types are the generated ones, not `any`: each of these would compile against an untyped package.
    fs.writeFileSync(
      path.join(project, 'types.ts'),
      [
        "import { createClient, type GetStatsMarketResponse } from 'foncier-client';",
        "import document from 'foncier-client/openapi.json' with { type: 'json' };",
        "const client = createClient({ baseUrl: 'http://localhost:3000' });",
        '// @ts-expect-error no such operation',
        'void client.getNoSuchOperation;',
        '// @ts-expect-error code_postal is a string',
        'void (() => client.getStatsMarket({ query: { code_postal: 75015 } }));',
        'export const median = (m: GetStatsMarketResponse): number | null => m.price_per_m2.median;',
        'export const version: string = document.info.version;',
        '',
      ].join('\n'),
    );
    fs.writeFileSync(
      path.join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          resolveJsonModule: true,
          // The package's declarations are checked too (an import they cannot resolve fails here).
          skipLibCheck: false,
          types: ['node'],
          typeRoots: [path.join(repoRoot, 'node_modules', '@types')],
        },
        files: ['example.ts', 'types.ts'],
      }),
    );
    const tsc = path.join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
    const compiled = await run(process.execPath, [tsc, '-p', project]).catch((e: { stdout: string }) => e);
    expect(compiled.stdout).toBe('');

    const key = api.key({ balance: 1000 });
    const { stdout, stderr } = await run(process.execPath, ['example.js'], {
      cwd: project,
      env: { ...process.env, FONCIER_BASE_URL: api.url, FONCIER_API_KEY: key },
    });
    expect(stderr).toBe('');
    // What it printed is what the API answers to the same requests.
    const market = await api.get('/v1/stats/market?code_postal=75015&type_local=Appartement', api.key());
    const houses = await api.get('/v1/transactions?code_postal=75015&type_local=Maison&limit=200', api.key());
    expect(houses.body.next_cursor).toBeNull();
    expect(stdout).toContain(`flats: ${market.body.count} sales, median ${market.body.price_per_m2.median} €/m²`);
    const prices = houses.body.transactions.map((t: { valeur_fonciere: number }) => t.valeur_fonciere);
    expect(prices.length).toBeGreaterThan(0);
    expect(stdout).toContain(`houses: ${prices.length} sales, the dearest ${Math.max(...prices)} €`);
  }, 300_000);
});
