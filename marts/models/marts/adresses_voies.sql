-- grain: one row per postal code and DVF street name that has sales in adresses_ventes
-- materialized: table
-- sort: code_postal, voie_cle
-- check: unique(code_postal, adresse_nom_voie)
-- check: not_null(code_postal, adresse_nom_voie, voie_cle)
-- check: relationships(code_postal, adresses_ventes.code_postal)
-- column: code_postal: = ventes
-- column: adresse_nom_voie: = ventes
-- column: voie_cle: = adresses_ventes
-- column: ventes: number of sales of `adresses_ventes` on that street in that postal code
-- The streets of each postal code with their matching key: GET /v1/property-history looks the asked street up here
-- (a few hundred rows per postal code) before reading any sale.
with final as (
    select code_postal, adresse_nom_voie, voie_cle, count(*) as ventes
    from {{ ref('adresses_ventes') }}
    where code_postal is not null and adresse_nom_voie is not null
    group by all
)
select * from final
