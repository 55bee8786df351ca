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

/** Haversine distance in metres between two points given as SQL expressions. */
export function haversineSql(lat1: string, lon1: string, lat2: string, lon2: string): string {
  return `(2 * ${EARTH_RADIUS_M} * asin(sqrt(pow(sin(radians(${lat2} - ${lat1}) / 2), 2)
    + cos(radians(${lat1})) * cos(radians(${lat2})) * pow(sin(radians(${lon2} - ${lon1}) / 2), 2))))`;
}
