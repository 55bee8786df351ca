// GET /v1/dpe/evolution-prime-verte (10 credits): year by year since 2018, the median €/m² of sales matched to an A or B
// diagnostic against those matched to F or G (dpe_ventes), for a postal code or commune.
import { ApiError } from '../../errors';
import { round2, z } from '../../params';
import { defineEndpoint } from '../../platform';
import { dpeLocationFields, dpeZone, noticeOf, typeLocal2 } from './common';
import { RADIUS_PARAMS } from '../../location';

const FIRST_YEAR = 2018;
const MIN_GROUP = 10;
/** Trend threshold: the gap must move by more than this many points a year (least-squares slope). */
const TREND_POINTS_PER_YEAR = 1;
const PRE_REFORM = 'pre-reform DPE';

const query = z.object({ ...dpeLocationFields, type_local: typeLocal2 });

const response = z.object({
  series: z.array(z.object({
    annee: z.number().int(),
    nb_AB: z.number().int(),
    prix_m2_median_AB: z.number(),
    nb_FG: z.number().int(),
    prix_m2_median_FG: z.number(),
    gap_pct: z.number().openapi({ description: '(median AB − median FG) / median FG × 100.' }),
    methodology_note: z.string().nullable().openapi({ description: `'${PRE_REFORM}' when a diagnostic behind the year's figures was established before July 2021 (the former method), else null.` }),
  })),
  trend: z.enum(['widening', 'stable', 'narrowing']).nullable(),
  methodology: z.string(),
  filters: z.object({ code_postal: z.string().nullable(), commune: z.string().nullable(), type_local: z.string().nullable() }),
  notice: z.string().optional(),
});

/** Least-squares slope of y over x. */
function slope(points: Array<[number, number]>): number {
  const n = points.length;
  const mx = points.reduce((a, [x]) => a + x, 0) / n;
  const my = points.reduce((a, [, y]) => a + y, 0) / n;
  const sxy = points.reduce((a, [x, y]) => a + (x - mx) * (y - my), 0);
  const sxx = points.reduce((a, [x]) => a + (x - mx) ** 2, 0);
  return sxx ? sxy / sxx : 0;
}

export const dpeEvolutionPrimeVerte = defineEndpoint({
  method: 'get',
  path: '/v1/dpe/evolution-prime-verte',
  tag: 'Energy (DPE)',
  summary: 'Yearly price gap between A+B and F+G dwellings',
  description:
    `code_postal or commune only (code_departement: unsupported_location). Years from ${FIRST_YEAR} with at least ${MIN_GROUP} ` +
    `A+B and ${MIN_GROUP} F+G matched sales. trend (3 years or more): the least-squares slope of gap_pct over the years, ` +
    `widening above +${TREND_POINTS_PER_YEAR} point a year, narrowing below −${TREND_POINTS_PER_YEAR}, stable otherwise.`,
  query,
  undocumentedQuery: RADIUS_PARAMS,
  response,
  credits: 10,
  errors: ['missing_location', 'unsupported_location'],
  prepare({ query: q }) {
    if (q.code_departement !== undefined) throw new ApiError('unsupported_location', 'code_departement is not accepted by evolution-prime-verte: give code_postal or commune');
    const z = dpeZone(q, { accept: ['code_postal', 'commune'], typeLocal: q.type_local, where: [`annee >= ${FIRST_YEAR}`] });
    return { ...z, filters: { code_postal: z.zone.code_postal, commune: z.zone.commune, type_local: q.type_local ?? null } };
  },
  coverage: ({ location }) => ({ zone: location, sources: ['dvf', 'dpe'] }),
  async handler(p, { ctx }) {
    const rows = await ctx.db.query<{ annee: number; nb_ab: number; med_ab: number | null; nb_fg: number; med_fg: number | null; pre: boolean }>(
      `select annee,
         count(*) filter (classe_energie in ('A', 'B')) as nb_ab, median(prix_m2) filter (classe_energie in ('A', 'B')) as med_ab,
         count(*) filter (classe_energie in ('F', 'G')) as nb_fg, median(prix_m2) filter (classe_energie in ('F', 'G')) as med_fg,
         coalesce(bool_or(avant_reforme_2021) filter (classe_energie in ('A', 'B', 'F', 'G')), false) as pre
       from dpe_ventes where ${p.where} and prix_m2 is not null group by annee order by annee`, p.params);
    const series = rows.filter((r) => r.nb_ab >= MIN_GROUP && r.nb_fg >= MIN_GROUP).map((r) => ({
      annee: r.annee, nb_AB: r.nb_ab, prix_m2_median_AB: round2(r.med_ab!), nb_FG: r.nb_fg, prix_m2_median_FG: round2(r.med_fg!),
      gap_pct: round2(((r.med_ab! - r.med_fg!) / r.med_fg!) * 100), methodology_note: r.pre ? PRE_REFORM : null,
    }));
    const s = series.length >= 3 ? slope(series.map((x) => [x.annee, x.gap_pct])) : null;
    const trend = s === null ? null : s > TREND_POINTS_PER_YEAR ? ('widening' as const) : s < -TREND_POINTS_PER_YEAR ? ('narrowing' as const) : ('stable' as const);
    return {
      series, trend,
      methodology: `Clean house and flat sales matched to a diagnostic (rules of /v1/dpe/prix-par-classe); per year, median €/m² of classes A+B and F+G; years with fewer than ${MIN_GROUP} sales in either group are left out. Before July 2021 diagnostics follow the former method (${PRE_REFORM}).`,
      filters: p.filters,
      ...noticeOf(p.notices),
    };
  },
});
