// GET /v1/dpe/prix-par-classe (10 credits, cached 24 h): €/m² of the clean house and flat sales of a zone per energy
// class of their matched diagnostic (dpe_ventes), the coverage of the matching, and the gap of each class to class D.
import { numberParam, round2, z } from '../../params';
import { defineEndpoint } from '../../platform';
import { CLASSES, classStats, classStatsSchema, dpeLocationFields, dpeZone, gapVsD, MIN_CLASS_SALES, noticeOf, typeLocal2, type Classe } from './common';
import { RADIUS_PARAMS } from '../../location';

const query = z.object({
  ...dpeLocationFields,
  type_local: typeLocal2,
  annee_min: numberParam({ min: 2000, max: 2100, int: true, description: 'Only sales of this year or later.' }).optional(),
});

const GAPS = ['A', 'B', 'C', 'E', 'F', 'G'] as const;

const response = z.object({
  nb_transactions_avec_dpe: z.number().int().openapi({ description: 'Sales matched to a diagnostic with a class A–G.' }),
  nb_transactions_total: z.number().int().openapi({ description: 'Clean house and flat sales of the zone (no outlier, bulk or VEFA sale): the sales the matching considers.' }),
  taux_couverture_dpe: z.number().nullable().openapi({ description: 'nb_transactions_avec_dpe / nb_transactions_total (0 to 1).' }),
  par_classe: z.object(Object.fromEntries(CLASSES.map((c) => [c, classStatsSchema.extend({ statistically_fragile: z.boolean() })])) as Record<Classe, ReturnType<typeof classStatsSchema.extend<{ statistically_fragile: z.ZodBoolean }>>>),
  prime_verte: z.object(Object.fromEntries(GAPS.map((c) => [`${c}_vs_D`, z.number().nullable()])) as Record<`${(typeof GAPS)[number]}_vs_D`, z.ZodNullable<z.ZodNumber>>)
    .nullable().openapi({ description: `Median €/m² of each class over class D's, minus 1 (0.1 = 10 % premium); null when class D has fewer than ${MIN_CLASS_SALES} sales.` }),
  methodology: z.string(),
  filters: z.object({ code_postal: z.string().nullable(), commune: z.string().nullable(), code_departement: z.string().nullable(), type_local: z.string().nullable(), annee_min: z.number().nullable() }),
  notice: z.string().optional(),
});

export const METHODOLOGY_MATCH =
  'Each clean sale of one house or flat (DVF: no bulk, outlier or VEFA sale) is matched to at most one diagnostic: first by ' +
  'cadastral reference (the diagnostic on the same parcel within 50 m; for a flat, habitable surface within ±35 %), else by ' +
  'proximity (within 50 m, surface within ±35 %), preferring the diagnostic established closest before the sale (valid from ' +
  '10 years before to 90 days after it). Replaced diagnostics and classes outside A–G are left out.';

export const dpePrixParClasse = defineEndpoint({
  method: 'get',
  path: '/v1/dpe/prix-par-classe',
  tag: 'Energy (DPE)',
  summary: 'Price per m² by energy class',
  description: `${METHODOLOGY_MATCH} statistically_fragile: fewer than ${MIN_CLASS_SALES} sales in the class. prime_verte needs ${MIN_CLASS_SALES} class-D sales.`,
  query,
  undocumentedQuery: RADIUS_PARAMS,
  response,
  credits: 10,
  cacheTtlSeconds: 24 * 3600,
  errors: ['missing_location', 'unsupported_location'],
  prepare({ query: q }) {
    // Both types by default: the count of clean sales below must not take the other kinds of property.
    const types = q.type_local ? [q.type_local] : ['Maison', 'Appartement'];
    const z = dpeZone(q, {
      where: [...(q.annee_min !== undefined ? ['annee >= $annee_min'] : []), `type_local in (${types.map((_, i) => `$t${i}`).join(', ')})`],
      params: { ...(q.annee_min !== undefined && { annee_min: q.annee_min }), ...Object.fromEntries(types.map((t, i) => [`t${i}`, t])) },
    });
    return { ...z, filters: { ...z.zone, type_local: q.type_local ?? null, annee_min: q.annee_min ?? null } };
  },
  coverage: ({ location }) => ({ zone: location, sources: ['dvf', 'dpe'] }),
  async handler(p, call) {
    // Both counts over the same zone, years and types: the sales the matching considered, and those it matched.
    const stats = await classStats(call, 'dpe_ventes', p.where, p.params);
    const [{ n }] = await call.ctx.db.query<{ n: number }>(
      `select count(*) as n from ventes where ${p.where} and not is_bulk_sale and not is_outlier and not is_vefa`, p.params);
    const avec = CLASSES.reduce((a, c) => a + stats.get(c)!.nb, 0);
    const par_classe = Object.fromEntries(CLASSES.map((c) => {
      const s = stats.get(c)!;
      return [c, { nb: s.nb, prix_m2_median: round2(s.median), prix_m2_p25: round2(s.p25), prix_m2_p75: round2(s.p75), statistically_fragile: s.nb < MIN_CLASS_SALES }];
    })) as z.input<typeof response>['par_classe'];
    const prime_verte = stats.get('D')!.nb >= MIN_CLASS_SALES
      ? (Object.fromEntries(GAPS.map((c) => [`${c}_vs_D`, gapVsD(stats, c)])) as z.input<typeof response>['prime_verte'])
      : null;
    return {
      nb_transactions_avec_dpe: avec, nb_transactions_total: n, taux_couverture_dpe: n ? Math.round((avec / n) * 10_000) / 10_000 : null,
      par_classe, prime_verte,
      methodology: `${METHODOLOGY_MATCH} Prices per m²: sale price over built surface; quartiles interpolated. prime_verte: median of the class over median of class D, minus 1.`,
      filters: p.filters,
      ...noticeOf(p.notices),
    };
  },
});
