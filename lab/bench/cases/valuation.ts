// Bench cases of the valuation endpoints (see kit.ts for the shape of a case).
import { oneOf, points, type BenchCase } from './kit';

export const VALUATION_CASES: BenchCase[] = [
  {
    name: 'estimate latitude,longitude+surface',
    path: '/v1/estimate',
    fixed: { latitude: '48.8414', longitude: '2.3003', surface: '45' },
    vary: { 'latitude,longitude': points, surface: oneOf('25', '45', '70', '110'), type_local: oneOf('Appartement', 'Maison') },
    targets: { p50Ms: 20 }, // estimate p50 ≤ 20 ms at France scale, 1 client
  },
  {
    name: 'comparables latitude,longitude+surface range',
    path: '/v1/comparables',
    fixed: { latitude: '48.8414', longitude: '2.3003', type_local: 'Appartement', surface_min: '35', surface_max: '55' },
    vary: { 'latitude,longitude': points, type_local: oneOf('Appartement', 'Maison'), surface_min: oneOf('30', '60'), surface_max: oneOf('80', '120') },
  },
];
