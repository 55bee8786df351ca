// DVF (Demandes de valeurs foncières): one lake partition per département and year of sale.
import { ALL_DEPARTEMENTS } from './departements';
import type { SourceDeclaration } from './types';

/** Départements DVF covers: Alsace-Moselle (57, 67, 68) and Mayotte (976) are absent by construction. */
export const DVF_DEPARTEMENTS = ALL_DEPARTEMENTS.filter((d) => !['57', '67', '68', '976'].includes(d));

/** Lake columns, in file order. `code_departement` and `annee` live in the partition path. */
export const DVF_SCHEMA = {
  id: 'BIGINT', mutation_key: 'VARCHAR', id_mutation: 'VARCHAR', date_mutation: 'DATE', numero_disposition: 'INTEGER',
  nature_mutation: 'VARCHAR', valeur_fonciere: 'DOUBLE', adresse_numero: 'VARCHAR', adresse_suffixe: 'VARCHAR',
  adresse_nom_voie: 'VARCHAR', adresse_code_voie: 'VARCHAR', code_postal: 'VARCHAR', code_commune: 'VARCHAR',
  nom_commune: 'VARCHAR', ancien_code_commune: 'VARCHAR', id_parcelle: 'VARCHAR', prefixe_section: 'VARCHAR',
  section: 'VARCHAR', no_plan: 'VARCHAR', numero_volume: 'VARCHAR', lot1_numero: 'VARCHAR', lot1_surface_carrez: 'DOUBLE',
  lot2_numero: 'VARCHAR', lot2_surface_carrez: 'DOUBLE', lot3_numero: 'VARCHAR', lot3_surface_carrez: 'DOUBLE',
  lot4_numero: 'VARCHAR', lot4_surface_carrez: 'DOUBLE', lot5_numero: 'VARCHAR', lot5_surface_carrez: 'DOUBLE',
  nombre_lots: 'INTEGER', code_type_local: 'INTEGER', type_local: 'VARCHAR', surface_reelle_bati: 'DOUBLE',
  nombre_pieces_principales: 'INTEGER', code_nature_culture: 'VARCHAR', nature_culture: 'VARCHAR',
  code_nature_culture_speciale: 'VARCHAR', nature_culture_speciale: 'VARCHAR', surface_terrain: 'DOUBLE',
  longitude: 'DOUBLE', latitude: 'DOUBLE', line_occurrence: 'BIGINT', source_format: 'VARCHAR', imported_at: 'TIMESTAMP',
} as const satisfies SourceDeclaration['schema'];

export const dvfDeclaration: SourceDeclaration = {
  name: 'dvf',
  label: 'Demandes de valeurs foncières (DGFiP, geo-DVF by Etalab): property sales',
  license: 'Licence Ouverte 2.0',
  attribution: 'DGFiP, Demandes de valeurs foncières; geo-DVF by Etalab',
  partitioning: 'departement-year',
  defaults: {
    departements: DVF_DEPARTEMENTS,
    // The five complete years before the current one.
    annees: (now) => Array.from({ length: 5 }, (_, i) => now.getUTCFullYear() - 5 + i),
    minAnnee: 2014,
  },
  schema: DVF_SCHEMA,
  countLabel: 'mutations',
  served: { table: 'ventes', dateColumn: 'date_mutation' },
};
