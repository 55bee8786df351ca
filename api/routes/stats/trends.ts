// GET /v1/stats/trends (10 credits, cached 24 h): sales count and median prices per month, quarter or year, with the
// year-over-year change of each period and the overall trend of the window.
import { locationEchoSchema, locationFields, resolveLocation, type Location } from '../../location';
import { booleanParam, dateParam, enumParam, isoDay, round2, TYPE_LOCAL_4, yearsBefore, z } from '../../params';
import { loadedDepartements, salesSpan, zoneDepartements } from '../../horizon';
import { defineEndpoint, type Call } from '../../platform';
import { cleaningOf, dateWindow, memoryIndexFor, salesWhere, zoneQueryOf, type SalesFilter } from '../../sales/filter';
import { direction, DIRECTIONS, pctChange, typesOf } from '../../sales/analytics';

const TRENDS_DEFAULT_YEARS = 5;
const LARGE_ZONE_MAX_YEARS = 3;
const GRANULARITIES = ['month', 'quarter', 'year'] as const;
export type Granularity = (typeof GRANULARITIES)[number];

const query = z.object({
  ...locationFields,
  type_local: enumParam(TYPE_LOCAL_4, 'Type of the sale’s main property (default: every type except land).').optional(),
  granularity: enumParam(GRANULARITIES, 'Length of a period (default quarter).').default('quarter'),
  date_debut: dateParam(`First day (default ${TRENDS_DEFAULT_YEARS} years before date_fin; at most ${LARGE_ZONE_MAX_YEARS} years before it for départements, Paris and 75015–75020).`, '2024-01-01').optional(),
  date_fin: dateParam('Last day (default: today).', '2024-12-31').optional(),
  exclude_bulk_sales: booleanParam('Exclude sales of several dwellings or premises for one price (default true).').default(true),
  exclude_outliers: booleanParam('Exclude aberrant prices (default true).').default(true),
  exclude_vefa: booleanParam('Exclude off-plan sales (default true).').default(true),
});

const trendSchema = z.object({
  period: z.string().openapi({ description: 'YYYY-MM, YYYY-Qn or YYYY.' }),
  transaction_count: z.number().int(),
  price: z.object({ median: z.number().nullable(), avg: z.number().nullable() }),
  price_per_m2: z.object({ median: z.number().nullable() }),
  yoy_change: z.object({
    price_median_pct: z.number().nullable().openapi({ description: 'Change of the median price against the same period a year earlier, in %.' }),
    price_m2_pct: z.number().nullable().openapi({ description: 'Change of the median €/m² against the same period a year earlier, in %.' }),
  }),
});

const trendsSummarySchema = z.object({
  total_transactions: z.number().int(),
  overall_trend: z.enum(DIRECTIONS).nullable().openapi({ description: 'From total_change_pct: increasing above +2 %, decreasing below −2 %, stable otherwise; null with fewer than 2 complete periods.' }),
  total_change_pct: z.number().nullable().openapi({
    description: 'Median €/m² of the last period against the first (median price when either has no €/m²), in %, over the periods entirely inside the window.',
  }),
});

type Trend = z.output<typeof trendSchema>;
type TrendsSummary = z.output<typeof trendsSummarySchema>;

// Fixed SQL fragments chosen from the validated enum: sales are grouped by truncated date (cheap), labelled after.
const PERIOD_SQL: Record<Granularity, { unit: string; label: string }> = {
  month: { unit: 'month', label: `strftime(p, '%Y-%m')` },
  quarter: { unit: 'quarter', label: `year(p) || '-Q' || quarter(p)` },
  year: { unit: 'year', label: `year(p)::VARCHAR` },
};

/** The label of the period one year before `period` ('2024-03' → '2023-03', '2024-Q2' → '2023-Q2', '2024' → '2023'). */
const yearBefore = (period: string) => `${Number(period.slice(0, 4)) - 1}${period.slice(4)}`;

/** First and last day of a period label ('2024-03', '2024-Q2' or '2024'). */
function periodSpan(period: string): [string, string] {
  const year = Number(period.slice(0, 4));
  const [m0, months] = period.length === 4 ? [0, 12] : period[5] === 'Q' ? [(Number(period[6]) - 1) * 3, 3] : [Number(period.slice(5, 7)) - 1, 1];
  const day = (y: number, m: number, d: number) => new Date(Date.UTC(y, m, d)).toISOString().slice(0, 10);
  return [day(year, m0, 1), day(year, m0 + months, 0)];
}

