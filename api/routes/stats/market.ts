// GET /v1/stats/market (5 credits): price, €/m² and surface statistics of the sales of a zone.
import type { Params } from '../../../lib/duck';
import { invalidParams } from '../../errors';
import { locationEchoSchema, locationFields, resolveLocation, type Location } from '../../location';
import { booleanParam, dateParam, enumParam, isoDay, round2, TYPE_LOCAL_4, yearsBefore, z } from '../../params';
import { defineEndpoint, type Call } from '../../platform';
import { pouvoirAchatSchema, pouvoirAchatFor, type PouvoirAchat } from '../../income';

export const DEFAULT_WINDOW_YEARS = 3;
/** Without type_local: every sale except land-only ones (include_terrain adds them). */
export const DEFAULT_TYPES = ['Maison', 'Appartement', 'Local commercial', 'Dépendance'];

const query = z.object({
  ...locationFields,
  type_local: enumParam(TYPE_LOCAL_4, 'Type of the sale’s main property. Without it: every sale except land-only ones (see include_terrain).').optional(),
  date_debut: dateParam(`First day of the window (default: ${DEFAULT_WINDOW_YEARS} years before today, with a notice).`).optional(),
  date_fin: dateParam('Last day of the window (default: today).').optional(),
  exclude_bulk_sales: booleanParam('Exclude sales of several dwellings or premises for one price (default true).').default(true),
  exclude_outliers: booleanParam('Exclude aberrant prices (rules in docs/data.md; default true).').default(true),
  exclude_vefa: booleanParam('Exclude off-plan sales (VEFA; default true).').default(true),
  include_terrain: booleanParam('Include land-only sales when type_local is not given (default false). They never enter €/m² figures.').default(false),
  include_pouvoir_achat: booleanParam('Add pouvoir_achat (price-to-income ratio) for code_postal or commune zones, at no extra credit.').optional(),
});

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

export async function marketStats(call: Call, f: SalesFilter): Promise<MarketStats> {
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

export const statsMarket = defineEndpoint({
  method: 'get',
  path: '/v1/stats/market',
  tag: 'Market statistics',
  summary: 'Price statistics of a zone',
  description:
    'Count, price, €/m² and surface statistics (median, mean, min, max) of the sales of a postal code, commune, département or ' +
    'radius around a point. Medians of an even count are the mean of the two middle values. Values are rounded to the cent.',
  query,
  response: marketStatsSchema.extend({
    filters: locationEchoSchema.extend({
      type_local: z.string().nullable(),
      types_included: z.array(z.string()).openapi({ description: 'The property types the statistics cover.' }),
      date_debut: z.string(),
      date_fin: z.string(),
      exclude_bulk_sales: z.boolean(),
      exclude_outliers: z.boolean(),
      exclude_vefa: z.boolean(),
      include_terrain: z.boolean(),
    }),
    notice: z.string().optional(),
    pouvoir_achat: pouvoirAchatSchema.optional(),
  }),
  credits: 5,
  cacheTtlSeconds: 3600,
  errors: ['missing_location', 'unsupported_location'],
  prepare({ query: q }, { now }) {
    const location = resolveLocation(q, { accept: ['code_postal', 'commune', 'code_departement', 'radius'] });
    const window = dateWindow(q, now, DEFAULT_WINDOW_YEARS);
    const types = q.type_local ? [q.type_local] : [...DEFAULT_TYPES, ...(q.include_terrain ? ['Terrain'] : [])];
    const filter: SalesFilter = { location, types, date_debut: window.date_debut, date_fin: window.date_fin, ...cleaningOf(q) };
    const notices = [...location.notices, ...(window.notice ? [window.notice] : [])];
    // Purchasing power applies to postal codes and communes; with a radius search it is silently ignored.
    const withIncome = q.include_pouvoir_achat === true && location.kind !== 'radius';
    return { filter, typeLocal: q.type_local ?? null, includeTerrain: q.include_terrain as boolean, notices, withIncome };
  },
  async handler(p, call) {
    const { filter } = p;
    const pending = marketStats(call, filter);
    const income: Promise<PouvoirAchat> | undefined = p.withIncome ? pouvoirAchatFor(call, filter.location, pending) : undefined;
    const stats = await pending;
    return {
      ...stats,
      filters: {
        ...filter.location.echo,
        type_local: p.typeLocal,
        types_included: filter.types,
        date_debut: filter.date_debut,
        date_fin: filter.date_fin,
        exclude_bulk_sales: filter.exclude_bulk_sales,
        exclude_outliers: filter.exclude_outliers,
        exclude_vefa: filter.exclude_vefa,
        include_terrain: p.includeTerrain,
      },
      ...(p.notices.length ? { notice: p.notices.join(' ') } : {}),
      ...(income ? { pouvoir_achat: await income } : {}),
    };
  },
});
