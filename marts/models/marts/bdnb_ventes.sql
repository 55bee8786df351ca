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
-- of the sale's point. The nearest-neighbour search buckets both sides in a grid of cells at least 200 m wide and
-- compares a sale only with the groups of its 3 × 3 block of cells: never a cross join. Rules in docs/data.md.
with sales as (
    select id, id_parcelle, latitude, longitude, code_departement, code_postal, code_commune_actuel, type_local,
        prix_m2, date_mutation, is_bulk_sale, is_outlier, is_vefa
    from {{ ref('ventes') }}
),

bat as (
    select batiment_groupe_id, latitude, longitude, s_geom_groupe from {{ ref('bdnb_batiments') }}
),

-- computed once, read twice below (the matches, and the sales left for the distance search)
by_parcel as materialized (
    select s.id, r.batiment_groupe_id
    from sales s
    join {{ ref('stg_bdnb_parcelles') }} r on r.parcelle_id = s.id_parcelle
    join bat b on b.batiment_groupe_id = r.batiment_groupe_id
    qualify row_number() over (
        partition by s.id order by r.parcelle_principale desc, b.s_geom_groupe desc nulls last, r.batiment_groupe_id
    ) = 1
),

-- Cells of 0.0018° of latitude (200.4 m) by 0.0029° of longitude (≥ 200 m up to 51.1° N, the north of metropolitan
-- France; wider further south), so every group within 200 m of a sale lies in the sale's cell or a neighbouring one.
bat_cells as (
    select batiment_groupe_id, latitude, longitude,
        floor(latitude / 0.0018)::bigint as cy, floor(longitude / 0.0029)::bigint as cx
    from bat
    where latitude is not null and longitude is not null
),

sale_cells as (
    select s.id, s.latitude, s.longitude,
        floor(s.latitude / 0.0018)::bigint + dy.d as cy, floor(s.longitude / 0.0029)::bigint + dx.d as cx
    from sales s
    anti join by_parcel p on p.id = s.id
    cross join (values (-1), (0), (1)) dy(d)
    cross join (values (-1), (0), (1)) dx(d)
    where s.latitude is not null and s.longitude is not null
),

candidates as (
    select s.id, b.batiment_groupe_id,
        -- haversine on the mean Earth radius, as lib/distance.ts
        2 * 6371008.8 * asin(sqrt(pow(sin(radians(b.latitude - s.latitude) / 2), 2)
            + cos(radians(s.latitude)) * cos(radians(b.latitude)) * pow(sin(radians(b.longitude - s.longitude) / 2), 2))) as distance_m
    from sale_cells s
    join bat_cells b using (cy, cx)
),

by_distance as (
    select id, batiment_groupe_id, distance_m
    from candidates
    where distance_m <= 200
    qualify row_number() over (partition by id order by distance_m, batiment_groupe_id) = 1
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
        round(2 * 6371008.8 * asin(sqrt(pow(sin(radians(b.latitude - s.latitude) / 2), 2)
              + cos(radians(s.latitude)) * cos(radians(b.latitude)) * pow(sin(radians(b.longitude - s.longitude) / 2), 2))), 1) as match_distance_m,
        s.code_departement, s.code_postal, s.code_commune_actuel, s.latitude, s.longitude, s.type_local, s.prix_m2,
        s.date_mutation, s.is_bulk_sale, s.is_outlier, s.is_vefa,
        b.annee_construction, b.tranche, b.mat_mur_txt
    from matched m
    join sales s using (id)
    join {{ ref('bdnb_batiments') }} b using (batiment_groupe_id)
)

select * from final
