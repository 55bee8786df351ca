-- Centroid of every BDNB footprint (WKT POLYGON / MULTIPOLYGON in Lambert-93 metres) in plain SQL, without a spatial
-- extension, so that millions of groups are placed in one vectorised pass: reads bdnb_geom(batiment_groupe_id,
-- geom_groupe), writes bdnb_centroids(batiment_groupe_id, x, y).
-- The area-weighted centroid (shoelace formula) rather than the mean of the vertices: a footprint's vertices crowd
-- where its outline is detailed (a curved façade), which would pull a vertex mean off the building. Each polygon's
-- first ring is its outline and the following ones its holes (subtracted), whatever their orientation in the file.
-- Each ring's moments are taken relative to its own first vertex, so the products stay small (Lambert-93 y ≈ 6.8e6 m)
-- and the edges from and to that vertex (the ring's closing edge included) contribute nothing; the group's centroid is
-- then the area-weighted mean of its rings' centroids. A degenerate footprint (zero area: a line, a point) falls back
-- to the mean of its vertices.
-- Two tables only (rings, then per-group sums): each materialised step costs a copy of its lists, and DuckDB would
-- repeat the string parsing at every reference of an inlined CTE.

-- One row per ring: its coordinates as one flat list of numbers (x y x y … or x y z x y z …), whether it is a
-- polygon's outline, and its stride (2, or 3-4 with Z/M coordinates, which are dropped). Plain string functions
-- (several times faster than regular expressions): `x y,x y` as GDAL and PostGIS write it is split once; spaces next
-- to commas or parentheses, and an EWKT `SRID=…;` prefix, are normalised only on the rows that have them.
CREATE OR REPLACE TEMP TABLE bdnb_rings AS
WITH stripped AS (
    SELECT batiment_groupe_id, rtrim(ltrim(substr(geom_groupe, strpos(geom_groupe, '(')), '( '), ') ') AS b FROM bdnb_geom
),
body AS (
    SELECT batiment_groupe_id,
        CASE WHEN strpos(b, ' (') + strpos(b, '( ') + strpos(b, ' )') + strpos(b, ') ') + strpos(b, ', ') + strpos(b, ' ,') + strpos(b, '  ') > 0
             THEN regexp_replace(regexp_replace(b, '\s*([(),])\s*', '\1', 'g'), '\s+', ' ', 'g') ELSE b END AS b
    FROM stripped
),
polygons AS (
    SELECT batiment_groupe_id, unnest(string_split(b, ')),((')) AS poly FROM body
),
rings AS (
    SELECT batiment_groupe_id,
        unnest(string_split(poly, '),(')) AS ring,
        generate_subscripts(string_split(poly, '),('), 1) = 1 AS outline
    FROM polygons
)
SELECT batiment_groupe_id, outline,
    -- coordinates per vertex: the spaces of the first vertex + 1
    length(split_part(ring, ',', 1)) - length(replace(split_part(ring, ',', 1), ' ', '')) + 1 AS stride,
    TRY_CAST(string_split(replace(ring, ',', ' '), ' ') AS DOUBLE[]) AS v
FROM rings;

CREATE OR REPLACE TEMP TABLE bdnb_centroids AS
WITH xy AS (
    SELECT batiment_groupe_id, outline, v[1] AS x0, v[2] AS y0,
        list_transform(list_slice(v, 1, -1, stride), x -> x - v[1]) AS xs,
        list_transform(list_slice(v, 2, -1, stride), y -> y - v[2]) AS ys
    FROM bdnb_rings
    WHERE stride BETWEEN 2 AND 4
),
crosses AS (
    -- c[i] = x[i]·y[i+1] − x[i+1]·y[i] for each edge (the closing edge ends on the origin vertex: zero)
    SELECT *, list_transform(range(1, len(xs)), i -> xs[i] * ys[i + 1] - xs[i + 1] * ys[i]) AS c
    FROM xy
),
ring AS (
    -- per ring: 2·signed area (Σ c), and Σ (x[i] + x[i+1])·c[i], Σ (y[i] + y[i+1])·c[i] (6·area·centroid)
    SELECT batiment_groupe_id, outline, x0, y0, list_sum(c) AS a2,
        list_sum(list_transform(range(1, len(xs)), i -> (xs[i] + xs[i + 1]) * c[i])) AS mx,
        list_sum(list_transform(range(1, len(xs)), i -> (ys[i] + ys[i + 1]) * c[i])) AS my,
        x0 * len(xs) + list_sum(xs) AS sum_x, y0 * len(ys) + list_sum(ys) AS sum_y, len(xs) AS n
    FROM crosses
),
g AS (
    -- outlines add, holes subtract, whatever the orientation of either; each ring's centroid is (x0, y0) + m / (3·a2)
    SELECT batiment_groupe_id,
        sum(abs(a2) * CASE WHEN outline THEN 1 ELSE -1 END) AS a,
        sum(CASE WHEN a2 <> 0 THEN abs(a2) * CASE WHEN outline THEN 1 ELSE -1 END * (x0 + mx / (3 * a2)) ELSE 0 END) AS ax,
        sum(CASE WHEN a2 <> 0 THEN abs(a2) * CASE WHEN outline THEN 1 ELSE -1 END * (y0 + my / (3 * a2)) ELSE 0 END) AS ay,
        sum(sum_x) / sum(n) AS vx, sum(sum_y) / sum(n) AS vy
    FROM ring
    GROUP BY batiment_groupe_id
)
SELECT batiment_groupe_id,
    CASE WHEN abs(a) > 1e-6 THEN ax / a ELSE vx END AS x,
    CASE WHEN abs(a) > 1e-6 THEN ay / a ELSE vy END AS y
FROM g;

DROP TABLE bdnb_rings;
