-- Groups staged lines into mutations, keys each mutation by its content (format-independent, so a sale keeps its key
-- whichever published format it came from), and gives it a stable numeric id: the id already stored in the lake for
-- that key when there is one, otherwise annee·10^11 + département·10^8 + next sequence number of the partition.
CREATE OR REPLACE TEMP TABLE mutations AS
WITH m AS (
  SELECT code_departement, year(any_value(date_mutation)) AS annee, mutation_group,
    any_value(date_mutation) AS date_mutation,
    md5(concat_ws('|', code_departement, any_value(date_mutation), any_value(nature_mutation),
        any_value(valeur_fonciere), nullif(array_to_string(list_sort(list_distinct(list(id_parcelle))), ','), ''))) AS content_key
  FROM lines
  GROUP BY code_departement, mutation_group
), keyed AS (
  SELECT *, content_key || '-' || row_number() OVER (PARTITION BY content_key ORDER BY mutation_group) AS mutation_key,
    CASE code_departement WHEN '2A' THEN 201 WHEN '2B' THEN 202 ELSE try_cast(code_departement AS INTEGER) END AS dep_num
  FROM m
), prev AS (
  {{previous}}
), prev_max AS (
  SELECT code_departement, annee, max(id % 100000000) AS max_seq FROM prev GROUP BY ALL
)
SELECT k.code_departement, k.annee, k.mutation_group, k.mutation_key,
  coalesce(p.id, k.annee::BIGINT * 100000000000 + k.dep_num::BIGINT * 100000000 + coalesce(x.max_seq, 0)
    + row_number() OVER (PARTITION BY k.code_departement, k.annee, p.id IS NULL ORDER BY k.date_mutation, k.mutation_key)) AS id,
  coalesce(p.imported_at, {{now}}::TIMESTAMP) AS imported_at,
  p.id IS NULL AS is_new
FROM keyed k
LEFT JOIN prev p ON p.mutation_key = k.mutation_key AND p.code_departement = k.code_departement AND p.annee = k.annee
LEFT JOIN prev_max x ON x.code_departement = k.code_departement AND x.annee = k.annee
