-- Centroid of a BDNB footprint (WKT POLYGON / MULTIPOLYGON in Lambert-93 metres) in plain SQL, without a spatial
-- extension, so that millions of groups are placed in one vectorised pass.
-- The area-weighted centroid (shoelace formula) rather than the mean of the vertices: a footprint's vertices crowd
-- where its outline is detailed (a curved façade), which would pull a vertex mean off the building. Each polygon's
-- first ring is its outline, the following ones its holes (subtracted), whatever their orientation in the file.
-- Coordinates are taken relative to the first vertex so the products stay small (Lambert-93 y ≈ 6.8 million m).
-- A degenerate footprint (zero area, e.g. a line) falls back to the mean of its vertices.

-- WKT → list of polygons, each a list of rings, each a list of [x, y]. Tolerates spaces around parentheses and
-- commas, an EWKT `SRID=…;` prefix and a Z coordinate (dropped).
CREATE OR REPLACE TEMP MACRO bdnb_wkt_polygons(wkt) AS (
  list_transform(
    string_split(
      regexp_replace(
        regexp_replace(regexp_replace(upper(trim(wkt)), '\s*([(),])\s*', '\1', 'g'), '^(SRID=\d+;)?(MULTI)?POLYGON\s*Z?M?\(+', ''),
        '\)+$', ''),
      ')),(('),
    p -> list_transform(string_split(p, '),('),
      r -> list_transform(string_split(r, ','),
        pt -> list_transform(regexp_split_to_array(trim(pt), '\s+')[1:2], v -> TRY_CAST(v AS DOUBLE)))))
);

-- Per ring: [2·signed area, Σ(xi+xj)·cross, Σ(yi+yj)·cross] relative to (x0, y0); the ring is closed implicitly
-- (a repeated closing vertex adds a zero-length edge).
CREATE OR REPLACE TEMP MACRO bdnb_ring_moments(r, x0, y0) AS (
  list_transform(
    list_transform(range(1, len(r) + 1),
      i -> [r[i][1] - x0, r[i][2] - y0, r[i % len(r) + 1][1] - x0, r[i % len(r) + 1][2] - y0]),
    e -> [e[1] * e[4] - e[3] * e[2], (e[1] + e[3]) * (e[1] * e[4] - e[3] * e[2]), (e[2] + e[4]) * (e[1] * e[4] - e[3] * e[2])])
);

-- Every ring's [2A, Mx, My], signed so that outlines add and holes subtract, whatever their orientation in the file.
CREATE OR REPLACE TEMP MACRO bdnb_ring_vectors(polys) AS (
  flatten(list_transform(polys, p -> list_transform(p, (r, k) ->
    list_transform([1, 2, 3], j -> list_sum(list_transform(bdnb_ring_moments(r, polys[1][1][1][1], polys[1][1][1][2]), m -> m[j]))
      * CASE WHEN k = 1 THEN 1 ELSE -1 END
      * sign(list_sum(list_transform(bdnb_ring_moments(r, polys[1][1][1][1], polys[1][1][1][2]), m -> m[1])))))))
);

-- {x, y} (Lambert-93) from the parsed polygons and their ring vectors (computed once by the caller, in a CTE).
-- Cx = x0 + ΣMx / (3·Σ2A), the shoelace centroid; vertex mean when the footprint has no area; NULL when unparsable.
CREATE OR REPLACE TEMP MACRO bdnb_centroid(polys, rv) AS (
  CASE
    WHEN abs(list_sum(list_transform(rv, t -> t[1]))) > 1e-6 THEN {
      'x': polys[1][1][1][1] + list_sum(list_transform(rv, t -> t[2])) / (3 * list_sum(list_transform(rv, t -> t[1]))),
      'y': polys[1][1][1][2] + list_sum(list_transform(rv, t -> t[3])) / (3 * list_sum(list_transform(rv, t -> t[1])))}
    ELSE {
      'x': list_avg(flatten(flatten(list_transform(polys, p -> list_transform(p, r -> list_transform(r, v -> v[1])))))),
      'y': list_avg(flatten(flatten(list_transform(polys, p -> list_transform(p, r -> list_transform(r, v -> v[2]))))))}
  END
);
