// The layers of docs/decisions.md: marts/ and api/ never import pipeline/ (they share lib/), so the models and the
// API do not depend on ingestion internals. Scans every import specifier, static and dynamic.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../lib/config';

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(path.join(repoRoot, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.(ts|mts|js|mjs)$/.test(f))
    .map((f) => path.join(repoRoot, dir, f));
}

/** Import specifiers of a file: `import … from 'x'`, `export … from 'x'`, `import('x')`, `require('x')`. */
export function importsOf(code: string): string[] {
  const re = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm;
  return [...code.matchAll(re)].map((m) => m[1]);
}

describe('layering', () => {
  it('finds the import forms it scans for (so the check below can fail)', () => {
    const code = `import a from '../pipeline/x';\nexport { b } from "../../pipeline/y";\nconst c = await import('../pipeline/z');\nimport '../pipeline/side';`;
    expect(importsOf(code)).toEqual(['../pipeline/x', '../../pipeline/y', '../pipeline/z', '../pipeline/side']);
  });

  it('no file under marts/ or api/ imports from pipeline/', () => {
    const pipelineDir = path.join(repoRoot, 'pipeline') + path.sep;
    const offenders = [...sourceFiles('marts'), ...sourceFiles('api')].flatMap((file) =>
      importsOf(fs.readFileSync(file, 'utf8'))
        .filter((spec) => spec.startsWith('.') && (path.resolve(path.dirname(file), spec) + path.sep).startsWith(pipelineDir))
        .map((spec) => `${path.relative(repoRoot, file)} → ${spec}`));
    expect(offenders).toEqual([]);
  });
});
