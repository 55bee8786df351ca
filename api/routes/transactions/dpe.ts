// GET /v1/transactions/:id/dpe (2 credits, refunded on 404): the energy diagnostic matched to one sale by the dpe_ventes
// mart (guarded cadastral reference, else proximity; rules in marts/models/marts/dpe_ventes.sql), as the DPE record,
// with how it was matched.
import { ApiError } from '../../errors';
import { round2, z } from '../../params';
import { defineEndpoint } from '../../platform';
import { TRANSACTION_ID_EXAMPLE } from './transactions';

const params = z.object({
  id: z.string().regex(/^\d{1,18}$/, 'must be a transaction id (digits)').openapi({ description: 'Transaction id (the `id` of /v1/transactions).', example: TRANSACTION_ID_EXAMPLE }),
});

const dpeSchema = z.object({
  numero_dpe: z.string().nullable().openapi({ description: 'ADEME number of the diagnostic (null for legacy records published without one).' }),
  date_etablissement_dpe: z.string(),
  classe_energie: z.string().nullable().openapi({ description: 'A to G; null when the published class is outside A–G (legacy N, I).' }),
  classe_ges: z.string().nullable(),
  conso_energie_kwh_m2_an: z.number().nullable().openapi({ description: 'Primary energy, kWh per m² and year.' }),
  emission_ges_kg_m2_an: z.number().nullable().openapi({ description: 'Greenhouse-gas emissions, kg CO2e per m² and year.' }),
  surface_habitable: z.number().nullable(),
  annee_construction: z.number().int().nullable(),
  type_batiment: z.string().nullable(),
  address: z.string().nullable(),
  code_postal: z.string().nullable(),
  code_insee: z.string().nullable(),
  latitude: z.number().nullable(),
  longitude: z.number().nullable(),
  methode: z.string().nullable().openapi({ description: 'The DPE method or version as published.' }),
});

const response = z.object({
  dpe: dpeSchema,
  match: z.object({
    method: z.enum(['cadastre', 'proximity']),
    distance_m: z.number().openapi({ description: 'Distance between the sale and the diagnostic, metres.' }),
    surface_gap_pct: z.number().nullable().openapi({ description: 'Habitable surface of the diagnostic over the sold built surface, minus 1, in percent.' }),
  }),
  transaction_id: z.string().openapi({ description: 'The transaction id, as a string (as in /v1/transactions/:id/bdnb).' }),
});

type Row = z.output<typeof dpeSchema> & { method: 'cadastre' | 'proximity'; distance_m: number; surface_gap_pct: number | null };

export const transactionDpe = defineEndpoint({
  method: 'get',
  path: '/v1/transactions/:id/dpe',
  tag: 'Energy (DPE)',
  summary: 'The energy diagnostic matched to a sale',
  description:
    'Clean house and flat sales only (no bulk, outlier or VEFA sale). Matching: first the guarded cadastral reference ' +
    '(the diagnostic on the sale\'s parcel within 50 m; for a flat, surface within ±35 %), else proximity (within 50 m, ' +
    'habitable surface within ±35 % of the built surface), preferring the diagnostic established closest before the sale ' +
    '(valid: up to 10 years before, at most 90 days after). No match or unknown id: 404 not_found, credits refunded.',
  params,
  response,
  credits: 2,
  refundOn: ['not_found'],
  errors: ['not_found'],
  prepare: ({ params: p }) => ({ id: Number(p.id) }),
  async handler({ id }, { ctx }) {
    const [row] = await ctx.db.query<Row>(
      `select d.numero_dpe, strftime(d.date_etablissement_dpe, '%Y-%m-%d') as date_etablissement_dpe, d.classe_energie, d.classe_ges,
         d.conso_energie_kwh_m2_an, d.emission_ges_kg_m2_an, d.surface_habitable, d.annee_construction, d.type_batiment,
         d.address, d.code_postal, d.code_insee, d.latitude, d.longitude, d.methode,
         v.methode_match as method, v.distance_m, v.surface_gap_pct
       from dpe_ventes v join dpe_diagnostics d using (dpe_id) where v.id = $id`,
      { id: BigInt(id) },
    );
    if (!row) throw new ApiError('not_found', `no energy diagnostic is matched to transaction ${id} (or no transaction has this id)`);
    const { method, distance_m, surface_gap_pct, ...dpe } = row;
    return { dpe, match: { method, distance_m: round2(distance_m), surface_gap_pct: round2(surface_gap_pct) }, transaction_id: String(id) };
  },
});
