// Header names of every published DPE style mapped onto one set of canonical raw columns, by NAME: the data-fair API
// field names (`numero_dpe`, `coordonnee_cartographique_x_ban`), ADEME's label-style export headers (`N°DPE`,
// `Coordonnée_cartographique_X_(BAN)`, with their double underscores and `²`) and the legacy `dpe-france` columns.

/** Canonical raw column → accepted header names, compared after `normalizeHeader`. First match wins. */
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

/** `Coordonnée_cartographique_X_(BAN)` → `coordonnee_cartographique_x_ban`; `N°DPE` → `n_dpe`; `m²` → `m2`. */
export function normalizeHeader(name: string): string {
  return name
    .normalize('NFKD') // ² → 2, é → e + combining accent
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
}

/** Canonical column → the file's own header name, for the columns the file has. */
export function mapHeaders(headers: string[]): Partial<Record<DpeRawColumn, string>> {
  const byNorm = new Map<string, string>();
  for (const h of headers) if (!byNorm.has(normalizeHeader(h))) byNorm.set(normalizeHeader(h), h);
  const out: Partial<Record<DpeRawColumn, string>> = {};
  for (const col of DPE_RAW_COLUMNS) {
    const hit = DPE_ALIASES[col].map((a) => byNorm.get(a)).find((h) => h !== undefined);
    if (hit !== undefined) out[col] = hit;
  }
  return out;
}

/** Splits one delimited line; fields may be quoted ("a;b", "" for a quote). */
function splitLine(line: string, sep: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') (cur += '"'), i++;
      else if (ch === '"') quoted = false;
      else cur += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === sep) out.push(cur), (cur = '');
    else cur += ch;
  }
  out.push(cur);
  return out;
}

export interface CsvLayout {
  delimiter: ',' | ';' | '\t';
  headers: string[];
  /** R's write.table default: every data row starts with an unnamed row number (one field more than the header). */
  leadingRowNumber: boolean;
}

/** Delimiter, header names and R row-number column, from the first lines of a CSV file (BOM removed). */
export function sniffCsv(head: string): CsvLayout {
  const lines = head.replace(/^\uFEFF/, '').split(/\r?\n/);
  const first = lines[0] ?? '';
  const count = (sep: string) => splitLine(first, sep).length;
  const delimiter = (['\t', ';', ','] as const).reduce((best, sep) => (count(sep) > count(best) ? sep : best), ',' as CsvLayout['delimiter']);
  const headers = splitLine(first, delimiter).map((h) => h.trim());
  const row = lines[1] ? splitLine(lines[1], delimiter) : [];
  const leadingRowNumber = row.length === headers.length + 1 && /^\d+$/.test(row[0].trim());
  return { delimiter, headers, leadingRowNumber };
}
