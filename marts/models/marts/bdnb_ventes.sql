-- grain: one row per sale of ventes matched to a BDNB building group
-- materialized: table
-- sort: code_departement, code_postal, date_mutation
-- index: id
-- check: unique(id)
-- check: not_null(id, batiment_groupe_id, match_method)
-- check: accepted_values(match_method, 'parcelle', 'distance')
-- check: expression(match_method = 'parcelle' or match_distance_m <= 200)
-- DVF × BDNB: each sale → one building group. First the parcel relation (the sale's id_parcelle → the groups on that
-- parcel, the one whose main parcel it is first, then the largest footprint); else the nearest group within 200 m
-- of the sale's point. The nearest-neighbour search buckets both sides in grids of cells at least as wide as the
-- radius searched and compares a sale only with the groups of its 3 × 3 block of cells: never a cross join.
-- Rules in docs/data.md.
with sales as (
    select id, id_parcelle, latitude, longitude, code_departement, code_postal, code_commune_actuel, type_local,
        prix_m2, date_mutation, is_bulk_sale, is_outlier, is_vefa
    from {{ ref('ventes') }}
),

bat as (
    select batiment_groupe_id, latitude, longitude, s_geom_groupe from {{ ref('bdnb_batiments') }}
),

-- computed once, read twice below (the matches, and the sales left for the distance search)
-- The choices per sale are aggregates (arg_min over a sort key), not row_number() windows: a hash aggregate per sale
-- instead of sorting millions of candidate rows by sale.
by_parcel as materialized (
    select s.id,
        -- the group whose main parcel it is first, then the largest footprint (unknown last), then the smallest id
        arg_min(r.batiment_groupe_id, (not r.parcelle_principale, coalesce(-b.s_geom_groupe, 'infinity'::double), r.batiment_groupe_id)) as batiment_groupe_id
    from sales s
    join {{ ref('stg_bdnb_parcelles') }} r on r.parcelle_id = s.id_parcelle
    join bat b on b.batiment_groupe_id = r.batiment_groupe_id
    group by s.id
),

-- The sales left for the distance search (a point, no parcel match).
to_place as materialized (
    select s.id, s.latitude, s.longitude
    from sales s
    anti join by_parcel p on p.id = s.id
    where s.latitude is not null and s.longitude is not null
),

-- Two grids, both with cells at least as wide as their search radius, so every group within that radius of a sale
-- lies in the sale's 3 × 3 block of cells (longitude cells are sized for 51.1° N, the north of metropolitan France,
-- and are wider further south). First 50 m (0.00045° × 0.000725°): a group found within 50 m is the nearest, since
-- any nearer one is in the same block; most sales are placed there, against a few candidates each. The others then
-- search 200 m (0.0018° × 0.0029°), which alone would compare each sale with 16 times more groups.
near_cells as (
    select batiment_groupe_id, latitude, longitude,
        floor(latitude / 0.00045)::bigint as cy, floor(longitude / 0.000725)::bigint as cx
    from bat
    where latitude is not null and longitude is not null
),

near as materialized (
    -- the nearest group (then the smallest id)
    select id, arg_min(batiment_groupe_id, (distance_m, batiment_groupe_id)) as batiment_groupe_id
    from (
        select s.id, b.batiment_groupe_id,
            -- haversine_m: the runner's macro (lib/distance.ts)
            haversine_m(s.latitude, s.longitude, b.latitude, b.longitude) as distance_m
        from (
            select id, latitude, longitude,
                floor(latitude / 0.00045)::bigint + dy.d as cy, floor(longitude / 0.000725)::bigint + dx.d as cx
            from to_place
            cross join (values (-1), (0), (1)) dy(d)
            cross join (values (-1), (0), (1)) dx(d)
        ) s
        join near_cells b using (cy, cx)
    )
    where distance_m <= 50
    group by id
),

far_cells as (
    select batiment_groupe_id, latitude, longitude,
        floor(latitude / 0.0018)::bigint as cy, floor(longitude / 0.0029)::bigint as cx
    from bat
    where latitude is not null and longitude is not null
),

far as (
    select id, arg_min(batiment_groupe_id, (distance_m, batiment_groupe_id)) as batiment_groupe_id
    from (
        select s.id, b.batiment_groupe_id,
            haversine_m(s.latitude, s.longitude, b.latitude, b.longitude) as distance_m
        from (
            select t.id, t.latitude, t.longitude,
                floor(t.latitude / 0.0018)::bigint + dy.d as cy, floor(t.longitude / 0.0029)::bigint + dx.d as cx
            from to_place t
            anti join near n on n.id = t.id
            cross join (values (-1), (0), (1)) dy(d)
            cross join (values (-1), (0), (1)) dx(d)
        ) s
        join far_cells b using (cy, cx)
    )
    where distance_m <= 200
    group by id
),

by_distance as (
    select id, batiment_groupe_id from near
    union all
    select id, batiment_groupe_id from far
),

matched as (
    select id, batiment_groupe_id, 'parcelle' as match_method from by_parcel
    union all
    select id, batiment_groupe_id, 'distance' as match_method from by_distance
),

final as (
    select
        s.id, m.batiment_groupe_id, m.match_method,
        -- the distance from the sale's point to the group's centroid, whatever the method (null without both points)
        round(haversine_m(s.latitude, s.longitude, b.latitude, b.longitude), 1) as match_distance_m,
        s.code_departement, s.code_postal, s.code_commune_actuel, s.latitude, s.longitude, s.type_local, s.prix_m2,
        s.date_mutation, s.is_bulk_sale, s.is_outlier, s.is_vefa,
        b.annee_construction, b.tranche, b.mat_mur_txt
    from matched m
    join sales s using (id)
    join {{ ref('bdnb_batiments') }} b using (batiment_groupe_id)
)

select * from final
