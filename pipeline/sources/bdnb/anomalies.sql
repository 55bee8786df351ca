-- Counts of what the staging of one département set aside or could not read (the manifest's anomalies).
SELECT
    (SELECT count(*) FROM bdnb_groupe_raw) AS rows_read,
    (SELECT count(*) FROM bdnb_groupe_raw WHERE batiment_groupe_id IS NULL) AS missing_batiment_groupe_id,
    (SELECT count(*) - count(DISTINCT batiment_groupe_id) FROM bdnb_groupe_raw WHERE batiment_groupe_id IS NOT NULL) AS duplicate_batiment_groupe_id,
    (SELECT count(*) FILTER (unparsable_s_geom_groupe) FROM bdnb_groupe_raw) AS unparsable_s_geom_groupe,
    (SELECT count(*) FILTER (geom_groupe IS NULL) FROM bdnb_groupe_raw WHERE batiment_groupe_id IS NOT NULL) AS missing_geometry,
    -- a geometry that was present but gave no point: unparsable WKT, or outside the Lambert-93 range
    (SELECT count(*) FROM bdnb_batiments b JOIN (SELECT DISTINCT batiment_groupe_id FROM bdnb_groupe_raw WHERE geom_groupe IS NOT NULL) USING (batiment_groupe_id)
       WHERE b.latitude IS NULL) AS unplaced_geometry,
    (SELECT count(*) FILTER (unparsable_annee_construction) FROM bdnb_ffo_raw) AS unparsable_annee_construction,
    (SELECT count(*) FROM bdnb_batiments WHERE annee_construction IS NULL) AS missing_annee_construction,
    (SELECT count(*) FROM (SELECT DISTINCT batiment_groupe_id FROM bdnb_parcelles) r ANTI JOIN bdnb_batiments USING (batiment_groupe_id)) AS relation_unknown_group
