// GET /v1/bdnb/renovation-score (10 credits): how far sales in buildings built before 1975 sit below the zone's
// median €/m². The formula is in docs/methods.md and uses only figures of this response (the zone median is
// age-stats' prix_m2_median_zone).
import { round2, z } from '../../params';
import { defineEndpoint } from '../../platform';
import { OLD_BEFORE, prepareZone, zoneQuery } from './common';
import { RADIUS_PARAMS } from '../../location';

/** The score is not computed below this many opportunities (specification: the zone is too illiquid). */
const MIN_OPPORTUNITIES = 10;
/** Score points per point of discount: a 15 % discount scores 60 ("significant"), 25 % or more scores 100. */
const POINTS_PER_PCT = 4;

/** The published score of a discount (decote_vs_zone_pct, rounded to the cent as published). */
function renovationScore(decotePct: number): number {
  return Math.min(100, Math.max(0, Math.round(-decotePct * POINTS_PER_PCT)));
}

export const bdnbRenovationScore = defineEndpoint({
  method: 'get',
  path: '/v1/bdnb/renovation-score',
  tag: 'Buildings (BDNB)',
  summary: 'Renovation-potential score of a zone',
  description:
    `Opportunities are clean sales (every year loaded) in buildings built before ${OLD_BEFORE} sold below the zone’s median €/m². ` +
    `score = clamp(round(−decote_vs_zone_pct × ${POINTS_PER_PCT}), 0, 100): 0 = no measurable discount, 60 or more = significant; ` +
    `null below ${MIN_OPPORTUNITIES} opportunities. latitude/longitude: unsupported_location.`,
  query: zoneQuery,
  undocumentedQuery: RADIUS_PARAMS,
  response: z.object({
    score: z.number().int().nullable().openapi({ description: `0–100; null below ${MIN_OPPORTUNITIES} opportunities.` }),
    nb_opportunites: z.number().int().openapi({ description: `Sales in pre-${OLD_BEFORE} buildings below prix_m2_median_zone.` }),
    prix_m2_median_vieux: z.number().nullable().openapi({ description: `Median €/m² of all sales in pre-${OLD_BEFORE} buildings.` }),
    prix_m2_median_zone: z.number().nullable(),
    annee_construction_moy: z.number().nullable().openapi({ description: 'Mean construction year of the opportunities.' }),
    materiaux_murs_principal: z.string().nullable().openapi({ description: 'Most frequent wall material of the opportunities.' }),
    decote_vs_zone_pct: z.number().nullable().openapi({ description: '(prix_m2_median_vieux / prix_m2_median_zone − 1) × 100.' }),
    total_transactions_zone: z.number().int().openapi({ description: 'Clean sales of the zone and type (matched or not).' }),
    message: z.string().optional().openapi({ description: 'Why score is null.' }),
  }),
  credits: 10,
  errors: ['missing_location', 'unsupported_location'],
  prepare: ({ query: q }) => prepareZone(q, 'bdnb/renovation-score'),
  coverage: ({ location }) => ({ zone: location, sources: ['dvf', 'bdnb'] }),
  async handler({ where, params }, { ctx }) {
    const [r] = await ctx.db.query<{ zone_med: number | null; zone_n: number; old_med: number | null; opp: number; opp_year: number | null; wall: string | null }>(
      `with zone as (select median(prix_m2) as med, count(*) as n from ventes where ${where}),
       old as (select * from bdnb_ventes where ${where} and annee_construction < ${OLD_BEFORE}),
       opp as (select o.* from old o, zone z where o.prix_m2 < z.med)
       select z.med as zone_med, z.n as zone_n,
         (select median(prix_m2) from old) as old_med,
         (select count(*) from opp) as opp,
         (select avg(annee_construction) from opp) as opp_year,
         (select mat_mur_txt from opp where mat_mur_txt is not null group by all order by count(*) desc, mat_mur_txt limit 1) as wall
       from zone z`,
      params,
    );
    const decote = r.zone_med && r.old_med !== null ? round2((r.old_med / r.zone_med - 1) * 100) : null;
    const computable = r.opp >= MIN_OPPORTUNITIES && decote !== null;
    return {
      score: computable ? renovationScore(decote) : null,
      nb_opportunites: r.opp,
      prix_m2_median_vieux: round2(r.old_med),
      prix_m2_median_zone: round2(r.zone_med),
      annee_construction_moy: round2(r.opp_year),
      materiaux_murs_principal: r.wall,
      decote_vs_zone_pct: decote,
      total_transactions_zone: r.zone_n,
      ...(computable ? {} : { message: `score not computed: ${r.opp} opportunities, fewer than ${MIN_OPPORTUNITIES} (zone too illiquid)` }),
    };
  },
});
