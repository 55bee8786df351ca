// What the alert endpoints share: the criteria (flat or under `filters`), the checks of a webhook URL, the stored alert
// (the state, scoped to its key) and the plan rule (Scale and Enterprise only).
import crypto from 'node:crypto';
import { ApiError, invalidParams, type ParamIssue } from '../../errors';
import { codeFromNumber, z } from '../../params';
import type { Call } from '../../platform';
import { ALERT_VALUE_COLUMNS, randomBase62, type AlertRow, type AlertValues as StoredAlertValues } from '../../store';
import { hostOf, hostProblem } from '../../webhooks/ssrf';

export const ALERT_TYPES = ['Maison', 'Appartement', 'Terrain', 'Local commercial', 'Dépendance', 'Local industriel'] as const;
export const ALERT_PLANS = ['Scale', 'Enterprise'];
/** Active alerts per key (specification, Limits); inactive ones are kept and not counted. */
export const MAX_ACTIVE_ALERTS = 20;

const amount = (unit: string) => z.number({ error: `must be a number (${unit})` }).min(0, { error: 'must be at least 0' });

/** The criteria; null clears one on PUT. */
export const criteriaFields = {
  code_postal: z.preprocess(codeFromNumber, z.string({ error: 'must be a string' }).regex(/^\d{5}$/, { error: 'must be a 5-digit postal code' }).nullable()),
  commune: z
    .string({ error: 'must be a string' })
    .trim()
    .min(1, { error: 'must not be empty' })
    .max(200, { error: 'must be at most 200 characters' })
    .nullable()
    .openapi({ description: 'Commune name (case- and accent-insensitive) or INSEE code.' }),
  // The case is spelled out in the class: an `i` flag cannot be carried by the JSON Schema pattern the document publishes.
  code_departement: z.preprocess(
    codeFromNumber,
    z
      .string({ error: 'must be a string' })
      .regex(/^(\d{2}|2[ABab]|97[1-6])$/, { error: 'must be a département code (01–95, 2A, 2B, 971–976)' })
      .nullable(),
  ),
  type_local: z.enum(ALERT_TYPES, { error: `must be one of ${ALERT_TYPES.join(', ')}` }).nullable(),
  prix_min: amount('euros').nullable(),
  prix_max: amount('euros').nullable(),
  surface_min: amount('m²').nullable(),
  surface_max: amount('m²').nullable(),
};
export type Criteria = { [K in keyof typeof criteriaFields]?: z.output<(typeof criteriaFields)[K]> };
export const CRITERIA = Object.keys(criteriaFields) as Array<keyof Criteria>;
const LOCATION = ['code_postal', 'commune', 'code_departement'] as const;

const filtersSchema = z.object(Object.fromEntries(CRITERIA.map((k) => [k, criteriaFields[k].optional()])) as { [K in keyof typeof criteriaFields]: z.ZodOptional<(typeof criteriaFields)[K]> }).strict();

export const webhookUrlField = z
  .string({ error: 'must be a string' })
  .max(2048, { error: 'must be at most 2048 characters' })
  .openapi({ description: 'HTTPS URL receiving the deliveries; never a loopback, private, link-local or multicast host.', example: 'https://example.com/hooks/foncier' });

/** Both forms of the body (flat criteria, or `label` + `filters`), equivalent. */
export const alertBodyShape = {
  webhook_url: webhookUrlField,
  label: z.string({ error: 'must be a string' }).max(255, { error: 'must be at most 255 characters' }).nullable().optional(),
  filters: filtersSchema.optional().openapi({ description: 'The criteria, as the flat fields (the second documented form); not both.' }),
  ...Object.fromEntries(CRITERIA.map((k) => [k, criteriaFields[k].optional()])),
} as { webhook_url: typeof webhookUrlField; label: z.ZodOptional<z.ZodNullable<z.ZodString>>; filters: z.ZodOptional<typeof filtersSchema> } & {
  [K in keyof typeof criteriaFields]: z.ZodOptional<(typeof criteriaFields)[K]>;
};

/** The criteria of a body, whichever form it used; the flat form and `filters` together are refused. */
export function criteriaOf(body: Criteria & { filters?: Criteria }): Criteria {
  const flat = Object.fromEntries(CRITERIA.filter((k) => body[k] !== undefined).map((k) => [k, body[k]])) as Criteria;
  if (!body.filters) return flat;
  const mixed = Object.keys(flat);
  if (mixed.length) throw invalidParams(mixed.map((param) => ({ param, issue: 'send the criteria either flat or inside filters, not both' })));
  return { ...body.filters };
}

/** Checks the criteria once merged (location present, min ≤ max) and normalises the commune (upper case, no accents). */
export function checkCriteria(c: Criteria): Criteria {
  if (!LOCATION.some((k) => c[k] != null)) {
    throw new ApiError('missing_location', 'an alert needs a location filter: code_postal, commune or code_departement');
  }
  const issues: ParamIssue[] = [];
  for (const [min, max] of [['prix_min', 'prix_max'], ['surface_min', 'surface_max']] as const) {
    if (c[min] != null && c[max] != null && c[min] > c[max]) issues.push({ param: min, issue: `must not exceed ${max}` });
  }
  if (issues.length) throw invalidParams(issues);
  return { ...c, commune: c.commune == null ? c.commune : normaliseCommune(c.commune), code_departement: c.code_departement?.toUpperCase() ?? c.code_departement };
}

/** The scan compares communes this way on both sides (api/webhooks/scan.sql: upper(strip_accents(...))). */
export function normaliseCommune(s: string): string {
  return s.normalize('NFD').replace(/\p{M}/gu, '').toUpperCase();
}

