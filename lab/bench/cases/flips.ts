// Bench cases of the flips endpoint (see kit.ts for the shape of a case).
import { communes, only, type BenchCase } from './kit';

export const FLIPS_CASES: BenchCase[] = [
  {
    name: 'flips code_insee',
    path: '/v1/flips',
    fixed: { code_insee: '75115' },
    vary: { code_insee: communes, type_local: only('Maison') },
    targets: { p50Ms: 20 },
  },
];
