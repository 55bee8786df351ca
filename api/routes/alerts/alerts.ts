// /v1/alerts: webhook alerts on newly imported sales (Scale and Enterprise; 0 credits). An alert is active or inactive
// (specification, States and transitions); at most 20 active per key; its signing secret is shown once, at creation.
import { pageFields, pageOf, pagingQuery } from '../../paging';
import { z } from '../../params';
import { defineEndpoint, type Call } from '../../platform';
import { deliverySchema } from '../../webhooks/queue';
import {
  alertBodyShape,
  alertSchema,
  alertDeliveries,
  checkCap,
  deleteAlert,
  checkCriteria,
  checkWebhookHost,
  CRITERIA,
  criteriaOf,
  insertAlert,
  listAlerts,
  loadAlert,
  newSigningSecret,
  parseWebhookUrl,
  requirePlan,
  updateAlert,
  type Alert,
  type AlertValues,
  type Criteria,
} from './common';

const TAG = 'Alerts';
const COMMON = { credits: 0, usesDatabase: false } as const;
const idParams = z.object({
  id: z
    .string()
    .regex(/^alert_[A-Za-z0-9]{1,40}$/, { error: 'must be an id as the service returned it (alert_ and letters or digits)' })
    .openapi({ description: 'Alert id (alert_…).' }),
});

// The bodies /docs prefills: one form of the criteria (flat), since the flat fields and `filters` together are refused.
const createBody = z
  .object(alertBodyShape)
  .strict()
  .openapi('AlertCreate', {
    example: { webhook_url: 'https://example.com/hooks/foncier', label: 'Flats of Paris 15e under 500 000 €', code_postal: '75015', type_local: 'Appartement', prix_max: 500_000 },
  });
const updateBody = z
  .object({ ...alertBodyShape, webhook_url: alertBodyShape.webhook_url.optional(), is_active: z.boolean({ error: 'must be true or false' }).optional() })
  .strict()
  .openapi('AlertUpdate', { example: { prix_max: 550_000, is_active: true } });

interface ById {
  id: string;
  stored?: Alert;
}

type UpdateBody = z.output<typeof updateBody>;

interface UpdatePrep extends ById {
  body: UpdateBody;
  /** The alert as it will be, set by the pre-check. */
  values?: AlertValues;
}

/** The plan, then the key's alert (404 for any other): before any work. */
async function loadOwned(prepared: ById, call: Call): Promise<void> {
  prepared.stored = await loadAlert(call, prepared.id);
}

export const alertsCreate = defineEndpoint({
  method: 'post',
  path: '/v1/alerts',
  tag: TAG,
  summary: 'Create a webhook alert',
  description:
    '**Scale and Enterprise.** Criteria flat or under `filters` (with `label`), equivalent; a location filter is ' +
    'required. `webhook_url` must be https:// and must not point at a loopback, private, link-local or multicast address. ' +
    'At most 20 active alerts per key (409 alert_limit_reached). The answer carries `signing_secret` (whsec_…), shown only ' +
    'this once: deliveries are signed with it (Standard Webhooks).',
  body: createBody,
  response: z.object({ alert: alertSchema, signing_secret: z.string().openapi({ description: 'whsec_ + base64 of 32 random bytes; returned once.' }) }),
  ...COMMON,
  status: 201,
  errors: ['missing_location', 'plan_required', 'alert_limit_reached'],
  prepare({ body }, call): AlertValues {
    requirePlan(call);
    parseWebhookUrl(body.webhook_url);
    return { label: body.label ?? null, webhook_url: body.webhook_url, ...checkCriteria(criteriaOf(body as Criteria & { filters?: Criteria })) };
  },
  async precheck(values, call) {
    await checkCap(call);
    await checkWebhookHost(call, values.webhook_url);
  },
  async handler(values, call) {
    const secret = newSigningSecret();
    return { alert: await insertAlert(call, values, secret), signing_secret: secret };
  },
});

