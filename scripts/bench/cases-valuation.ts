// Bench cases of the valuation endpoints (see cases.ts for the shape of a case).
import type { BenchCase } from './cases';

export const VALUATION_CASES: BenchCase[] = [];
