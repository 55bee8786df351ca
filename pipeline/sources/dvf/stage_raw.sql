-- DGFiP raw `valeursfoncieres-YYYY.txt` → normalised DVF lines (same columns as stage_geo.sql).
-- Quirks handled here: `|` separator, decimal commas, dd/mm/yyyy dates, postal codes without their leading zero,
-- commune codes without their département, no mutation id (lines are grouped by their shared sale attributes).
-- `unparsable_*` flags a value that is present but not a number, as in stage_geo.sql.
WITH file AS (
  -- line_hash: the whole row, for numbering identical lines within this import only (never stored): a 64-bit hash.
  SELECT *, file_index, hash(*COLUMNS(*)) AS line_hash,
    nullif(trim("Code departement"), '') AS dep
  FROM read_csv({{files}}, header = true, all_varchar = true, delim = '|', quote = '') AS f
), typed AS (
  SELECT *,
    -- Overseas départements have 3 characters; their commune part may come as 2 digits ('01') or 3 ('101').
    CASE WHEN length(dep) = 3 AND length(trim("Code commune")) = 3 THEN left(dep, 2) || trim("Code commune")
         WHEN length(dep) = 3 THEN dep || lpad(trim("Code commune"), 2, '0')
         ELSE dep || lpad(trim("Code commune"), 3, '0') END AS insee,
    try_strptime(trim("Date mutation"), '%d/%m/%Y')::DATE AS d,
    try_cast(replace(trim("Valeur fonciere"), ',', '.') AS DOUBLE) AS v
  FROM file
)
SELECT
  file_index,
  line_hash,
  concat_ws('|', dep, insee, d, trim("Nature mutation"), v) AS mutation_group,
  NULL::VARCHAR AS id_mutation,
  d AS date_mutation,
  try_cast("No disposition" AS INTEGER) AS numero_disposition,
  nullif(trim("Nature mutation"), '') AS nature_mutation,
  v AS valeur_fonciere,
  coalesce(v IS NULL AND trim("Valeur fonciere") <> '', false) AS unparsable_valeur_fonciere,
  nullif(trim("No voie"), '') AS adresse_numero,
  nullif(trim("B/T/Q"), '') AS adresse_suffixe,
  nullif(upper(concat_ws(' ', nullif(trim("Type de voie"), ''), nullif(trim("Voie"), ''))), '') AS adresse_nom_voie,
  nullif(trim("Code voie"), '') AS adresse_code_voie,
  CASE WHEN trim("Code postal") <> '' THEN lpad(trim("Code postal"), 5, '0') END AS code_postal,
  insee AS code_commune,
  nullif(strip_accents(upper(trim("Commune"))), '') AS nom_commune,
  dep AS code_departement,
  NULL::VARCHAR AS ancien_code_commune,
  CASE WHEN trim("No plan") <> '' THEN insee || lpad(coalesce(nullif(trim("Prefixe de section"), ''), '000'), 3, '0')
       || lpad(trim("Section"), 2, '0') || lpad(trim("No plan"), 4, '0') END AS id_parcelle,
  nullif(trim("No Volume"), '') AS numero_volume,
  nullif(trim("1er lot"), '') AS lot1_numero, try_cast(replace("Surface Carrez du 1er lot", ',', '.') AS DOUBLE) AS lot1_surface_carrez,
  nullif(trim("2eme lot"), '') AS lot2_numero, try_cast(replace("Surface Carrez du 2eme lot", ',', '.') AS DOUBLE) AS lot2_surface_carrez,
  nullif(trim("3eme lot"), '') AS lot3_numero, try_cast(replace("Surface Carrez du 3eme lot", ',', '.') AS DOUBLE) AS lot3_surface_carrez,
  nullif(trim("4eme lot"), '') AS lot4_numero, try_cast(replace("Surface Carrez du 4eme lot", ',', '.') AS DOUBLE) AS lot4_surface_carrez,
  nullif(trim("5eme lot"), '') AS lot5_numero, try_cast(replace("Surface Carrez du 5eme lot", ',', '.') AS DOUBLE) AS lot5_surface_carrez,
  coalesce(try_cast(replace("Surface Carrez du 1er lot", ',', '.') AS DOUBLE), try_cast(replace("Surface Carrez du 2eme lot", ',', '.') AS DOUBLE),
           try_cast(replace("Surface Carrez du 3eme lot", ',', '.') AS DOUBLE), try_cast(replace("Surface Carrez du 4eme lot", ',', '.') AS DOUBLE),
           try_cast(replace("Surface Carrez du 5eme lot", ',', '.') AS DOUBLE)) IS NULL
    AND concat_ws('', "Surface Carrez du 1er lot", "Surface Carrez du 2eme lot", "Surface Carrez du 3eme lot",
                  "Surface Carrez du 4eme lot", "Surface Carrez du 5eme lot") <> '' AS unparsable_surface_carrez,
  try_cast("Nombre de lots" AS INTEGER) AS nombre_lots,
  try_cast("Code type local" AS INTEGER) AS code_type_local,
  nullif(trim("Type local"), '') AS type_local,
  try_cast(replace("Surface reelle bati", ',', '.') AS DOUBLE) AS surface_reelle_bati,
  coalesce(try_cast(replace("Surface reelle bati", ',', '.') AS DOUBLE) IS NULL AND trim("Surface reelle bati") <> '', false)
    AS unparsable_surface_reelle_bati,
  try_cast("Nombre pieces principales" AS INTEGER) AS nombre_pieces_principales,
  nullif(trim("Nature culture"), '') AS code_nature_culture,
  nc.label AS nature_culture,
  nullif(trim("Nature culture speciale"), '') AS code_nature_culture_speciale,
  NULL::VARCHAR AS nature_culture_speciale,
  try_cast(replace("Surface terrain", ',', '.') AS DOUBLE) AS surface_terrain,
  coalesce(try_cast(replace("Surface terrain", ',', '.') AS DOUBLE) IS NULL AND trim("Surface terrain") <> '', false)
    AS unparsable_surface_terrain,
  NULL::DOUBLE AS longitude,
  NULL::DOUBLE AS latitude
FROM typed AS src
LEFT JOIN (VALUES {{nature_culture_values}}) AS nc(code, label) ON nc.code = trim(src."Nature culture")
