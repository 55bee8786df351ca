// GET /v1/stats/dpe-premium (10 credits): €/m² of a postal code's or commune's clean house and flat sales per class of
// the nearest diagnostic within 200 m in the same département (the dpe_ventes_200m mart), against their overall median.
import { ApiError } from '../../errors';
import { round2, z } from '../../params';
import { defineEndpoint } from '../../platform';
import { CLASSES, classStats, dpeLocationFields, dpeZone, noticeOf, typeLocal2, type Classe } from '../dpe/common';
import { RADIUS_PARAMS } from '../../location';

const query = z.object({ ...dpeLocationFields, type_local: typeLocal2 });

const classSchema = z.object({
  count: z.number().int(),
  median_prix_m2: z.number().nullable(),
  p25_prix_m2: z.number().nullable(),
  p75_prix_m2: z.number().nullable(),
  vs_median_pct: z.number().nullable().openapi({ description: 'Class median over the median of every crossed sale, minus 1, in percent: positive = premium.' }),
});

const response = z.object({
  classes: z.object(Object.fromEntries(CLASSES.map((c) => [c, classSchema])) as Record<Classe, typeof classSchema>).nullable()
    .openapi({ description: 'null when no sale of the zone was crossed with a diagnostic.' }),
  summary: z.string(),
  methodology: z.string(),
  filters: z.object({ code_postal: z.string().nullable(), commune: z.string().nullable(), type_local: z.string().nullable() }),
  notice: z.string().optional(),
});

const METHODOLOGY =
  'Clean sales of one house or flat (no bulk, outlier or VEFA sale) crossed with the nearest energy diagnostic (class A–G, ' +
  'not replaced) within 200 m in the same département, whatever its date: a looser rule than the per-sale matching of ' +
  '/v1/transactions/:id/dpe, so more sales are crossed, some with a neighbour\'s diagnostic. vs_median_pct compares each ' +
  'class\'s median €/m² with the median of all crossed sales of the zone.';

export const dpePremium = defineEndpoint({
  method: 'get',
  path: '/v1/stats/dpe-premium',
  tag: 'Energy (DPE)',
  summary: 'Price premium or discount per energy class',
  description: `${METHODOLOGY} code_postal or commune is required; code_departement narrows a commune name only.`,
  query,
  undocumentedQuery: RADIUS_PARAMS,
  response,
  credits: 10,
  errors: ['missing_location', 'unsupported_location'],
  prepare({ query: q }) {
    if (q.code_postal === undefined && q.commune === undefined) {
      if (q.code_departement !== undefined) throw new ApiError('unsupported_location', 'code_departement alone is not supported by dpe-premium: give code_postal or commune');
      if (q.latitude === undefined && q.longitude === undefined) throw new ApiError('missing_location', 'code_postal or commune is required');
    }
    const z = dpeZone(q, { typeLocal: q.type_local });
    return { ...z, filters: { code_postal: z.zone.code_postal, commune: z.zone.commune, type_local: q.type_local ?? null } };
  },
  coverage: ({ location }) => ({ zone: location, sources: ['dvf', 'dpe'] }),
  async handler(p, call) {
    const stats = await classStats(call, 'dpe_ventes_200m', p.where, p.params);
    const [{ n, overall }] = await call.ctx.db.query<{ n: number; overall: number | null }>(
      `select count(*) as n, median(prix_m2) as overall from dpe_ventes_200m where ${p.where}`, p.params);
    const notice = noticeOf(p.notices);
    if (!n || overall === null) {
      return { classes: null, summary: 'No sale of the zone could be crossed with an energy diagnostic within 200 m.', methodology: METHODOLOGY, filters: p.filters, ...notice };
    }
    const vs = (m: number | null) => (m === null ? null : round2((m / overall - 1) * 100));
    const classes = Object.fromEntries(CLASSES.map((c) => {
      const s = stats.get(c)!;
      return [c, { count: s.nb, median_prix_m2: round2(s.median), p25_prix_m2: round2(s.p25), p75_prix_m2: round2(s.p75), vs_median_pct: vs(s.median) }];
    })) as z.input<typeof response>['classes'];
    const ranked = CLASSES.filter((c) => stats.get(c)!.nb > 0).map((c) => ({ c, v: vs(stats.get(c)!.median)! }));
    const best = ranked.reduce((a, b) => (b.v > a.v ? b : a));
    const worst = ranked.reduce((a, b) => (b.v < a.v ? b : a));
    const fmt = (v: number) => `${v >= 0 ? '+' : ''}${v.toFixed(1)} %`;
    const summary = `${n} sales crossed; median ${Math.round(overall)} €/m². Class ${best.c}: ${fmt(best.v)} against the median; class ${worst.c}: ${fmt(worst.v)}.`;
    return { classes, summary, methodology: METHODOLOGY, filters: p.filters, ...notice };
  },
});
