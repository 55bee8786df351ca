// Lambert-93 (EPSG:2154) → WGS84 longitude/latitude as plain DuckDB SQL, so millions of DPE coordinates are converted
// inside the import query (no spatial extension, no row through Node). Inverse Lambert conformal conic with two
// standard parallels on the GRS80 ellipsoid (EPSG guidance note 7-2, §1.3.1.1); the latitude comes from the
// conformal latitude by Snyder's series (Map Projections, 1987, eq. 3-5), which is exact to well under a millimetre
// and needs no iteration. RGF93 and WGS84 agree to a few centimetres, so no datum shift is applied.

const A = 6378137; // GRS80 semi-major axis
const F = 1 / 298.257222101; // GRS80 flattening
const E2 = 2 * F - F * F;
const E = Math.sqrt(E2);
const RAD = Math.PI / 180;
const PHI1 = 44 * RAD;
const PHI2 = 49 * RAD;
const PHI0 = 46.5 * RAD;
const LAMBDA0 = 3 * RAD;
const X0 = 700000;
const Y0 = 6600000;

const m = (phi: number) => Math.cos(phi) / Math.sqrt(1 - E2 * Math.sin(phi) ** 2);
const t = (phi: number) => Math.tan(Math.PI / 4 - phi / 2) / ((1 - E * Math.sin(phi)) / (1 + E * Math.sin(phi))) ** (E / 2);

const N = (Math.log(m(PHI1)) - Math.log(m(PHI2))) / (Math.log(t(PHI1)) - Math.log(t(PHI2)));
const AF = (A * m(PHI1)) / (N * t(PHI1) ** N);
const RHO0 = AF * t(PHI0) ** N;

// Coefficients of sin 2χ, sin 4χ, sin 6χ, sin 8χ in φ = χ + Σ (conformal → geodetic latitude).
const E4 = E2 * E2;
const E6 = E4 * E2;
const E8 = E6 * E2;
const C2 = E2 / 2 + (5 * E4) / 24 + E6 / 12 + (13 * E8) / 360;
const C4 = (7 * E4) / 48 + (29 * E6) / 240 + (811 * E8) / 11520;
const C6 = (7 * E6) / 120 + (81 * E8) / 1120;
const C8 = (4279 * E8) / 161280;

/** The projection's constants, exposed for tests and documentation. */
export const LAMBERT93 = { n: N, aF: AF, rho0: RHO0, x0: X0, y0: Y0, lambda0: LAMBDA0 } as const;

const num = (v: number) => v.toPrecision(17);

/**
 * SQL expressions giving WGS84 `lat` and `lon` (degrees) from two SQL expressions holding Lambert-93 metres.
 * The arguments are pasted into the expressions: pass column names or macro parameters, never request input.
 */
export function lambert93ToWgs84Sql(x: string, y: string): { lat: string; lon: string } {
  const dx = `((${x}) - ${num(X0)})`;
  const dy = `(${num(RHO0)} - ((${y}) - ${num(Y0)}))`;
  const rho = `sqrt(${dx} * ${dx} + ${dy} * ${dy})`;
  const chi = `(pi() / 2 - 2 * atan(pow(${rho} / ${num(AF)}, ${num(1 / N)})))`;
  const lat = `degrees(${chi} + ${num(C2)} * sin(2 * ${chi}) + ${num(C4)} * sin(4 * ${chi}) + ${num(C6)} * sin(6 * ${chi}) + ${num(C8)} * sin(8 * ${chi}))`;
  const lon = `degrees(atan2(${dx}, ${dy}) / ${num(N)} + ${num(LAMBDA0)})`;
  return { lat, lon };
}

/**
 * SQL expressions giving Lambert-93 `x` and `y` (metres) from two SQL expressions holding
 * WGS84 latitude and longitude in degrees: the forward projection (EPSG guidance note 7-2, §1.3.1.1), the inverse of
 * lambert93ToWgs84Sql. The arguments are pasted into the expressions: pass column names, never request input.
 */
export function wgs84ToLambert93Sql(lat: string, lon: string): { x: string; y: string } {
  const phi = `radians(${lat})`;
  const es = `(${num(E)} * sin(${phi}))`;
  const rho = `(${num(AF)} * pow(tan(pi() / 4 - ${phi} / 2) / pow((1 - ${es}) / (1 + ${es}), ${num(E / 2)}), ${num(N)}))`;
  const theta = `(${num(N)} * (radians(${lon}) - ${num(LAMBDA0)}))`;
  return { x: `(${num(X0)} + ${rho} * sin(${theta}))`, y: `(${num(Y0 + RHO0)} - ${rho} * cos(${theta}))` };
}

/**
 * DuckDB macros `lambert93_lat(x, y)` and `lambert93_lon(x, y)` (inlined by DuckDB at bind time, so as fast as the
 * bare expressions). Metropolitan France only: Lambert-93 is not defined overseas, where DPE carry other systems.
 */
export function lambert93Macros(): string {
  const { lat, lon } = lambert93ToWgs84Sql('x', 'y');
  return `CREATE OR REPLACE TEMP MACRO lambert93_lat(x, y) AS (${lat});\nCREATE OR REPLACE TEMP MACRO lambert93_lon(x, y) AS (${lon});\n`;
}
