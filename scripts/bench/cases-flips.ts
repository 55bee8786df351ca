// Bench cases of the flips endpoints (see cases.ts for the shape of a case).
// Only types are imported from cases.ts: it imports this file, so its values are not initialised yet here.
import type { BenchCase, Dims } from './cases';

export const FLIPS_CASES: BenchCase[] = [
  {
    name: 'flips code_insee',
    path: '/v1/flips',
    fixed: { code_insee: '75115' },
    vary: { code_insee: (d: Dims) => d.communes, type_local: () => ['Maison'] },
    targets: { p50Ms: 20 },
  },
];
