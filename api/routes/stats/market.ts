// GET /v1/stats/market (5 credits): price, €/m² and surface statistics of the sales of a zone.
import { locationEchoSchema, locationFields, resolveLocation } from '../../location';
import { booleanParam, dateParam, enumParam, TYPE_LOCAL_4, z } from '../../params';
import { defineEndpoint } from '../../platform';
import { cleaningOf, dateWindow, DEFAULT_TYPES, DEFAULT_WINDOW_YEARS, marketStats, marketStatsSchema, type SalesFilter } from '../../sales/filter';
import { pouvoirAchatSchema, pouvoirAchatFor, type PouvoirAchat } from './income';

const query = z.object({
  ...locationFields,
  type_local: enumParam(TYPE_LOCAL_4, 'Type of the sale’s main property. Without it: every sale except land-only ones (see include_terrain).').optional(),
  date_debut: dateParam(`First day of the window (default: ${DEFAULT_WINDOW_YEARS} years before today, with a notice).`, '2024-01-01').optional(),
  date_fin: dateParam('Last day of the window (default: today).', '2024-12-31').optional(),
  exclude_bulk_sales: booleanParam('Exclude sales of several dwellings or premises for one price (default true).').default(true),
  exclude_outliers: booleanParam('Exclude aberrant prices (rules in docs/data.md; default true).').default(true),
  exclude_vefa: booleanParam('Exclude off-plan sales (VEFA; default true).').default(true),
  include_terrain: booleanParam('Include land-only sales when type_local is not given (default false). They never enter €/m² figures.').default(false),
  include_pouvoir_achat: booleanParam('Add pouvoir_achat (price-to-income ratio) for code_postal or commune zones, at no extra credit.').optional(),
});

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
  coverage: ({ filter }) => ({ zone: filter.location, window: filter }),
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
