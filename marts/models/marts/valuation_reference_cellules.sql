-- grain: one row per 0.01° cell (floor of latitude × 100, floor of longitude × 100) holding sales of valuation_ventes
-- materialized: table
-- sort: cell_lat, cell_lon
-- check: unique(cell_lat, cell_lon)
-- check: not_null(cell_lat, cell_lon, code_departement, nb_ventes, derniere_date)
-- check: expression(nb_ventes > 0)
-- check: relationships(code_departement, ventes_horizon_departements.code_departement)
-- column: cell_lat: `floor(latitude × 100)`: the cell's row in a grid of 0.01°
-- column: cell_lon: `floor(longitude × 100)`: the cell's column
-- column: code_departement: the département holding most of the cell's sales of `valuation_ventes` (ties: the smallest code)
-- column: nb_ventes: sales of `valuation_ventes` in the cell, all départements
-- column: derniere_date: = ventes_horizon_departements
-- The valuation horizon's département (lib/valuation/reference.ts) is read here in one point lookup: the département
-- holding most of the cell's sales (ties: the smallest code), with its latest loaded sale. A subject in a cell
-- without sales falls back to its nearest sale. At France scale: about 290,000 cells.
with counted as (
    select floor(latitude * 100)::INTEGER as cell_lat, floor(longitude * 100)::INTEGER as cell_lon, code_departement,
        count(*) as n
    from {{ ref('valuation_ventes') }}
    where code_departement is not null and latitude is not null and longitude is not null
    group by all
),

cells as (
    select cell_lat, cell_lon, first(code_departement order by n desc, code_departement) as code_departement,
        sum(n)::BIGINT as nb_ventes
    from counted
    group by all
),

final as (
    select c.cell_lat, c.cell_lon, c.code_departement, c.nb_ventes, h.derniere_date
    from cells c
    join {{ ref('ventes_horizon_departements') }} h using (code_departement)
)

select * from final
