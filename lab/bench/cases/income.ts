// Bench cases of the income endpoints (see kit.ts for the shape of a case): purchasing power by commune and by postal
// code, the market statistics with pouvoir_achat, and the rental yield (two point lookups in precomputed marts).
import { communes, oneOf, postal, type BenchCase } from './kit';

const TARGET = { p50Ms: 20 };
/** Every day of 2023, so that windows end at date_fin's default and run from 1 to 3 years (capped on large zones). */
const dateDebut = () => Array.from({ length: 365 }, (_, i) => new Date(Date.UTC(2023, 0, 1 + i)).toISOString().slice(0, 10));

export const INCOME_CASES: BenchCase[] = [
  { name: 'stats/pouvoir-achat code_commune', path: '/v1/stats/pouvoir-achat', fixed: { code_commune: '75115' }, vary: { code_commune: communes, type_local: oneOf('', 'Maison', 'Appartement'), date_debut: dateDebut }, targets: TARGET },
  { name: 'stats/pouvoir-achat code_postal', path: '/v1/stats/pouvoir-achat', fixed: { code_postal: '75015' }, vary: { code_postal: postal, type_local: oneOf('', 'Maison', 'Appartement'), date_debut: dateDebut }, targets: TARGET },
  { name: 'stats/market code_postal+pouvoir_achat', path: '/v1/stats/market', fixed: { code_postal: '75015', include_pouvoir_achat: 'true' }, vary: { code_postal: postal, type_local: oneOf('', 'Maison', 'Appartement'), date_debut: dateDebut, include_pouvoir_achat: oneOf('true') }, targets: TARGET },
  { name: 'stats/rendement-locatif code_insee', path: '/v1/stats/rendement-locatif', fixed: { code_insee: '75115' }, vary: { code_insee: communes, appartement_profile: oneOf('', 'all', 't1_t2', 't3_plus') }, targets: TARGET },
];
