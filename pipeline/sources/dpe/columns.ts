// Header names of every published DPE style mapped onto one set of canonical raw columns, by NAME: the data-fair API
// field names (`numero_dpe`, `coordonnee_cartographique_x_ban`), ADEME's label-style export headers (`N°DPE`,
// `Coordonnée_cartographique_X_(BAN)`, with their double underscores and `²`) and the legacy `dpe-france` columns.

/** Canonical raw column → accepted header names (the streaming template compares them ignoring case, accents and
 * punctuation: `n_dpe` finds `N°DPE`). First match wins. */
export const DPE_ALIASES = {
  numero_dpe: ['numero_dpe', 'n_dpe'],
  date_etablissement_dpe: ['date_etablissement_dpe'],
  etiquette_dpe: ['etiquette_dpe', 'classe_consommation_energie'],
  etiquette_ges: ['etiquette_ges', 'classe_estimation_ges'],
  conso_m2: ['conso_5_usages_par_m2_ep', 'conso_5_usages_par_m2_e_primaire', 'consommation_energie'],
  emission_m2: ['emission_ges_5_usages_par_m2', 'estimation_ges'],
  surface: ['surface_habitable_logement', 'surface_thermique_lot'],
  annee_construction: ['annee_construction'],
  periode_construction: ['periode_construction'],
  type_batiment: ['type_batiment', 'tr002_type_batiment_description'],
  code_insee: ['code_insee_ban', 'code_insee_commune_actualise'],
  code_postal: ['code_postal_ban'],
  code_departement: ['code_departement_ban', 'n_departement_ban', 'tv016_departement_code'],
  identifiant_ban: ['identifiant_ban'],
  adresse: ['adresse_ban', 'geo_adresse'],
  x_l93: ['coordonnee_cartographique_x_ban'],
  y_l93: ['coordonnee_cartographique_y_ban'],
  geopoint: ['geopoint'],
  latitude: ['latitude'],
  longitude: ['longitude'],
  numero_dpe_remplace: ['numero_dpe_remplace', 'n_dpe_remplace'],
  version_dpe: ['version_dpe', 'version_methode_dpe'],
  methode: ['methode_application_dpe', 'nom_methode_dpe'],
  modele: ['modele_dpe', 'tr001_modele_dpe_type_libelle'],
  // BAN's parcel relation (`cad_parcelles`, "id|id") when a file was joined with the BAN address file.
  parcelles: ['cad_parcelles'],
} as const;

export type DpeRawColumn = keyof typeof DPE_ALIASES;
export const DPE_RAW_COLUMNS = Object.keys(DPE_ALIASES) as DpeRawColumn[];

/**
 * The data-fair fields the parser reads, per dataset family, sent as `select=` so a download carries these ~20 columns
 * instead of the 220+ a line has (ten times less to transfer, store and parse). Every name is an alias above.
 */
const V2_FIELDS = [
  'numero_dpe', 'date_etablissement_dpe', 'etiquette_dpe', 'etiquette_ges', 'conso_5_usages_par_m2_ep',
  'emission_ges_5_usages_par_m2', 'surface_habitable_logement', 'annee_construction', 'periode_construction',
  'type_batiment', 'code_insee_ban', 'code_postal_ban', 'code_departement_ban', 'identifiant_ban', 'adresse_ban',
  'coordonnee_cartographique_x_ban', 'coordonnee_cartographique_y_ban', '_geopoint', 'numero_dpe_remplace',
  'version_dpe', 'methode_application_dpe', 'modele_dpe',
];
export const DPE_API_FIELDS: Record<string, string[]> = {
  dpe03existant: V2_FIELDS,
  dpe02neuf: V2_FIELDS,
  // The legacy base (before July 2021): the columns of ADEME's own 17-column export, and its number.
  'dpe-france': [
    'numero_dpe', 'nom_methode_dpe', 'version_methode_dpe', 'date_etablissement_dpe', 'consommation_energie',
    'classe_consommation_energie', 'estimation_ges', 'classe_estimation_ges', 'annee_construction', 'surface_thermique_lot',
    'latitude', 'longitude', 'tr001_modele_dpe_type_libelle', 'tr002_type_batiment_description',
    'code_insee_commune_actualise', 'tv016_departement_code', 'geo_adresse',
  ],
};
