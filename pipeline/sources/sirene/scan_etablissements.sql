-- géo-SIRENE (StockEtablissement columns + longitude, latitude, geo_score…), pass 1: one typed row per line of the
-- files, read from `sirene_raw_etab`, a view naming the needed columns (absent optional columns are NULL): the files
-- are parsed by header name, so later stocks that add columns still load. `[ND]` (hidden by partial diffusion) and
-- blanks are NULL. Text the endpoints never serve is dropped outside the seven business types (narrow scan table).
CREATE OR REPLACE TEMP TABLE sirene_etab_scan AS
WITH src AS (
  SELECT
    coalesce(sirene_v(siret), sirene_v(siren) || sirene_v(nic)) AS siret,
    -- Only an explicit O is full diffusion: P, blank or unknown statuses are treated as partial (privacy first).
    upper(coalesce(sirene_v(statutDiffusionEtablissement), '')) <> 'O' AS diffusion_partielle,
    sirene_v(etatAdministratifEtablissement) AS etat,
    upper(replace(sirene_v(activitePrincipaleEtablissement), '.', '')) AS naf_code,
    sirene_v(nomenclatureActivitePrincipaleEtablissement) AS nomenclature,
    sirene_v(codeCommuneEtablissement) AS code_commune,
    sirene_v(codePostalEtablissement) AS code_postal,
    sirene_v(libelleCommuneEtablissement) AS commune,
    sirene_v(numeroVoieEtablissement) AS numero,
    sirene_v(indiceRepetitionEtablissement) AS indice,
    upper(sirene_v(typeVoieEtablissement)) AS type_voie,
    sirene_v(libelleVoieEtablissement) AS libelle_voie,
    sirene_v(enseigne1Etablissement) AS enseigne,
    sirene_v(denominationUsuelleEtablissement) AS denomination_usuelle,
    try_cast(sirene_v(dateCreationEtablissement) AS DATE) AS date_creation,
    -- ISO timestamp without zone (2018-07-10T14:17:15): its day, for the snapshot date (the newest one in the files).
    try_cast(left(sirene_v(dateDernierTraitementEtablissement), 10) AS DATE) AS date_traitement,
    lower(sirene_v(etablissementSiege)) = 'true' AS is_siege,
    try_cast(sirene_v(latitude) AS DOUBLE) AS lat,
    try_cast(sirene_v(longitude) AS DOUBLE) AS lon,
    try_cast(sirene_v(geo_score) AS DOUBLE) AS geo_score
  FROM sirene_raw_etab
), typed AS (
  SELECT src.*, t.business_type,
    -- Mainland and Corsica: 2 characters (2A/2B); overseas: 3 (971…976, 977/978).
    CASE WHEN code_commune LIKE '97%' OR code_commune LIKE '98%' THEN left(code_commune, 3) ELSE left(code_commune, 2) END
      AS code_departement,
    coalesce(lat BETWEEN -90 AND 90 AND lon BETWEEN -180 AND 180 AND NOT (lat = 0 AND lon = 0), false) AS geocoded
  FROM src
  LEFT JOIN (VALUES {{naf_types}}) AS t(naf, business_type) ON t.naf = src.naf_code
)
SELECT
  siret, diffusion_partielle, etat, naf_code, nomenclature, business_type, code_commune, code_postal, commune,
  code_departement, date_creation, date_traitement, is_siege, lat, lon, geo_score, geocoded,
  CASE WHEN business_type IS NOT NULL THEN numero END AS numero,
  CASE WHEN business_type IS NOT NULL THEN indice END AS indice,
  CASE WHEN business_type IS NOT NULL THEN type_voie END AS type_voie,
  CASE WHEN business_type IS NOT NULL THEN libelle_voie END AS libelle_voie,
  CASE WHEN business_type IS NOT NULL THEN enseigne END AS enseigne,
  CASE WHEN business_type IS NOT NULL THEN denomination_usuelle END AS denomination_usuelle
FROM typed
