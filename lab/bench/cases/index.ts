// The endpoints `npm run bench -- api` loads, one line each. Each area of the API keeps its cases in its own file
// (one file per area, written with kit.ts); this file joins them.
import { dateDebut, departements, only, postal, types3, type BenchCase } from './kit';
import { ANALYTICS_CASES } from './analytics';
import { FLIPS_CASES } from './flips';
import { INCOME_CASES } from './income';
import { PLACES_CASES } from './places';
import { SECOND_HALF_CASES } from './second-half';
import { VALUATION_CASES } from './valuation';

export * from './kit';

const BASE_CASES: BenchCase[] = [
  { name: 'stats/market code_postal', path: '/v1/stats/market', fixed: { code_postal: '75015' }, vary: { code_postal: postal, type_local: types3, date_debut: dateDebut }, targets: { p50Ms: 10, p99Ms: 50, cachedRps: 1500 } },
  { name: 'stats/market code_postal+Appartement', path: '/v1/stats/market', fixed: { code_postal: '75015', type_local: 'Appartement' }, vary: { code_postal: postal, type_local: only('Appartement'), date_debut: dateDebut } },
  { name: 'transactions code_postal limit=50', path: '/v1/transactions', fixed: { code_postal: '75015', limit: '50' }, vary: { code_postal: postal, type_local: types3, date_debut: dateDebut, limit: only('50') } },
  { name: 'stats/market code_departement (info)', path: '/v1/stats/market', fixed: { code_departement: '33' }, vary: { code_departement: departements, type_local: types3, date_debut: dateDebut } },
];

export const CASES: BenchCase[] = [...BASE_CASES, ...ANALYTICS_CASES, ...PLACES_CASES, ...VALUATION_CASES, ...INCOME_CASES, ...FLIPS_CASES, ...SECOND_HALF_CASES];
