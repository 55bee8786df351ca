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
-- then the nearest. Replaced diagnostics never match.
-- The spatial join runs on distinct points (a building's flats, a house's resales share the parcel's point; a
-- building's diagnostics share their BAN address point): each pair of points within 50 m is found once, then expanded
-- to its sales and diagnostics. Points are bucketed in a grid of cells 0.00047° of latitude (52.3 m) by 0.00075° of
-- longitude (52.2 m at 51.2° N, the north of metropolitan France; wider further south and overseas), so every point
-- within 50 m of another lies in the 3 × 3 block of cells around it: no cross join. A bounding-box test, cheaper than
-- the haversine, drops most of the block's points first.
with sales as (
    select id, date_mutation, annee, type_local, valeur_fonciere, prix_m2, surface_reelle_bati, id_parcelle,
        latitude, longitude, code_postal, code_commune_actuel, commune, code_departement,
        case type_local when 'Maison' then 'maison' else 'appartement' end as kind
    from {{ ref('ventes') }}
    where type_local in ('Maison', 'Appartement') and not is_bulk_sale and not is_outlier and not is_vefa
      and latitude is not null and longitude is not null and surface_reelle_bati > 0
),

diagnostics as (
    select dpe_id, date_etablissement_dpe, avant_reforme_2021, classe_energie, surface_habitable, type_batiment,
        id_parcelle, latitude, longitude
    from {{ ref('dpe_diagnostics') }}
    where not est_remplace and latitude is not null and longitude is not null and type_batiment in ('maison', 'appartement')
),

sale_points as materialized (
    -- lon_tol: half the width, in degrees of longitude, of a 50 m square around the point (1 % margin)
    select latitude, longitude, 50.5 / (111195 * cos(radians(latitude))) as lon_tol
    from sales
    group by all
),

diag_points as materialized (
    select latitude, longitude, floor(latitude / 0.00047)::bigint as cy, floor(longitude / 0.00075)::bigint as cx
    from diagnostics
    group by all
),

point_pairs as materialized (
    select s_lat, s_lon, d_lat, d_lon, distance_m
    from (
        select s.latitude as s_lat, s.longitude as s_lon, d.latitude as d_lat, d.longitude as d_lon,
            -- haversine_m: the runner's macro (lib/distance.ts)
            haversine_m(s.latitude, s.longitude, d.latitude, d.longitude) as distance_m
        from (
            select latitude, longitude, lon_tol,
                floor(latitude / 0.00047)::bigint + dy.d as cy, floor(longitude / 0.00075)::bigint + dx.d as cx
            from sale_points, (values (-1), (0), (1)) dy(d), (values (-1), (0), (1)) dx(d)
        ) s
        join diag_points d using (cy, cx)
        where abs(d.latitude - s.latitude) <= 0.000455 and abs(d.longitude - s.longitude) <= s.lon_tol
    )
    where distance_m <= 50
),

candidates as (
    -- every diagnostic of the same kind of dwelling within 50 m of the sale and valid at its date
    select s.id, s.date_mutation, d.dpe_id, d.date_etablissement_dpe, d.classe_energie, d.avant_reforme_2021, p.distance_m,
        (d.surface_habitable - s.surface_reelle_bati) / s.surface_reelle_bati * 100 as surface_gap_pct,
        coalesce(d.id_parcelle = s.id_parcelle and (s.kind = 'maison' or abs(surface_gap_pct) <= 35), false) as cadastre
    from point_pairs p
    join sales s on s.latitude = p.s_lat and s.longitude = p.s_lon
    join diagnostics d on d.latitude = p.d_lat and d.longitude = p.d_lon and d.type_batiment = s.kind
    where d.date_etablissement_dpe <= s.date_mutation + interval 90 day
      and d.date_etablissement_dpe >= s.date_mutation - interval 10 year
),

best as (
    -- arg_min over the rule's order rather than a window: a hash aggregate, no sort of every candidate
    select id, arg_min(
            {'dpe_id': dpe_id, 'date_etablissement_dpe': date_etablissement_dpe, 'classe_energie': classe_energie,
             'avant_reforme_2021': avant_reforme_2021, 'cadastre': cadastre, 'distance_m': distance_m, 'surface_gap_pct': surface_gap_pct},
            (not cadastre, date_etablissement_dpe > date_mutation, abs(date_diff('day', date_etablissement_dpe, date_mutation)), distance_m, dpe_id)
        ) as m
    from candidates
    where cadastre or abs(surface_gap_pct) <= 35
    group by id
),

final as (
    select s.id, s.date_mutation, s.annee, s.type_local, s.valeur_fonciere, s.prix_m2, s.surface_reelle_bati,
        s.code_postal, s.code_commune_actuel, s.commune, s.code_departement,
        b.m.dpe_id, b.m.classe_energie, b.m.date_etablissement_dpe, b.m.avant_reforme_2021,
        case when b.m.cadastre then 'cadastre' else 'proximity' end as methode_match,
        round(b.m.distance_m, 1) as distance_m, round(b.m.surface_gap_pct, 1) as surface_gap_pct,
        date_diff('day', b.m.date_etablissement_dpe, s.date_mutation) as jours_avant_vente
    from best b
    join sales s using (id)
)

select * from final
