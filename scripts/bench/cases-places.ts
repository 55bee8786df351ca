// Bench cases of the places endpoints (see cases.ts for the shape of a case).
import type { BenchCase } from './cases';

export const PLACES_CASES: BenchCase[] = [];
