-- Centroid of every BDNB footprint (WKT POLYGON / MULTIPOLYGON in Lambert-93 metres) in plain SQL, without a spatial
-- extension, so that millions of groups are placed in one vectorised pass. Common table expressions pasted into the
-- WITH clause of batiments.sql: they read bdnb_geom(rid, geom_groupe) and end in bdnb_centroids(rid, x, y), `rid`
-- being the row of bdnb_groupe_raw (an integer key: cheaper to group and join on than the group id).
-- The area-weighted centroid (shoelace formula) rather than the mean of the vertices: a footprint's vertices crowd
-- where its outline is detailed (a curved façade), which would pull a vertex mean off the building. Each polygon's
-- first ring is its outline and the following ones its holes (subtracted), whatever their orientation in the file.
-- Each ring's moments are taken relative to its own first vertex, so the products stay small (Lambert-93 y ≈ 6.8e6 m)
-- and the edges from and to that vertex (the ring's closing edge included) contribute nothing; the group's centroid is
-- then the area-weighted mean of its rings' centroids. A degenerate footprint (zero area: a line, a point) falls back
-- to the mean of its vertices.
-- Costs, measured per million groups: string functions over the whole WKT (trim, replace, regular expressions) cost
-- 0.4–0.8 CPU-s each, a lambda calling a string function on every vertex about as much, while splitting on one
-- character and casting a list are ≈ 0.1–0.2 CPU-s; so the WKT is cut on ')' (each piece is one ring, prefixed by the
-- parentheses and comma that open it), and the regular expressions only run on the rare rows spelled with spaces
-- around parentheses or commas.
bdnb_wkt AS (
    SELECT rid, substr(geom_groupe, strpos(geom_groupe, '(')) AS b FROM bdnb_geom
),
bdnb_ring_text AS (
    -- `(((x y,…)),((x y,…),(x y,…)))` → `(((x y,…`, ``, `,((x y,…`, `,(x y,…`, ``, ``, ``: a ring opened by two
    -- parentheses starts a polygon (its outline), one opened by one is a hole of the polygon before it. Spaces next to
    -- a parenthesis or a comma (and repeated spaces) are removed first, on the rows that have them.
    SELECT rid, unnest(string_split(
        CASE WHEN regexp_matches(b, '[ (),] | [(),]') THEN regexp_replace(regexp_replace(b, '\s*([(),])\s*', '\1', 'g'), '\s+', ' ', 'g') ELSE b END,
        ')')) AS piece
    FROM bdnb_wkt
),
bdnb_ring_values AS (
    -- the ring's numbers as one flat list (x y x y … or x y z x y z …: the commas become spaces by a split and a
    -- join, much cheaper than replace()), and its stride: the spaces of its first vertex + 1 (Z/M values dropped)
    SELECT rid, outline,
        length(split_part(ring, ',', 1)) - length(replace(split_part(ring, ',', 1), ' ', '')) + 1 AS stride,
        TRY_CAST(string_split(array_to_string(string_split(ring, ','), ' '), ' ') AS DOUBLE[]) AS v
    FROM (
        SELECT rid, starts_with(piece, '((') OR starts_with(piece, ',((') AS outline, ltrim(piece, ',(') AS ring
        FROM bdnb_ring_text WHERE piece <> ''
    )
),
bdnb_ring_xy AS (
    SELECT rid, outline, x0, y0,
        list_transform(list_slice(v, 1, -1, stride), x -> x - x0) AS xs,
        list_transform(list_slice(v, 2, -1, stride), y -> y - y0) AS ys
    FROM (SELECT *, v[1] AS x0, v[2] AS y0 FROM bdnb_ring_values WHERE stride BETWEEN 2 AND 4)
),
bdnb_ring_crosses AS (
    -- c[i] = x[i]·y[i+1] − x[i+1]·y[i] for each edge (the closing edge ends on the origin vertex: zero)
    SELECT *, list_transform(range(1, len(xs)), i -> xs[i] * ys[i + 1] - xs[i + 1] * ys[i]) AS c
    FROM bdnb_ring_xy
),
bdnb_ring_moments AS (
    -- per ring: 2·signed area (Σ c), and Σ (x[i] + x[i+1])·c[i], Σ (y[i] + y[i+1])·c[i] (6·area·centroid)
    SELECT rid, outline, x0, y0, list_sum(c) AS a2,
        list_sum(list_transform(range(1, len(xs)), i -> (xs[i] + xs[i + 1]) * c[i])) AS mx,
        list_sum(list_transform(range(1, len(xs)), i -> (ys[i] + ys[i + 1]) * c[i])) AS my,
        x0 * len(xs) + list_sum(xs) AS sum_x, y0 * len(ys) + list_sum(ys) AS sum_y, len(xs) AS n
    FROM bdnb_ring_crosses
),
bdnb_group_moments AS (
    -- outlines add, holes subtract, whatever the orientation of either; each ring's centroid is (x0, y0) + m / (3·a2)
    SELECT rid,
        sum(abs(a2) * CASE WHEN outline THEN 1 ELSE -1 END) AS a,
        sum(CASE WHEN a2 <> 0 THEN abs(a2) * CASE WHEN outline THEN 1 ELSE -1 END * (x0 + mx / (3 * a2)) ELSE 0 END) AS ax,
        sum(CASE WHEN a2 <> 0 THEN abs(a2) * CASE WHEN outline THEN 1 ELSE -1 END * (y0 + my / (3 * a2)) ELSE 0 END) AS ay,
        sum(sum_x) / sum(n) AS vx, sum(sum_y) / sum(n) AS vy
    FROM bdnb_ring_moments
    GROUP BY rid
),
bdnb_centroids AS (
    SELECT rid,
        CASE WHEN abs(a) > 1e-6 THEN ax / a ELSE vx END AS x,
        CASE WHEN abs(a) > 1e-6 THEN ay / a ELSE vy END AS y
    FROM bdnb_group_moments
),
