// INSEE Filosofi: household income per commune, one national file per income vintage.
import type { SourceDeclaration } from './types';

export const FILOSOFI_SCHEMA = {
  code_commune: 'VARCHAR',
  nb_menages_fiscaux: 'DOUBLE',
  revenu_median_uc: 'DOUBLE',
  /** 'ok', 'secret' (INSEE "s"), 'not_available' ("nd"), 'missing' (empty) or 'unparsable'. */
  revenu_median_statut: 'VARCHAR',
  annee_revenus: 'INTEGER',
  imported_at: 'TIMESTAMP',
} as const satisfies SourceDeclaration['schema'];

export const filosofiDeclaration: SourceDeclaration = {
  name: 'filosofi',
  label: 'Household income per commune (INSEE Filosofi)',
  license: 'Licence Ouverte 2.0',
  attribution: 'INSEE, Filosofi (base comparateur de territoires)',
  partitioning: 'national-vintage',
  defaults: { annees: () => [2020], minAnnee: 2012 },
  schema: FILOSOFI_SCHEMA,
  countLabel: 'communes',
  served: { table: 'revenus_communes' },
};
