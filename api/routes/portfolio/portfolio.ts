// /v1/portfolio: the key's properties and the lifecycle of their cached estimate (specification, States and
// transitions): created with an estimate (Maison, Appartement: 10 credits) or as metadata only (2 credits); a change of
// position, surface or type invalidates it; GET :id recomputes it (10 credits) when invalid or older than 30 days.
import { pageFields, pageOf, pagingQuery } from '../../paging';
import { z } from '../../params';
import { defineEndpoint, type Call } from '../../platform';
import {
  computeEstimate,
  CREATE_COST,
  ESTIMATE_INPUTS,
  deleteProperty,
  insertProperty,
  isEstimated,
  listProperties,
  loadProperty,
  metadataFields,
  needsRefresh,
  OPTIONAL_FIELDS,
  propertySchema,
  REFRESH_COST,
  saveProperty,
  toProperty,
  type Metadata,
  type StoredProperty,
} from './common';

const TAG = 'Portfolio';

/** A lookup by id; the pre-check fills `stored` (the key's property, or 404 before any charge). */
interface ById {
  id: string;
  now: Date;
  stored?: StoredProperty;
}

/** The pre-check of the :id routes: the key's property, or 404 before any charge. */
async function loadOwned(prepared: ById, call: Call): Promise<void> {
  prepared.stored = await loadProperty(call, prepared.id);
}
const idParams = z.object({
  id: z
    .string()
    .regex(/^prop_[A-Za-z0-9]{1,40}$/, { error: 'must be an id as the service returned it (prop_ and letters or digits)' })
    .openapi({ description: 'Property id (prop_…).' }),
});

const createBody = z
  .object({
    latitude: metadataFields.latitude,
    longitude: metadataFields.longitude,
    type_local: metadataFields.type_local,
    surface: metadataFields.surface,
    label: metadataFields.label.optional(),
    address: metadataFields.address.optional(),
    code_postal: metadataFields.code_postal.optional(),
    commune: metadataFields.commune.optional(),
    pieces: metadataFields.pieces.optional(),
    purchase_price: metadataFields.purchase_price.optional(),
  })
  .strict()
  .openapi('PortfolioCreate', {
    // The body /docs prefills: a flat of Paris 15e, which the demo dataset can value.
    example: {
      latitude: 48.8414,
      longitude: 2.3003,
      type_local: 'Appartement',
      surface: 55,
      label: 'Flat, 3rd floor',
      address: '12 rue de Vaugirard',
      code_postal: '75015',
      commune: 'PARIS 15',
      pieces: 3,
      purchase_price: 450_000,
    },
  });

// Every field optional; the required ones still refuse null (api/routes/portfolio/common.ts).
const updateBody = createBody.partial().openapi('PortfolioUpdate', { example: { label: 'Flat, 3rd floor, renovated', purchase_price: 465_000 } });

export const portfolioCreate = defineEndpoint({
  method: 'post',
  path: '/v1/portfolio',
  tag: TAG,
  summary: 'Add a property to the portfolio',
  description:
    '**10 credits** for Maison and Appartement (the estimate of GET /v1/estimate is computed and stored), **2 credits** for ' +
    'Terrain, Local commercial and Dépendance (metadata only, no estimate fields). Fewer than 3 comparables: the property is ' +
    'stored with null estimate fields and estimate_message, still charged (as /v1/estimate).',
  body: createBody,
  response: z.object({ property: propertySchema }),
  credits: ({ body }) => (isEstimated(body.type_local) ? CREATE_COST.estimated : CREATE_COST.metadataOnly),
  status: 201,
  errors: ['dense_query_timeout'],
  prepare({ body }): Metadata {
    const data = { ...body } as Record<string, unknown>;
    for (const f of OPTIONAL_FIELDS) data[f] ??= null;
    return data as Metadata;
  },
  async handler(data, call) {
    const estimate = isEstimated(data.type_local) ? await computeEstimate(call, data) : null;
    return { property: toProperty(await insertProperty(call, data, estimate)) };
  },
});

