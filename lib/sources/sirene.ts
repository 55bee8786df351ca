// INSEE SIRENE: the active establishments of the seven real-estate business types, from Etalab's geolocated stock
// (géo-SIRENE, one file per département, Paris per arrondissement) and INSEE's StockUniteLegale for their names. One
// dated snapshot (the stock's date): each import replaces the previous one.
import { ALL_DEPARTEMENTS } from './departements';
import type { SourceDeclaration } from './types';

export const SIRENE_SCHEMA = {
  siret: 'VARCHAR',
  siren: 'VARCHAR',
  /** Null when partial diffusion hides a person's name (docs/decisions.md, Businesses). */
  denomination: 'VARCHAR',
  /** NAF rev. 2 without its dot (6831Z). */
  naf_code: 'VARCHAR',
  business_type: 'VARCHAR',
  /** Null under partial diffusion. */
  adresse: 'VARCHAR',
  code_postal: 'VARCHAR',
  code_commune: 'VARCHAR',
  commune: 'VARCHAR',
  code_departement: 'VARCHAR',
  /** The geocoded position, or (partial diffusion, not geocoded) the commune's reference point. */
  latitude: 'DOUBLE',
  longitude: 'DOUBLE',
  /** 'adresse' or 'commune'; null without any position. */
  position_precision: 'VARCHAR',
  date_creation: 'DATE',
  is_siege: 'BOOLEAN',
  diffusion_partielle: 'BOOLEAN',
  /** The géo-SIRENE file the row comes from (its part key, e.g. `dep/75115`). */
  fichier: 'VARCHAR',
  imported_at: 'TIMESTAMP',
} as const satisfies SourceDeclaration['schema'];

export const sireneDeclaration: SourceDeclaration = {
  name: 'sirene',
  label: 'Business registry (INSEE SIRENE, géo-SIRENE by Etalab): real-estate professionals',
  license: 'Licence Ouverte 2.0',
  attribution: 'INSEE, base Sirene des entreprises et de leurs établissements; géolocalisation Etalab (géo-SIRENE)',
  partitioning: 'snapshot',
  // No département axis in the lake, but the files are per département: --departements selects the files, and the
  // snapshot then covers those départements only.
  defaults: { departements: ALL_DEPARTEMENTS },
  schema: SIRENE_SCHEMA,
  countLabel: 'establishments',
  served: { table: 'businesses' },
};
