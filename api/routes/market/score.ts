// GET /v1/market-score (10 credits): a 0–100 market activity score from four components, each reproducible from the
// API's other outputs (docs/methods.md, "Market score").
import { locationFields, RADIUS_PARAMS, resolveLocation, type Location } from '../../location';
import { enumParam, round2, TYPE_LOCAL_4, z } from '../../params';
import { defineEndpoint, type Call } from '../../platform';
import { cleanSales, memoryIndexFor, salesWhere, zoneQueryOf } from '../../sales/filter';
import { firstDay, lastCompleteMonth, lastDay, monthlyStats, monthOf, pctChange, typesOf, zoneOf, zoneSchema, type MonthIndex } from '../../sales/analytics';

/** The label of a score's band (specification: 0–30, 31–60, 61–80, 81–100) among four, lowest band first. */
export function bandLabel(score: number, labels: readonly [string, string, string, string]): string {
  return labels[score <= 30 ? 0 : score <= 60 ? 1 : score <= 80 ? 2 : 3];
}

/** market-score's labels. */
export const SCORE_LABELS = ['Peu actif', 'Modéré', 'Actif', 'Très dynamique'] as const;

/** Mean days between two sales at or below which a zone's liquidity scores 100, and at or above which it scores 0. */
const LIQUID_DAYS = 1;
const ILLIQUID_DAYS = 30;
/** Points of price_trend_score per percent of yearly €/m² change, around 50 (so ±10 % reaches 0 or 100). */
const POINTS_PER_PCT = 5;

const clamp100 = (v: number) => Math.min(100, Math.max(0, v));

/** 50 when `now` equals `before`, 100 at twice or more, 0 without sales; 100 when activity starts from nothing. */
function ratioScore(now: number, before: number): number {
  if (before === 0) return now > 0 ? 100 : 0;
  return Math.round(clamp100((50 * now) / before));
}

const componentsSchema = z.object({
  volume_score: z.number().int().openapi({ description: 'Sales of the last 12 months against the yearly average of the 36 months before: 50 × ratio, capped at 100.' }),
  price_trend_score: z.number().int().openapi({ description: '50 + 5 × price_trend_pct, within 0–100 (50 when the trend is unknown).' }),
  days_on_market_score: z.number().int().openapi({ description: 'Proxy: mean days between two sales over 12 months, 100 at 1 day or less, 0 at 30 days or more (log scale).' }),
  supply_demand_score: z.number().int().openapi({ description: 'Sales of the last 6 months against the same 6 months a year earlier: 50 × ratio, capped at 100.' }),
});

interface MarketScore {
  score: number;
  components: z.output<typeof componentsSchema>;
  price_trend_pct: number | null;
  median_price_m2: number | null;
  transaction_count_12m: number;
  count_6m: number;
  period: { date_debut: string; date_fin: string };
}

/** The score of a zone (postal code, commune or département) over the 12 months ending with `end` (lastCompleteMonth). */
export async function marketScoreFor(call: Call, location: Location, types: string[], end: MonthIndex): Promise<MarketScore> {
  const [months, prices] = await Promise.all([monthlyStats(call, location, types, end - 47, end), yearMedians(call, location, types, end)]);
  const sumMonths = (from: MonthIndex, to: MonthIndex) =>
    months.filter((m) => monthOf(m.mois) >= from && monthOf(m.mois) <= to).reduce((n, m) => n + m.n, 0);
  const n12 = sumMonths(end - 11, end);
  const n6 = sumMonths(end - 5, end);
  const median_price_m2 = round2(prices.m_now);
  const price_trend_pct = pctChange(median_price_m2, round2(prices.m_before));
  const days = (Date.parse(lastDay(end)) - Date.parse(firstDay(end - 11))) / 86_400_000 + 1;
  const components = {
    volume_score: ratioScore(n12, sumMonths(end - 47, end - 12) / 3),
    price_trend_score: Math.round(clamp100(50 + POINTS_PER_PCT * (price_trend_pct ?? 0))),
    days_on_market_score: n12 === 0 ? 0 : Math.round(clamp100((100 * Math.log(ILLIQUID_DAYS / Math.max(LIQUID_DAYS, days / n12))) / Math.log(ILLIQUID_DAYS / LIQUID_DAYS))),
    supply_demand_score: ratioScore(n6, sumMonths(end - 17, end - 12)),
  };
  const score = Math.round((components.volume_score + components.price_trend_score + components.days_on_market_score + components.supply_demand_score) / 4);
  return { score, components, price_trend_pct, median_price_m2, transaction_count_12m: n12, count_6m: n6, period: { date_debut: firstDay(end - 11), date_fin: lastDay(end) } };
}

