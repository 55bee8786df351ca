-- BDNB `batiment_groupe_ffo_bat` (building characteristics from the Fichiers fonciers) → typed rows, one per group.
-- {{c:<column>}}: see stage_batiment_groupe.sql.
SELECT
  nullif(trim({{c:batiment_groupe_id}}), '') AS batiment_groupe_id,
  try_cast(trim({{c:annee_construction}}) AS DOUBLE)::INTEGER AS annee_construction,
  coalesce(try_cast(trim({{c:annee_construction}}) AS DOUBLE) IS NULL AND trim({{c:annee_construction}}) <> '', false) AS unparsable_annee_construction,
  try_cast(trim({{c:nb_log}}) AS DOUBLE)::INTEGER AS nb_log,
  try_cast(trim({{c:nb_niveau}}) AS DOUBLE)::INTEGER AS nb_niveau,
  nullif(trim({{c:mat_mur_txt}}), '') AS mat_mur_txt,
  nullif(trim({{c:mat_toit_txt}}), '') AS mat_toit_txt,
  nullif(trim({{c:usage_niveau_1_txt}}), '') AS usage_niveau_1_txt
FROM read_csv({{file}}, header = true, all_varchar = true, delim = {{delim}}, quote = '"', escape = '"', strict_mode = false) AS t
