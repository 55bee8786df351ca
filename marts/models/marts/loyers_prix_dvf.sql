-- grain: one row per current commune (or arrondissement) and rent segment with clean DVF sales
-- materialized: table
-- sort: code_commune, segment
-- index: code_commune
-- check: unique(code_commune, segment)
-- check: not_null(code_commune, segment, transactions_count, prix_m2_median, date_debut, date_fin)
-- check: expression(prix_m2_median > 0 and date_debut <= date_fin)
-- column: code_commune: current INSEE code of the commune or arrondissement (`ventes.code_commune_actuel`)
-- column: segment: as `loyers_communes.segment`: `maison`, `appartement`, `appartement_t1_t2` (1–2 main rooms) or `appartement_t3_plus` (3 or more)
-- column: transactions_count: clean sales (not bulk, outlier or VEFA) of the segment with a €/m² in the window
-- column: prix_m2_median: their median `prix_m2` (€/m², interpolated)
-- column: date_debut: first day of the window: `date_fin` − 24 months + 1 day
-- column: date_fin: the commune's latest clean house or flat sale
-- The DVF side of the gross rental yield: the €/m² median of the clean sales (not bulk, not outlier, not VEFA) of the
-- segment over the 24 months up to the commune's latest clean house or flat sale (stats/rendement-locatif).
with clean as (
    select code_commune_actuel as code_commune, date_mutation, prix_m2, type_local, nombre_pieces_principales
    from {{ ref('ventes') }}
    where not is_bulk_sale and not is_outlier and not is_vefa and prix_m2 is not null
        and type_local in ('Appartement', 'Maison')
),

segmented as (
    select code_commune, date_mutation, prix_m2, 'maison' as segment from clean where type_local = 'Maison'
    union all
    select code_commune, date_mutation, prix_m2, 'appartement' from clean where type_local = 'Appartement'
    union all
    select code_commune, date_mutation, prix_m2, 'appartement_t1_t2' from clean
    where type_local = 'Appartement' and nombre_pieces_principales between 1 and 2
    union all
    select code_commune, date_mutation, prix_m2, 'appartement_t3_plus' from clean
    where type_local = 'Appartement' and nombre_pieces_principales >= 3
),

windows as (
    select code_commune, max(date_mutation) as date_fin,
        cast(max(date_mutation) - interval 24 month + interval 1 day as date) as date_debut
    from clean
    group by all
),

final as (
    select w.code_commune, s.segment, count(*) as transactions_count, median(s.prix_m2) as prix_m2_median,
        w.date_debut, w.date_fin
    from segmented s
    join windows w using (code_commune)
    where s.date_mutation between w.date_debut and w.date_fin
    group by all
)

select * from final
