// GET /v1/stats/compare (10 credits): the €/m² and prices of 2 to 5 zones over one window, ranked, with the cheapest
// zone named and each zone's change against the same window a year earlier.
import { ApiError, invalidParams } from '../../errors';
import { resolveLocation, type Location } from '../../location';
import { codeFromNumber, dateParam, enumParam, isoDay, required, round2, stringParam, yearsBefore, z } from '../../params';
import { defineEndpoint, type Call } from '../../platform';
import { zoneDepartements } from '../../horizon';
import { cleanSales, dateWindow, salesWhere } from '../../sales/filter';
import { pctChange } from '../../sales/analytics';

const MIN_LOCATIONS = 2;
const MAX_LOCATIONS = 5;

const query = z.object({
  // An array of objects (a tool call's JSON arguments) is taken as its JSON text.
  locations: required(z.preprocess(
    (v) => (Array.isArray(v) && v.some((x) => typeof x !== 'string') ? JSON.stringify(v) : v),
    stringParam({
      description: 'The zones: a JSON array of 2 to 5 objects, each with code_postal or commune, e.g. [{"code_postal":"75015"},{"commune":"BORDEAUX"}].',
      max: 2000,
      example: '[{"code_postal":"75015"},{"commune":"PARIS 18"}]',
    }),
  )),
  type_local: enumParam(['Maison', 'Appartement'] as const, 'Type of the sale’s main property (default Appartement).').default('Appartement'),
  date_debut: dateParam('First day of the window (default: 1 year before today, with a notice). The window ends today.', '2024-01-01').optional(),
});

/** The locations parameter as zones; every problem is an invalid_params naming `locations`. */
function parseLocations(raw: string): Location[] {
  const bad = (issue: string) => invalidParams([{ param: 'locations', issue }]);
  let items: unknown;
  try {
    items = JSON.parse(raw);
  } catch {
    throw bad('must be a JSON array of objects with code_postal or commune (not valid JSON)');
  }
  if (!Array.isArray(items)) throw bad('must be a JSON array of objects with code_postal or commune');
  if (items.length < MIN_LOCATIONS || items.length > MAX_LOCATIONS) throw bad(`must hold ${MIN_LOCATIONS} to ${MAX_LOCATIONS} locations (got ${items.length})`);
  return items.map((item, i) => {
    const o = (item ?? {}) as Record<string, unknown>;
    // A postal code sent as a JSON number of five digits is its digits (params.ts, codeFromNumber).
    const cp = codeFromNumber(o.code_postal);
    const commune = o.commune;
    if (typeof item !== 'object' || Array.isArray(item) || (cp === undefined && commune === undefined)) throw bad(`item ${i + 1} must be an object with code_postal or commune`);
    if (cp !== undefined && (typeof cp !== 'string' || !/^\d{5}$/.test(cp))) throw bad(`item ${i + 1}: code_postal must be a 5-digit string`);
    if (commune !== undefined && (typeof commune !== 'string' || !commune.trim())) throw bad(`item ${i + 1}: commune must be a non-empty string`);
    try {
      return resolveLocation({ code_postal: cp as string | undefined, commune: (commune as string | undefined)?.trim() }, { accept: ['code_postal', 'commune'] });
    } catch (e) {
      if (e instanceof ApiError && e.opts.details) throw bad(`item ${i + 1}: ${e.opts.details.map((d) => d.issue).join('; ')}`);
      throw e;
    }
  });
}

/** Paris arrondissements are shown by their postal code 75001–75020 (specification), even when named as a commune. */
function displayedPostalCode(location: Location): string | null {
  if (location.echo.code_postal) return location.echo.code_postal;
  const [c] = location.communes;
  const arrondissement = location.communes.length === 1 && c.type === 'arrondissement-municipal' && c.parent === '75056';
  return arrondissement ? `750${c.code.slice(3)}` : null;
}

