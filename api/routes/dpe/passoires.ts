// GET /v1/dpe/passoires-thermiques (10 credits): share of energy sieves (classes F and G) among the sales of a zone
// matched to a diagnostic (dpe_ventes), from 2022, per dwelling type and per year.
import { round2, z } from '../../params';
import { defineEndpoint } from '../../platform';
import { dpeLocationFields, dpeZone, noticeOf, pct, typeLocal2 } from './common';
import { RADIUS_PARAMS } from '../../location';

const FIRST_YEAR = 2022;
const query = z.object({ ...dpeLocationFields, type_local: typeLocal2 });
const typeStat = z.object({ nb: z.number().int().openapi({ description: 'Sieves (F or G) of this type.' }), pct: z.number().nullable().openapi({ description: 'Share of the type\'s matched sales, percent.' }) });

const response = z.object({
  total_transactions_avec_dpe: z.number().int(),
  nb_passoires: z.number().int().openapi({ description: 'Matched sales whose diagnostic is class F or G.' }),
  pct_passoires: z.number().nullable().openapi({ description: 'nb_passoires / total_transactions_avec_dpe × 100.' }),
  par_type: z.object({ Appartement: typeStat, Maison: typeStat }),
  par_annee: z.array(z.object({ annee: z.number().int(), nb_passoires: z.number().int(), pct_passoires: z.number().nullable() })),
  filters: z.object({ code_postal: z.string().nullable(), commune: z.string().nullable(), code_departement: z.string().nullable(), type_local: z.string().nullable() }),
  notice: z.string().optional(),
});

export const dpePassoires = defineEndpoint({
  method: 'get',
  path: '/v1/dpe/passoires-thermiques',
  tag: 'Energy (DPE)',
  summary: 'Share of energy sieves (F, G) among sales',
  description: `Sales from ${FIRST_YEAR} matched to a diagnostic with a class A–G (matching rules: /v1/dpe/prix-par-classe).`,
  query,
  undocumentedQuery: RADIUS_PARAMS,
  response,
  credits: 10,
  errors: ['missing_location', 'unsupported_location'],
  prepare({ query: q }) {
    const z = dpeZone(q, { typeLocal: q.type_local, where: [`annee >= ${FIRST_YEAR}`, 'classe_energie is not null'] });
    return { ...z, filters: { ...z.zone, type_local: q.type_local ?? null } };
  },
  coverage: ({ location }) => ({ zone: location, sources: ['dvf', 'dpe'] }),
  async handler(p, { ctx }) {
    const rows = await ctx.db.query<{ annee: number; type_local: string; n: number; fg: number }>(
      `select annee, type_local, count(*) as n, count(*) filter (classe_energie in ('F', 'G')) as fg
       from dpe_ventes where ${p.where} group by all order by 1, 2`, p.params);
    const sum = (f: (r: (typeof rows)[number]) => boolean, k: 'n' | 'fg') => rows.filter(f).reduce((a, r) => a + r[k], 0);
    const total = sum(() => true, 'n');
    const fg = sum(() => true, 'fg');
    const byType = (t: string) => ({ nb: sum((r) => r.type_local === t, 'fg'), pct: pct(sum((r) => r.type_local === t, 'fg'), sum((r) => r.type_local === t, 'n')) });
    const years = [...new Set(rows.map((r) => r.annee))].sort();
    return {
      total_transactions_avec_dpe: total, nb_passoires: fg, pct_passoires: pct(fg, total),
      par_type: { Appartement: byType('Appartement'), Maison: byType('Maison') },
      par_annee: years.map((y) => ({ annee: y, nb_passoires: sum((r) => r.annee === y, 'fg'), pct_passoires: round2(pct(sum((r) => r.annee === y, 'fg'), sum((r) => r.annee === y, 'n'))) })),
      filters: p.filters,
      ...noticeOf(p.notices),
    };
  },
});