/**
 * The periods that have sales, their year-over-year changes and the summary of the window. A change is computed only
 * between two periods that hold data for their whole length (inside the window, and inside the months of the zone's
 * loaded sales): otherwise it is null and `partial` lists the period, for the notice (docs/decisions.md, Data horizon).
 */
export async function trendsFor(call: Call, f: SalesFilter, granularity: Granularity): Promise<{ trends: Trend[]; summary: TrendsSummary; partial: string[] }> {
  const span = zoneSpan(call, f.location);
  const rows = await periodRows(call, f, granularity);
  const byPeriod = new Map(rows.map((r) => [r.period, { p: round2(r.p_med), m: round2(r.m_med) }]));
  const loaded = await span;
  const whole = (period: string) => {
    const [start, end] = periodSpan(period);
    return start >= f.date_debut && end <= f.date_fin && (!loaded || (start.slice(0, 7) >= loaded.first.slice(0, 7) && end.slice(0, 7) <= loaded.last.slice(0, 7)));
  };
  const partial: string[] = [];
  const trends = rows.map((r) => {
    const before = byPeriod.get(yearBefore(r.period));
    const comparable = whole(r.period) && whole(yearBefore(r.period));
    if (before && !comparable) partial.push(r.period);
    return {
      period: r.period,
      transaction_count: r.n,
      price: { median: round2(r.p_med), avg: round2(r.p_avg) },
      price_per_m2: { median: round2(r.m_med) },
      yoy_change: comparable
        ? { price_median_pct: pctChange(round2(r.p_med), before?.p), price_m2_pct: pctChange(round2(r.m_med), before?.m) }
        : { price_median_pct: null, price_m2_pct: null },
    };
  });
  // A period the window cuts (it starts mid-quarter by default) would compare a few weeks of sales: the summary
  // compares the first and last periods that lie entirely inside the window.
  const complete = trends.filter((t) => {
    const [start, end] = periodSpan(t.period);
    return start >= f.date_debut && end <= f.date_fin;
  });
  let total: number | null = null;
  if (complete.length >= 2) {
    const first = complete[0];
    const last = complete[complete.length - 1];
    total =
      first.price_per_m2.median !== null && last.price_per_m2.median !== null
        ? pctChange(last.price_per_m2.median, first.price_per_m2.median)
        : pctChange(last.price.median, first.price.median);
  }
  return {
    trends,
    summary: { total_transactions: trends.reduce((n, t) => n + t.transaction_count, 0), overall_trend: direction(total), total_change_pct: total },
    partial,
  };
}

export interface PeriodRow {
  period: string;
  n: number;
  p_med: number;
  p_avg: number;
  m_med: number | null;
}

const PERIOD_MONTHS: Record<Granularity, 1 | 3 | 12> = { month: 1, quarter: 3, year: 12 };

/** The label of the period starting on `start` (YYYY-MM-DD): '2024-03', '2024-Q2' or '2024', as PERIOD_SQL writes it. */
function periodLabel(start: string, granularity: Granularity): string {
  if (granularity === 'year') return start.slice(0, 4);
  if (granularity === 'month') return start.slice(0, 7);
  return `${start.slice(0, 4)}-Q${Math.floor((Number(start.slice(5, 7)) - 1) / 3) + 1}`;
}

/** Count, price median and mean, €/m² median of each period of the window with sales, in order (unrounded). */
export async function periodRows(call: Call, f: SalesFilter, granularity: Granularity): Promise<PeriodRow[]> {
  const memory = memoryIndexFor(call, f);
  if (!memory) return periodRowsSql(call, f, granularity);
  return memory.byPeriod(zoneQueryOf(f), PERIOD_MONTHS[granularity]).map(({ start, stats }) => ({
    period: periodLabel(start, granularity),
    n: stats.count,
    p_med: stats.price.median!,
    p_avg: stats.price.avg!,
    m_med: stats.price_per_m2.median,
  }));
}

/** periodRows in SQL over `ventes`: the path of radius searches, and the independent computation the tests compare to. */
export function periodRowsSql(call: Call, f: SalesFilter, granularity: Granularity): Promise<PeriodRow[]> {
  const { where, params } = salesWhere(f);
  return call.ctx.db.query<PeriodRow>(
    `select ${PERIOD_SQL[granularity].label} as period, n, p_med, p_avg, m_med from (
       select date_trunc('${PERIOD_SQL[granularity].unit}', date_mutation) as p, count(*) as n, median(valeur_fonciere) as p_med,
         avg(valeur_fonciere) as p_avg, median(prix_m2) as m_med
       from ventes where ${where} group by p
     ) order by p`,
    params,
  );
}

