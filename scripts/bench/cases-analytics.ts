// Bench cases of the analytics endpoints (see cases.ts for the shape of a case).
import type { BenchCase } from './cases';

export const ANALYTICS_CASES: BenchCase[] = [];
