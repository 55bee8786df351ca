-- DPE typing, row by row: the canonical raw text columns of any publication style (see columns.ts) → typed
-- diagnostics, with their anomaly flags. The raw placeholder is one file's rows as the streaming template reads them
-- (trimmed, empty and NA as NULL: no trim here, it cost a quarter of this query), the dataset placeholder the dataset
-- it comes from. Needs the lambert93_lat/lon macros (lib/lambert93.ts). Nothing is dropped silently: every doubtful
-- value is nulled and flagged, and the caller counts the flags as anomalies. Deduplication (one row per diagnostic) and
-- replacement are parse.ts's, on the typed table: they need every file of the département.
WITH raw AS (
  SELECT {{dataset}} AS source_dataset, * FROM {{raw}}
),

typed AS (
  SELECT
    source_dataset,
    numero_dpe,
    coalesce(try_cast(date_etablissement_dpe AS DATE),
             try_cast(try_strptime(date_etablissement_dpe, '%d/%m/%Y') AS DATE)) AS date_etablissement_dpe,
    upper(etiquette_dpe) AS etiquette_dpe_brute,
    upper(etiquette_ges) AS etiquette_ges_brute,
    try_cast(replace(conso_m2, ',', '.') AS DOUBLE) AS conso_energie_kwh_m2_an,
    try_cast(replace(emission_m2, ',', '.') AS DOUBLE) AS emission_ges_kg_m2_an,
    try_cast(replace(surface, ',', '.') AS DOUBLE) AS surface_brute,
    round(try_cast(replace(annee_construction, ',', '.') AS DOUBLE))::INTEGER AS annee_brute,
    periode_construction,
    lower(strip_accents(type_batiment)) AS type_batiment_brut,
    CASE WHEN regexp_matches(code_insee, '^[0-9]{4}$') THEN '0' || code_insee
         ELSE upper(code_insee) END AS code_insee,
    CASE WHEN regexp_matches(code_postal, '^[0-9]{4,5}$') THEN lpad(code_postal, 5, '0') END AS code_postal,
    CASE WHEN regexp_matches(code_departement, '^[0-9]$') THEN '0' || code_departement
         ELSE upper(code_departement) END AS code_departement_brut,
    identifiant_ban,
    adresse AS address,
    try_cast(replace(x_l93, ',', '.') AS DOUBLE) AS x_l93,
    try_cast(replace(y_l93, ',', '.') AS DOUBLE) AS y_l93,
    try_cast(split_part(geopoint, ',', 1) AS DOUBLE) AS geo_lat,
    try_cast(split_part(geopoint, ',', 2) AS DOUBLE) AS geo_lon,
    try_cast(replace(latitude, ',', '.') AS DOUBLE) AS wgs_lat,
    try_cast(replace(longitude, ',', '.') AS DOUBLE) AS wgs_lon,
    numero_dpe_remplace,
    version_dpe,
    methode,
    modele,
    nullif(split_part(parcelles, '|', 1), '') AS id_parcelle,
    -- only rows without a number need an id made from their content
    CASE WHEN numero_dpe IS NULL THEN
      md5(concat_ws('|', source_dataset, date_etablissement_dpe, etiquette_dpe, conso_m2, surface, code_insee, adresse,
                    x_l93, y_l93, geopoint, latitude, longitude, annee_construction)) END AS content_hash
  FROM raw
),

cleaned AS (
  SELECT
    *,
    CASE WHEN etiquette_dpe_brute IN ('A', 'B', 'C', 'D', 'E', 'F', 'G') THEN etiquette_dpe_brute END AS classe_energie,
    CASE WHEN etiquette_ges_brute IN ('A', 'B', 'C', 'D', 'E', 'F', 'G') THEN etiquette_ges_brute END AS classe_ges,
    CASE WHEN surface_brute > 0 AND surface_brute < 10000 THEN surface_brute END AS surface_habitable,
    -- A building cannot be built after it was diagnosed (new builds: a year of margin) nor before the Middle Ages.
    CASE WHEN annee_brute BETWEEN 1000 AND coalesce(year(date_etablissement_dpe), 2100) + 1 THEN annee_brute END AS annee_construction,
    CASE
      WHEN type_batiment_brut LIKE 'maison%' THEN 'maison'
      WHEN type_batiment_brut IN ('appartement', 'logement') THEN 'appartement'
      WHEN type_batiment_brut = 'immeuble' OR type_batiment_brut LIKE 'batiment collectif%' THEN 'immeuble'
    END AS type_batiment,
    -- Lambert-93 is the publisher's own position; `_geopoint` is data-fair's conversion; legacy files have WGS84.
    -- Outside metropolitan Lambert-93 bounds the X/Y are another system (overseas) or garbage: not converted.
    (x_l93 BETWEEN 50000 AND 1300000 AND y_l93 BETWEEN 6000000 AND 7150000) AS has_l93,
    (geo_lat BETWEEN -90 AND 90 AND geo_lon BETWEEN -180 AND 180) AS has_geopoint,
    (wgs_lat BETWEEN -90 AND 90 AND wgs_lon BETWEEN -180 AND 180 AND NOT (wgs_lat = 0 AND wgs_lon = 0)) AS has_wgs
  FROM typed
),

located AS (
  SELECT
    *,
    CASE WHEN has_l93 THEN lambert93_lat(x_l93, y_l93) WHEN has_geopoint THEN geo_lat WHEN has_wgs THEN wgs_lat END AS latitude,
    CASE WHEN has_l93 THEN lambert93_lon(x_l93, y_l93) WHEN has_geopoint THEN geo_lon WHEN has_wgs THEN wgs_lon END AS longitude,
    CASE WHEN has_l93 THEN 'lambert93' WHEN has_geopoint THEN 'geopoint' WHEN has_wgs THEN 'wgs84' END AS coord_source,
    coalesce(code_departement_brut,
             CASE WHEN code_insee LIKE '97%' THEN left(code_insee, 3) ELSE left(code_insee, 2) END) AS code_departement
  FROM cleaned
),

final AS (
  SELECT
    -- rows without a number get theirs (from content_hash) once the file is loaded: see parse.ts
    d.numero_dpe AS dpe_id, d.numero_dpe, d.source_dataset, d.date_etablissement_dpe,
    d.date_etablissement_dpe < DATE '2021-07-01' AS avant_reforme_2021,
    d.classe_energie, d.classe_ges, d.etiquette_dpe_brute, d.etiquette_ges_brute,
    d.conso_energie_kwh_m2_an, d.emission_ges_kg_m2_an, d.surface_habitable, d.annee_construction, d.periode_construction,
    d.type_batiment, d.code_insee, d.code_postal, d.code_departement, d.identifiant_ban, d.id_parcelle, d.address,
    d.latitude, d.longitude, d.coord_source, d.numero_dpe_remplace, d.version_dpe, d.methode, d.modele,
    -- Anomaly flags, counted by the caller.
    d.etiquette_dpe_brute IS NOT NULL AND d.classe_energie IS NULL AS anomalie_classe_hors_a_g,
    d.annee_brute IS NOT NULL AND d.annee_construction IS NULL AS anomalie_annee_absurde,
    d.surface_brute IS NOT NULL AND d.surface_habitable IS NULL AS anomalie_surface_absurde,
    d.date_etablissement_dpe IS NULL AS anomalie_date_invalide,
    d.latitude IS NULL AS anomalie_sans_coordonnees,
    d.content_hash
  FROM located AS d
)

SELECT * FROM final
