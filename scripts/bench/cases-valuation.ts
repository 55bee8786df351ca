// Bench cases of the valuation endpoints (see cases.ts for the shape of a case). Value lists are local functions:
// cases.ts imports this file, so its helpers are not initialised yet when this module runs.
import type { BenchCase, Dims } from './cases';

const points = (d: Dims) => d.points;
const values = (...v: string[]) => () => v;

export const VALUATION_CASES: BenchCase[] = [
  {
    name: 'estimate latitude,longitude+surface',
    path: '/v1/estimate',
    fixed: { latitude: '48.8414', longitude: '2.3003', surface: '45' },
    vary: { 'latitude,longitude': points, surface: values('25', '45', '70', '110'), type_local: values('Appartement', 'Maison') },
    targets: { p50Ms: 30 },
  },
  {
    name: 'comparables latitude,longitude+surface range',
    path: '/v1/comparables',
    fixed: { latitude: '48.8414', longitude: '2.3003', type_local: 'Appartement', surface_min: '35', surface_max: '55' },
    vary: { 'latitude,longitude': points, type_local: values('Appartement', 'Maison'), surface_min: values('30', '60'), surface_max: values('80', '120') },
  },
];
