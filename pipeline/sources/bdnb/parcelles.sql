-- BDNB `rel_batiment_groupe_parcelle` (the typed rows of stage_rel_parcelle.sql) → one row per building group: its
-- parcels as comma-separated sorted lists (parcel ids never hold a comma), those whose main group it is
-- (`parcelle_principale` true on any row of the pair), then the others.
CREATE OR REPLACE TEMP TABLE bdnb_groupe_parcelles AS
SELECT batiment_groupe_id,
    -- sorted after aggregation: an ordered aggregate sorts inside every group, many times slower
    nullif(array_to_string(list_sort(list(parcelle_id) FILTER (WHERE parcelle_principale)), ','), '') AS parcelles_principales,
    nullif(array_to_string(list_sort(list(parcelle_id) FILTER (WHERE NOT parcelle_principale)), ','), '') AS parcelles_secondaires
FROM (
    SELECT batiment_groupe_id, parcelle_id, bool_or(coalesce(parcelle_principale, false)) AS parcelle_principale
    FROM ({{rel}}) r
    WHERE batiment_groupe_id IS NOT NULL AND parcelle_id IS NOT NULL
    GROUP BY ALL
)
GROUP BY batiment_groupe_id;
