-- grain: one row per clean house or flat sale matched to one energy diagnostic (DVF × DPE)
-- materialized: table
-- sort: code_departement, code_postal, date_mutation
-- index: id
-- check: unique(id)
-- check: not_null(id, dpe_id, methode_match, distance_m, date_mutation, type_local, code_departement)
-- check: accepted_values(methode_match, 'cadastre', 'proximity')
-- check: accepted_values(classe_energie, 'A', 'B', 'C', 'D', 'E', 'F', 'G')
-- check: expression(distance_m <= 50)
-- check: expression(methode_match = 'cadastre' or abs(surface_gap_pct) <= 35)
-- check: expression(date_etablissement_dpe <= date_mutation + interval 90 day and date_etablissement_dpe >= date_mutation - interval 10 year)
-- Rules (specification and docs/decisions.md, "DPE"): a clean sale (the ventes cleaning: neither bulk, outlier nor
-- VEFA) of one house or flat gets at most one diagnostic of the same kind of dwelling, valid at the sale: established
-- at most 10 years before it, or at most 90 days after it. First by guarded cadastral reference: the diagnostic's
-- parcel (BAN's parcel relation) is the sale's and it lies within 50 m (for a flat, whose parcel holds many, the surface
-- must also be within ±35 %); else by proximity: within 50 m and habitable surface within ±35 % of the sold built
-- surface. Among candidates: cadastre first, then diagnostics established on or before the sale, the closest in time,
-- then the nearest. Replaced diagnostics never match. The spatial join buckets points in a grid of 75 m cells (rows
-- of constant latitude, each with its own east-west scale) and compares a point with the 3 × 3 cells around it, which
-- contain every point within 57 m anywhere in France: no cross join.
with sales as (
    select id, date_mutation, annee, type_local, valeur_fonciere, prix_m2, surface_reelle_bati, id_parcelle,
        latitude, longitude, code_postal, code_commune_actuel, commune, code_departement,
        case type_local when 'Maison' then 'maison' else 'appartement' end as kind,
        floor(latitude * 111320 / 75)::bigint as gy,
        floor(longitude * 111320 * cos(radians((floor(latitude * 111320 / 75) + 0.5) * 75 / 111320)) / 75)::bigint as gx
    from {{ ref('ventes') }}
    where type_local in ('Maison', 'Appartement') and not is_bulk_sale and not is_outlier and not is_vefa
      and latitude is not null and longitude is not null and surface_reelle_bati > 0
),

diagnostics as (
    select dpe_id, date_etablissement_dpe, avant_reforme_2021, classe_energie, surface_habitable, type_batiment,
        id_parcelle, latitude, longitude,
        floor(latitude * 111320 / 75)::bigint as gy,
        floor(longitude * 111320 * cos(radians((floor(latitude * 111320 / 75) + 0.5) * 75 / 111320)) / 75)::bigint as gx
    from {{ ref('dpe_diagnostics') }}
    where not est_remplace and latitude is not null and longitude is not null and type_batiment in ('maison', 'appartement')
),

sale_cells as (
    select s.*, s.gx + dx as cx, s.gy + dy as cy
    from sales s, (values (-1), (0), (1)) as a(dx), (values (-1), (0), (1)) as b(dy)
),

pairs as (
    -- every diagnostic of the same kind of dwelling near the sale and valid at its date
    select s.id, d.dpe_id, d.date_etablissement_dpe, s.date_mutation,
        d.id_parcelle is not null and d.id_parcelle = s.id_parcelle as same_parcel,
        s.kind,
        haversine_m(s.latitude, s.longitude, d.latitude, d.longitude) as distance_m,
        (d.surface_habitable - s.surface_reelle_bati) / s.surface_reelle_bati * 100 as surface_gap_pct
    from sale_cells s
    join diagnostics d on d.gx = s.cx and d.gy = s.cy and d.type_batiment = s.kind
    where d.date_etablissement_dpe <= s.date_mutation + interval 90 day
      and d.date_etablissement_dpe >= s.date_mutation - interval 10 year
),

candidates as (
    select *, case when same_parcel and (kind = 'maison' or abs(surface_gap_pct) <= 35) then 'cadastre' else 'proximity' end as methode_match
    from pairs
    where distance_m <= 50
      and ((same_parcel and (kind = 'maison' or abs(surface_gap_pct) <= 35)) or abs(surface_gap_pct) <= 35)
),

best as (
    select * from candidates
    qualify row_number() over (
        partition by id
        order by methode_match = 'cadastre' desc, date_etablissement_dpe <= date_mutation desc,
            abs(date_diff('day', date_etablissement_dpe, date_mutation)), distance_m, dpe_id) = 1
),

final as (
    select s.id, s.date_mutation, s.annee, s.type_local, s.valeur_fonciere, s.prix_m2, s.surface_reelle_bati,
        s.code_postal, s.code_commune_actuel, s.commune, s.code_departement,
        b.dpe_id, d.classe_energie, d.date_etablissement_dpe, d.avant_reforme_2021,
        b.methode_match, round(b.distance_m, 1) as distance_m, round(b.surface_gap_pct, 1) as surface_gap_pct,
        date_diff('day', d.date_etablissement_dpe, s.date_mutation) as jours_avant_vente
    from best b
    join sales s using (id)
    join diagnostics d using (dpe_id)
)

select * from final