/** The first and last loaded sale of the zone's départements that have sales (null when none). */
async function zoneSpan(call: Call, location: Location): Promise<{ first: string; last: string } | null> {
  const departements = await zoneDepartements(call, location);
  const loaded = await loadedDepartements(call, 'dvf');
  return salesSpan(call, loaded === 'all' ? departements : departements.filter((d) => loaded.includes(d)));
}

/** The notice of the periods whose year-over-year change is null because one of the two periods is cut. */
export function partialNotice(partial: string[]): string | undefined {
  if (!partial.length) return undefined;
  return `yoy_change is null for ${partial.join(', ')}: the period or the one a year before it is cut by the window or by the loaded sales, and a change is only computed between whole periods.`;
}

/** Départements, Paris (the city or an arrondissement) and postal codes 75015–75020 have a window of at most 3 years. */
function isLargeZone(location: Location): boolean {
  const cp = location.echo.code_postal;
  if (location.kind === 'code_departement') return true;
  if (location.kind === 'commune') return location.communes.every((c) => c.departement === '75');
  return location.kind === 'code_postal' && cp !== null && cp >= '75015' && cp <= '75020';
}

/** The window of a trends request: 5 years by default, capped for large zones, each with its notice. */
export function trendsWindow(q: { date_debut?: string; date_fin?: string }, now: Date, location: Location): { date_debut: string; date_fin: string; notice?: string } {
  const w = dateWindow(q, now, TRENDS_DEFAULT_YEARS);
  if (!isLargeZone(location)) return w;
  const earliest = isoDay(yearsBefore(new Date(`${w.date_fin}T00:00:00Z`), LARGE_ZONE_MAX_YEARS));
  if (w.date_debut >= earliest) return w;
  return {
    date_debut: earliest,
    date_fin: w.date_fin,
    notice: `the window is limited to ${LARGE_ZONE_MAX_YEARS} years for départements, Paris and postal codes 75015–75020: date_debut set to ${earliest}.`,
  };
}

export const statsTrends = defineEndpoint({
  method: 'get',
  path: '/v1/stats/trends',
  tag: 'Market statistics',
  summary: 'Price trends of a zone per month, quarter or year',
  description:
    'Sales count, median and mean price and median €/m² per calendar period (cut by the window; only periods with sales are listed), ' +
    'with the change against the same period a year earlier. Default window 5 years; at most 3 years for départements, Paris ' +
    '(city or arrondissement) and postal codes 75015–75020, with a notice.',
  query,
  response: z.object({
    location: locationEchoSchema.extend({ type_local: z.string().nullable(), date_debut: z.string(), date_fin: z.string() }),
    granularity: z.enum(GRANULARITIES),
    trends: z.array(trendSchema),
    summary: trendsSummarySchema,
    notice: z.string().optional(),
  }),
  credits: 10,
  cacheTtlSeconds: 24 * 3600,
  errors: ['missing_location', 'unsupported_location'],
  prepare({ query: q }, { now }) {
    const location = resolveLocation(q, { accept: ['code_postal', 'commune', 'code_departement', 'radius'] });
    const w = trendsWindow(q, now, location);
    const filter: SalesFilter = { location, types: typesOf(q.type_local), date_debut: w.date_debut, date_fin: w.date_fin, ...cleaningOf(q) };
    const notices = [...location.notices, ...(w.notice ? [w.notice] : [])];
    return { filter, granularity: q.granularity as Granularity, typeLocal: q.type_local ?? null, notices };
  },
  coverage: ({ filter }) => ({ zone: filter.location, window: filter }),
  async handler(p, call) {
    const { trends, summary, partial } = await trendsFor(call, p.filter, p.granularity);
    const notices = [...p.notices, ...(partialNotice(partial) ? [partialNotice(partial)!] : [])];
    return {
      location: { ...p.filter.location.echo, type_local: p.typeLocal, date_debut: p.filter.date_debut, date_fin: p.filter.date_fin },
      granularity: p.granularity,
      trends,
      summary,
      ...(notices.length ? { notice: notices.join(' ') } : {}),
    };
  },
});
