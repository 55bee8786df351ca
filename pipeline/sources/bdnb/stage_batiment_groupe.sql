-- BDNB `batiment_groupe` → one typed row per building group (duplicates are counted and dropped by batiments.sql).
-- {{c:<column>}} is the file's column for <column> (its full name or the 10-character name of a QGIS/shapefile re-export), or a
-- NULL when the file lacks it; every column is read as text so a malformed value is counted, never fatal.
SELECT
  nullif(trim({{c:batiment_groupe_id}}), '') AS batiment_groupe_id,
  nullif(trim({{c:code_departement_insee}}), '') AS code_departement_insee,
  -- INSEE codes lose their leading zero in spreadsheets: pad to 5 characters (2A/2B kept).
  CASE WHEN trim({{c:code_commune_insee}}) <> '' THEN lpad(upper(trim({{c:code_commune_insee}})), 5, '0') END AS code_commune_insee,
  nullif(trim({{c:libelle_commune_insee}}), '') AS libelle_commune_insee,
  nullif(trim({{c:code_iris}}), '') AS code_iris,
  try_cast(replace(trim({{c:s_geom_groupe}}), ',', '.') AS DOUBLE) AS s_geom_groupe,
  coalesce(try_cast(replace(trim({{c:s_geom_groupe}}), ',', '.') AS DOUBLE) IS NULL AND trim({{c:s_geom_groupe}}) <> '', false) AS unparsable_s_geom_groupe,
  -- the WKT is kept as written (trimming a ~300-byte string costs as much as reading it): a value that starts with a
  -- printable character is not blank, and centroid.sql skips what precedes the first parenthesis and spaces after the last
  CASE WHEN ascii({{c:geom_groupe}}) BETWEEN 33 AND 126 THEN {{c:geom_groupe}} ELSE nullif(trim({{c:geom_groupe}}), '') END AS geom_groupe
FROM read_csv({{file}}, header = true, all_varchar = true, delim = {{delim}}, quote = '"', escape = '"', strict_mode = false) AS t
