// The sales a market statistic reads (zone, types, window, cleaning flags), as a SQL filter over `ventes`, and the
// price / €/m² / surface statistics of those sales: shared by stats/market and every route that reuses its rules.
import type { Params } from '../../lib/duck';
import { invalidParams } from '../errors';
import type { Location } from '../location';
import { isoDay, round2, yearsBefore, z } from '../params';
import type { Call } from '../platform';
import type { MeasureStats } from './memory';

export const DEFAULT_WINDOW_YEARS = 3;
/** Without type_local: every sale except land-only ones (include_terrain adds them). */
export const DEFAULT_TYPES = ['Maison', 'Appartement', 'Local commercial', 'Dépendance'];

const stat = z.object({ median: z.number().nullable(), avg: z.number().nullable(), min: z.number().nullable(), max: z.number().nullable() });

export const marketStatsSchema = z.object({
  count: z.number().int(),
  price: stat.openapi({ description: 'Sale price (valeur_fonciere), euros.' }),
  price_per_m2: stat.openapi({ description: 'Price per m² of built surface, over the sales that have one.' }),
  surface: stat.openapi({ description: 'Built surface (m²), over the sales that have one.' }),
});

export type MarketStats = z.output<typeof marketStatsSchema>;

/** The sales a market statistic is computed on: a zone, types, a window and the cleaning flags. */
export interface SalesFilter {
  location: Location;
  types: string[];
  date_debut: string;
  date_fin: string;
  exclude_bulk_sales: boolean;
  exclude_outliers: boolean;
  exclude_vefa: boolean;
}

export type Cleaning = Pick<SalesFilter, 'exclude_bulk_sales' | 'exclude_outliers' | 'exclude_vefa'>;

/** The API's default cleaning: no bulk, outlier or off-plan sale. */
export const DEFAULT_CLEANING: Cleaning = { exclude_bulk_sales: true, exclude_outliers: true, exclude_vefa: true };

/** The sales of a zone, types and window with the default cleaning. */
export function cleanSales(location: Location, types: string[], date_debut: string, date_fin: string): SalesFilter {
  return { location, types, date_debut, date_fin, ...DEFAULT_CLEANING };
}

/** The cleaning a request asked for with its exclude_* parameters (parsed with their defaults). */
export function cleaningOf(q: { exclude_bulk_sales?: unknown; exclude_outliers?: unknown; exclude_vefa?: unknown }): Cleaning {
  return { exclude_bulk_sales: q.exclude_bulk_sales as boolean, exclude_outliers: q.exclude_outliers as boolean, exclude_vefa: q.exclude_vefa as boolean };
}

/** WHERE condition and parameters over `ventes` for a SalesFilter (fragments are fixed strings; values are bound). */
export function salesWhere(f: SalesFilter): { where: string; params: Params } {
  const params: Params = { ...f.location.params, date_debut: f.date_debut, date_fin: f.date_fin };
  const where = [f.location.where, `type_local in (${f.types.map((_, i) => `$type${i}`).join(', ')})`, 'date_mutation between $date_debut::DATE and $date_fin::DATE'];
  f.types.forEach((t, i) => (params[`type${i}`] = t));
  if (f.exclude_bulk_sales) where.push('not is_bulk_sale');
  if (f.exclude_outliers) where.push('not is_outlier');
  if (f.exclude_vefa) where.push('not is_vefa');
  return { where: where.join(' and '), params };
}

/**
 * Count, price, €/m² and surface statistics of the sales of a filter: from the in-memory sales index when the serving
 * file has one and the zone is made of codes (api/sales/memory.ts), else in SQL (radius searches); both give the same
 * figures.
 */
export async function marketStats(call: Call, f: SalesFilter): Promise<MarketStats> {
  const memory = call.ctx.db.sales;
  if (memory && f.location.kind !== 'radius') {
    const { code_postal } = f.location.echo;
    const r = memory.stats({
      ...(code_postal !== null ? { code_postal } : {}),
      ...departementsOf(f.location),
      ...(f.location.communes.length ? { communes: f.location.communes.map((c) => c.code) } : {}),
      types: f.types,
      date_debut: f.date_debut,
      date_fin: f.date_fin,
      exclude_bulk_sales: f.exclude_bulk_sales,
      exclude_outliers: f.exclude_outliers,
      exclude_vefa: f.exclude_vefa,
    });
    const s = (m: MeasureStats) => ({ median: round2(m.median), avg: round2(m.avg), min: round2(m.min), max: round2(m.max) });
    return { count: r.count, price: s(r.price), price_per_m2: s(r.price_per_m2), surface: s(r.surface) };
  }
  return marketStatsSql(call, f);
}

/**
 * The départements the location's SQL condition admits (api/location.ts: `code_departement = $loc_dep` and the
 * `code_departement in (…)` lists a postal code or a commune add), intersected; nothing when it names none.
 */
function departementsOf(location: Location): { departements?: string[] } {
  const lists = new Map<string, string[]>();
  for (const [name, value] of Object.entries(location.params)) {
    const m = /^loc_(dep|pdep|cdep)\d*$/.exec(name);
    if (m && typeof value === 'string') lists.set(m[1], [...(lists.get(m[1]) ?? []), value]);
  }
  if (!lists.size) return {};
  const [first, ...rest] = [...lists.values()];
  return { departements: first.filter((d) => rest.every((l) => l.includes(d))) };
}

/** marketStats in SQL over `ventes`: the path of radius searches, and the independent computation the tests compare to. */
export async function marketStatsSql(call: Call, f: SalesFilter): Promise<MarketStats> {
  const { where, params } = salesWhere(f);
  const [r] = await call.ctx.db.query<Record<string, number | null>>(
    `select count(*) as count,
       median(valeur_fonciere) as p_med, avg(valeur_fonciere) as p_avg, min(valeur_fonciere) as p_min, max(valeur_fonciere) as p_max,
       median(prix_m2) as m_med, avg(prix_m2) as m_avg, min(prix_m2) as m_min, max(prix_m2) as m_max,
       median(surface_reelle_bati) filter (surface_reelle_bati > 0) as s_med, avg(surface_reelle_bati) filter (surface_reelle_bati > 0) as s_avg,
       min(surface_reelle_bati) filter (surface_reelle_bati > 0) as s_min, max(surface_reelle_bati) filter (surface_reelle_bati > 0) as s_max
     from ventes where ${where}`,
    params,
  );
  const s = (p: string) => ({ median: round2(r[`${p}_med`]), avg: round2(r[`${p}_avg`]), min: round2(r[`${p}_min`]), max: round2(r[`${p}_max`]) });
  return { count: r.count ?? 0, price: s('p'), price_per_m2: s('m'), surface: s('s') };
}

/** Default date window ending today, with the notice the specification asks for when it is applied. */
export function dateWindow(q: { date_debut?: string; date_fin?: string }, now: Date, years: number): { date_debut: string; date_fin: string; notice?: string } {
  const date_fin = q.date_fin ?? isoDay(now);
  if (q.date_debut !== undefined) {
    if (q.date_debut > date_fin) throw invalidParams([{ param: 'date_debut', issue: `must not be after date_fin (${date_fin})` }]);
    return { date_debut: q.date_debut, date_fin };
  }
  const date_debut = isoDay(yearsBefore(new Date(`${date_fin}T00:00:00Z`), years));
  return {
    date_debut,
    date_fin,
    notice: `date_debut was not given: the window starts ${years} year${years > 1 ? 's' : ''} before date_fin, on ${date_debut}.`,
  };
}
