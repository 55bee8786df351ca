-- grain: one row per commune (current INSEE code) with at least 30 DVF × DPE crossings
-- materialized: table
-- sort: code_departement, code_commune_actuel
-- index: code_commune_actuel
-- check: unique(code_commune_actuel)
-- check: not_null(code_commune_actuel, code_departement, nb_transactions_avec_dpe, computed_at)
-- check: expression(nb_transactions_avec_dpe >= 30)
-- check: expression(pct_passoires_3ans is null or pct_passoires_3ans between 0 and 1)
-- column: code_commune_actuel: = ventes
-- column: commune: the commune name most of its matched sales carry
-- column: code_postal: the postal code most of its matched sales carry
-- column: code_departement: = ventes
-- column: nb_transactions_avec_dpe: matched sales (`dpe_ventes`) of the commune with a €/m², at least 30
-- column: prime_verte_a_vs_d: median €/m² of class A sales over class D's, minus 1 (a fraction); NULL below 30 class-D sales or without class A sales
-- column: prime_verte_b_vs_d: as `prime_verte_a_vs_d`, class B
-- column: prime_verte_f_vs_d: as `prime_verte_a_vs_d`, class F
-- column: prime_verte_g_vs_d: as `prime_verte_a_vs_d`, class G
-- column: nb_passoires_3ans: matched sales since 2022 whose diagnostic is class F or G
-- column: pct_passoires_3ans: `nb_passoires_3ans` over the matched sales since 2022 (a fraction, 0–1); NULL without such a sale
-- column: computed_at: when the marts were built
-- Precomputed for GET /v1/dpe/commune-stats from the matched sales (dpe_ventes); per-class prices in
-- dpe_communes_classes. prime_verte: median €/m² of a class over class D's, minus 1, when class D has at least 30 sales
-- (the rule of /v1/dpe/prix-par-classe). Passoires: classes F and G among the crossings of sales since 2022.
with matched as (
    select * from {{ ref('dpe_ventes') }} where prix_m2 is not null
),

per_commune as (
    select code_commune_actuel, any_value(code_departement) as code_departement, mode(commune) as commune,
        mode(code_postal) as code_postal, count(*) as nb_transactions_avec_dpe,
        count(*) filter (annee >= 2022) as nb_depuis_2022,
        count(*) filter (annee >= 2022 and classe_energie in ('F', 'G')) as nb_passoires_3ans,
        count(*) filter (classe_energie = 'D') as nb_d,
        median(prix_m2) filter (classe_energie = 'D') as med_d,
        median(prix_m2) filter (classe_energie = 'A') as med_a,
        median(prix_m2) filter (classe_energie = 'B') as med_b,
        median(prix_m2) filter (classe_energie = 'F') as med_f,
        median(prix_m2) filter (classe_energie = 'G') as med_g
    from matched
    group by code_commune_actuel
    having count(*) >= 30
),

final as (
    select code_commune_actuel, commune, code_postal, code_departement, nb_transactions_avec_dpe,
        case when nb_d >= 30 then med_a / med_d - 1 end as prime_verte_a_vs_d,
        case when nb_d >= 30 then med_b / med_d - 1 end as prime_verte_b_vs_d,
        case when nb_d >= 30 then med_f / med_d - 1 end as prime_verte_f_vs_d,
        case when nb_d >= 30 then med_g / med_d - 1 end as prime_verte_g_vs_d,
        nb_passoires_3ans,
        case when nb_depuis_2022 > 0 then nb_passoires_3ans / nb_depuis_2022 end as pct_passoires_3ans,
        current_timestamp as computed_at
    from per_commune
)

select * from final