/**
 * The median €/m² of the 12 months ending with `end` and of the 12 before: exact, computed on the sales rather than on
 * monthly aggregates (from the in-memory sales index when it can answer, as marketStats does).
 */
export async function yearMedians(call: Call, location: Location, types: string[], end: MonthIndex): Promise<{ m_now: number | null; m_before: number | null }> {
  const now = cleanSales(location, types, firstDay(end - 11), lastDay(end));
  const memory = memoryIndexFor(call, now);
  if (memory) {
    const before = cleanSales(location, types, firstDay(end - 23), lastDay(end - 12));
    return { m_now: memory.stats(zoneQueryOf(now)).price_per_m2.median, m_before: memory.stats(zoneQueryOf(before)).price_per_m2.median };
  }
  return yearMediansSql(call, location, types, end);
}

/** yearMedians in SQL over `ventes`: the path of radius searches, and the independent computation the tests compare to. */
export async function yearMediansSql(call: Call, location: Location, types: string[], end: MonthIndex): Promise<{ m_now: number | null; m_before: number | null }> {
  const { where, params } = salesWhere(cleanSales(location, types, firstDay(end - 23), lastDay(end)));
  params.split = firstDay(end - 11);
  const [prices] = await call.ctx.db.query<{ m_now: number | null; m_before: number | null }>(
    `select median(prix_m2) filter (date_mutation >= $split::DATE) as m_now, median(prix_m2) filter (date_mutation < $split::DATE) as m_before
     from ventes where ${where}`,
    params,
  );
  return prices;
}

const query = z.object({
  // latitude/longitude are declared so that they are refused as unsupported_location rather than ignored.
  ...locationFields,
  type_local: enumParam(TYPE_LOCAL_4, 'Type of the sale’s main property (default: every type except land).').optional(),
});

export const marketScore = defineEndpoint({
  method: 'get',
  path: '/v1/market-score',
  tag: 'Market analytics',
  summary: 'Market activity score of a zone (0–100)',
  description:
    'Mean of four 0–100 components over the 12 complete months ending with the last month the data covers (clean sales only): ' +
    'volume, price trend, a days-on-market proxy and a supply/demand proxy. Labels: 0–30 Peu actif, 31–60 Modéré, 61–80 Actif, ' +
    '81–100 Très dynamique. The method, and how to recompute every component from market-activity and stats/market, is in docs/methods.md.',
  query,
  undocumentedQuery: RADIUS_PARAMS,
  response: z.object({
    score: z.number().int(),
    label: z.string(),
    components: componentsSchema,
    price_trend_pct: z.number().nullable().openapi({ description: 'Median €/m² of the last 12 months against the 12 months before, in %.' }),
    median_price_m2: z.number().nullable().openapi({ description: 'Median €/m² of the last 12 months.' }),
    transaction_count_12m: z.number().int(),
    zone: zoneSchema,
    period: z.object({ date_debut: z.string(), date_fin: z.string() }).openapi({ description: 'The 12 months scored.' }),
  }),
  credits: 10,
  errors: ['missing_location', 'unsupported_location'],
  prepare({ query: q }) {
    return { location: resolveLocation(q, { accept: ['code_postal', 'commune', 'code_departement'] }), types: typesOf(q.type_local) };
  },
  async coverage(p, call) {
    const end = await lastCompleteMonth(call);
    return { zone: p.location, window: { date_debut: firstDay(end - 11), date_fin: lastDay(end) } };
  },
  async handler(p, call) {
    const s = await marketScoreFor(call, p.location, p.types, await lastCompleteMonth(call));
    return {
      score: s.score,
      label: bandLabel(s.score, SCORE_LABELS),
      components: s.components,
      price_trend_pct: s.price_trend_pct,
      median_price_m2: s.median_price_m2,
      transaction_count_12m: s.transaction_count_12m,
      zone: zoneOf(p.location),
      period: s.period,
    };
  },
});
