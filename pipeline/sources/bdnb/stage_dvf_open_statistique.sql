-- BDNB `batiment_groupe_dvf_open_statistique` (the group's past DVF sales, 2014 → early 2021) → typed rows.
-- {{c:<column>}}: see stage_batiment_groupe.sql. In a 10-character re-export `prix_m2_local_median` cannot be told from
-- its max/min/moyen siblings (all `prix_m2_lo…`), so it is NULL there.
SELECT
  nullif(trim({{c:batiment_groupe_id}}), '') AS batiment_groupe_id,
  try_cast(trim({{c:nb_mutation}}) AS DOUBLE)::INTEGER AS nb_mutation,
  try_cast(replace(trim({{c:prix_m2_local_median}}), ',', '.') AS DOUBLE) AS prix_m2_local_median
FROM read_csv({{file}}, header = true, all_varchar = true, delim = {{delim}}, quote = '"', escape = '"', strict_mode = false) AS t
