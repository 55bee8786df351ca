// Bench cases of the flips endpoints (see cases.ts for the shape of a case).
import type { BenchCase } from './cases';

export const FLIPS_CASES: BenchCase[] = [];
