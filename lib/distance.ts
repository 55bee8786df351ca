// Distances in plain SQL (DuckDB's spatial extension cannot be installed here): the haversine formula on the mean
// Earth radius, shared by the API's radius searches and the valuation estimator.

const EARTH_RADIUS_M = 6_371_008.8;
export const METERS_PER_DEGREE = 111_320;
/** Radius of a latitude/longitude search when radius_m is not given (specification). */
export const DEFAULT_RADIUS_M = 500;

/**
 * `haversine_m(lat1, lon1, lat2, lon2)`: the same formula as a DuckDB macro, created on the marts runner's connection
 * so that SQL models (which cannot call TypeScript) share one definition.
 */
export const HAVERSINE_MACRO_SQL = `CREATE OR REPLACE TEMP MACRO haversine_m(lat1, lon1, lat2, lon2) AS ${haversineSql('lat1', 'lon1', 'lat2', 'lon2')}`;

/** Metres per degree of latitude on the haversine's sphere. */
const METERS_PER_DEGREE_LAT = (Math.PI * EARTH_RADIUS_M) / 180;
/** Longitude cells are sized at this latitude, north of metropolitan France (51.09° N): wider than needed further south. */
const GRID_NORTH_LAT = 51.5;

/**
 * `grid_cells(lat, lon, radius_m, reach)`: the nearest-neighbour grid of the SQL models, as one macro. Space is cut in
 * cells at least `radius_m` wide (1 % margin; longitude cells sized at 51.5° N, so wider in metres further south and
 * overseas), each named by one BIGINT key (row × 2^32 + column). `reach` 0 gives the point's own cell, 1 the 3 × 3
 * block around it. Every point within `radius_m` of a point lies in that point's block, so a search joins the searched
 * points' own cells (`unnest(grid_cells(…, 0))`) with each query point's block (`unnest(grid_cells(…, 1))`) on the
 * key and tests distances inside the block only: never a cross join. Both sides must pass the same `radius_m`.
 */
export const GRID_CELLS_MACRO_SQL = `CREATE OR REPLACE TEMP MACRO grid_cells(lat, lon, radius_m, reach) AS
  flatten(list_transform(range(-reach, reach + 1), dy -> list_transform(range(-reach, reach + 1), dx ->
    (floor(lat / (radius_m * 1.01 / ${METERS_PER_DEGREE_LAT}))::BIGINT + dy) * 4294967296
      + floor(lon / (radius_m * 1.01 / ${METERS_PER_DEGREE_LAT} / cos(radians(${GRID_NORTH_LAT}))))::BIGINT + dx)))`;

/** Haversine distance in metres between two points given as SQL expressions. */
export function haversineSql(lat1: string, lon1: string, lat2: string, lon2: string): string {
  return `(2 * ${EARTH_RADIUS_M} * asin(sqrt(pow(sin(radians(${lat2} - ${lat1}) / 2), 2)
    + cos(radians(${lat1})) * cos(radians(${lat2})) * pow(sin(radians(${lon2} - ${lon1}) / 2), 2))))`;
}
