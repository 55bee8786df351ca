// ADEME energy diagnostics (DPE): every published dataset of a département (dpe03existant, dpe02neuf, the legacy
// dpe-france) in one lake partition per département, so a replacement across datasets is seen at import.
import { ALL_DEPARTEMENTS } from './departements';
import type { SourceDeclaration } from './types';

/** Lake columns, in file order (the département lives in the partition path; the DPE's own BAN département is kept). */
export const DPE_SCHEMA = {
  dpe_id: 'VARCHAR',
  numero_dpe: 'VARCHAR',
  source_dataset: 'VARCHAR',
  date_etablissement_dpe: 'DATE',
  avant_reforme_2021: 'BOOLEAN',
  classe_energie: 'VARCHAR',
  classe_ges: 'VARCHAR',
  etiquette_dpe_brute: 'VARCHAR',
  etiquette_ges_brute: 'VARCHAR',
  conso_energie_kwh_m2_an: 'DOUBLE',
  emission_ges_kg_m2_an: 'DOUBLE',
  surface_habitable: 'DOUBLE',
  annee_construction: 'INTEGER',
  periode_construction: 'VARCHAR',
  type_batiment: 'VARCHAR',
  code_insee: 'VARCHAR',
  code_postal: 'VARCHAR',
  code_departement_dpe: 'VARCHAR',
  identifiant_ban: 'VARCHAR',
  id_parcelle: 'VARCHAR',
  address: 'VARCHAR',
  latitude: 'DOUBLE',
  longitude: 'DOUBLE',
  coord_source: 'VARCHAR',
  numero_dpe_remplace: 'VARCHAR',
  version_dpe: 'VARCHAR',
  methode: 'VARCHAR',
  modele: 'VARCHAR',
  imported_at: 'TIMESTAMP',
} as const satisfies SourceDeclaration['schema'];

export const dpeDeclaration: SourceDeclaration = {
  name: 'dpe',
  label: 'Diagnostics de performance énergétique (ADEME)',
  license: 'Licence Ouverte 2.0',
  attribution: 'ADEME, observatoire DPE (data.ademe.fr)',
  partitioning: 'departement',
  // All départements, Alsace-Moselle (57, 67, 68) included: unlike DVF, ADEME covers them.
  defaults: { departements: ALL_DEPARTEMENTS },
  schema: DPE_SCHEMA,
  countLabel: 'diagnostics',
  served: { table: 'dpe_diagnostics', dateColumn: 'date_etablissement_dpe' },
};
