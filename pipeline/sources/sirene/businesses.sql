-- The lake rows of a SIRENE snapshot: each staged establishment with its name, from its legal unit (staged
-- separately). Name: the legal unit's name, else the establishment's usual name or sign, else (sole traders) first
-- name and last name. Privacy: when the establishment or its unit is partially diffusible, only a legal entity's
-- registered name is shown (stage_unites_legales.sql already withheld a natural person's) and the establishment keeps
-- commune-level information only: no street address, its commune's point. Same rule as lib/sirene.ts denominationOf().
WITH joined AS (
  SELECT e.*,
    u.denomination AS ul_denomination, u.prenom, u.nom,
    e.diffusion_partielle OR coalesce(u.diffusion_partielle, false) AS partial
  FROM sirene_etablissements_stg AS e
  LEFT JOIN sirene_unites_legales_stg AS u USING (siren)
), final AS (
  SELECT
    siret,
    siren,
    CASE WHEN partial THEN ul_denomination
         ELSE coalesce(ul_denomination, denomination_usuelle, enseigne, nullif(concat_ws(' ', prenom, nom), '')) END
      AS denomination,
    naf_code,
    business_type,
    CASE WHEN NOT partial THEN adresse END AS adresse,
    code_postal,
    code_commune,
    commune,
    code_departement,
    CASE WHEN partial THEN commune_latitude ELSE latitude END AS latitude,
    CASE WHEN partial THEN commune_longitude ELSE longitude END AS longitude,
    CASE WHEN NOT partial THEN position_precision WHEN commune_latitude IS NOT NULL THEN 'commune' END AS position_precision,
    date_creation,
    is_siege,
    partial AS diffusion_partielle
  FROM joined
)
SELECT * FROM final ORDER BY siret
