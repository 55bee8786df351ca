-- Counts of what the staging of one département set aside or could not read (the manifest's anomalies), besides those
-- taken from bdnb_groupe_raw before the join (rows read, ids missing or repeated, areas unparsable, geometries missing).
SELECT
    -- a geometry that was present but gave no point: unparsable WKT, or outside the Lambert-93 range
    count(*) FILTER (_has_geometry AND latitude IS NULL) AS unplaced_geometry,
    (SELECT count(*) FILTER (unparsable_annee_construction) FROM bdnb_ffo_raw) AS unparsable_annee_construction,
    count(*) FILTER (annee_construction IS NULL) AS missing_annee_construction,
    -- groups of the parcel relation that batiment_groupe does not list
    (SELECT count(*) FROM bdnb_groupe_parcelles) - count(*) FILTER (_has_relation) AS relation_unknown_group
FROM bdnb_batiments
