-- StockUniteLegale → the names of the legal units of the kept establishments (`sirene_wanted_sirens`), read from
-- `sirene_raw_ul` (columns by header name, absent optional ones NULL). One row per SIREN.
-- Partial diffusion (privacy, docs/decisions.md): a partially diffusible unit's person names are never stored, nor
-- the registered name of a natural person (legal category 1xxx, or unknown); `[ND]` and blanks are NULL.
WITH src AS (
  SELECT
    sirene_v(siren) AS siren,
    upper(coalesce(sirene_v(statutDiffusionUniteLegale), '')) <> 'O' AS diffusion_partielle,
    sirene_v(etatAdministratifUniteLegale) AS etat,
    sirene_v(categorieJuridiqueUniteLegale) AS categorie_juridique,
    sirene_v(denominationUniteLegale) AS denomination,
    coalesce(sirene_v(prenomUsuelUniteLegale), sirene_v(prenom1UniteLegale)) AS prenom,
    coalesce(sirene_v(nomUsageUniteLegale), sirene_v(nomUniteLegale)) AS nom,
    try_cast(sirene_v(dateCreationUniteLegale) AS DATE) AS date_creation
  FROM sirene_raw_ul
  WHERE sirene_v(siren) IN (SELECT siren FROM sirene_wanted_sirens)
), final AS (
  SELECT
    siren,
    CASE WHEN NOT diffusion_partielle OR coalesce(categorie_juridique NOT LIKE '1%', false) THEN denomination END
      AS denomination,
    CASE WHEN NOT diffusion_partielle THEN prenom END AS prenom,
    CASE WHEN NOT diffusion_partielle THEN nom END AS nom,
    categorie_juridique,
    etat,
    date_creation,
    diffusion_partielle
  FROM src
  QUALIFY row_number() OVER (PARTITION BY siren ORDER BY etat = 'A' DESC) = 1
)
SELECT * FROM final ORDER BY siren
