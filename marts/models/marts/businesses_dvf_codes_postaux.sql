-- grain: one row per postal code with sales: the DVF figures businesses/search adds to each result (include_dvf_stats)
-- materialized: table
-- sort: code_postal
-- check: unique(code_postal)
-- check: not_null(code_postal, date_fin, dvf_nb_mutations)
-- column: code_postal: = ventes
-- column: date_fin: the latest loaded sale of the postal code's département (the later one when it spans two): the window's last day
-- column: dvf_nb_mutations: clean house and flat sales (no bulk, outlier or VEFA; `prix_m2` known) of the postal code in the 24 months ending at `date_fin`
-- column: dvf_prix_m2_median: their median `prix_m2` (€/m², interpolated); NULL without such a sale
-- The house and flat sales of the postal code with default cleaning (no bulk sale, outlier or VEFA; prix_m2 known) in
-- the 24 months ending at the latest sale loaded for its département (DVF is published months late); a postal code
-- over two départements takes the later end. Precomputed so that the search joins ~6,000 rows instead of scanning the
-- sales (docs/performance.md).
with windows as (
    select d.code_postal, max(h.derniere_date) as date_fin
    from (select distinct code_postal, code_departement from {{ ref('ventes') }} where code_postal is not null) as d
    join {{ ref('ventes_horizon_departements') }} as h using (code_departement)
    group by d.code_postal
),

final as (
    select
        w.code_postal,
        w.date_fin,
        count(v.prix_m2)::INTEGER as dvf_nb_mutations,
        median(v.prix_m2) as dvf_prix_m2_median
    from windows as w
    left join {{ ref('ventes') }} as v
        on v.code_postal = w.code_postal
        and v.date_mutation > w.date_fin - interval 24 month and v.date_mutation <= w.date_fin
        and v.type_local in ('Maison', 'Appartement') and v.prix_m2 is not null
        and not v.is_bulk_sale and not v.is_outlier and not v.is_vefa
    group by w.code_postal, w.date_fin
)

select * from final
