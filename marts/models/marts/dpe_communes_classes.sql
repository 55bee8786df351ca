-- grain: one row per commune of dpe_communes and energy class with at least one matched sale
-- materialized: table
-- sort: code_commune_actuel, classe_energie
-- check: unique(code_commune_actuel, classe_energie)
-- check: not_null(code_commune_actuel, classe_energie, nb, prix_m2_median)
-- check: accepted_values(classe_energie, 'A', 'B', 'C', 'D', 'E', 'F', 'G')
-- check: relationships(code_commune_actuel, dpe_communes.code_commune_actuel)
-- column: code_commune_actuel: = ventes
-- column: classe_energie: energy class `A`–`G` of the matched diagnostics
-- column: nb: matched sales (`dpe_ventes`) of the class with a €/m²
-- column: prix_m2_median: their median `prix_m2` (€/m², interpolated)
-- column: prix_m2_p25: first quartile of their `prix_m2` (€/m², interpolated)
-- column: prix_m2_p75: third quartile of their `prix_m2` (€/m², interpolated)
-- Prices per m² of the matched sales of each class, for GET /v1/dpe/commune-stats (quartiles: continuous).
with final as (
    select v.code_commune_actuel, v.classe_energie, count(*) as nb,
        median(v.prix_m2) as prix_m2_median,
        quantile_cont(v.prix_m2, 0.25) as prix_m2_p25,
        quantile_cont(v.prix_m2, 0.75) as prix_m2_p75
    from {{ ref('dpe_ventes') }} v
    join {{ ref('dpe_communes') }} c using (code_commune_actuel)
    where v.prix_m2 is not null and v.classe_energie is not null
    group by all
)

select * from final
