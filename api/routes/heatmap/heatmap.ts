// GET /v1/heatmap (15 credits, cached 24 h): €/m² per postal code (or commune) of a département or city, each zone
// placed at the mean of its sales' coordinates and ranked against the scope's median €/m².
import { getCommune } from '../../../lib/geo';
import { dvfName, locationFields, resolveLocation } from '../../location';
import { dateParam, enumParam, numberParam, round2, z } from '../../params';
import { defineEndpoint } from '../../platform';
import { dateWindow } from '../../sales/filter';

/** A zone is expensive above +10 % of the scope median €/m², affordable below −10 %, average in between. */
const RELATIVE_THRESHOLD_PCT = 10;
const DEFAULT_MIN_TRANSACTIONS = 10;

const query = z.object({
  code_departement: locationFields.code_departement.openapi({ example: '75' }),
  commune: locationFields.commune,
  type_local: enumParam(['Maison', 'Appartement'], 'Houses or flats; both when absent.').optional(),
  date_debut: dateParam('First day of the window (default: 1 year before date_fin, with a notice).', '2024-01-01').optional(),
  date_fin: dateParam('Last day of the window (default: today).', '2024-12-31').optional(),
  group_by: enumParam(['code_postal', 'commune'], 'Aggregation level (default code_postal).').default('code_postal'),
  min_transactions: numberParam({ min: 1, max: 1000, int: true, description: `Minimum sales for a zone to be listed (default ${DEFAULT_MIN_TRANSACTIONS}).` }).default(DEFAULT_MIN_TRANSACTIONS),
});

const zoneSchema = z.object({
  code_postal: z.string().nullable().openapi({ description: 'The postal code (group_by=code_postal); null when grouped by commune.' }),
  code_commune: z.string().nullable().openapi({ description: 'The INSEE code (group_by=commune); null when grouped by postal code.' }),
  name: z.string().openapi({ description: 'Commune name(s) of the zone, upper case (communes sharing a postal code joined by " / ").' }),
  centroid: z.object({ lat: z.number(), lon: z.number() }).nullable().openapi({ description: 'Mean latitude and longitude of the zone’s sales that have coordinates.' }),
  stats: z.object({ transaction_count: z.number().int(), price_m2_median: z.number(), price_m2_avg: z.number(), price_median: z.number() }),
  relative_position: z.enum(['expensive', 'average', 'affordable']),
});

type Zone = z.output<typeof zoneSchema>;

interface ZoneRow {
  total: boolean;
  zone: string | null;
  communes: string[] | null;
  n: number;
  m_med: number | null;
  m_avg: number | null;
  p_med: number | null;
  lat: number | null;
  lon: number | null;
}

// Column names come from this allow-list, never from the request.
const ZONE_COLUMN = { code_postal: 'code_postal', commune: 'code_commune_actuel' } as const;

const communeName = (code: string) => {
  const c = getCommune(code);
  return c ? dvfName(c.nom) : code;
};

const round6 = (v: number) => Math.round(v * 1e6) / 1e6;

export function relativePosition(zoneMedian: number, scopeMedian: number): Zone['relative_position'] {
  // The gap in % rounded to the hundredth, so that a zone exactly 10 % above is average whatever the float error.
  const gap = round2((zoneMedian / scopeMedian - 1) * 100);
  return gap > RELATIVE_THRESHOLD_PCT ? 'expensive' : gap < -RELATIVE_THRESHOLD_PCT ? 'affordable' : 'average';
}

