-- grain: one row per sale of ventes matched to a BDNB building group
-- materialized: table
-- sort: code_departement, code_postal, date_mutation
-- index: id
-- check: unique(id)
-- check: not_null(id, batiment_groupe_id, match_method)
-- check: accepted_values(match_method, 'parcelle', 'distance')
-- check: expression(match_method = 'parcelle' or match_distance_m <= 200)
-- check: relationships(id, ventes.id)
-- check: relationships(batiment_groupe_id, bdnb_batiments.batiment_groupe_id)
-- column: id: = ventes
-- column: batiment_groupe_id: the matched building group (`bdnb_batiments.batiment_groupe_id`)
-- column: match_method: `parcelle` (a group of the sale's parcel: the one whose main parcel it is first, then the largest footprint) or `distance` (the nearest group within 200 m)
-- column: match_distance_m: metres from the sale's point to the group's centroid, whatever the method, rounded to 0.1; NULL when either has no point
-- column: code_departement: = ventes
-- column: code_postal: = ventes
-- column: code_commune_actuel: = ventes
-- column: latitude: = ventes
-- column: longitude: = ventes
-- column: type_local: = ventes
-- column: prix_m2: = ventes
-- column: date_mutation: = ventes
-- column: is_bulk_sale: = ventes
-- column: is_outlier: = ventes
-- column: is_vefa: = ventes
-- column: annee_construction: = bdnb_batiments
-- column: tranche: = bdnb_batiments
-- column: mat_mur_txt: = bdnb_batiments
-- DVF × BDNB: each sale → one building group. First the parcel relation (the sale's id_parcelle → the groups on that
-- parcel, the one whose main parcel it is first, then the largest footprint); else the nearest group within 200 m
-- of the sale's point. The nearest-neighbour search buckets both sides in grids of cells at least as wide as the
-- radius searched (the grid_cells macro, lib/distance.ts) and compares a sale only with the groups of its 3 × 3 block
-- of cells: never a cross join.
-- Rules in docs/data.md.
with sales as (
    select id, id_parcelle, latitude, longitude, code_departement, code_postal, code_commune_actuel, type_local,
        prix_m2, date_mutation, is_bulk_sale, is_outlier, is_vefa
    from {{ ref('ventes') }}
),

-- A group is carried through the search by its row number in bdnb_batiments (`rowid`, in the mart's order:
-- département, commune, id), not by its 22-character id: the per-sale choices below are arg_min aggregates whose value
-- and key are then fixed-size integers. With string values and struct keys, every aggregate state allocates its own
-- copy outside DuckDB's spillable memory: at France scale (20 M sales × 35.7 M groups) that reached the 8 GB limit
-- (docs/performance.md).
bat as (
    select rowid as bat_row, batiment_groupe_id, latitude, longitude, s_geom_groupe from {{ ref('bdnb_batiments') }}
),

-- computed once, read twice below (the matches, and the sales left for the distance search)
-- The choices per sale are aggregates (arg_min over a sort key), not row_number() windows: a hash aggregate per sale
-- instead of sorting millions of candidate rows by sale.
by_parcel as materialized (
    select s.id,
        -- the group whose main parcel it is first, then the largest footprint (to the cm², unknown last), then the
        -- first in the mart's order (the smallest id of the commune): one HUGEINT key, 1 + 47 + 40 bits
        arg_min(b.bat_row, ((not r.parcelle_principale)::HUGEINT << 87)
            + ((140737488355327 - coalesce(1 + least(greatest(round(b.s_geom_groupe * 100), 0), 140737488355000), 0))::HUGEINT << 40)
            + b.bat_row) as bat_row
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

-- Two grids (grid_cells), each with cells at least as wide as its search radius, so every group within that radius of
-- a sale lies in the sale's 3 × 3 block of cells. First 50 m: a group found within 50 m is the nearest, since any
-- nearer one is in the same block; most sales are placed there, against a few candidates each. The others then
-- search 200 m, which alone would compare each sale with 16 times more groups.
near_cells as (
    select bat_row, latitude, longitude, unnest(grid_cells(latitude, longitude, 50, 0)) as cell
    from bat
    where latitude is not null and longitude is not null
),

near as materialized (
    -- the nearest group (to the mm), then the first in the mart's order: one BIGINT key, distance_mm × 2^40 + row
    select id, arg_min(bat_row, round(distance_m * 1000)::BIGINT * 1099511627776 + bat_row) as bat_row
    from (
        select s.id, b.bat_row,
            -- haversine_m: the runner's macro (lib/distance.ts)
            haversine_m(s.latitude, s.longitude, b.latitude, b.longitude) as distance_m
        from (
            select id, latitude, longitude, unnest(grid_cells(latitude, longitude, 50, 1)) as cell
            from to_place
        ) s
        join near_cells b using (cell)
    )
    where distance_m <= 50
    group by id
),

far_cells as (
    select bat_row, latitude, longitude, unnest(grid_cells(latitude, longitude, 200, 0)) as cell
    from bat
    where latitude is not null and longitude is not null
),

far as (
    select id, arg_min(bat_row, round(distance_m * 1000)::BIGINT * 1099511627776 + bat_row) as bat_row
    from (
        select s.id, b.bat_row,
            haversine_m(s.latitude, s.longitude, b.latitude, b.longitude) as distance_m
        from (
            select t.id, t.latitude, t.longitude, unnest(grid_cells(t.latitude, t.longitude, 200, 1)) as cell
            from to_place t
            anti join near n on n.id = t.id
        ) s
        join far_cells b using (cell)
    )
    where distance_m <= 200
    group by id
),

by_distance as (
    select id, bat_row from near
    union all
    select id, bat_row from far
),

matched as (
    select id, bat_row, 'parcelle' as match_method from by_parcel
    union all
    select id, bat_row, 'distance' as match_method from by_distance
),

final as (
    select
        s.id, b.batiment_groupe_id, m.match_method,
        -- the distance from the sale's point to the group's centroid, whatever the method (null without both points)
        round(haversine_m(s.latitude, s.longitude, b.latitude, b.longitude), 1) as match_distance_m,
        s.code_departement, s.code_postal, s.code_commune_actuel, s.latitude, s.longitude, s.type_local, s.prix_m2,
        s.date_mutation, s.is_bulk_sale, s.is_outlier, s.is_vefa,
        b.annee_construction, b.tranche, b.mat_mur_txt
    from matched m
    join sales s using (id)
    join {{ ref('bdnb_batiments') }} b on b.rowid = m.bat_row
)

select * from final
