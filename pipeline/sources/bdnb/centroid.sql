-- Centroid of every BDNB footprint (WKT POLYGON / MULTIPOLYGON in Lambert-93 metres) in plain SQL, without a spatial
-- extension, so that millions of groups are placed in one vectorised pass: reads bdnb_geom(batiment_groupe_id,
-- geom_groupe), writes bdnb_centroids(batiment_groupe_id, x, y).
-- The area-weighted centroid (shoelace formula) rather than the mean of the vertices: a footprint's vertices crowd
-- where its outline is detailed (a curved façade), which would pull a vertex mean off the building. Each polygon's
-- first ring is its outline and the following ones its holes (subtracted), whatever their orientation in the file.
-- Coordinates are taken relative to the group's first vertex so the products stay small (Lambert-93 y ≈ 6.8e6 m).
-- A degenerate footprint (zero area: a line, a point) falls back to the mean of its vertices.
-- Each step is a table: DuckDB would otherwise inline a CTE and repeat its string parsing at every reference.

-- One row per ring: its text ('x y,x y,…'), whether it is a polygon's outline, and the group's origin vertex.
-- Plain string functions (several times faster than regular expressions here); spaces next to commas and
-- parentheses are tolerated, an EWKT `SRID=…;` prefix and Z/M coordinates too (dropped).
CREATE OR REPLACE TEMP TABLE bdnb_rings AS
WITH stripped AS (
    SELECT batiment_groupe_id, rtrim(ltrim(substr(geom_groupe, strpos(geom_groupe, '(')), '( '), ') ') AS b FROM bdnb_geom
),
body AS (
    -- GDAL and PostGIS write no space next to a parenthesis inside the WKT: normalise only the rows that have one
    -- (spaces after commas are trimmed point by point below)
    SELECT batiment_groupe_id,
        CASE WHEN strpos(b, ' (') + strpos(b, '( ') + strpos(b, ' )') + strpos(b, ') ') > 0
             THEN regexp_replace(b, '\s*([()])\s*', '\1', 'g') ELSE b END AS b
    FROM stripped
),
polygons AS (
    SELECT batiment_groupe_id, b, unnest(string_split(b, ')),((')) AS poly FROM body
)
SELECT batiment_groupe_id,
    unnest(string_split(poly, '),(')) AS ring,
    generate_subscripts(string_split(poly, '),('), 1) = 1 AS outline,
    TRY_CAST(split_part(split_part(b, ',', 1), ' ', 1) AS DOUBLE) AS x0,
    TRY_CAST(split_part(split_part(b, ',', 1), ' ', 2) AS DOUBLE) AS y0
FROM polygons;

CREATE OR REPLACE TEMP TABLE bdnb_ring_xy AS
WITH pts AS (
    SELECT batiment_groupe_id, outline, x0, y0, list_transform(string_split(ring, ','), p -> string_split(trim(p), ' ')) AS p
    FROM bdnb_rings
)
SELECT batiment_groupe_id, outline, x0, y0,
    list_transform(p, v -> TRY_CAST(v[1] AS DOUBLE) - x0) AS xs,
    list_transform(p, v -> TRY_CAST(v[2] AS DOUBLE) - y0) AS ys
FROM pts;

-- Per ring: 2·signed area (Σ cross), Σ(xi+xj)·cross, Σ(yi+yj)·cross; the ring is closed implicitly (a repeated
-- closing vertex adds a zero-length edge).
CREATE OR REPLACE TEMP TABLE bdnb_ring_moments AS
WITH crosses AS (
    SELECT *, list_transform(range(1, len(xs) + 1), i -> xs[i] * ys[i % len(xs) + 1] - xs[i % len(xs) + 1] * ys[i]) AS c
    FROM bdnb_ring_xy
),
ring AS (
    SELECT batiment_groupe_id, outline, x0, y0, xs, ys,
        list_sum(c) AS a2,
        list_sum(list_transform(range(1, len(xs) + 1), i -> (xs[i] + xs[i % len(xs) + 1]) * c[i])) AS mx,
        list_sum(list_transform(range(1, len(xs) + 1), i -> (ys[i] + ys[i % len(xs) + 1]) * c[i])) AS my
    FROM crosses
)
-- outlines add, holes subtract, whatever the orientation of either
SELECT batiment_groupe_id, x0, y0, (CASE WHEN outline THEN 1 ELSE -1 END) * sign(a2) AS s, a2, mx, my,
    list_sum(xs) AS sum_x, list_sum(ys) AS sum_y, len(xs) AS n
FROM ring;

CREATE OR REPLACE TEMP TABLE bdnb_centroids AS
WITH g AS (
    SELECT batiment_groupe_id, any_value(x0) AS x0, any_value(y0) AS y0,
        sum(s * a2) AS a2, sum(s * mx) AS mx, sum(s * my) AS my, sum(sum_x) / sum(n) AS vx, sum(sum_y) / sum(n) AS vy
    FROM bdnb_ring_moments
    GROUP BY batiment_groupe_id
)
SELECT batiment_groupe_id,
    -- Cx = x0 + Σ s·Mx / (3 · Σ s·2A)
    x0 + CASE WHEN abs(a2) > 1e-6 THEN mx / (3 * a2) ELSE vx END AS x,
    y0 + CASE WHEN abs(a2) > 1e-6 THEN my / (3 * a2) ELSE vy END AS y
FROM g;

DROP TABLE bdnb_rings;
DROP TABLE bdnb_ring_xy;
DROP TABLE bdnb_ring_moments;
