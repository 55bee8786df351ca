-- grain: one row per (département, type key, construction-age bracket), plus one zone row (tranche null) per département and type key
-- materialized: table
-- sort: code_departement, type_key
-- check: not_null(code_departement, type_key, nb)
-- check: accepted_values(type_key, 'Maison', 'Appartement', 'all')
-- column: code_departement: = ventes
-- column: type_key: `Maison`, `Appartement`, or `all` (both)
-- column: tranche: the construction bracket (as `bdnb_batiments.tranche`) of the sales' matched buildings; NULL on the zone row (every clean sale, matched or not)
-- column: nb: clean sales (houses or flats, no bulk, outlier or VEFA sale, a €/m²) of the row
-- column: med: their median `prix_m2` (€/m², interpolated)
-- column: avg: their mean `prix_m2` (€/m²)
-- The figures of /v1/bdnb/age-stats over a whole département, precomputed for its three type choices (Maison,
-- Appartement, both = 'all'): a code_departement query reads these rows instead of taking medians over up to a
-- million sales at each call. Same clean sales as the endpoint's query (api/routes/bdnb/common.ts): houses and flats,
-- no bulk sale, outlier or off-plan sale, a €/m². The zone row: every such sale of the département (matched or
-- not, from ventes); the bracket rows: those matched to a building with a construction year (bdnb_ventes).
with zone_sales as (
    select code_departement, type_local, prix_m2 from {{ ref('ventes') }}
    where type_local in ('Maison', 'Appartement') and not is_bulk_sale and not is_outlier and not is_vefa and prix_m2 is not null
),

matched as (
    select code_departement, type_local, tranche, prix_m2 from {{ ref('bdnb_ventes') }}
    where type_local in ('Maison', 'Appartement') and not is_bulk_sale and not is_outlier and not is_vefa and prix_m2 is not null
        and tranche is not null
)

select code_departement, type_local as type_key, null::varchar as tranche, count(*) as nb, median(prix_m2) as med, avg(prix_m2) as avg
from zone_sales group by all
union all
select code_departement, 'all', null, count(*), median(prix_m2), avg(prix_m2) from zone_sales group by code_departement
union all
select code_departement, type_local, tranche, count(*), median(prix_m2), avg(prix_m2) from matched group by all
union all
select code_departement, 'all', tranche, count(*), median(prix_m2), avg(prix_m2) from matched group by code_departement, tranche
