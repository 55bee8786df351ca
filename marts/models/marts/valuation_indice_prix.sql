-- grain: one row per zone (commune or département), type and month: the local price trend of the valuation estimator
-- materialized: table
-- sort: niveau, mois, zone, type_local
-- check: unique(niveau, zone, type_local, mois)
-- check: not_null(niveau, zone, type_local, mois, pente_mensuelle, prix_m2_tendance, nb_ventes_fenetre, nb_mois_fenetre)
-- check: accepted_values(niveau, 'commune', 'departement')
-- check: accepted_values(type_local, 'Maison', 'Appartement')
-- check: expression(nb_ventes_fenetre > 0 and prix_m2_tendance > 0 and abs(pente_mensuelle) <= 0.02)
-- column: niveau: `commune` or `departement`
-- column: zone: the current commune code, or the département code
-- column: type_local: `Maison` or `Appartement`
-- column: mois: first day of the month the trend is for: fitted on the 24 months before it only
-- column: pente_mensuelle: slope of the least-squares line through the monthly medians of ln(€/m²) (weighted by sales), per month, clamped to ±0.02
-- column: prix_m2_tendance: the fitted line at `mois`: the zone's indexed level, €/m²
-- column: nb_ventes_fenetre: sales in the 24-month window (at least 120 for a commune, 30 for a département)
-- column: nb_mois_fenetre: months with sales in the window (at least 12 for a commune, 6 for a département)
-- The estimator (lib/valuation) brings each comparable's €/m² to the reference date along this trend:
-- × exp(pente_mensuelle × months between the sale and the reference date), the trend of the comparable's commune,
-- else of its département. Row `mois` is fitted ONLY on the 24 months before it (`mois` itself excluded): a valuation
-- as of any day of `mois` uses no sale of that month or later, so the backtest's walk-forward stays free of leakage.
-- Sorted by level then month: the estimator reads one month of one level per valuation, so DuckDB's min/max
-- statistics skip the other months' row groups (docs/performance.md).
-- The fit is a least-squares line through the monthly medians of ln(€/m²), weighted by each month's sales count: the
-- 24-month window smooths it. A commune needs 120 sales and 12 months with sales in the window, a département 30 and
-- 6 (docs/valuation.md); the slope is clamped to ±2 % a month, beyond which a zone's trend is noise, not a market.
with sales as (
    select code_commune_actuel, code_departement, type_local, ln(prix_m2) as l,
        -- months since year 2000: small numbers keep the least-squares sums exact in DOUBLE
        (year(date_mutation) - 2000) * 12 + month(date_mutation) - 1 as m
    from {{ ref('valuation_ventes') }}
    where not is_bulk_sale
),

monthly as (
    select 'commune' as niveau, code_commune_actuel as zone, type_local, m, count(*) as n, median(l) as y
    from sales where code_commune_actuel is not null group by all
    union all
    select 'departement', code_departement, type_local, m, count(*), median(l)
    from sales where code_departement is not null group by all
),

zones as (
    -- a commune that never reaches 120 sales of a type cannot qualify: left out before the monthly grid is built;
    -- the grid starts at the first month with sales so that its sales enter the windows of the months after it
    select niveau, zone, type_local, min(m) as first_m
    from monthly group by all
    having niveau = 'departement' or sum(n) >= 120
),

grid as (
    select z.niveau, z.zone, z.type_local, unnest(range(z.first_m, b.last_m + 1)) as m
    from zones z cross join (select max(m) as last_m from sales) b
),

windowed as (
    select g.niveau, g.zone, g.type_local, g.m,
        sum(mo.n) over w as sw,
        sum(mo.n * mo.mm) over w as sx,
        sum(mo.n * mo.y) over w as sy,
        sum(mo.n * mo.mm * mo.mm) over w as sxx,
        sum(mo.n * mo.mm * mo.y) over w as sxy,
        count(mo.n) over w as months
    from grid g
    left join (select niveau, zone, type_local, m as mm, n, y from monthly) mo
        on mo.niveau = g.niveau and mo.zone = g.zone and mo.type_local = g.type_local and mo.mm = g.m
    window w as (partition by g.niveau, g.zone, g.type_local order by g.m range between 24 preceding and 1 preceding)
),

fitted as (
    select *, (sw * sxy - sx * sy) / nullif(sw * sxx - sx * sx, 0) as slope
    from windowed
    where (niveau = 'commune' and sw >= 120 and months >= 12) or (niveau = 'departement' and sw >= 30 and months >= 6)
),

final as (
    select niveau, zone, type_local, make_date(2000 + m // 12, m % 12 + 1, 1) as mois,
        greatest(-0.02, least(0.02, slope)) as pente_mensuelle,
        -- the fitted line extrapolated to the month itself: the zone's indexed €/m² level
        exp((sy - slope * sx) / sw + slope * m) as prix_m2_tendance,
        sw::INTEGER as nb_ventes_fenetre, months::INTEGER as nb_mois_fenetre
    from fitted
    where slope is not null
)

select * from final
