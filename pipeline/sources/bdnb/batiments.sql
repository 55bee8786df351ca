-- The staged tables (temp tables bdnb_*_raw) → bdnb_batiments, one row per building group with its WGS84 point,
-- and bdnb_parcelles, the group ↔ parcel relation. Needs the macros of lib/lambert93.ts.
CREATE OR REPLACE TEMP TABLE bdnb_groupe AS
-- A repeated id keeps a row with a geometry (and an area). Ids repeat rarely: only they go through the window, the
-- other rows (and their long WKT strings) pass straight through.
WITH dup AS (
    SELECT batiment_groupe_id FROM bdnb_groupe_raw WHERE batiment_groupe_id IS NOT NULL GROUP BY ALL HAVING count(*) > 1
)
SELECT * FROM bdnb_groupe_raw g ANTI JOIN dup USING (batiment_groupe_id) WHERE g.batiment_groupe_id IS NOT NULL
UNION ALL
SELECT * FROM (
    SELECT g.* FROM bdnb_groupe_raw g SEMI JOIN dup USING (batiment_groupe_id)
    QUALIFY row_number() OVER (PARTITION BY batiment_groupe_id ORDER BY geom_groupe IS NULL, s_geom_groupe IS NULL) = 1
);

CREATE OR REPLACE TEMP VIEW bdnb_geom AS SELECT batiment_groupe_id, geom_groupe FROM bdnb_groupe WHERE geom_groupe IS NOT NULL;

{{centroid.sql}}

CREATE OR REPLACE TEMP TABLE bdnb_parcelles AS
SELECT batiment_groupe_id, parcelle_id, bool_or(coalesce(parcelle_principale, false)) AS parcelle_principale
FROM bdnb_parcelles_raw
WHERE batiment_groupe_id IS NOT NULL AND parcelle_id IS NOT NULL
GROUP BY ALL;

CREATE OR REPLACE TEMP TABLE bdnb_batiments AS
WITH ffo AS (
    SELECT unnest(arg_max(f, f.annee_construction IS NOT NULL)) FROM bdnb_ffo_raw f
    WHERE batiment_groupe_id IS NOT NULL GROUP BY batiment_groupe_id
),
dvf AS (
    SELECT unnest(arg_max(d, coalesce(d.nb_mutation, -1))) FROM bdnb_dvf_raw d
    WHERE batiment_groupe_id IS NOT NULL GROUP BY batiment_groupe_id
),
-- The group's parcels as comma-separated lists (parcel ids never hold a comma): the lake keeps one row per group.
parcels AS (
    SELECT batiment_groupe_id,
        -- sorted after aggregation: an ordered string_agg sorts inside every group, many times slower
        nullif(array_to_string(list_sort(list(parcelle_id) FILTER (WHERE parcelle_principale)), ','), '') AS parcelles_principales,
        nullif(array_to_string(list_sort(list(parcelle_id) FILTER (WHERE NOT parcelle_principale)), ','), '') AS parcelles_secondaires
    FROM bdnb_parcelles
    GROUP BY batiment_groupe_id
),
-- Lambert-93 covers metropolitan France only (x 0–1,300 km, y 6,000–7,200 km here with a margin); anything else is
-- not placed rather than placed wrongly (overseas départements use other projections).
placed AS (
    SELECT batiment_groupe_id, lambert93_lat(x, y) AS latitude, lambert93_lon(x, y) AS longitude
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
    r.parcelles_secondaires
FROM bdnb_groupe g
LEFT JOIN placed p USING (batiment_groupe_id)
LEFT JOIN ffo f USING (batiment_groupe_id)
LEFT JOIN dvf d USING (batiment_groupe_id)
LEFT JOIN parcels r USING (batiment_groupe_id);
