// ANIL "carte des loyers": predicted advertised rents per commune, four national files (segments) per edition.
import type { SourceDeclaration } from './types';

export const ANIL_SCHEMA = {
  code_commune: 'VARCHAR',
  segment: 'VARCHAR',
  libelle_commune: 'VARCHAR',
  id_zone: 'VARCHAR',
  loyer_m2_cc: 'DOUBLE',
  loyer_m2_cc_bas: 'DOUBLE',
  loyer_m2_cc_haut: 'DOUBLE',
  niveau_prediction: 'VARCHAR',
  nb_observations_commune: 'INTEGER',
  nb_observations_maille: 'INTEGER',
  r2_ajuste: 'DOUBLE',
  millesime: 'INTEGER',
  imported_at: 'TIMESTAMP',
} as const satisfies SourceDeclaration['schema'];

export const anilDeclaration: SourceDeclaration = {
  name: 'anil',
  label: 'Rent indicators (ANIL carte des loyers)',
  license: 'Licence Ouverte 2.0',
  attribution: 'ANIL / Ministère de la Transition écologique, carte des loyers',
  partitioning: 'national-vintage',
  defaults: { annees: () => [2024], minAnnee: 2018 },
  schema: ANIL_SCHEMA,
  countLabel: 'communes',
  served: { table: 'loyers_communes' },
};
