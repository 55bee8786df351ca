-- grain: one row per département, type selection and month with clean sales (not bulk, outlier or VEFA)
-- materialized: table
-- sort: code_departement, selection, mois
-- check: unique(code_departement, selection, mois)
-- check: not_null(code_departement, selection, mois, nb_ventes)
-- check: accepted_values(selection, 'Maison', 'Appartement', 'Local commercial', 'Terrain', 'Dépendance', 'sauf_terrain')
-- check: expression(nb_ventes > 0)
-- column: code_departement: = ventes
-- column: selection: the sales counted: one `type_local`, or `sauf_terrain` (every type except land, the analytics endpoints' default)
-- column: mois: first day of the month
-- column: nb_ventes: clean sales (not bulk, outlier or VEFA) of the selection in the département and month
-- column: prix_m2_median: median `prix_m2` (€/m², interpolated) of those sales that have one; NULL when none has (land, outbuildings)
-- A median cannot be combined from smaller zones, so market-activity's monthly median €/m² of a whole département
-- (hundreds of thousands of sales over 5 years at France scale) is precomputed here, exact, for each selection the
-- API offers: one type, or 'sauf_terrain' (every type except land, the default of the analytics endpoints).
with clean as (
    select code_departement, type_local, date_trunc('month', date_mutation)::DATE as mois, prix_m2
    from {{ ref('ventes') }}
    where not is_bulk_sale and not is_outlier and not is_vefa
),

per_type as (
    select code_departement, type_local as selection, mois, count(*) as nb_ventes, median(prix_m2) as prix_m2_median
    from clean
    group by all
),

except_land as (
    select code_departement, 'sauf_terrain' as selection, mois, count(*) as nb_ventes, median(prix_m2) as prix_m2_median
    from clean
    where type_local in ('Maison', 'Appartement', 'Local commercial', 'Dépendance')
    group by all
),

final as (
    select * from per_type
    union all
    select * from except_land
)

select * from final
