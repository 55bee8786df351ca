-- géo-SIRENE pass 2: the establishments the businesses endpoints serve, from `sirene_etab_scan`: active (`A`), NAF
-- rev. 2 code of one of the seven business types, a 14-digit SIRET. One row per kept SIRET.
-- Partial diffusion (privacy, docs/decisions.md): a partially diffusible establishment keeps commune-level
-- information only: its address, sign and usual name (often the person's own name) are never stored, and its
-- position is its commune's reference point, the median position of the commune's fully diffusible, geocoded, active
-- establishments (any activity) in the same files. Establishments without coordinates of their own get that point too.
WITH commune_points AS (
  SELECT code_commune, median(lat) AS lat, median(lon) AS lon
  FROM sirene_etab_scan
  WHERE etat = 'A' AND NOT diffusion_partielle AND geocoded
  GROUP BY code_commune
), kept AS (
  SELECT * FROM sirene_etab_scan
  WHERE etat = 'A' AND business_type IS NOT NULL AND coalesce(nomenclature, 'NAFRev2') = 'NAFRev2'
    AND regexp_full_match(coalesce(siret, ''), '\d{14}')
  -- The same SIRET twice (overlapping files): one row.
  QUALIFY row_number() OVER (PARTITION BY siret ORDER BY geocoded DESC, date_creation DESC NULLS LAST) = 1
), final AS (
  SELECT
    k.siret,
    left(k.siret, 9) AS siren,
    k.naf_code,
    k.business_type,
    CASE WHEN NOT k.diffusion_partielle THEN k.denomination_usuelle END AS denomination_usuelle,
    CASE WHEN NOT k.diffusion_partielle THEN k.enseigne END AS enseigne,
    CASE WHEN NOT k.diffusion_partielle THEN nullif(concat_ws(' ', k.numero || coalesce(k.indice, ''),
      coalesce(v.label, k.type_voie), k.libelle_voie), '') END AS adresse,
    k.code_postal,
    k.code_commune,
    k.commune,
    k.code_departement,
    CASE WHEN k.diffusion_partielle OR NOT k.geocoded THEN c.lat ELSE k.lat END AS latitude,
    CASE WHEN k.diffusion_partielle OR NOT k.geocoded THEN c.lon ELSE k.lon END AS longitude,
    CASE WHEN NOT k.diffusion_partielle AND k.geocoded THEN 'adresse' WHEN c.lat IS NOT NULL THEN 'commune' END
      AS position_precision,
    CASE WHEN NOT k.diffusion_partielle AND k.geocoded THEN k.geo_score END AS geo_score,
    -- The commune point of every row, for when the legal unit turns out to be partially diffusible (businesses.sql).
    c.lat AS commune_latitude,
    c.lon AS commune_longitude,
    k.date_creation,
    coalesce(k.is_siege, false) AS is_siege,
    k.diffusion_partielle
  FROM kept AS k
  LEFT JOIN commune_points AS c USING (code_commune)
  LEFT JOIN (VALUES {{voie_types}}) AS v(code, label) ON v.code = k.type_voie
)
SELECT * FROM final ORDER BY code_departement, siret