export const alertsList = defineEndpoint({
  method: 'get',
  path: '/v1/alerts',
  tag: TAG,
  summary: "List the key's alerts",
  description: '**Scale and Enterprise.** Active and inactive alerts, in creation order. The signing secrets are never shown again.',
  query: pagingQuery(50, 50),
  response: z.object({ alerts: z.array(alertSchema), ...pageFields }),
  ...COMMON,
  errors: ['plan_required'],
  prepare({ query }, call) {
    requirePlan(call);
    return { limit: query.limit as number, offset: query.offset as number };
  },
  async handler({ limit, offset }, call) {
    const { total, items } = await listAlerts(call, limit, offset);
    return { alerts: items, ...pageOf(total, offset, items.length) };
  },
});

export const alertsUpdate = defineEndpoint({
  method: 'put',
  path: '/v1/alerts/:id',
  tag: TAG,
  summary: 'Update an alert',
  description:
    '**Scale and Enterprise.** Any field (flat or under `filters`); null clears a criterion, a location filter must ' +
    'remain. `is_active: false` deactivates (the alert is kept, not counted in the cap); `is_active: true` reactivates while ' +
    'the key has fewer than 20 active alerts, else 409 alert_limit_reached.',
  params: idParams,
  body: updateBody,
  response: z.object({ alert: alertSchema }),
  ...COMMON,
  errors: ['missing_location', 'plan_required', 'not_found', 'alert_limit_reached'],
  prepare({ params, body }, call): UpdatePrep {
    requirePlan(call);
    if (body.webhook_url !== undefined) parseWebhookUrl(body.webhook_url);
    criteriaOf(body as Criteria & { filters?: Criteria });
    return { id: params.id, body };
  },
  async precheck(prepared, call) {
    await loadOwned(prepared, call);
    const { body, stored } = prepared;
    prepared.values = merged(stored!, body);
    if (body.is_active === true && !stored!.is_active) await checkCap(call);
    if (body.webhook_url !== undefined && body.webhook_url !== stored!.webhook_url) await checkWebhookHost(call, body.webhook_url);
  },
  async handler({ id, body, stored, values }, call) {
    const reactivating = body.is_active === true && !stored!.is_active;
    return { alert: await updateAlert(call, id, { ...values!, is_active: body.is_active ?? stored!.is_active }, reactivating) };
  },
});

/** The stored alert with the body's changes; the criteria checked again as a whole. */
function merged(stored: Alert, body: UpdateBody): AlertValues {
  const changes = criteriaOf(body as Criteria & { filters?: Criteria });
  const criteria = Object.fromEntries(CRITERIA.map((k) => [k, changes[k] !== undefined ? changes[k] : stored[k]])) as Criteria;
  return {
    label: body.label !== undefined ? body.label : stored.label,
    webhook_url: body.webhook_url ?? stored.webhook_url,
    ...checkCriteria(criteria),
  };
}

export const alertsDelete = defineEndpoint({
  method: 'delete',
  path: '/v1/alerts/:id',
  tag: TAG,
  summary: 'Delete an alert',
  description: '**Scale and Enterprise.** HTTP 204 without body; 404 when the alert does not exist or belongs to another key. Its pending deliveries are dropped.',
  params: idParams,
  response: z.object({}),
  ...COMMON,
  analytic: false,
  status: 204,
  errors: ['plan_required', 'not_found'],
  prepare({ params }, call): ById {
    requirePlan(call);
    return { id: params.id };
  },
  precheck: loadOwned,
  async handler({ id }, call) {
    await deleteAlert(call, id);
    return {};
  },
});

export const alertsDeliveries = defineEndpoint({
  method: 'get',
  path: '/v1/alerts/:id/deliveries',
  tag: TAG,
  summary: "An alert's deliveries",
  description:
    '**Scale and Enterprise** (beyond the specification, as Stripe and Svix offer). The latest deliveries first: ' +
    'status (pending, succeeded, failed), attempts, the last response code and error, the next attempt.',
  params: idParams,
  query: pagingQuery(100, 50),
  response: z.object({ deliveries: z.array(deliverySchema), ...pageFields }),
  ...COMMON,
  errors: ['plan_required', 'not_found'],
  prepare({ params, query }, call): ById & { limit: number; offset: number } {
    requirePlan(call);
    return { id: params.id, limit: query.limit as number, offset: query.offset as number };
  },
  precheck: loadOwned,
  async handler({ id, limit, offset }, call) {
    const { total, items } = await alertDeliveries(call, id, limit, offset);
    return { deliveries: items, ...pageOf(total, offset, items.length) };
  },
});
