-- grain: one row per clean house or flat sale with a classed energy diagnostic within 200 m in its département
-- materialized: table
-- sort: code_departement, code_postal, date_mutation
-- check: unique(id)
-- check: not_null(id, dpe_id, classe_energie, distance_m, prix_m2, code_departement)
-- check: accepted_values(classe_energie, 'A', 'B', 'C', 'D', 'E', 'F', 'G')
-- check: expression(distance_m <= 200)
-- The looser crossing of GET /v1/stats/dpe-premium (specification): the nearest diagnostic (not replaced, class A–G)
-- within 200 m in the same département, whatever its date or dwelling. Sales share points (geo-DVF places a sale at
-- its parcel: a building's flats, the resales of a house) and so do diagnostics (a building's flats share their BAN
-- address point), so the nearest-neighbour search runs once per distinct sale point against the distinct diagnostic
-- points, then each sale takes, at its nearest point, the diagnostic established closest to it. The search buckets
-- points in grids of cells at least as wide as its radius (rules in dpe_ventes.sql) and compares a point with the
-- 3 × 3 block of cells around it, never a cross join: first cells of 52 m, where a point found within 50 m is the
-- nearest (any nearer one is in the same block); the sale points left then search cells of 205 m.
with sales as not materialized (
    -- read again where needed rather than held in memory beside the joins' hash tables (18 M rows at France scale)
    select id, date_mutation, annee, type_local, prix_m2, latitude, longitude, code_postal, code_commune_actuel, commune, code_departement
    from {{ ref('ventes') }}
    where type_local in ('Maison', 'Appartement') and not is_bulk_sale and not is_outlier and not is_vefa
      and latitude is not null and longitude is not null and prix_m2 is not null
),

diagnostics as not materialized (
    select dpe_id, classe_energie, date_etablissement_dpe, latitude, longitude, code_departement
    from {{ ref('dpe_diagnostics') }}
    where not est_remplace and classe_energie is not null and latitude is not null and longitude is not null
),

sale_points as materialized (
    -- lon_tol: half the width, in degrees of longitude, of a 200 m square around the point (a cheap test before the
    -- haversine; 1 % margin)
    select latitude, longitude, code_departement, 202 / (111195 * cos(radians(latitude))) as lon_tol
    from sales
    group by all
),

diag_points as materialized (
    select latitude, longitude, code_departement,
        floor(latitude / 0.00047)::bigint as cy, floor(longitude / 0.00075)::bigint as cx,
        floor(latitude / 0.00185)::bigint as fy, floor(longitude / 0.00295)::bigint as fx
    from diagnostics
    group by all
),

near as materialized (
    -- pass 1: the nearest point within 50 m, from the 52 m cells
    select s_lat, s_lon, code_departement, arg_min(distance_m, k) as distance_m, arg_min(d_lat, k) as d_lat, arg_min(d_lon, k) as d_lon
    from (
        select s.latitude as s_lat, s.longitude as s_lon, s.code_departement, d.latitude as d_lat, d.longitude as d_lon,
            haversine_m(s.latitude, s.longitude, d.latitude, d.longitude) as distance_m,
            -- the order of the search: the distance (to the micrometre), then a hash of the point; one number, so that
            -- the aggregate's state has a fixed size (a struct key is a blob per state: gigabytes at France scale)
            (floor(distance_m * 1e6)::hugeint << 64) + hash(d.latitude, d.longitude)::hugeint as k
        from (
            select latitude, longitude, code_departement, lon_tol,
                floor(latitude / 0.00047)::bigint + dy.d as cy, floor(longitude / 0.00075)::bigint + dx.d as cx
            from sale_points, (values (-1), (0), (1)) dy(d), (values (-1), (0), (1)) dx(d)
        ) s
        join diag_points d using (cy, cx, code_departement)
        where abs(d.latitude - s.latitude) <= 0.00046 and abs(d.longitude - s.longitude) <= s.lon_tol / 4
    )
    where distance_m <= 50
    group by all
),

far as (
    -- pass 2: the sale points pass 1 left without a diagnostic point, from the 205 m cells
    select s_lat, s_lon, code_departement, arg_min(distance_m, k) as distance_m, arg_min(d_lat, k) as d_lat, arg_min(d_lon, k) as d_lon
    from (
        select s.latitude as s_lat, s.longitude as s_lon, s.code_departement, d.latitude as d_lat, d.longitude as d_lon,
            haversine_m(s.latitude, s.longitude, d.latitude, d.longitude) as distance_m,
            -- the order of the search: the distance (to the micrometre), then a hash of the point; one number, so that
            -- the aggregate's state has a fixed size (a struct key is a blob per state: gigabytes at France scale)
            (floor(distance_m * 1e6)::hugeint << 64) + hash(d.latitude, d.longitude)::hugeint as k
        from (
            select p.latitude, p.longitude, p.code_departement, p.lon_tol,
                floor(p.latitude / 0.00185)::bigint + dy.d as fy, floor(p.longitude / 0.00295)::bigint + dx.d as fx
            from sale_points p
            anti join near n on n.s_lat = p.latitude and n.s_lon = p.longitude and n.code_departement = p.code_departement
            cross join (values (-1), (0), (1)) dy(d)
            cross join (values (-1), (0), (1)) dx(d)
        ) s
        join diag_points d using (fy, fx, code_departement)
        where abs(d.latitude - s.latitude) <= 0.00182 and abs(d.longitude - s.longitude) <= s.lon_tol
    )
    where distance_m <= 200
    group by all
),

nearest as (
    select * from near
    union all
    select * from far
),

best as (
    -- at the nearest point, the diagnostic established closest to the sale (then by a hash of its id)
    select id, any_value(distance_m) as distance_m, arg_min(dpe_id, k) as dpe_id, arg_min(classe_energie, k) as classe_energie
    from (
        select s.id, n.distance_m, d.dpe_id, d.classe_energie,
            (abs(date_diff('day', d.date_etablissement_dpe, s.date_mutation))::hugeint << 64) + hash(d.dpe_id)::hugeint as k
        from sales s
        join nearest n on n.s_lat = s.latitude and n.s_lon = s.longitude and n.code_departement = s.code_departement
        join diagnostics d on d.latitude = n.d_lat and d.longitude = n.d_lon and d.code_departement = n.code_departement
    )
    group by id
),

final as (
    select s.id, s.date_mutation, s.annee, s.type_local, s.prix_m2, s.code_postal, s.code_commune_actuel, s.commune, s.code_departement,
        b.dpe_id, b.classe_energie, round(b.distance_m, 1) as distance_m
    from best b
    join sales s using (id)
)

select * from final