export const heatmap = defineEndpoint({
  method: 'get',
  path: '/v1/heatmap',
  tag: 'Market analytics',
  summary: 'Price map of a département or city',
  description:
    'Median and mean €/m² and median price per postal code (or commune) of a département, a commune, or a whole city: ' +
    'commune=PARIS, LYON or MARSEILLE covers every arrondissement. Sales: single houses and flats with a built surface, ' +
    'bulk sales, outliers and off-plan sales excluded (as stats/market by default). relative_position compares the zone ' +
    'median €/m² with the scope median: expensive above +10 %, affordable below −10 %, average otherwise. Zones with ' +
    'fewer than min_transactions sales are left out (a notice says how many); their sales still count in scope_average.',
  query,
  response: z.object({
    scope: z.object({ department: z.string().nullable(), commune: z.string().nullable(), group_by: z.enum(['code_postal', 'commune']) }),
    property_type: z.enum(['Maison', 'Appartement']).nullable().openapi({ description: 'null: houses and flats together.' }),
    period: z.object({ start: z.string(), end: z.string() }),
    zones: z.array(zoneSchema),
    scope_average: z.object({ price_m2_median: z.number().nullable(), total_transactions: z.number().int() }),
    notice: z.string().optional(),
  }),
  credits: 15,
  cacheTtlSeconds: 24 * 3600,
  errors: ['missing_location', 'unsupported_location'],
  prepare({ query: q }, { now }) {
    const location = resolveLocation(q, { accept: ['commune', 'code_departement'] });
    const window = dateWindow(q, now, 1);
    const notices = [...location.notices, ...(window.notice ? [window.notice] : [])];
    return { location, window, typeLocal: q.type_local ?? null, groupBy: q.group_by, minTransactions: q.min_transactions as number, notices };
  },
  coverage: ({ location, window }) => ({ zone: location, window }),
  async handler(p, call) {
    const { location, window } = p;
    const params = { ...location.params, date_debut: window.date_debut, date_fin: window.date_fin, ...(p.typeLocal ? { type_local: p.typeLocal } : {}) };
    const rows = await call.ctx.db.query<ZoneRow>(
      `select grouping(zone) = 1 as total, zone, list(distinct code_commune_actuel order by code_commune_actuel) as communes,
         count(*) as n, median(prix_m2) as m_med, avg(prix_m2) as m_avg, median(valeur_fonciere) as p_med,
         avg(latitude) as lat, avg(longitude) as lon
       from (select ${ZONE_COLUMN[p.groupBy]} as zone, * from heatmap_ventes
             where ${location.where} and date_mutation between $date_debut::DATE and $date_fin::DATE
               ${p.typeLocal ? 'and type_local = $type_local' : ''})
       group by grouping sets ((zone), ())
       order by total, zone`,
      params,
    );
    const total = rows.find((r) => r.total);
    const scopeMedian = total?.m_med ?? null;
    const notices = [...p.notices];
    const listed = rows.filter((r) => !r.total && r.zone !== null);
    const zones: Zone[] = listed
      .filter((r) => r.n >= p.minTransactions)
      .map((r) => ({
        code_postal: p.groupBy === 'code_postal' ? r.zone : null,
        code_commune: p.groupBy === 'commune' ? r.zone : null,
        name: (r.communes ?? []).map(communeName).join(' / '),
        centroid: r.lat === null || r.lon === null ? null : { lat: round6(r.lat), lon: round6(r.lon) },
        stats: { transaction_count: r.n, price_m2_median: round2(r.m_med!), price_m2_avg: round2(r.m_avg!), price_median: round2(r.p_med!) },
        relative_position: relativePosition(r.m_med!, scopeMedian!),
      }));
    const left = listed.length - zones.length;
    if (!total?.n) notices.push('no sale in this scope and window: zones is empty.');
    else if (left > 0) notices.push(`${left} zone${left > 1 ? 's' : ''} with fewer than ${p.minTransactions} sales left out (their sales still count in scope_average).`);
    const unplaced = rows.find((r) => !r.total && r.zone === null)?.n ?? 0;
    if (unplaced > 0) notices.push(`${unplaced} sale${unplaced > 1 ? 's' : ''} without a ${p.groupBy === 'code_postal' ? 'postal code' : 'commune'} belong to no zone (they count in scope_average).`);
    return {
      scope: { department: location.echo.code_departement, commune: location.echo.commune, group_by: p.groupBy },
      property_type: p.typeLocal,
      period: { start: window.date_debut, end: window.date_fin },
      zones,
      scope_average: { price_m2_median: round2(scopeMedian), total_transactions: total?.n ?? 0 },
      ...(notices.length ? { notice: notices.join(' ') } : {}),
    };
  },
});