export const portfolioList = defineEndpoint({
  method: 'get',
  path: '/v1/portfolio',
  tag: TAG,
  summary: "List the key's properties",
  description: 'The properties with their cached estimates (never recomputed here), oldest first (creation order, stable across pages).',
  query: pagingQuery(100, 50),
  response: z.object({ properties: z.array(propertySchema), ...pageFields }),
  credits: 0,
  usesDatabase: false,
  prepare: ({ query }) => ({ limit: query.limit as number, offset: query.offset as number }),
  async handler({ limit, offset }, call) {
    const { total, items } = await listProperties(call, limit, offset);
    return { properties: items.map(toProperty), ...pageOf(total, offset, items.length) };
  },
});

export const portfolioGet = defineEndpoint({
  method: 'get',
  path: '/v1/portfolio/:id',
  tag: TAG,
  summary: 'A property, its estimate recomputed when stale',
  description:
    '**0 credits**, or **10** when the estimate of a Maison or Appartement is recomputed: after a change of latitude, longitude, ' +
    'surface or type_local, or when it is older than 30 days (estimate_refreshed true). Another key\'s property: 404.',
  params: idParams,
  response: z.object({ property: propertySchema, estimate_refreshed: z.boolean() }),
  credits: (_input, prepared: ById) => (prepared.stored && needsRefresh(prepared.stored, prepared.now) ? REFRESH_COST : 0),
  errors: ['not_found', 'dense_query_timeout'],
  prepare: ({ params }, call): ById => ({ id: params.id, now: call.now }),
  precheck: loadOwned,
  async handler({ stored }, call) {
    const p = stored!;
    if (!needsRefresh(p, call.now)) return { property: toProperty(p), estimate_refreshed: false };
    const estimate = await computeEstimate(call, p.data);
    const at = call.now.toISOString();
    const saved = await saveProperty(call, { ...p, estimate, estimateValid: true, estimateComputedAt: at, updatedAt: p.updatedAt });
    return { property: toProperty(saved), estimate_refreshed: true };
  },
});

export const portfolioUpdate = defineEndpoint({
  method: 'put',
  path: '/v1/portfolio/:id',
  tag: TAG,
  summary: 'Update a property',
  description:
    'Any metadata field; null clears an optional one. A change of latitude, longitude, surface or type_local ' +
    'invalidates the estimate (estimate_invalidated true; recomputed at the next GET /v1/portfolio/:id), other fields keep it.',
  params: idParams,
  body: updateBody,
  response: z.object({ property: propertySchema, estimate_invalidated: z.boolean() }),
  credits: 0,
  usesDatabase: false,
  errors: ['not_found'],
  prepare: ({ params, body }, call): ById & { changes: Partial<Metadata> } => ({ id: params.id, now: call.now, changes: body as Partial<Metadata> }),
  precheck: loadOwned,
  async handler({ changes, stored }, call) {
    const p = stored!;
    const data = { ...p.data, ...changes };
    const changed = ESTIMATE_INPUTS.some((f) => changes[f] !== undefined && changes[f] !== p.data[f]);
    // Whether this PUT invalidated an estimate (held, or due for a type that gets one), whatever its previous state.
    const invalidated = changed && (isEstimated(p.data.type_local) || isEstimated(data.type_local));
    // A type without estimate drops the stored one; a type that gets one is computed at the next GET.
    const keep = isEstimated(data.type_local) && !changed;
    const saved = await saveProperty(call, {
      ...p,
      data,
      estimate: keep ? p.estimate : null,
      estimateValid: keep && p.estimateValid,
      estimateComputedAt: keep ? p.estimateComputedAt : null,
      updatedAt: call.now.toISOString(),
    });
    return { property: toProperty(saved), estimate_invalidated: invalidated };
  },
});

export const portfolioDelete = defineEndpoint({
  method: 'delete',
  path: '/v1/portfolio/:id',
  tag: TAG,
  summary: 'Delete a property',
  description: 'HTTP 204 without body; 404 when the property does not exist or belongs to another key.',
  params: idParams,
  response: z.object({}),
  credits: 0,
  usesDatabase: false,
  analytic: false,
  status: 204,
  errors: ['not_found'],
  prepare: ({ params }, call): ById => ({ id: params.id, now: call.now }),
  precheck: loadOwned,
  async handler({ id }, call) {
    await deleteProperty(call, id);
    return {};
  },
});
