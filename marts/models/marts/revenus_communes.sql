-- grain: one row per commune or arrondissement code of INSEE Filosofi (latest income vintage loaded)
-- materialized: table
-- sort: code_commune
-- index: code_commune
-- check: unique(code_commune)
-- check: not_null(code_commune, annee_revenus, revenu_median_statut)
-- check: accepted_values(revenu_median_statut, 'ok', 'secret', 'not_available', 'missing', 'unparsable')
-- check: expression((revenu_median_uc is not null) = (revenu_median_statut = 'ok'))
-- check: expression(revenu_median_uc is null or revenu_median_uc > 0)
-- column: code_commune: INSEE code as in the income vintage's geography (a commune merged since keeps its former code)
-- column: annee_revenus: income year of the vintage (the latest loaded)
-- column: revenu_median_uc: median disposable income per consumption unit (€ a year, INSEE Filosofi); NULL unless `revenu_median_statut` is `ok`
-- column: revenu_median_statut: `ok`; `secret` (statistical secrecy, published `s`); `not_available` (`nd`); `missing` (empty); `unparsable`
-- column: nb_menages_fiscaux: number of tax households; NULL when secret or not published
-- Codes are those of the vintage's geography: a commune merged since has no line under its new code (docs/data.md).
with ranked as (
    select *, row_number() over (partition by code_commune order by annee_revenus desc) as rank_vintage
    from {{ ref('stg_filosofi') }}
),

final as (
    select code_commune, annee_revenus, revenu_median_uc, revenu_median_statut, nb_menages_fiscaux
    from ranked
    where rank_vintage = 1
)

select * from final
