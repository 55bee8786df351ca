// The layers of docs/decisions.md: marts/ and api/ never import pipeline/ (they share lib/), so the models and the
// API do not depend on ingestion internals; nothing outside lab/ imports lab/ (benchmarks and research may import the
// product, never the reverse, and no test of `npm test` depends on them). Scans every import specifier, static and
// dynamic.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../lib/config';

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(path.join(repoRoot, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.(ts|mts|js|mjs)$/.test(f) && !/(^|\/)(node_modules|dist)\//.test(f))
    .map((f) => path.join(repoRoot, dir, f));
}

/** Import specifiers of a file: `import … from 'x'`, `export … from 'x'`, `import('x')`, `require('x')`. */
export function importsOf(code: string): string[] {
  const re = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm;
  return [...code.matchAll(re)].map((m) => m[1]);
}

/** `file → spec` for every relative import of the files that resolves inside `dir` (a folder of the repository). */
function importsInto(files: string[], dir: string, read = (file: string) => fs.readFileSync(file, 'utf8')): string[] {
  const prefix = path.join(repoRoot, dir) + path.sep;
  return files.flatMap((file) =>
    importsOf(read(file))
      .filter((spec) => spec.startsWith('.') && (path.resolve(path.dirname(file), spec) + path.sep).startsWith(prefix))
      .map((spec) => `${path.relative(repoRoot, file)} → ${spec}`));
}

describe('layering', () => {
  it('finds the import forms it scans for (so the check below can fail)', () => {
    const code = `import a from '../pipeline/x';\nexport { b } from "../../pipeline/y";\nconst c = await import('../pipeline/z');\nimport '../pipeline/side';`;
    expect(importsOf(code)).toEqual(['../pipeline/x', '../../pipeline/y', '../pipeline/z', '../pipeline/side']);
  });

  it('no file under marts/ or api/ imports from pipeline/', () => {
    expect(importsInto([...sourceFiles('marts'), ...sourceFiles('api')], 'pipeline')).toEqual([]);
  });

  it('no file outside lab/ imports from lab/', () => {
    const outside = ['api', 'lib', 'marts', 'pipeline', 'scripts', 'test', 'clients'].flatMap(sourceFiles);
    expect(outside.length).toBeGreaterThan(100);
    expect(importsInto(outside, 'lab')).toEqual([]);
  });

  it('flags an import into lab/ and not one into a folder whose name starts the same (so the check above can fail)', () => {
    const file = path.join(repoRoot, 'test', 'lib', 'x.test.ts');
    const code = `import { a } from '../../lab/bench/cases';\nimport { b } from '../../labels';\nimport { c } from '../../lib/lambert93';`;
    expect(importsInto([file], 'lab', () => code)).toEqual(['test/lib/x.test.ts → ../../lab/bench/cases']);
  });
});