/** https:// only (400 invalid_params naming webhook_url), no credentials; the address rule is checked later (DNS). */
export function parseWebhookUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalidParams([{ param: 'webhook_url', issue: 'must be an absolute https:// URL' }]);
  }
  if (url.protocol !== 'https:') throw invalidParams([{ param: 'webhook_url', issue: 'must be an https:// URL (HTTP is refused)' }]);
  if (url.username || url.password) throw invalidParams([{ param: 'webhook_url', issue: 'must not carry credentials' }]);
  return url;
}

/** The server-side request forgery rule, at creation and on a change of URL. */
export async function checkWebhookHost(call: Call, url: string): Promise<void> {
  const problem = await hostProblem(hostOf(new URL(url)), call.ctx.webhooks.allowedHosts);
  if (problem) throw invalidParams([{ param: 'webhook_url', issue: `must not point at a loopback, private, link-local or multicast address (${problem})` }]);
}

/** Alerts are a Scale and Enterprise feature (specification, Authentication 5). */
export function requirePlan(call: Call): void {
  if (!ALERT_PLANS.includes(call.key.plan)) {
    throw new ApiError('plan_required', `alerts need the Scale or Enterprise plan; this key is on ${call.key.plan}`);
  }
}

export const alertSchema = z
  .object({
    id: z.string(),
    api_key_id: z.string(),
    label: z.string().nullable(),
    webhook_url: z.string(),
    code_postal: z.string().nullable(),
    commune: z.string().nullable(),
    code_departement: z.string().nullable(),
    type_local: z.enum(ALERT_TYPES).nullable(),
    prix_min: z.number().nullable().openapi({ description: 'Euros, compared with valeur_fonciere.' }),
    prix_max: z.number().nullable(),
    surface_min: z.number().nullable().openapi({ description: 'm², compared with surface_reelle_bati.' }),
    surface_max: z.number().nullable(),
    is_active: z.boolean(),
    deactivated_reason: z.string().nullable().openapi({ description: 'Why the service deactivated the alert: its receiver answered 410 Gone, or its key was revoked (key_revoked); null otherwise.' }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('Alert');

export type Alert = z.output<typeof alertSchema>;

/** Field by field: the row also holds the signing secret, which is shown once at creation and never again. */
function toAlert(r: AlertRow): Alert {
  return {
    id: r.id,
    api_key_id: r.key_id,
    label: r.label as string | null,
    webhook_url: r.webhook_url as string,
    ...(Object.fromEntries(CRITERIA.map((k) => [k, r[k]])) as Required<{ [K in keyof Criteria]: Alert[K] }>),
    is_active: r.is_active === 1,
    deactivated_reason: r.deactivated_reason,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

/** The key's alert, or 404 (another key's alert is not found either). */
export async function loadAlert(call: Call, id: string): Promise<Alert> {
  const row = await call.ctx.state.alerts.get(call.key.id, id);
  if (!row) throw new ApiError('not_found', `no alert ${id} for this key`);
  return toAlert(row);
}

export async function listAlerts(call: Call, limit: number, offset: number): Promise<{ total: number; items: Alert[] }> {
  const { total, rows } = await call.ctx.state.alerts.list(call.key.id, limit, offset);
  return { total, items: rows.map(toAlert) };
}

const alertLimitReached = () =>
  new ApiError('alert_limit_reached', `this key already has ${MAX_ACTIVE_ALERTS} active alerts: deactivate or delete one first`);

/** 409 alert_limit_reached when the key already has 20 active alerts (a creation, or a reactivation). */
export async function checkCap(call: Call): Promise<void> {
  if ((await call.ctx.state.alerts.countActive(call.key.id)) >= MAX_ACTIVE_ALERTS) throw alertLimitReached();
}

/** Deletes the key's alert (the caller checked it exists); its deliveries go with it. */
export async function deleteAlert(call: Call, id: string): Promise<void> {
  await call.ctx.state.alerts.delete(call.key.id, id);
}

/** An alert's deliveries, latest first. */
export function alertDeliveries(call: Call, id: string, limit: number, offset: number) {
  return call.ctx.state.deliveries.list(id, limit, offset);
}

/** `whsec_` + base64 of 32 random bytes (the Standard Webhooks secret format). */
export function newSigningSecret(): string {
  return `whsec_${crypto.randomBytes(32).toString('base64')}`;
}

export interface AlertValues extends Criteria {
  label?: string | null;
  webhook_url: string;
}

const stored = (v: AlertValues): StoredAlertValues => Object.fromEntries(ALERT_VALUE_COLUMNS.map((c) => [c, v[c] ?? null])) as StoredAlertValues;

/** The cap is counted again inside the state's write: two concurrent creations cannot both take the 20th place. */
export async function insertAlert(call: Call, v: AlertValues, secret: string): Promise<Alert> {
  const id = `alert_${randomBase62(16)}`;
  if (!(await call.ctx.state.alerts.insert(call.key.id, id, secret, stored(v), call.now.toISOString(), MAX_ACTIVE_ALERTS))) throw alertLimitReached();
  return loadAlert(call, id);
}

export async function updateAlert(call: Call, id: string, v: AlertValues & { is_active: boolean }, reactivating: boolean): Promise<Alert> {
  if (!(await call.ctx.state.alerts.update(call.key.id, id, stored(v), v.is_active, reactivating, call.now.toISOString(), MAX_ACTIVE_ALERTS))) throw alertLimitReached();
  return loadAlert(call, id);
}
