// BDNB (CSTB's national buildings database), open-data millésime: one lake partition per département, one row per
// building group with its WGS84 position and its parcels (pipeline/sources/bdnb.ts builds it).
import { ALL_DEPARTEMENTS } from './departements';
import type { SourceDeclaration } from './types';

export const BDNB_DEFAULT_MILLESIME = '2025-07-a';

export const BDNB_SCHEMA = {
  batiment_groupe_id: 'VARCHAR',
  code_commune_insee: 'VARCHAR',
  libelle_commune_insee: 'VARCHAR',
  s_geom_groupe: 'DOUBLE',
  latitude: 'DOUBLE',
  longitude: 'DOUBLE',
  annee_construction: 'INTEGER',
  nb_log: 'INTEGER',
  nb_niveau: 'INTEGER',
  mat_mur_txt: 'VARCHAR',
  mat_toit_txt: 'VARCHAR',
  usage_niveau_1_txt: 'VARCHAR',
  dvf_nb_mutations: 'INTEGER',
  dvf_prix_m2_median: 'DOUBLE',
  /** Parcels of the group (comma-separated 14-character ids): those whose main group it is, then the others. */
  parcelles_principales: 'VARCHAR',
  parcelles_secondaires: 'VARCHAR',
  millesime: 'VARCHAR',
  imported_at: 'TIMESTAMP',
} as const satisfies SourceDeclaration['schema'];

export const bdnbDeclaration: SourceDeclaration = {
  name: 'bdnb',
  label: 'Base de données nationale des bâtiments (CSTB)',
  license: 'Licence Ouverte 2.0',
  attribution: 'CSTB, Base de données nationale des bâtiments (BDNB open data)',
  partitioning: 'departement',
  // Every département, Alsace-Moselle (57, 67, 68) included: the BDNB is built from the Fichiers fonciers, which cover them.
  defaults: { departements: ALL_DEPARTEMENTS },
  schema: BDNB_SCHEMA,
  countLabel: 'batiments',
  served: { table: 'bdnb_batiments' },
};
