// GET /v1/bdnb/age-stats (10 credits): €/m² of the zone's clean sales per construction-age bracket of their building,
// against the zone's median (docs/methods.md).
import { round2, z } from '../../params';
import { defineEndpoint } from '../../platform';
import { prepareZone, TRANCHES, zoneQuery } from './common';
import { RADIUS_PARAMS } from '../../location';

/** Below this many sales a bracket's figures are flagged statistically_fragile (specification). */
const FRAGILE_BELOW = 30;

const trancheSchema = z.object({
  tranche: z.enum(TRANCHES),
  nb: z.number().int().openapi({ description: 'Clean sales in buildings of this bracket.' }),
  prix_m2_median: z.number().nullable(),
  prix_m2_moyen: z.number().nullable(),
  vs_zone_pct: z.number().nullable().openapi({ description: '(prix_m2_median / prix_m2_median_zone − 1) × 100; positive = above the zone median.' }),
  statistically_fragile: z.boolean().openapi({ description: `true below ${FRAGILE_BELOW} sales.` }),
});

export const bdnbAgeStats = defineEndpoint({
  method: 'get',
  path: '/v1/bdnb/age-stats',
  tag: 'Buildings (BDNB)',
  summary: '€/m² per construction-age bracket',
  description:
    'Clean DVF sales (no bulk sale, outlier or VEFA; every year loaded) matched to a BDNB building with a construction year, ' +
    'per bracket, against the median €/m² of all the zone’s clean sales. latitude/longitude: unsupported_location.',
  query: zoneQuery,
  undocumentedQuery: RADIUS_PARAMS,
  response: z.object({
    tranches: z.array(trancheSchema),
    prix_m2_median_zone: z.number().nullable().openapi({ description: 'Median €/m² of every clean sale of the zone and type (matched or not).' }),
    nb_total: z.number().int().openapi({ description: 'Sales counted in the brackets (Σ nb).' }),
  }),
  credits: 10,
  errors: ['missing_location', 'unsupported_location'],
  prepare: ({ query: q }) => prepareZone(q, 'bdnb/age-stats'),
  coverage: ({ location }) => ({ zone: location, sources: ['dvf', 'bdnb'] }),
  async handler({ where, params, departement, typeKey }, { ctx }) {
    let zone: { med: number | null } | undefined;
    let rows: Array<{ tranche: string; nb: number; med: number; avg: number }>;
    if (departement !== undefined) {
      // A whole département: its precomputed rows (the same figures, bdnb_age_stats_departements), the zone row first.
      const all = await ctx.db.query<{ tranche: string | null; nb: number; med: number; avg: number }>(
        'select tranche, nb, med, avg from bdnb_age_stats_departements where code_departement = $dep and type_key = $type',
        { dep: departement, type: typeKey },
      );
      zone = all.find((r) => r.tranche === null);
      rows = all.filter((r): r is (typeof all)[number] & { tranche: string } => r.tranche !== null);
    } else {
      [[zone], rows] = await Promise.all([
        ctx.db.query<{ med: number | null }>(`select median(prix_m2) as med from ventes where ${where}`, params),
        ctx.db.query<{ tranche: string; nb: number; med: number; avg: number }>(
          `select tranche, count(*) as nb, median(prix_m2) as med, avg(prix_m2) as avg
           from bdnb_ventes where ${where} and tranche is not null group by tranche`,
          params,
        ),
      ]);
    }
    const zoneMedian = zone?.med ?? null;
    const byTranche = new Map(rows.map((r) => [r.tranche, r]));
    const tranches = TRANCHES.map((tranche) => {
      const r = byTranche.get(tranche);
      const nb = r?.nb ?? 0;
      return {
        tranche,
        nb,
        prix_m2_median: round2(r?.med ?? null),
        prix_m2_moyen: round2(r?.avg ?? null),
        vs_zone_pct: r && zoneMedian ? round2((r.med / zoneMedian - 1) * 100) : null,
        statistically_fragile: nb < FRAGILE_BELOW,
      };
    });
    return { tranches, prix_m2_median_zone: round2(zoneMedian), nb_total: tranches.reduce((a, t) => a + t.nb, 0) };
  },
});
