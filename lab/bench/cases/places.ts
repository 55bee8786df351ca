// Bench cases of the places endpoints (see kit.ts for the shape of a case). The bench dataset's streets are the 24 of
// lab/bench/pipeline.ts, so the addresses below exist in every postal code, spelled as users would.
import { communes, dateDebut, departements, postal, types3, type BenchCase } from './kit';

const addresses = () => ['rue de la République', '12 rue Victor Hugo', 'av Jean Jaurès', 'Gambetta', 'place de l’Église', 'Général de Gaulle'];

export const PLACES_CASES: BenchCase[] = [
  { name: 'heatmap commune', path: '/v1/heatmap', fixed: { commune: 'PARIS' }, vary: { commune: communes, type_local: types3, date_debut: dateDebut }, targets: { p50Ms: 20 } },
  { name: 'heatmap code_departement', path: '/v1/heatmap', fixed: { code_departement: '33' }, vary: { code_departement: departements, type_local: types3, date_debut: dateDebut }, targets: { p50Ms: 100 } },
  { name: 'property-history address', path: '/v1/property-history', fixed: { address: '12 rue Victor Hugo', code_postal: '75015' }, vary: { address: addresses, code_postal: postal }, targets: { p50Ms: 20 } },
];
