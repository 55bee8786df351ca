// Bench cases of the analytics endpoints (see kit.ts for the shape of a case): one postal-code and one département
// case per endpoint, with the analytics targets (p50 ≤ 20 ms for a postal code, ≤ 100 ms for a département).
import { dateDebut, departements, oneOf, postal, types3, type BenchCase, type Dims } from './kit';

const types5 = oneOf('', 'Maison', 'Appartement', 'Local commercial', 'Terrain');
const types7 = oneOf('', 'Maison', 'Appartement', 'Local commercial', 'Terrain', 'Dépendance', 'Local industriel');
const months = () => Array.from({ length: 55 }, (_, i) => String(i + 6));
const granularities = oneOf('month', 'quarter', 'year');
/** Every day of 2025: with the 3-year cap of large zones, a varying date_fin is what makes each window new. */
const dateFin = () => Array.from({ length: 365 }, (_, i) => new Date(Date.UTC(2025, 0, 1 + i)).toISOString().slice(0, 10));
/** Pairs and triples of busy postal codes as the locations JSON of stats/compare. */
const postalSets = (d: Dims) =>
  d.postal.slice(0, 60).flatMap((a, i) => [
    JSON.stringify([{ code_postal: a }, { code_postal: d.postal[(i + 1) % d.postal.length] }]),
    JSON.stringify([{ code_postal: a }, { code_postal: d.postal[(i + 7) % d.postal.length] }, { code_postal: d.postal[(i + 13) % d.postal.length] }]),
  ]);
const CP = { p50Ms: 20 };
const DEP = { p50Ms: 100 };

export const ANALYTICS_CASES: BenchCase[] = [
  { name: 'stats/trends code_postal', path: '/v1/stats/trends', fixed: { code_postal: '75015' }, vary: { code_postal: postal, type_local: types3, date_debut: dateDebut }, targets: CP },
  { name: 'stats/trends code_departement', path: '/v1/stats/trends', fixed: { code_departement: '33' }, vary: { code_departement: departements, type_local: types3, granularity: granularities, date_fin: dateFin }, targets: DEP },
  { name: 'stats/compare code_postal', path: '/v1/stats/compare', fixed: { locations: '[{"code_postal":"75015"},{"code_postal":"75018"}]' }, vary: { locations: postalSets, date_debut: dateDebut }, targets: CP },
  { name: 'market-activity code_postal', path: '/v1/market-activity', fixed: { code_postal: '75015' }, vary: { code_postal: postal, type_local: types3, months }, targets: CP },
  { name: 'market-activity code_departement', path: '/v1/market-activity', fixed: { code_departement: '33' }, vary: { code_departement: departements, type_local: types3, months }, targets: DEP },
  { name: 'market-score code_postal', path: '/v1/market-score', fixed: { code_postal: '75015' }, vary: { code_postal: postal, type_local: types5 }, targets: CP },
  { name: 'market-score code_departement', path: '/v1/market-score', fixed: { code_departement: '33' }, vary: { code_departement: departements, type_local: types5 }, targets: DEP },
  { name: 'market-overview code_postal', path: '/v1/market-overview', fixed: { code_postal: '75015' }, vary: { code_postal: postal, type_local: types7 }, targets: CP },
  { name: 'market-overview code_departement', path: '/v1/market-overview', fixed: { code_departement: '33' }, vary: { code_departement: departements, type_local: types7 }, targets: DEP },
];
