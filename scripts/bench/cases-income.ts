// Bench cases of the income endpoints (see cases.ts for the shape of a case).
import type { BenchCase } from './cases';

export const INCOME_CASES: BenchCase[] = [];
