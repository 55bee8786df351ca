// GET /v1/market-overview (10 credits): stats/market, stats/trends and market-score of one zone, computed in parallel
// with their own defaults, in one response.
import { locationEchoSchema, locationFields, resolveLocation } from '../../location';
import { enumParam, z } from '../../params';
import { defineEndpoint } from '../../platform';
import { cleanSales, DEFAULT_WINDOW_YEARS, dateWindow, marketStats, marketStatsSchema } from '../../sales/filter';
import { DIRECTIONS, firstDay, lastCompleteMonth, lastDay, typesOf } from '../../sales/analytics';
import { bandLabel, marketScoreFor } from './score';
import { trendsFor, trendsWindow } from '../stats/trends';

const TYPES_6 = ['Maison', 'Appartement', 'Terrain', 'Local commercial', 'Dépendance', 'Local industriel'] as const;
/** health.data_quality.sufficient: at least this many sales in 6 months (below 30 a statistic is fragile, specification). */
const SUFFICIENT_6M = 30;

/** Health labels of market-overview (specification), on the same bands as market-score's. */
const HEALTH_LABELS = ['Calme', 'Modéré', 'Dynamique', 'Très actif'] as const;

const query = z.object({
  ...locationFields,
  type_local: enumParam(TYPES_6, 'Type of the sale’s main property (Local industriel means Local commercial: DVF does not tell them apart).').optional(),
});

export const marketOverview = defineEndpoint({
  method: 'get',
  path: '/v1/market-overview',
  tag: 'Market analytics',
  summary: 'Statistics, trend and health of a zone in one call',
  description:
    'stats: as stats/market with its defaults (3 years). trend: as stats/trends with its defaults (quarters over 5 years, 3 for large ' +
    'zones): direction and overall_change_pct are its summary, last_period its last period; change_1y_pct is the change of the median ' +
    '€/m² of the last complete year the data covers against the year before. health: market-score with the market-overview labels ' +
    '(Calme, Modéré, Dynamique, Très actif); null for latitude/longitude searches.',
  query,
  response: z.object({
    location: locationEchoSchema,
    property_type: z.string().nullable().openapi({ description: 'type_local as given; null for every type except land.' }),
    stats: marketStatsSchema,
    trend: z.object({
      direction: z.enum(DIRECTIONS).nullable(),
      change_1y_pct: z.number().nullable(),
      overall_change_pct: z.number().nullable(),
      last_period: z.string().nullable(),
    }),
    health: z
      .object({
        score: z.number().int(),
        label: z.string(),
        data_quality: z.object({ count_6m: z.number().int(), sufficient: z.boolean().openapi({ description: `count_6m ≥ ${SUFFICIENT_6M}.` }) }),
      })
      .nullable(),
  }),
  credits: 10,
  errors: ['missing_location', 'unsupported_location'],
  prepare({ query: q }, { now }) {
    const location = resolveLocation(q, { accept: ['code_postal', 'commune', 'code_departement', 'radius'] });
    const types = typesOf(q.type_local === 'Local industriel' ? 'Local commercial' : q.type_local);
    const stats = dateWindow({}, now, DEFAULT_WINDOW_YEARS);
    const trends = trendsWindow({}, now, location);
    return {
      location,
      types,
      typeLocal: q.type_local ?? null,
      stats: cleanSales(location, types, stats.date_debut, stats.date_fin),
      trends: cleanSales(location, types, trends.date_debut, trends.date_fin),
    };
  },
  coverage: (p) => ({ zone: p.location, window: p.stats }),
  async handler(p, call) {
    const end = lastCompleteMonth(call);
    // The last complete year the data covers (ending at or before `end`), against the year before.
    const year = end.then((e) => Math.floor((e + 1) / 12) - 1);
    const [stats, quarters, years, score, y] = await Promise.all([
      marketStats(call, p.stats),
      trendsFor(call, p.trends, 'quarter'),
      year.then((y) => trendsFor(call, cleanSales(p.location, p.types, firstDay(y * 12 - 12), lastDay(y * 12 + 11)), 'year')),
      p.location.kind === 'radius' ? null : end.then((e) => marketScoreFor(call, p.location, p.types, e)),
      year,
    ]);
    return {
      location: p.location.echo,
      property_type: p.typeLocal,
      stats,
      trend: {
        direction: quarters.summary.overall_trend,
        change_1y_pct: years.trends.find((t) => t.period === String(y))?.yoy_change.price_m2_pct ?? null,
        overall_change_pct: quarters.summary.total_change_pct,
        last_period: quarters.trends.at(-1)?.period ?? null,
      },
      health: score && {
        score: score.score,
        label: bandLabel(score.score, HEALTH_LABELS),
        data_quality: { count_6m: score.count_6m, sufficient: score.count_6m >= SUFFICIENT_6M },
      },
    };
  },
});
