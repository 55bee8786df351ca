// GET /v1/transactions (search, 5 credits a page) and GET /v1/transactions/:id (2 credits, refunded on 404).
import type { Params } from '../../../lib/duck';
import { ApiError, invalidParams } from '../../errors';
import { locationFields, resolveLocation } from '../../location';
import { booleanParam, dateParam, enumParam, numberParam, round2, TYPE_LOCAL_4, z } from '../../params';
import { defineEndpoint } from '../../platform';

/** The transaction record (search items and the :id lookup). */
export const transactionSchema = z
  .object({
    id: z.number().int().openapi({ description: 'Stable identifier (kept across DVF releases).' }),
    id_mutation: z.string().openapi({ description: 'The DVF mutation id (DGFIP-<id> for sales imported from the raw DGFiP file).' }),
    date_mutation: z.string().openapi({ format: 'date' }),
    nature_mutation: z.string(),
    valeur_fonciere: z.number().openapi({ description: 'Sale price in euros.' }),
    prix_m2: z.number().nullable().openapi({ description: 'valeur_fonciere / surface_reelle_bati; null for land, outbuildings or without a surface.' }),
    type_local: z.string().openapi({ description: 'Maison, Appartement, Local commercial, Dépendance or Terrain (the sale’s main property).' }),
    surface_reelle_bati: z.number().nullable(),
    surface_carrez: z.number().nullable().openapi({ description: 'Sum of the lots’ Carrez surfaces, or null.' }),
    nombre_pieces_principales: z.number().nullable(),
    surface_terrain: z.number().nullable(),
    nombre_lots: z.number().nullable(),
    address: z.string().nullable().openapi({ description: 'Number and street, e.g. "12 RUE DE VAUGIRARD".' }),
    code_postal: z.string().nullable(),
    code_commune: z.string(),
    commune: z.string().nullable(),
    code_departement: z.string(),
    section: z.string().nullable(),
    no_plan: z.string().nullable(),
    id_parcelle: z.string().nullable(),
    latitude: z.number().nullable(),
    longitude: z.number().nullable(),
    is_bulk_sale: z.boolean(),
    is_vefa: z.boolean(),
  })
  .openapi('Transaction');

export type Transaction = z.output<typeof transactionSchema>;

export const TRANSACTION_COLUMNS = Object.keys(transactionSchema.shape).join(', ');

function toTransaction(r: Transaction): Transaction {
  return { ...r, prix_m2: round2(r.prix_m2) };
}

/** Upper bounds of the numeric filters (docs/decisions.md, API limits): far above any real sale (the dearest French
 * sales are a few hundred million euros; a built surface over 1 km² does not exist), and small enough that every
 * value binds as a DuckDB DOUBLE or BIGINT. */
const MAX_PRICE = 1e10;
const MAX_SURFACE = 1e6;
const MAX_ROOMS = 1000;
const MAX_OFFSET = 10_000_000;

const searchQuery = z.object({
  ...locationFields,
  type_local: enumParam(TYPE_LOCAL_4, 'Type of the sale’s main property.').optional(),
  prix_min: numberParam({ min: 0, max: MAX_PRICE, description: 'Minimum price (valeur_fonciere, euros).' }).optional(),
  prix_max: numberParam({ min: 0, max: MAX_PRICE, description: 'Maximum price (valeur_fonciere, euros).' }).optional(),
  surface_min: numberParam({ min: 0, max: MAX_SURFACE, description: 'Minimum built surface (m²).' }).optional(),
  surface_max: numberParam({ min: 0, max: MAX_SURFACE, description: 'Maximum built surface (m²).' }).optional(),
  pieces_min: numberParam({ min: 0, max: MAX_ROOMS, int: true, description: 'Minimum number of main rooms.' }).optional(),
  pieces_max: numberParam({ min: 0, max: MAX_ROOMS, int: true, description: 'Maximum number of main rooms.' }).optional(),
  date_debut: dateParam('First day of the sales (inclusive).', '2024-01-01').optional(),
  date_fin: dateParam('Last day of the sales (inclusive).', '2024-12-31').optional(),
  exclude_bulk_sales: booleanParam('Exclude sales of several dwellings or premises for one price (default false: raw search).').default(false),
  limit: numberParam({ min: 1, max: 200, int: true, description: 'Page size (default 50).' }).default(50),
  offset: numberParam({ min: 0, max: MAX_OFFSET, int: true, description: '0-based offset; pass next_cursor to get the next page.' }).default(0),
});

type SearchQuery = z.output<typeof searchQuery>;

function checkRange(q: SearchQuery, min: keyof SearchQuery, max: keyof SearchQuery): void {
  const a = q[min] as number | string | undefined;
  const b = q[max] as number | string | undefined;
  if (a !== undefined && b !== undefined && a > b) throw invalidParams([{ param: String(min), issue: `must not exceed ${String(max)}` }]);
}

