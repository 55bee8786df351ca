// GET /v1/dpe/stats (10 credits, cached 24 h): the energy classes of the diagnostics of a zone (every dataset; replaced
// diagnostics and classes outside A–G left out).
import { dateParam, enumParam, round2, z } from '../../params';
import { defineEndpoint } from '../../platform';
import { CLASSES, dpeLocationFields, dpeZone, noticeOf } from './common';
import { RADIUS_PARAMS } from '../../location';

const query = z.object({
  ...dpeLocationFields,
  type_batiment: enumParam(['maison', 'appartement', 'immeuble'], 'Kind of diagnosed building (default: all).').optional(),
  date_debut: dateParam('Only diagnostics established on or after this day.').optional(),
});

const perClass = (description: string) => z.object(Object.fromEntries(CLASSES.map((c) => [c, z.number()])) as Record<(typeof CLASSES)[number], z.ZodNumber>).openapi({ description });

const response = z.object({
  count: z.number().int().openapi({ description: 'Diagnostics of the zone with a class A–G (not replaced by a newer one).' }),
  distribution: perClass('Diagnostics per energy class.'),
  pct: perClass('Share of each class, percent (2 decimals).'),
  filters: z.object({
    code_postal: z.string().nullable(), commune: z.string().nullable(), code_departement: z.string().nullable(),
    type_batiment: z.string().nullable(), date_debut: z.string().nullable(),
  }),
  notice: z.string().optional(),
});

export const dpeStats = defineEndpoint({
  method: 'get',
  path: '/v1/dpe/stats',
  tag: 'Energy (DPE)',
  summary: 'Energy-class distribution of a zone',
  description:
    'All published diagnostics of the zone (existing dwellings since July 2021, new dwellings, and the legacy base before ' +
    'July 2021), located by their BAN postal code and commune. A diagnostic replaced by a newer one is counted once (the ' +
    'newer); classes outside A–G (legacy N, I) are left out.',
  query,
  undocumentedQuery: RADIUS_PARAMS,
  response,
  credits: 10,
  cacheTtlSeconds: 24 * 3600,
  errors: ['missing_location', 'unsupported_location'],
  prepare({ query: q }) {
    const where = ['not est_remplace', 'classe_energie is not null'];
    if (q.type_batiment) where.push('type_batiment = $type_batiment');
    if (q.date_debut) where.push('date_etablissement_dpe >= $date_debut::DATE');
    const z = dpeZone(q, { where, params: { ...(q.type_batiment && { type_batiment: q.type_batiment }), ...(q.date_debut && { date_debut: q.date_debut }) } });
    return { ...z, filters: { ...z.zone, type_batiment: q.type_batiment ?? null, date_debut: q.date_debut ?? null } };
  },
  coverage: ({ location }) => ({ zone: location, sources: ['dpe'] }),
  async handler(p, { ctx }) {
    const rows = await ctx.db.query<{ classe: string; n: number }>(
      `select classe_energie as classe, count(*) as n from dpe_diagnostics where ${p.where} group by 1`, p.params);
    const counts = Object.fromEntries(CLASSES.map((c) => [c, rows.find((r) => r.classe === c)?.n ?? 0])) as Record<(typeof CLASSES)[number], number>;
    const count = Object.values(counts).reduce((a, b) => a + b, 0);
    const pct = Object.fromEntries(CLASSES.map((c) => [c, count ? round2((counts[c] / count) * 100) : 0])) as Record<(typeof CLASSES)[number], number>;
    return { count, distribution: counts, pct, filters: p.filters, ...noticeOf(p.notices) };
  },
});