async function zoneMetrics(call: Call, location: Location, type: string, window: { date_debut: string; date_fin: string }) {
  const previous = (d: string) => isoDay(yearsBefore(new Date(`${d}T00:00:00Z`), 1));
  const { where, params } = salesWhere(cleanSales(location, [type], previous(window.date_debut), window.date_fin));
  Object.assign(params, { cur_debut: window.date_debut, prev_fin: previous(window.date_fin) });
  // One pass over both windows: the current one, and the same dates a year earlier for yoy_price_change_pct.
  const [r] = await call.ctx.db.query<{ n: number; m_med: number | null; m_avg: number | null; p_med: number | null; m_prev: number | null }>(
    `select count(*) filter (cur) as n, median(prix_m2) filter (cur) as m_med, avg(prix_m2) filter (cur) as m_avg,
       median(valeur_fonciere) filter (cur) as p_med, median(prix_m2) filter (date_mutation <= $prev_fin::DATE) as m_prev
     from (select *, date_mutation >= $cur_debut::DATE as cur from ventes where ${where})`,
    params,
  );
  const price_m2_median = round2(r.m_med);
  const yoy = pctChange(price_m2_median, round2(r.m_prev));
  return {
    count: r.n,
    price_m2_median,
    price_m2_avg: round2(r.m_avg),
    price_median: round2(r.p_med),
    ...(yoy !== null ? { yoy_price_change_pct: yoy } : {}),
  };
}

export const statsCompare = defineEndpoint({
  method: 'get',
  path: '/v1/stats/compare',
  tag: 'Market statistics',
  summary: 'Compare 2 to 5 zones',
  description:
    'Clean sales (no bulk, outlier or VEFA sale) of each zone over the window. rank_price_m2 1 is the most expensive median €/m² ' +
    '(zones without a median are not ranked); winner_price_m2 is the cheapest zone. yoy_price_change_pct compares the median €/m² ' +
    'with the same dates a year earlier and is present when both exist. A Paris arrondissement is shown by its postal code.',
  query,
  response: z.object({
    type_local: z.string(),
    period: z.object({ date_debut: z.string(), date_fin: z.string() }),
    comparisons: z.array(
      z.object({
        location: z.object({ code_postal: z.string().nullable(), commune: z.string().nullable() }),
        metrics: z.object({
          count: z.number().int(),
          price_m2_median: z.number().nullable(),
          price_m2_avg: z.number().nullable(),
          price_median: z.number().nullable(),
          yoy_price_change_pct: z.number().optional(),
        }),
        rank_price_m2: z.number().int().nullable(),
      }),
    ),
    winner_price_m2: z.object({ code_postal: z.string().nullable(), label: z.string() }).nullable().openapi({ description: 'The cheapest zone by median €/m²; null when no zone has one.' }),
    notice: z.string().optional(),
  }),
  credits: 10,
  errors: ['missing_location'],
  prepare({ query: q }, { now }) {
    if (q.locations === undefined) throw new ApiError('missing_location', 'locations is required: a JSON array of 2 to 5 objects with code_postal or commune');
    const locations = parseLocations(q.locations);
    const window = dateWindow({ date_debut: q.date_debut }, now, 1);
    const notices = [...locations.flatMap((l) => l.notices), ...(window.notice ? [window.notice] : [])];
    return { locations, type: q.type_local as string, window: { date_debut: window.date_debut, date_fin: window.date_fin }, notices };
  },
  async coverage(p, call) {
    const departements = (await Promise.all(p.locations.map((l) => zoneDepartements(call, l)))).flat();
    return { zone: { departements }, window: p.window };
  },
  async handler(p, call) {
    const metrics = await Promise.all(p.locations.map((l) => zoneMetrics(call, l, p.type, p.window)));
    const comparisons = p.locations.map((l, i) => ({
      location: { code_postal: displayedPostalCode(l), commune: l.echo.commune },
      metrics: metrics[i],
    }));
    // Most expensive first; ties keep the order of the request.
    const priced = comparisons.map((c, i) => ({ c, i })).filter((x) => x.c.metrics.price_m2_median !== null);
    priced.sort((a, b) => b.c.metrics.price_m2_median! - a.c.metrics.price_m2_median! || a.i - b.i);
    const rank = new Map(priced.map((x, r) => [x.i, r + 1]));
    const cheapest = [...priced].sort((a, b) => a.c.metrics.price_m2_median! - b.c.metrics.price_m2_median! || a.i - b.i)[0]?.c;
    return {
      type_local: p.type,
      period: p.window,
      comparisons: comparisons.map((c, i) => ({ ...c, rank_price_m2: rank.get(i) ?? null })),
      winner_price_m2: cheapest ? { code_postal: cheapest.location.code_postal, label: cheapest.location.commune ?? cheapest.location.code_postal! } : null,
      ...(p.notices.length ? { notice: p.notices.join(' ') } : {}),
    };
  },
});
