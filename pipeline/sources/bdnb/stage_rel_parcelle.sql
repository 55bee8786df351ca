-- BDNB `rel_batiment_groupe_parcelle` → (group, 14-character cadastral parcel id, main-parcel flag).
-- {{c:<column>}}: see stage_batiment_groupe.sql. `parcelle_principale` is a boolean written t/f, true/false or 1/0.
SELECT
  nullif(trim({{c:batiment_groupe_id}}), '') AS batiment_groupe_id,
  nullif(upper(trim({{c:parcelle_id}})), '') AS parcelle_id,
  CASE lower(trim({{c:parcelle_principale}}))
    WHEN 't' THEN true WHEN 'true' THEN true WHEN '1' THEN true
    WHEN 'f' THEN false WHEN 'false' THEN false WHEN '0' THEN false END AS parcelle_principale
FROM read_csv({{file}}, header = true, all_varchar = true, delim = {{delim}}, quote = '"', escape = '"', strict_mode = false) AS t
