-- grain: one row per active establishment (SIRET) of the seven business types that has a position
-- materialized: table
-- sort: latitude, longitude
-- check: unique(siret)
-- check: not_null(siret, siren, naf_code, business_type, code_departement, latitude, longitude, is_siege, diffusion_partielle)
-- check: accepted_values(business_type, 'agence', 'notaire', 'promoteur', 'gestionnaire', 'marchand', 'courtier', 'bailleur')
-- check: expression(not diffusion_partielle or (adresse is null and position_precision = 'commune'))
-- column: siret: the establishment's SIRET (14 digits)
-- column: siren: its legal unit's SIREN (9 digits)
-- column: denomination: the name served: the legal unit's name, else the establishment's usual name or sign, else a sole trader's first and last names; for a partially diffusible establishment only a legal entity's registered name; NULL when nothing may be shown
-- column: naf_code: NAF rev. 2 activity code without its dot (`6831Z`)
-- column: business_type: one of the seven types, from the NAF code: `agence` (6831Z), `notaire` (6910Z), `promoteur` (4110A–D), `gestionnaire` (6832A/B), `marchand` (6810Z), `courtier` (6612Z), `bailleur` (6820A)
-- column: adresse: street address (number, repetition index, street type and name); NULL for a partially diffusible establishment
-- column: code_postal: postal code of the establishment
-- column: code_commune: INSEE code of its commune
-- column: commune: commune name
-- column: code_departement: département code
-- column: latitude: WGS84 latitude: the geocoded address, or the commune's reference point (the median of its fully diffusible geocoded establishments) when partially diffusible or not geocoded
-- column: longitude: WGS84 longitude, as `latitude`
-- column: position_precision: `adresse` (geocoded address) or `commune` (the commune's reference point)
-- column: date_creation: creation date of the legal unit; NULL when unknown
-- column: is_siege: the establishment is its legal unit's head office
-- column: diffusion_partielle: the establishment or its legal unit is not fully diffusible (status other than `O`): commune-level information only
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
