// The vocabulary of bench cases: dataset dimensions, the case shape and value generators. Kept apart from
// cases.ts so that the per-area case files can import it without an import cycle.
import { all, type DuckDBConnection } from '../../../lib/duck';

/** What the dataset offers to build uncached queries from. */
export interface Dims {
  /** The busiest postal codes of the dataset, most sales first. */
  postal: string[];
  departements: string[];
  /** INSEE codes (code_commune_actuel) of the 5,000 busiest communes, most sales first (enough distinct queries for point lookups). */
  communes: string[];
  /** "latitude,longitude" of 2,000 houses and flats sampled over all sales (for the 'latitude,longitude' vary key). */
  points: string[];
}

/** Latency targets of a case on a 2-core machine (uncached p50/p99, cached req/s). */
export interface Targets {
  p50Ms: number;
  p99Ms?: number;
  cachedRps?: number;
}

/**
 * One endpoint to load. `fixed` is the query of the cached mode (and the one checked first); `vary` lists each
 * parameter's values for the uncached mode ('' = parameter absent), whose cartesian product is visited in a
 * scrambled order. A key naming several parameters separated by commas ('latitude,longitude') takes values
 * separated by commas ('48.84,2.30'). Adding an endpoint is one more line.
 */
export interface BenchCase {
  name: string;
  path: string;
  fixed: Record<string, string>;
  vary: Record<string, (d: Dims) => string[]>;
  targets?: Targets;
}

export const postal = (d: Dims) => d.postal;
export const departements = (d: Dims) => d.departements;
export const communes = (d: Dims) => d.communes;
export const points = (d: Dims) => d.points;
export const types3 = () => ['', 'Maison', 'Appartement'];
export const only = (v: string) => () => [v];
export const oneOf = (...v: string[]) => () => v;
/** Every day of a year, so that windows run 2–3 years to the end of the data (stats/market's default is 3 years). */
export const dateDebut = () => Array.from({ length: 365 }, (_, i) => new Date(Date.UTC(2022, 11, 1 + i)).toISOString().slice(0, 10));

/** Query parameters of one generated query, splitting comma-joined keys ('latitude,longitude' → two parameters). */
export function expandQuery(q: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(q)) {
    if (!k.includes(',')) out[k] = v;
    else if (v !== '') {
      const names = k.split(',');
      const values = v.split(',');
      names.forEach((n, i) => (out[n] = values[i] ?? ''));
    }
  }
  return out;
}

export async function datasetDims(conn: DuckDBConnection): Promise<Dims & { postalCounts: number[] }> {
  const cps = await all<{ cp: string; n: number }>(conn, `select code_postal as cp, count(*) as n from ventes where code_postal is not null group by 1 order by n desc, cp limit 300`);
  const deps = await all<{ d: string }>(conn, 'select distinct code_departement as d from ventes order by 1');
  // The bench generator invents some commune codes; endpoints that check codes would answer 400 for them.
  const coms = await all<{ c: string }>(conn, `select code_commune_actuel as c from ventes semi join communes on communes.code = ventes.code_commune_actuel
     group by 1 order by count(*) desc, c limit 5000`);
  const pts = await all<{ p: string }>(conn, `select printf('%.5f,%.5f', latitude, longitude) as p
     from (select latitude, longitude from ventes where latitude is not null and type_local in ('Maison', 'Appartement'))
     using sample reservoir(2000 rows) repeatable (42) order by p`);
  return { postal: cps.map((r) => r.cp), postalCounts: cps.map((r) => r.n), departements: deps.map((r) => r.d), communes: coms.map((r) => r.c), points: pts.map((r) => r.p) };
}
