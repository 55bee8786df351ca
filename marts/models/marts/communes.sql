-- grain: one row per current commune or arrondissement municipal (COG of the pinned découpage-administratif vintage)
-- materialized: table
-- sort: departement, code
-- check: unique(code)
-- check: not_null(code, nom, nom_normalise, departement, type)
-- check: accepted_values(type, 'commune-actuelle', 'arrondissement-municipal')
with final as (
    select code, nom, nom_normalise, departement, type, parent, codes_postaux, population
    from {{ source('reference', 'communes') }}
)
select * from final
