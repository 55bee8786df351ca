// GET /v1/transactions/:id/bdnb (2 credits): the BDNB building group of a sale (the bdnb_ventes matching mart:
// parcel relation first, else the nearest group within 200 m). No building matched → 404, refunded.
import { ApiError } from '../../errors';
import { round2, z } from '../../params';
import { defineEndpoint } from '../../platform';
import { TRANSACTION_ID_EXAMPLE } from './transactions';

const buildingSchema = z
  .object({
    batiment_groupe_id: z.string().openapi({ description: 'BDNB building-group id (bdnb-bg-XXXX-XXXX-XXXX since the 2023 millésimes).' }),
    annee_construction: z.number().int().nullable(),
    nb_logements: z.number().int().nullable(),
    nb_etages: z.number().int().nullable().openapi({ description: 'Number of levels (nb_niveau of the Fichiers fonciers).' }),
    materiaux_murs: z.string().nullable(),
    materiaux_toit: z.string().nullable(),
    usage_principal: z.enum(['residentiel', 'tertiaire', 'mixte', 'autre']).openapi({ description: 'Usage class of usage_niveau_1 (docs/data.md).' }),
    usage_niveau_1: z.string().nullable().openapi({ description: 'Usage as published (usage_niveau_1_txt).' }),
    dvf_nb_mutations: z.number().int().nullable().openapi({ description: 'Sales of the group in the BDNB’s own DVF statistics (2014 → early 2021).' }),
    dvf_prix_m2_median: z.number().nullable(),
    match_distance_m: z.number().nullable().openapi({ description: 'Distance from the sale’s point to the group’s centroid (null when the sale has no coordinates).' }),
    match_method: z.enum(['parcelle', 'distance']).openapi({ description: 'parcelle: through the sale’s cadastral parcel; distance: the nearest group within 200 m.' }),
  })
  .openapi('Building');

type Building = z.output<typeof buildingSchema>;

export const transactionBdnb = defineEndpoint({
  method: 'get',
  path: '/v1/transactions/:id/bdnb',
  tag: 'Buildings (BDNB)',
  summary: 'The BDNB building of a sale',
  description:
    'The building group of the sale: through its cadastral parcel, else the nearest group within 200 m of its point. ' +
    'Unknown id, or no building matched: 404 not_found, and the 2 credits are refunded.',
  params: z.object({
    id: z.string().regex(/^\d{1,16}$/, { error: 'must be a numeric transaction id' }).openapi({ description: 'The transaction id.', example: TRANSACTION_ID_EXAMPLE }),
  }),
  response: z.object({ building: buildingSchema, transaction_id: z.string() }),
  credits: 2,
  refundOn: ['not_found'],
  errors: ['not_found'],
  prepare: ({ params }) => ({ id: Number(params.id) }),
  async handler({ id }, { ctx }) {
    const [row] = await ctx.db.query<Building>(
      `select b.batiment_groupe_id, b.annee_construction, b.nb_log as nb_logements, b.nb_niveau as nb_etages,
         b.mat_mur_txt as materiaux_murs, b.mat_toit_txt as materiaux_toit, b.usage_principal,
         b.usage_niveau_1_txt as usage_niveau_1, b.dvf_nb_mutations, b.dvf_prix_m2_median, v.match_distance_m, v.match_method
       from bdnb_ventes v join bdnb_batiments b using (batiment_groupe_id) where v.id = $id`,
      { id: BigInt(id) },
    );
    if (!row) {
      const [sale] = await ctx.db.query(`select id from ventes where id = $id`, { id: BigInt(id) });
      throw new ApiError('not_found', sale ? `no BDNB building is matched to transaction ${id}` : `no transaction has id ${id}`);
    }
    return { building: { ...row, dvf_prix_m2_median: round2(row.dvf_prix_m2_median) }, transaction_id: String(id) };
  },
});
