-- grain: one row per zone (current commune, arrondissement municipal, or whole city of Paris, Lyon or Marseille) with a sale, and per type (Maison, Appartement)
-- materialized: table
-- sort: code_insee, type_local
-- check: unique(code_insee, type_local)
-- check: not_null(code_insee, type_local, date_debut, date_fin, transactions_revente, flips_detectes, flips_cadastre, flips_adresse_surface)
-- check: expression(flips_detectes = flips_cadastre + flips_adresse_surface)
-- check: expression(flips_detectes <= transactions_revente)
-- column: code_insee: the zone's INSEE code: a current commune, an arrondissement municipal, or a whole city (75056, 69123, 13055: all its arrondissements)
-- column: type_local: `Maison` or `Appartement`
-- column: date_debut: first day of the window: `date_fin` − 24 months + 1 day
-- column: date_fin: the zone's latest sale of any type: the last day of the window
-- column: transactions_revente: clean sales (neither bulk nor outlier) of the type in the zone and window: the rate's denominator
-- column: flips_detectes: flips (`flips` rows) of the type whose resale falls in the window
-- column: flips_cadastre: those found by the `cadastre` method
-- column: flips_adresse_surface: those found by the `adresse_surface` method
-- column: marge_brute_mediane: median `marge_brute` of those flips (€, interpolated); NULL without a flip
-- column: marge_mediane_pct: median `marge_pct` (%, interpolated); NULL without a flip
-- column: duree_detention_mediane_jours: median holding in days (interpolated); NULL without a flip
-- The window of a zone is the 24 months ending at its latest sale of any type: date_fin = that day,
-- date_debut = date_fin - 24 months + 1 day. A flip belongs to the window of its resale date.
with zone_of as (
    -- every commune is its own zone; an arrondissement also belongs to its city (75056, 69123, 13055)
    select code as code_commune_actuel, code as code_insee from {{ ref('communes') }}
    union all
    select code, parent from {{ ref('communes') }} where type = 'arrondissement-municipal' and parent is not null
),

zones as (
    select z.code_insee, max(v.date_mutation) as date_fin
    from {{ ref('ventes') }} v
    join zone_of z using (code_commune_actuel)
    group by z.code_insee
),

windows as (
    select code_insee, type_local, date_fin, cast(date_fin - interval 24 month + interval 1 day as date) as date_debut
    from zones, (values ('Maison'), ('Appartement')) t(type_local)
),

-- the denominator: clean sales (neither bulk nor outlier) of the type in the window
sales as (
    select w.code_insee, w.type_local, count(v.id) as transactions_revente
    from windows w
    join zone_of z using (code_insee)
    left join {{ ref('ventes') }} v
      on v.code_commune_actuel = z.code_commune_actuel and v.type_local = w.type_local
     and v.date_mutation between w.date_debut and w.date_fin
     and not v.is_bulk_sale and not v.is_outlier
    group by w.code_insee, w.type_local
),

detected as (
    select w.code_insee, w.type_local,
        count(*) as flips_detectes,
        count(*) filter (f.methode = 'cadastre') as flips_cadastre,
        count(*) filter (f.methode = 'adresse_surface') as flips_adresse_surface,
        quantile_cont(f.marge_brute, 0.5) as marge_brute_mediane,
        quantile_cont(f.marge_pct, 0.5) as marge_mediane_pct,
        quantile_cont(f.duree_detention_jours, 0.5) as duree_detention_mediane_jours
    from windows w
    join zone_of z using (code_insee)
    join {{ ref('flips') }} f
      on f.code_commune_actuel = z.code_commune_actuel and f.type_local = w.type_local
     and f.date_revente between w.date_debut and w.date_fin
    group by w.code_insee, w.type_local
),

final as (
    select w.code_insee, w.type_local, w.date_debut, w.date_fin,
        coalesce(s.transactions_revente, 0) as transactions_revente,
        coalesce(d.flips_detectes, 0) as flips_detectes,
        coalesce(d.flips_cadastre, 0) as flips_cadastre,
        coalesce(d.flips_adresse_surface, 0) as flips_adresse_surface,
        d.marge_brute_mediane, d.marge_mediane_pct, d.duree_detention_mediane_jours
    from windows w
    left join sales s using (code_insee, type_local)
    left join detected d using (code_insee, type_local)
)

select * from final
