-- Etalab geo-DVF (one CSV per département and year, all the files of a batch at once) → normalised DVF lines.
-- Every column is read as text so that a malformed value is counted as an anomaly instead of failing the file:
-- `unparsable_*` flags a value that is present but not a number.
SELECT
  file_index,  -- position of the line's file in the list read
  -- The whole row, for numbering identical lines within this import only (never stored), hence a fast 64-bit hash.
  hash(*COLUMNS(*)) AS line_hash,
  nullif(trim(id_mutation), '') AS mutation_group,
  nullif(trim(id_mutation), '') AS id_mutation,
  try_cast(date_mutation AS DATE) AS date_mutation,
  try_cast(numero_disposition AS INTEGER) AS numero_disposition,
  nullif(trim(nature_mutation), '') AS nature_mutation,
  try_cast(valeur_fonciere AS DOUBLE) AS valeur_fonciere,
  coalesce(try_cast(valeur_fonciere AS DOUBLE) IS NULL AND trim(valeur_fonciere) <> '', false) AS unparsable_valeur_fonciere,
  nullif(trim(adresse_numero), '') AS adresse_numero,
  nullif(trim(adresse_suffixe), '') AS adresse_suffixe,
  nullif(upper(trim(adresse_nom_voie)), '') AS adresse_nom_voie,
  nullif(trim(adresse_code_voie), '') AS adresse_code_voie,
  CASE WHEN trim(code_postal) <> '' THEN lpad(trim(code_postal), 5, '0') END AS code_postal,
  nullif(trim(code_commune), '') AS code_commune,
  nullif(strip_accents(upper(trim(nom_commune))), '') AS nom_commune,
  nullif(trim(code_departement), '') AS code_departement,
  nullif(trim(ancien_code_commune), '') AS ancien_code_commune,
  nullif(trim(id_parcelle), '') AS id_parcelle,
  nullif(trim(numero_volume), '') AS numero_volume,
  nullif(trim(lot1_numero), '') AS lot1_numero, try_cast(lot1_surface_carrez AS DOUBLE) AS lot1_surface_carrez,
  nullif(trim(lot2_numero), '') AS lot2_numero, try_cast(lot2_surface_carrez AS DOUBLE) AS lot2_surface_carrez,
  nullif(trim(lot3_numero), '') AS lot3_numero, try_cast(lot3_surface_carrez AS DOUBLE) AS lot3_surface_carrez,
  nullif(trim(lot4_numero), '') AS lot4_numero, try_cast(lot4_surface_carrez AS DOUBLE) AS lot4_surface_carrez,
  nullif(trim(lot5_numero), '') AS lot5_numero, try_cast(lot5_surface_carrez AS DOUBLE) AS lot5_surface_carrez,
  coalesce(try_cast(lot1_surface_carrez AS DOUBLE), try_cast(lot2_surface_carrez AS DOUBLE), try_cast(lot3_surface_carrez AS DOUBLE),
           try_cast(lot4_surface_carrez AS DOUBLE), try_cast(lot5_surface_carrez AS DOUBLE)) IS NULL
    AND concat_ws('', lot1_surface_carrez, lot2_surface_carrez, lot3_surface_carrez, lot4_surface_carrez, lot5_surface_carrez) <> ''
    AS unparsable_surface_carrez,
  try_cast(nombre_lots AS INTEGER) AS nombre_lots,
  try_cast(code_type_local AS INTEGER) AS code_type_local,
  nullif(trim(type_local), '') AS type_local,
  try_cast(surface_reelle_bati AS DOUBLE) AS surface_reelle_bati,
  coalesce(try_cast(surface_reelle_bati AS DOUBLE) IS NULL AND trim(surface_reelle_bati) <> '', false) AS unparsable_surface_reelle_bati,
  try_cast(nombre_pieces_principales AS INTEGER) AS nombre_pieces_principales,
  nullif(trim(code_nature_culture), '') AS code_nature_culture,
  nullif(trim(nature_culture), '') AS nature_culture,
  nullif(trim(code_nature_culture_speciale), '') AS code_nature_culture_speciale,
  nullif(trim(nature_culture_speciale), '') AS nature_culture_speciale,
  try_cast(surface_terrain AS DOUBLE) AS surface_terrain,
  coalesce(try_cast(surface_terrain AS DOUBLE) IS NULL AND trim(surface_terrain) <> '', false) AS unparsable_surface_terrain,
  try_cast(longitude AS DOUBLE) AS longitude,
  try_cast(latitude AS DOUBLE) AS latitude
FROM read_csv({{files}}, header = true, all_varchar = true, delim = ',', quote = '"', escape = '"') AS t
