// GET /v1/dpe/commune-stats (5 credits): the precomputed DPE × DVF figures of the communes of a zone (marts
// dpe_communes and dpe_communes_classes: communes with at least 30 crossings).
import { z } from '../../params';
import { round2 } from '../../params';
import { defineEndpoint } from '../../platform';
import { CLASSES, classStatsSchema, dpeLocationFields, dpeZone, noticeOf, type Classe } from './common';
import { RADIUS_PARAMS } from '../../location';

const query = z.object(dpeLocationFields);
const GAPS = ['A', 'B', 'F', 'G'] as const;

const response = z.object({
  results: z.array(z.object({
    commune: z.string(),
    code_commune: z.string(),
    code_postal: z.string().nullable().openapi({ description: 'The postal code of most of the commune\'s matched sales.' }),
    code_departement: z.string(),
    nb_transactions_avec_dpe: z.number().int(),
    prix_m2_par_classe: z.object(Object.fromEntries(CLASSES.map((c) => [c, classStatsSchema])) as Record<Classe, typeof classStatsSchema>),
    prime_verte: z.object(Object.fromEntries(GAPS.map((c) => [`${c}_vs_D`, z.number().nullable()])) as Record<`${(typeof GAPS)[number]}_vs_D`, z.ZodNullable<z.ZodNumber>>)
      .openapi({ description: 'Median €/m² of the class over class D\'s, minus 1; null when class D has fewer than 30 sales or the class none.' }),
    nb_passoires_3ans: z.number().int().openapi({ description: 'Matched sales since 2022 of class F or G.' }),
    pct_passoires_3ans: z.number().nullable().openapi({ description: 'Their share of the matched sales since 2022 (0 to 1).' }),
    computed_at: z.string(),
  })),
  notice: z.string().optional(),
});

interface CommuneRow {
  code_commune_actuel: string; commune: string | null; code_postal: string | null; code_departement: string; nb_transactions_avec_dpe: number;
  prime_verte_a_vs_d: number | null; prime_verte_b_vs_d: number | null; prime_verte_f_vs_d: number | null; prime_verte_g_vs_d: number | null;
  nb_passoires_3ans: number; pct_passoires_3ans: number | null; computed_at: string;
}

const r4 = (v: number | null) => (v === null ? null : Math.round(v * 10_000) / 10_000);

export const dpeCommuneStats = defineEndpoint({
  method: 'get',
  path: '/v1/dpe/commune-stats',
  tag: 'Energy (DPE)',
  summary: 'Precomputed DPE × DVF statistics per commune',
  description: 'Communes with at least 30 sales matched to a diagnostic; code_departement lists all of them in the département. Recomputed at each data build (computed_at).',
  query,
  undocumentedQuery: RADIUS_PARAMS,
  response,
  credits: 5,
  errors: ['missing_location', 'unsupported_location'],
  prepare: ({ query: q }) => dpeZone(q),
  coverage: ({ location }) => ({ zone: location, sources: ['dpe'] }),
  async handler(p, { ctx }) {
    const communes = await ctx.db.query<CommuneRow>(`select * from dpe_communes where ${p.where} order by code_commune_actuel`, p.params);
    // The per-class rows of the same communes, by the same zone condition (a département lists hundreds of communes).
    const classes = communes.length
      ? await ctx.db.query<{ code_commune_actuel: string; classe_energie: Classe; nb: number; prix_m2_median: number; prix_m2_p25: number; prix_m2_p75: number }>(
          `select k.* from dpe_communes_classes k join dpe_communes using (code_commune_actuel) where ${p.where}`, p.params)
      : [];
    const byCommune = new Map<string, Map<Classe, (typeof classes)[number]>>();
    for (const k of classes) {
      if (!byCommune.has(k.code_commune_actuel)) byCommune.set(k.code_commune_actuel, new Map());
      byCommune.get(k.code_commune_actuel)!.set(k.classe_energie, k);
    }
    const results = communes.map((c) => ({
      commune: c.commune ?? c.code_commune_actuel, code_commune: c.code_commune_actuel, code_postal: c.code_postal, code_departement: c.code_departement,
      nb_transactions_avec_dpe: c.nb_transactions_avec_dpe,
      prix_m2_par_classe: Object.fromEntries(CLASSES.map((k) => {
        const r = byCommune.get(c.code_commune_actuel)?.get(k);
        return [k, { nb: r?.nb ?? 0, prix_m2_median: round2(r?.prix_m2_median ?? null), prix_m2_p25: round2(r?.prix_m2_p25 ?? null), prix_m2_p75: round2(r?.prix_m2_p75 ?? null) }];
      })) as z.input<typeof response>['results'][number]['prix_m2_par_classe'],
      prime_verte: { A_vs_D: r4(c.prime_verte_a_vs_d), B_vs_D: r4(c.prime_verte_b_vs_d), F_vs_D: r4(c.prime_verte_f_vs_d), G_vs_D: r4(c.prime_verte_g_vs_d) },
      nb_passoires_3ans: c.nb_passoires_3ans, pct_passoires_3ans: r4(c.pct_passoires_3ans), computed_at: c.computed_at,
    }));
    return { results, ...noticeOf(p.notices) };
  },
});
