, codes AS (
  SELECT DISTINCT code_postal FROM page WHERE code_postal IS NOT NULL
), windows AS (
  -- A postal code spanning two départements takes the later horizon of the two.
  SELECT d.code_postal, max(h.derniere_date) AS date_fin
  FROM (SELECT DISTINCT code_postal, code_departement FROM ventes WHERE code_postal IN (SELECT code_postal FROM codes)) AS d
  JOIN ventes_horizon_departements AS h USING (code_departement)
  GROUP BY d.code_postal
), dvf AS (
  SELECT w.code_postal, count(v.prix_m2) AS dvf_nb_mutations, median(v.prix_m2) AS dvf_prix_m2_median
  FROM windows AS w
  JOIN ventes AS v ON v.code_postal = w.code_postal
    AND v.date_mutation > w.date_fin - INTERVAL 24 MONTH AND v.date_mutation <= w.date_fin
    AND v.type_local IN ('Maison', 'Appartement') AND v.prix_m2 IS NOT NULL
    AND NOT v.is_bulk_sale AND NOT v.is_outlier AND NOT v.is_vefa
  GROUP BY w.code_postal
)