export const searchTransactions = defineEndpoint({
  method: 'get',
  path: '/v1/transactions',
  tag: 'Transactions',
  summary: 'Search DVF sales',
  description:
    'One row per sale, newest first (date_mutation then id, descending: stable across pages unless new data is imported). ' +
    'A location filter is required. Each page costs 5 credits whatever its size.',
  query: searchQuery,
  response: z.object({
    transactions: z.array(transactionSchema),
    total_found: z.number().int().openapi({ description: 'Matching sales before pagination.' }),
    next_cursor: z.number().int().nullable().openapi({ description: 'offset + returned count; null on the last page.' }),
    pagination: z.object({ total: z.number().int(), has_more: z.boolean() }),
  }),
  credits: 5,
  errors: ['missing_location', 'unsupported_location'],
  prepare({ query: q }) {
    checkRange(q, 'prix_min', 'prix_max');
    checkRange(q, 'surface_min', 'surface_max');
    checkRange(q, 'pieces_min', 'pieces_max');
    checkRange(q, 'date_debut', 'date_fin');
    const loc = resolveLocation(q, { accept: ['code_postal', 'commune', 'code_departement', 'radius'] });
    const where = [loc.where];
    const params: Params = { ...loc.params };
    const add = (cond: string, name: string, value: string | number | undefined) => {
      if (value === undefined) return;
      where.push(cond);
      params[name] = value;
    };
    add('type_local = $type_local', 'type_local', q.type_local);
    add('valeur_fonciere >= $prix_min', 'prix_min', q.prix_min);
    add('valeur_fonciere <= $prix_max', 'prix_max', q.prix_max);
    add('surface_reelle_bati >= $surface_min', 'surface_min', q.surface_min);
    add('surface_reelle_bati <= $surface_max', 'surface_max', q.surface_max);
    add('nombre_pieces_principales >= $pieces_min', 'pieces_min', q.pieces_min);
    add('nombre_pieces_principales <= $pieces_max', 'pieces_max', q.pieces_max);
    add('date_mutation >= $date_debut::DATE', 'date_debut', q.date_debut);
    add('date_mutation <= $date_fin::DATE', 'date_fin', q.date_fin);
    if (q.exclude_bulk_sales) where.push('not is_bulk_sale');
    // A window with both ends is checked against the zone's loaded sales (api/horizon.ts); an open end is not a window.
    const window = q.date_debut !== undefined && q.date_fin !== undefined ? { date_debut: q.date_debut, date_fin: q.date_fin } : undefined;
    return { where: where.join(' and '), params, limit: q.limit as number, offset: q.offset as number, location: loc, window };
  },
  coverage: ({ location, window }) => ({ zone: location, window, sources: ['dvf'] }),
  async handler(p, { ctx }) {
    const [rows, [{ n }]] = await Promise.all([
      // The page's ids first, over two narrow columns, then its 24 columns for those rows only: about half the time
      // of sorting whole rows at France scale (docs/performance.md).
      ctx.db.query<Transaction>(
        `with page as (
           select id from ventes where ${p.where} order by date_mutation desc, id desc limit $limit offset $offset
         )
         select ${TRANSACTION_COLUMNS} from ventes
         where ${p.where} and id in (select id from page)
         order by date_mutation desc, id desc`,
        { ...p.params, limit: BigInt(p.limit), offset: BigInt(p.offset) },
      ),
      ctx.db.query<{ n: number }>(`select count(*) as n from ventes where ${p.where}`, p.params),
    ]);
    const end = p.offset + rows.length;
    const hasMore = end < n;
    return {
      transactions: rows.map(toTransaction),
      total_found: n,
      next_cursor: hasMore ? end : null,
      pagination: { total: n, has_more: hasMore },
    };
  },
});

/** The id /docs prefills for the three lookups by id: a 2024 sale in Paris 15e of the demo dataset, with a matched
 * energy diagnostic and building, so that "Try it out" answers on the demo (test/api/docs/prefill.test.ts). */
export const TRANSACTION_ID_EXAMPLE = '202407500000012';

const idParams = z.object({
  id: z
    .string()
    .regex(/^\d{1,16}$/, { error: 'must be a numeric transaction id' })
    .openapi({ description: 'The transaction id (a number, as returned by the search).', example: TRANSACTION_ID_EXAMPLE }),
});

export const getTransaction = defineEndpoint({
  method: 'get',
  path: '/v1/transactions/:id',
  tag: 'Transactions',
  summary: 'One DVF sale by id',
  description: 'Unknown id: 404 not_found, and the 2 credits are refunded.',
  params: idParams,
  response: z.object({ transaction: transactionSchema }),
  credits: 2,
  refundOn: ['not_found'],
  errors: ['not_found'],
  prepare: ({ params }) => ({ id: Number(params.id) }),
  async handler({ id }, { ctx }) {
    const [row] = await ctx.db.query<Transaction>(`select ${TRANSACTION_COLUMNS} from ventes where id = $id`, { id: BigInt(id) });
    if (!row) throw new ApiError('not_found', `no transaction has id ${id}`);
    return { transaction: toTransaction(row) };
  },
});
