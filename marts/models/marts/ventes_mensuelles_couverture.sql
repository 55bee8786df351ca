-- grain: one row: the months the served sales cover (the end of DVF's publication horizon, which lags by months)
-- materialized: table
-- column: premier_mois: first day of the month of the earliest sale served; NULL without sales
-- column: dernier_mois: first day of the month of the latest sale served: the last month the data covers; NULL without sales
-- Read by the analytics endpoints to end their monthly windows at the last month the data covers (null: no sales).
with final as (
    select min(date_trunc('month', date_mutation))::DATE as premier_mois,
        max(date_trunc('month', date_mutation))::DATE as dernier_mois
    from {{ ref('ventes') }}
)

select * from final
