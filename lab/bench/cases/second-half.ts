// Bench cases of the energy (DPE), building (BDNB) and businesses endpoints (see kit.ts for the shape of a case).
// Their targets (docs/performance.md): postal code p50 ≤ 20 ms, département ≤ 100 ms, commune-stats ≤ 10 ms, businesses search
// ≤ 10 ms at 1,000 m. The bench dataset's steps dpe, sirene and bdnb (lab/france-data/*.ts) fill their marts.
import { communes, dateDebut, departements, oneOf, only, points, postal, type BenchCase } from './kit';

const types2 = () => ['', 'Maison', 'Appartement'];
// The cached endpoints need more distinct queries than the zones alone give, or an "uncached" run repeats queries and
// measures the cache: their filters multiply them (each a real query of its own).
const batiments = () => ['', 'maison', 'appartement', 'immeuble'];
const anneeMin = () => ['', '2019', '2020', '2021', '2022', '2023'];

export const SECOND_HALF_CASES: BenchCase[] = [
  { name: 'dpe/stats code_postal', path: '/v1/dpe/stats', fixed: { code_postal: '75015' }, vary: { code_postal: postal, type_batiment: batiments, date_debut: dateDebut }, targets: { p50Ms: 20 } },
  { name: 'dpe/stats code_departement', path: '/v1/dpe/stats', fixed: { code_departement: '75' }, vary: { code_departement: departements, type_batiment: batiments, date_debut: dateDebut }, targets: { p50Ms: 100 } },
  { name: 'stats/dpe-premium code_postal', path: '/v1/stats/dpe-premium', fixed: { code_postal: '75015' }, vary: { code_postal: postal, type_local: types2 }, targets: { p50Ms: 20 } },
  { name: 'dpe/prix-par-classe code_postal', path: '/v1/dpe/prix-par-classe', fixed: { code_postal: '75015' }, vary: { code_postal: postal, type_local: types2, annee_min: anneeMin }, targets: { p50Ms: 20 } },
  { name: 'dpe/passoires-thermiques code_postal', path: '/v1/dpe/passoires-thermiques', fixed: { code_postal: '75015' }, vary: { code_postal: postal }, targets: { p50Ms: 20 } },
  { name: 'dpe/evolution-prime-verte code_postal', path: '/v1/dpe/evolution-prime-verte', fixed: { code_postal: '75015' }, vary: { code_postal: postal }, targets: { p50Ms: 20 } },
  { name: 'dpe/commune-stats commune', path: '/v1/dpe/commune-stats', fixed: { commune: '75115' }, vary: { commune: communes }, targets: { p50Ms: 10 } },
  { name: 'bdnb/age-stats code_postal', path: '/v1/bdnb/age-stats', fixed: { code_postal: '75015' }, vary: { code_postal: postal, type_local: types2 }, targets: { p50Ms: 20 } },
  { name: 'bdnb/age-stats code_departement', path: '/v1/bdnb/age-stats', fixed: { code_departement: '75' }, vary: { code_departement: departements }, targets: { p50Ms: 100 } },
  { name: 'bdnb/renovation-score code_postal', path: '/v1/bdnb/renovation-score', fixed: { code_postal: '75015' }, vary: { code_postal: postal, type_local: only('Appartement') }, targets: { p50Ms: 20 } },
  { name: 'bdnb/stats commune', path: '/v1/bdnb/stats', fixed: { code_commune_insee: '75115' }, vary: { code_commune_insee: communes }, targets: { p50Ms: 20 } },
  {
    name: 'businesses/search 1000 m',
    path: '/v1/businesses/search',
    fixed: { latitude: '48.8414', longitude: '2.3003' },
    vary: { 'latitude,longitude': points, radius_m: only('1000'), type: oneOf('all', 'agence', 'notaire') },
    targets: { p50Ms: 10 },
  },
];
