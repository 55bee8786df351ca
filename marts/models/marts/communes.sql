-- grain: one row per current commune or arrondissement municipal (COG of the pinned découpage-administratif vintage)
-- materialized: table
-- sort: departement, code
-- check: unique(code)
-- check: not_null(code, nom, nom_normalise, departement, type)
-- check: accepted_values(type, 'commune-actuelle', 'arrondissement-municipal')
-- check: relationships(parent, communes.code)
-- column: code: INSEE code of the commune or arrondissement municipal (current COG)
-- column: nom: official name, with accents and case
-- column: nom_normalise: the name upper case without accents or punctuation: what commune names are matched on
-- column: departement: département code
-- column: type: `commune-actuelle` or `arrondissement-municipal` (Paris, Lyon and Marseille arrondissements)
-- column: parent: for an arrondissement, its city's code (75056, 69123, 13055); NULL for a commune
-- column: codes_postaux: the postal codes serving the commune (La Poste's base; a list)
-- column: population: reference population (INSEE); NULL when the reference gives none
with final as (
    select code, nom, nom_normalise, departement, type, parent, codes_postaux, population
    from {{ source('reference', 'communes') }}
)
select * from final
