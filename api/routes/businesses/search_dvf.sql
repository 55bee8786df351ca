, dvf AS (
  -- Precomputed per postal code by the businesses_dvf_codes_postaux mart (its header states the rule).
  SELECT code_postal, dvf_nb_mutations, dvf_prix_m2_median
  FROM businesses_dvf_codes_postaux
  WHERE code_postal IN (SELECT code_postal FROM page)
)
