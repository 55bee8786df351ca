-- The columns of `ventes` the zone statistics read, one row per sale, sorted by département then date (a zone's rows
-- close together, and in date order), with the zones
-- as small ids (their rank in the sorted list of codes: memory-codes.sql lists the same codes in the same order) and
-- the type and cleaning flags packed in one byte: type in bits 0–2 (SALE_TYPES' order), bulk 8, outlier 16, VEFA 32.
-- NULL €/m² and surfaces become NaN (typed arrays hold no NULL). Read by api/sales/memory.ts.
with deps as (
    select code_departement, (row_number() over (order by code_departement) - 1)::UTINYINT as dep_id
    from (select distinct code_departement from ventes)
),
cps as (
    select code_postal, (row_number() over (order by code_postal) - 1)::USMALLINT as cp_id
    from (select distinct code_postal from ventes where code_postal is not null)
),
communes as (
    select code_commune_actuel, (row_number() over (order by code_commune_actuel) - 1)::USMALLINT as commune_id
    from (select distinct code_commune_actuel from ventes)
)
select
    d.dep_id,
    coalesce(p.cp_id, 65535)::USMALLINT as cp_id,
    c.commune_id,
    (v.date_mutation - DATE '1970-01-01')::USMALLINT as day,
    ((case v.type_local when 'Maison' then 0 when 'Appartement' then 1 when 'Local commercial' then 2 when 'Dépendance' then 3 else 4 end)
        + 8 * coalesce(v.is_bulk_sale, false)::INTEGER
        + 16 * coalesce(v.is_outlier, false)::INTEGER
        + 32 * coalesce(v.is_vefa, false)::INTEGER)::UTINYINT as tf,
    v.valeur_fonciere,
    coalesce(v.prix_m2, 'NaN'::DOUBLE) as prix_m2,
    coalesce(v.surface_reelle_bati, 'NaN'::DOUBLE) as surface
from ventes v
join deps d using (code_departement)
join communes c using (code_commune_actuel)
left join cps p using (code_postal)
order by v.code_departement, v.date_mutation
