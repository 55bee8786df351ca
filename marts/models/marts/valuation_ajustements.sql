-- grain: one row per zone (département or national), type, vintage month, feature and modality: the effect of a building or energy feature on ln(€/m²)
-- materialized: table
-- sort: type_local, niveau, zone, mois
-- check: unique(niveau, zone, type_local, mois, variable, modalite)
-- check: not_null(niveau, zone, type_local, mois, variable, modalite, effet, effet_brut, nb_ventes, nb_ventes_reference)
-- check: accepted_values(niveau, 'departement', 'national')
-- check: accepted_values(type_local, 'Maison', 'Appartement')
-- check: accepted_values(variable, 'classe_dpe', 'tranche_construction')
-- check: expression(nb_ventes > 0 and nb_ventes_reference > 0 and abs(effet) <= abs(effet_brut) + 1e-9)
-- check: expression((variable = 'classe_dpe' and modalite in ('A', 'B', 'C', 'D', 'E', 'F', 'G')) or (variable = 'tranche_construction' and modalite in ('avant_1919', '1919_1945', '1946_1970', '1971_1990', '1991_2005', '2006_plus')))
-- column: niveau: `departement` or `national`
-- column: zone: the département code, or `FR` for the national row
-- column: type_local: `Maison` or `Appartement`
-- column: mois: first day of the vintage month: estimated from the sales before it only
-- column: variable: the feature: `classe_dpe` (energy class of the matched diagnostic) or `tranche_construction` (construction bracket of the matched building)
-- column: modalite: the feature's value: a class `A`–`G`, or a bracket `avant_1919` … `2006_plus`
-- column: effet: the shrunk effect on ln(€/m²), net of location, time and the other feature, relative to class D or bracket `1971_1990` (5 decimals): the estimator multiplies a comparable's €/m² by exp(effet[subject] − effet[comparable])
-- column: effet_brut: the same contrast before shrinkage (5 decimals)
-- column: effet_marginal: the contrast before shrinkage with the other feature's effect not removed (5 decimals; for the record)
-- column: nb_ventes: sales of the modality behind the row (cumulated before `mois`)
-- column: nb_ventes_reference: sales of the reference modality (D, or `1971_1990`)
-- Building and energy adjustments of the valuation estimator (lib/valuation/features.ts): a
-- comparable's €/m² × exp(effet[subject's modality] − effet[comparable's modality]) when both are known.
-- `effet` is the effect of a DPE class relative to class D, or of a construction bracket (BDNB) relative to
-- 1971_1990, on ln(€/m²) NET OF LOCATION AND TIME: each sale's residual is ln(€/m²) minus ln of its commune's indexed
-- level at its month (valuation_indice_prix; the département's where the commune has none), a level fitted on the
-- 24 months before the sale's month only. Both features are estimated jointly by backfitting, three passes over a
-- cross table of residual sums per (class, bracket): the class effects from the mean residuals, the bracket effects
-- from the residuals net of those, then the class effects again net of the brackets' (old buildings have worse
-- classes: neither effect may take the other's). Each contrast is shrunk toward 0 by n / (n + 20), n the effective
-- count of the two means' sales (1 / (1/n_modality + 1/n_reference)): 20 = σ² / τ², a residual spread σ ≈ 0.3 against
-- effects of τ ≈ 0.07 (docs/decisions.md). Residuals are clamped to ±1 (a mismatched sale must not move a mean).
-- NO LEAKAGE: row `mois` is estimated from the sales sold BEFORE `mois` only (cumulative sums up to the month before),
-- so the backtest values a target of month M with the row of M, like the price index; the API uses the row of its
-- reference date's month (the latest row when the data ends earlier). A département has rows once it has 300 sales
-- with the feature and 30 in its reference modality before `mois` (else the estimator uses the national row).
with params as (
    select 20.0 as lambda, 300 as min_dep, 30 as min_ref
),

sales as (
    select v.type_local, v.code_departement, v.classe_dpe, v.tranche_construction,
        (year(v.date_mutation) - 2000) * 12 + month(v.date_mutation) - 1 as m,
        greatest(-1, least(1, ln(v.prix_m2) - ln(coalesce(ic.prix_m2_tendance, id.prix_m2_tendance)))) as r
    from {{ ref('valuation_ventes') }} v
    left join {{ ref('valuation_indice_prix') }} ic on ic.niveau = 'commune' and ic.zone = v.code_commune_actuel
        and ic.type_local = v.type_local and ic.mois = date_trunc('month', v.date_mutation)::DATE
    left join {{ ref('valuation_indice_prix') }} id on id.niveau = 'departement' and id.zone = v.code_departement
        and id.type_local = v.type_local and id.mois = date_trunc('month', v.date_mutation)::DATE
    where not v.is_bulk_sale and (v.classe_dpe is not null or v.tranche_construction is not null)
      and coalesce(ic.prix_m2_tendance, id.prix_m2_tendance) is not null
),

-- residual sums per zone, type, month and (class, bracket) cell; '-' where the feature is unknown
monthly as (
    select 'departement' as niveau, code_departement as zone, type_local, m,
        coalesce(classe_dpe, '-') as c, coalesce(tranche_construction, '-') as t, count(*) as n, sum(r) as s
    from sales where code_departement is not null group by all
    union all
    select 'national', 'FR', type_local, m, coalesce(classe_dpe, '-'), coalesce(tranche_construction, '-'), count(*), sum(r)
    from sales group by all
),

cells as (
    select niveau, zone, type_local, c, t, min(m) as first_m from monthly group by all
),

-- every month from a cell's first sale (which carries that month's sums to the later rows) to the month after the
-- last sale (the vintage the API uses when its reference date is past the data)
grid as (
    select x.niveau, x.zone, x.type_local, x.c, x.t, unnest(range(x.first_m, b.last_m + 2)) as m
    from cells x cross join (select max(m) as last_m from sales) b
),

-- cumulative sums over the months BEFORE the vintage month
cumulated as (
    select g.niveau, g.zone, g.type_local, g.c, g.t, g.m,
        coalesce(sum(mo.n) over w, 0) as n, coalesce(sum(mo.s) over w, 0) as s
    from grid g
    left join monthly mo using (niveau, zone, type_local, c, t, m)
    window w as (partition by g.niveau, g.zone, g.type_local, g.c, g.t order by g.m rows between unbounded preceding and 1 preceding)
),

cross_table as (
    select * from cumulated where n > 0
),

-- pass 1: class effects from the mean residuals
class_raw as (
    select niveau, zone, type_local, m, c as modalite, sum(n) as n, sum(s) / sum(n) as mean_r
    from cross_table where c <> '-' group by all
),

class_1 as (
    select k.niveau, k.zone, k.type_local, k.m, k.modalite,
        (k.mean_r - d.mean_r) * (1.0 / (1.0 / k.n + 1.0 / d.n)) / ((1.0 / (1.0 / k.n + 1.0 / d.n)) + p.lambda) as effet
    from class_raw k join class_raw d on d.niveau = k.niveau and d.zone = k.zone and d.type_local = k.type_local
        and d.m = k.m and d.modalite = 'D'
    cross join params p
),

-- pass 2: bracket effects from the residuals net of the class effects
tranche_raw as (
    select x.niveau, x.zone, x.type_local, x.m, x.t as modalite, sum(x.n) as n,
        sum(x.s - x.n * coalesce(e.effet, 0)) / sum(x.n) as mean_r, sum(x.s) / sum(x.n) as mean_brut
    from cross_table x
    left join class_1 e on e.niveau = x.niveau and e.zone = x.zone and e.type_local = x.type_local and e.m = x.m and e.modalite = x.c
    where x.t <> '-' group by all
),

tranche_effects as (
    select k.niveau, k.zone, k.type_local, k.m, 'tranche_construction' as variable, k.modalite,
        1.0 / (1.0 / k.n + 1.0 / r.n) as n_eff,
        k.mean_r - r.mean_r as contrast, k.mean_brut - r.mean_brut as brut, k.n as nb_ventes, r.n as nb_ventes_reference
    from tranche_raw k join tranche_raw r on r.niveau = k.niveau and r.zone = k.zone and r.type_local = k.type_local
        and r.m = k.m and r.modalite = '1971_1990'
),

tranche_2 as (
    select t.*, t.contrast * t.n_eff / (t.n_eff + p.lambda) as effet from tranche_effects t cross join params p
),

-- pass 3: class effects again, from the residuals net of the bracket effects
class_raw_3 as (
    select x.niveau, x.zone, x.type_local, x.m, x.c as modalite, sum(x.n) as n,
        sum(x.s - x.n * coalesce(e.effet, 0)) / sum(x.n) as mean_r, sum(x.s) / sum(x.n) as mean_brut
    from cross_table x
    left join tranche_2 e on e.niveau = x.niveau and e.zone = x.zone and e.type_local = x.type_local and e.m = x.m and e.modalite = x.t
    where x.c <> '-' group by all
),

class_effects as (
    select k.niveau, k.zone, k.type_local, k.m, 'classe_dpe' as variable, k.modalite,
        1.0 / (1.0 / k.n + 1.0 / d.n) as n_eff,
        k.mean_r - d.mean_r as contrast, k.mean_brut - d.mean_brut as brut, k.n as nb_ventes, d.n as nb_ventes_reference
    from class_raw_3 k join class_raw_3 d on d.niveau = k.niveau and d.zone = k.zone and d.type_local = k.type_local
        and d.m = k.m and d.modalite = 'D'
),

effects as (
    select e.*, e.contrast * e.n_eff / (e.n_eff + p.lambda) as effet from class_effects e cross join params p
    union all by name
    select * from tranche_2
),

-- a département's feature is kept where it has enough sales of its own; the national row is always kept
qualified as (
    select e.* from effects e cross join params p
    qualify e.niveau = 'national'
       or (sum(e.nb_ventes) over (partition by e.niveau, e.zone, e.type_local, e.m, e.variable) >= p.min_dep
           and e.nb_ventes_reference >= p.min_ref)
),

final as (
    select niveau, zone, type_local, make_date(2000 + m // 12, m % 12 + 1, 1) as mois, variable, modalite,
        round(effet, 5) as effet,
        -- the contrast before shrinkage, and with the other feature's effect not removed (for the record)
        round(contrast, 5) as effet_brut, round(brut, 5) as effet_marginal,
        nb_ventes::INTEGER as nb_ventes, nb_ventes_reference::INTEGER as nb_ventes_reference
    from qualified
)

select * from final
