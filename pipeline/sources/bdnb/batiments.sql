-- The staged tables (temp tables bdnb_groupe_raw, bdnb_ffo_raw, bdnb_dvf_raw, bdnb_groupe_parcelles) → bdnb_batiments,
-- one row per building group with its WGS84 point, in one statement (nothing large is materialised between the steps).
-- Needs the macros of lib/lambert93.ts. The caller picks, from counts it has made (the template's markers):
--   groups      the building groups (rid, the typed columns, has_geometry): every row with an id, or (when some
--               id repeats) one row per id, a row with a geometry (and an area) first;
--   ffo, dvf    the other tables as read, or one row per id (ffo: a row with a construction year first; dvf:
--               the row with the most sales). The BDNB publishes them one row per group, so the caller builds with the
--               rows as read and rebuilds with the one-row-per-id forms only if the result has more rows than groups.
-- Columns starting with `_` serve the anomaly counts, not the lake.
CREATE OR REPLACE TEMP TABLE bdnb_batiments AS
WITH
-- Every row's footprint, duplicates included (their centroid is joined by row, so only the kept row's is used).
bdnb_geom AS (
    SELECT rowid AS rid, geom_groupe FROM bdnb_groupe_raw WHERE batiment_groupe_id IS NOT NULL AND geom_groupe IS NOT NULL
),
{{centroid.sql}}
g AS (
    {{groups}}
),
ffo AS (
    {{ffo}}
),
dvf AS (
    {{dvf}}
),
-- Lambert-93 covers metropolitan France only (x 0–1,300 km, y 6,000–7,200 km here with a margin); anything else is
-- not placed rather than placed wrongly (overseas départements use other projections).
placed AS (
    SELECT rid, lambert93_lat(x, y) AS latitude, lambert93_lon(x, y) AS longitude
    FROM bdnb_centroids
    WHERE x BETWEEN 0 AND 1300000 AND y BETWEEN 6000000 AND 7200000
)
SELECT
    g.batiment_groupe_id,
    -- Older millésimes give Paris, Lyon and Marseille as a whole (75056 on every row of the real Paris extract) while
    -- the IRIS code is arrondissement-level: the arrondissement is its first five characters.
    CASE WHEN g.code_commune_insee IN ('75056', '69123', '13055') AND regexp_full_match(left(g.code_iris, 5), '(751[0-2][0-9]|6938[1-9]|132[01][0-9])')
         THEN left(g.code_iris, 5) ELSE g.code_commune_insee END AS code_commune_insee,
    g.libelle_commune_insee,
    g.s_geom_groupe,
    p.latitude,
    p.longitude,
    f.annee_construction,
    f.nb_log,
    f.nb_niveau,
    f.mat_mur_txt,
    f.mat_toit_txt,
    f.usage_niveau_1_txt,
    d.nb_mutation AS dvf_nb_mutations,
    d.prix_m2_local_median AS dvf_prix_m2_median,
    r.parcelles_principales,
    r.parcelles_secondaires,
    g.has_geometry AS _has_geometry,
    r.batiment_groupe_id IS NOT NULL AS _has_relation
FROM g
LEFT JOIN placed p USING (rid)
LEFT JOIN ffo f USING (batiment_groupe_id)
LEFT JOIN dvf d USING (batiment_groupe_id)
LEFT JOIN bdnb_groupe_parcelles r USING (batiment_groupe_id);
