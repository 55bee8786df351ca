-- grain: one row per département: the day of its latest loaded sale (the end of DVF's publication horizon there)
-- materialized: table
-- check: unique(code_departement)
-- check: not_null(code_departement, derniere_date)
-- column: code_departement: = ventes
-- column: derniere_date: day of the département's latest loaded sale (any type): where its valuation horizon ends when that is before today
-- The valuation horizon (max_age_months) ends at this day when it is earlier than today (docs/decisions.md): DVF is
-- published months after the sales, so a horizon ending today would hold few or no sales.
with final as (
    select code_departement, max(date_mutation)::DATE as derniere_date
    from {{ ref('ventes') }}
    where code_departement is not null
    group by code_departement
)

select * from final
