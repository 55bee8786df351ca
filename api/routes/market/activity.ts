// GET /v1/market-activity (10 credits): sales per month over the last complete months, each compared with the
// window's monthly average, and the busiest and quietest calendar months.
import { locationFields, RADIUS_PARAMS, resolveLocation } from '../../location';
import { enumParam, numberParam, round2, TYPE_LOCAL_4, z } from '../../params';
import { defineEndpoint } from '../../platform';
import { firstDay, lastCompleteMonth, lastDay, monthLabel, monthlyStats, monthOf, typesOf, zoneOf, zoneSchema } from '../../sales/analytics';

/** More than 30 % above (below) the window's monthly average is high (low) activity (specification). */
const ACTIVITY_BAND_PCT = 30;
/** How many calendar months each seasonality list names. */
const SEASON_MONTHS = 3;
type ActivityLevel = 'high' | 'normal' | 'low';
const MONTH_NAMES = ['janvier', 'février', 'mars', 'avril', 'mai', 'juin', 'juillet', 'août', 'septembre', 'octobre', 'novembre', 'décembre'];

const query = z.object({
  // latitude/longitude are declared so that they are refused as unsupported_location rather than ignored.
  ...locationFields,
  type_local: enumParam(TYPE_LOCAL_4, 'Type of the sale’s main property (default: every type except land).').optional(),
  months: numberParam({ min: 6, max: 60, int: true, description: 'Number of complete months, ending with the last month the data covers (default 24).' }).default(24),
});

export const marketActivity = defineEndpoint({
  method: 'get',
  path: '/v1/market-activity',
  tag: 'Market analytics',
  summary: 'Monthly sales activity of a zone',
  description:
    'Clean sales per month (no bulk, outlier or VEFA sale; months without sales count 0) over `months` complete months ending ' +
    'with the last month before today that the data covers. activity_level: high above +30 % of the monthly average, low below ' +
    '−30 %, normal otherwise. Seasonality: the 3 calendar months with the most and the fewest sales on average over the window.',
  query,
  undocumentedQuery: RADIUS_PARAMS,
  response: z.object({
    location: zoneSchema,
    period: z.object({ months: z.number().int(), date_debut: z.string(), date_fin: z.string() }),
    total_transactions: z.number().int(),
    monthly_average: z.number(),
    monthly_data: z.array(
      z.object({
        month: z.string().openapi({ description: 'YYYY-MM.' }),
        count: z.number().int(),
        activity_level: z.enum(['high', 'normal', 'low']),
        vs_average_pct: z.number().nullable().openapi({ description: 'Count against the monthly average, in %; null when the window has no sale.' }),
        prix_m2_median: z.number().nullable(),
      }),
    ),
    seasonality: z.object({
      most_active_months: z.array(z.string()).openapi({ description: 'French lower-case month names, busiest first.' }),
      least_active_months: z.array(z.string()).openapi({ description: 'French lower-case month names, quietest first.' }),
    }),
  }),
  credits: 10,
  errors: ['missing_location', 'unsupported_location'],
  prepare({ query: q }) {
    const location = resolveLocation(q, { accept: ['code_postal', 'commune', 'code_departement'] });
    return { location, types: typesOf(q.type_local), months: q.months as number };
  },
  async coverage(p, call) {
    const end = await lastCompleteMonth(call);
    return { zone: p.location, window: { date_debut: firstDay(end - p.months + 1), date_fin: lastDay(end) } };
  },
  async handler(p, call) {
    const end = await lastCompleteMonth(call);
    const start = end - p.months + 1;
    const rows = await monthlyStats(call, p.location, p.types, start, end);
    const byMonth = new Map(rows.map((r) => [monthOf(r.mois), r]));
    const total = rows.reduce((n, r) => n + r.n, 0);
    const average = total / p.months;
    const monthly_data = Array.from({ length: p.months }, (_, i) => {
      const r = byMonth.get(start + i);
      const count = r?.n ?? 0;
      const vs = average > 0 ? (count / average - 1) * 100 : null;
      const level: ActivityLevel = vs === null ? 'normal' : vs > ACTIVITY_BAND_PCT ? 'high' : vs < -ACTIVITY_BAND_PCT ? 'low' : 'normal';
      return { month: monthLabel(start + i), count, activity_level: level, vs_average_pct: round2(vs), prix_m2_median: round2(r?.m_med ?? null) };
    });

    // Mean count of each calendar month over its occurrences in the window (a 30-month window has some months twice).
    const seasons = MONTH_NAMES.map((name, m) => {
      const counts = monthly_data.filter((_, i) => (start + i) % 12 === m).map((d) => d.count);
      return { name, m, mean: counts.length ? counts.reduce((a, b) => a + b, 0) / counts.length : null };
    }).filter((s) => s.mean !== null);
    const ranked = (sign: number) =>
      total === 0 ? [] : [...seasons].sort((a, b) => sign * (b.mean! - a.mean!) || a.m - b.m).slice(0, SEASON_MONTHS).map((s) => s.name);

    return {
      location: zoneOf(p.location),
      period: { months: p.months, date_debut: firstDay(start), date_fin: lastDay(end) },
      total_transactions: total,
      monthly_average: round2(average),
      monthly_data,
      seasonality: { most_active_months: ranked(1), least_active_months: ranked(-1) },
    };
  },
});
