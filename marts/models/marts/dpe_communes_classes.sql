-- grain: one row per commune of dpe_communes and energy class with at least one matched sale
-- materialized: table
-- sort: code_commune_actuel, classe_energie
-- check: unique(code_commune_actuel, classe_energie)
-- check: not_null(code_commune_actuel, classe_energie, nb, prix_m2_median)
-- check: accepted_values(classe_energie, 'A', 'B', 'C', 'D', 'E', 'F', 'G')
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
