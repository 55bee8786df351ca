-- grain: one row per active establishment (SIRET) of the seven business types that has a position
-- materialized: table
-- sort: latitude, longitude
-- check: unique(siret)
-- check: not_null(siret, siren, naf_code, business_type, code_departement, latitude, longitude, is_siege, diffusion_partielle)
-- check: accepted_values(business_type, 'agence', 'notaire', 'promoteur', 'gestionnaire', 'marchand', 'courtier', 'bailleur')
-- check: expression(not diffusion_partielle or (adresse is null and position_precision = 'commune'))
-- The SIRENE snapshot's establishments as businesses/search serves them. Sorted by latitude so that the search's
-- bounding box prunes row groups; partially diffusible ones carry commune-level information only (the check above
-- fails the build otherwise: docs/decisions.md, Businesses).
with final as (
    select
        siret, siren, denomination, naf_code, business_type, adresse, code_postal, code_commune, commune,
        code_departement, latitude, longitude, position_precision, date_creation, is_siege, diffusion_partielle
    from {{ source('sirene') }}
    where latitude is not null and longitude is not null
)

select * from final
