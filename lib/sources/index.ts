// Registry of source declarations, shared by the pipeline, the marts and the API. The built-in sources are declared
// here; a plug-in source (a test's toy source, a third party's) is added with `declareSource` (the pipeline's
// `registerSource` does it).
import { anilDeclaration } from './anil';
import { dpeDeclaration } from './dpe';
import { dvfDeclaration } from './dvf';
import { filosofiDeclaration } from './filosofi';
import type { SourceDeclaration } from './types';

const declarations = new Map<string, SourceDeclaration>(
  [dvfDeclaration, dpeDeclaration, filosofiDeclaration, anilDeclaration].map((d) => [d.name, d]),
);

/**
 * Sources the service is specified to serve but not yet declared: `/v1/meta/sources` lists them as unavailable, in
 * this order with the declared ones. A source's declaration replaces its entry here.
 */
export const PLANNED_SOURCES: Array<{ name: string; label: string }> = [
  { name: 'dvf', label: dvfDeclaration.label },
  { name: 'dpe', label: dpeDeclaration.label },
  { name: 'bdnb', label: 'Base de données nationale des bâtiments (CSTB)' },
  { name: 'filosofi', label: filosofiDeclaration.label },
  { name: 'anil', label: anilDeclaration.label },
  { name: 'sirene', label: 'Business registry (INSEE SIRENE)' },
];

export function declareSource(decl: SourceDeclaration): void {
  if (!/^[a-z][a-z0-9_]*$/.test(decl.name)) throw new Error(`invalid source name "${decl.name}" (lower-case letters, digits, _)`);
  declarations.set(decl.name, decl);
}

export function sourceDeclaration(name: string): SourceDeclaration | undefined {
  return declarations.get(name);
}

export function declaredSources(): SourceDeclaration[] {
  return [...declarations.values()];
}

export type { SourceDeclaration } from './types';
