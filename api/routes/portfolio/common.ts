// What the portfolio endpoints share: the body schemas, the stored property (the state, scoped to its key), and its
// estimate, computed by the same estimator as GET /v1/estimate (api/routes/valuation/common.ts).
import { randomBase62, type PropertyRow } from '../../store';
import { ApiError } from '../../errors';
import { z } from '../../params';
import type { Call } from '../../platform';
import { estimateSubject, valuate } from '../valuation/common';
import { MIN_COMPARABLES } from '../../../lib/valuation/estimator';
import type { Params } from '../../../lib/duck';
import { featuresOfSale, NO_FEATURES } from '../../../lib/valuation/features';
import { QueryTimeoutError } from '../../db';

export const PORTFOLIO_TYPES = ['Maison', 'Appartement', 'Terrain', 'Local commercial', 'Dépendance'] as const;
export type PortfolioType = (typeof PORTFOLIO_TYPES)[number];
/** Types that get an estimate (10 credits at creation); the others are metadata only (2 credits). */
export const ESTIMATED_TYPES: readonly PortfolioType[] = ['Maison', 'Appartement'];
export const CREATE_COST = { estimated: 10, metadataOnly: 2 };
export const REFRESH_COST = 10;
/** An estimate older than this is recomputed at the next GET /v1/portfolio/:id (specification, States and transitions). */
export const ESTIMATE_MAX_AGE_MS = 30 * 24 * 3600 * 1000;
/** Fields whose change makes the estimate invalid (specification, States and transitions). */
export const ESTIMATE_INPUTS = ['latitude', 'longitude', 'surface', 'type_local'] as const;

const num = (what: string) => z.number({ error: `must be a number (${what})` });
const text = (max: number) => z.string({ error: 'must be a string' }).max(max, { error: `must be at most ${max} characters` });

/** The property's metadata as the client sends it (JSON numbers are numbers: "12" is refused). */
export const metadataFields = {
  latitude: num('WGS84 degrees').min(-90, { error: 'must be between -90 and 90' }).max(90, { error: 'must be between -90 and 90' }),
  longitude: num('WGS84 degrees').min(-180, { error: 'must be between -180 and 180' }).max(180, { error: 'must be between -180 and 180' }),
  type_local: z.enum(PORTFOLIO_TYPES, { error: `must be one of ${PORTFOLIO_TYPES.join(', ')}` }),
  surface: num('m²').positive({ error: 'must be positive' }).max(100_000, { error: 'must be at most 100000' }),
  label: text(255).nullable(),
  address: text(500).nullable(),
  code_postal: z.string({ error: 'must be a string' }).regex(/^\d{5}$/, { error: 'must be a 5-digit postal code' }).nullable(),
  commune: text(200).nullable(),
  pieces: z.number({ error: 'must be a positive integer' }).int({ error: 'must be a positive integer' }).positive({ error: 'must be a positive integer' }).max(1000, { error: 'must be at most 1000' }).nullable(),
  purchase_price: num('euros').min(0, { error: 'must be at least 0' }).nullable(),
};

export type Metadata = {
  latitude: number;
  longitude: number;
  type_local: PortfolioType;
  surface: number;
  label: string | null;
  address: string | null;
  code_postal: string | null;
  commune: string | null;
  pieces: number | null;
  purchase_price: number | null;
};

export const OPTIONAL_FIELDS = ['label', 'address', 'code_postal', 'commune', 'pieces', 'purchase_price'] as const;

/** What is stored of an estimate; the estimate_* values are null when fewer than 3 comparables were found. */
export interface StoredEstimate {
  estimate_low: number | null;
  estimate_mid: number | null;
  estimate_high: number | null;
  estimate_pm2: number | null;
  estimate_confidence: string | null;
  estimate_based_on: number;
  estimate_reference_date: string;
  estimate_message?: string;
  /** Absent from estimates stored before it was recorded. */
  estimate_inputs?: EstimateInputs;
}

/** The DPE class and construction year the estimate used, and where they came from (docs/decisions.md). */
export interface EstimateInputs {
  classe_dpe: string | null;
  annee_construction: number | null;
  source: 'user' | 'dpe' | 'bdnb';
  distance_m: number | null;
}

const estimateInputsSchema = z
  .object({
    classe_dpe: z.string().nullable().openapi({ description: 'The energy class the estimate was adjusted to: that of the diagnostic matched to the property’s own sale; null: no class used.' }),
    annee_construction: z.number().int().nullable().openapi({ description: 'The construction year the estimate was adjusted to: that of the building matched to the property’s own sale; null: no year used.' }),
    source: z.enum(['user', 'dpe', 'bdnb']).openapi({
      description:
        'Where the values came from: dpe when the class was borrowed from the energy diagnostic (DPE) of the sale found at the property’s point ' +
        '(a year then comes from that sale’s BDNB building), bdnb when only a construction year was borrowed from that building, user when nothing ' +
        'was borrowed (the estimate is that of GET /v1/estimate with the property’s own fields).',
    }),
    distance_m: z.number().nullable().openapi({ description: 'Distance from the property’s point to the sale the values were borrowed from (m); null with source user.' }),
  })
  .openapi('PortfolioEstimateInputs');

export const propertySchema = z
  .object({
    id: z.string(),
    api_key_id: z.string(),
    label: z.string().nullable(),
    address: z.string().nullable(),
    latitude: z.number(),
    longitude: z.number(),
    type_local: z.enum(PORTFOLIO_TYPES),
    surface: z.number(),
    pieces: z.number().int().nullable(),
    code_postal: z.string().nullable(),
    commune: z.string().nullable(),
    purchase_price: z.number().nullable(),
    estimate_low: z.number().nullable().optional().openapi({ description: 'Euros. Absent for Terrain, Local commercial and Dépendance; null when fewer than 3 comparables were found.' }),
    estimate_mid: z.number().nullable().optional(),
    estimate_high: z.number().nullable().optional(),
    estimate_pm2: z.number().nullable().optional().openapi({ description: 'Estimated price per m² (median of the comparables).' }),
    estimate_confidence: z.string().nullable().optional().openapi({ description: 'high, medium or low.' }),
    estimate_based_on: z.number().int().nullable().optional().openapi({ description: 'Comparables used (or found, when too few).' }),
    estimate_computed_at: z.string().nullable().optional().openapi({ description: 'ISO 8601 UTC; null while the estimate is invalidated and not yet recomputed.' }),
    estimate_reference_date: z.string().nullable().optional().openapi({ description: 'The day the comparables search counted back from (as reference_date of /v1/estimate).' }),
    estimate_message: z.string().optional().openapi({ description: 'Why the estimate fields are null.' }),
    estimate_inputs: estimateInputsSchema.optional().openapi({
      description: 'The DPE class and construction year the estimate was adjusted to and where they came from, so that a difference from GET /v1/estimate called with the property’s fields can be explained.',
    }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('PortfolioProperty');

export type Property = z.input<typeof propertySchema>;

export interface StoredProperty {
  id: string;
  keyId: string;
  data: Metadata;
  estimate: StoredEstimate | null;
  estimateValid: boolean;
  estimateComputedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

function fromRow(r: PropertyRow): StoredProperty {
  return {
    id: r.id,
    keyId: r.key_id,
    data: JSON.parse(r.data) as Metadata,
    estimate: r.estimate ? (JSON.parse(r.estimate) as StoredEstimate) : null,
    estimateValid: r.estimate_valid === 1,
    estimateComputedAt: r.estimate_computed_at,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export const isEstimated = (t: PortfolioType) => ESTIMATED_TYPES.includes(t);

/** The property as the API shows it: estimate fields only for the types that get one. */
export function toProperty(p: StoredProperty): Property {
  const out: Property = { id: p.id, api_key_id: p.keyId, ...p.data, created_at: p.createdAt, updated_at: p.updatedAt };
  if (!isEstimated(p.data.type_local)) return out;
  const e = p.estimateValid ? p.estimate : null;
  return {
    ...out,
    estimate_low: e?.estimate_low ?? null,
    estimate_mid: e?.estimate_mid ?? null,
    estimate_high: e?.estimate_high ?? null,
    estimate_pm2: e?.estimate_pm2 ?? null,
    estimate_confidence: e?.estimate_confidence ?? null,
    estimate_based_on: e?.estimate_based_on ?? null,
    estimate_computed_at: p.estimateValid ? p.estimateComputedAt : null,
    estimate_reference_date: e?.estimate_reference_date ?? null,
    ...(e?.estimate_message ? { estimate_message: e.estimate_message } : {}),
    ...(e?.estimate_inputs ? { estimate_inputs: e.estimate_inputs } : {}),
  };
}

/** The key's property, or 404 (another key's property is not found either: never 403). */
export async function loadProperty(call: Call, id: string): Promise<StoredProperty> {
  const row = await call.ctx.state.portfolio.get(call.key.id, id);
  if (!row) throw new ApiError('not_found', `no portfolio property ${id} for this key`);
  return fromRow(row);
}

export async function listProperties(call: Call, limit: number, offset: number): Promise<{ total: number; items: StoredProperty[] }> {
  const { total, rows } = await call.ctx.state.portfolio.list(call.key.id, limit, offset);
  return { total, items: rows.map(fromRow) };
}

export async function insertProperty(call: Call, data: Metadata, estimate: StoredEstimate | null): Promise<StoredProperty> {
  const at = call.now.toISOString();
  const id = `prop_${randomBase62(16)}`;
  await call.ctx.state.portfolio.insert({
    id,
    key_id: call.key.id,
    data: JSON.stringify(data),
    estimate: estimate && JSON.stringify(estimate),
    estimate_valid: estimate ? 1 : 0,
    estimate_computed_at: estimate ? at : null,
    created_at: at,
  });
  return loadProperty(call, id);
}

export async function saveProperty(call: Call, p: StoredProperty): Promise<StoredProperty> {
  await call.ctx.state.portfolio.save({
    id: p.id,
    key_id: call.key.id,
    data: JSON.stringify(p.data),
    estimate: p.estimate && JSON.stringify(p.estimate),
    estimate_valid: p.estimateValid ? 1 : 0,
    estimate_computed_at: p.estimateComputedAt,
    updated_at: p.updatedAt,
  });
  return loadProperty(call, p.id);
}

/** Deletes the key's property (the caller checked it exists). */
export async function deleteProperty(call: Call, id: string): Promise<void> {
  await call.ctx.state.portfolio.delete(call.key.id, id);
}

/** Whether GET /v1/portfolio/:id must recompute (and charge 10): an estimated type whose estimate is invalid or old. */
export function needsRefresh(p: StoredProperty, now: Date): boolean {
  if (!isEstimated(p.data.type_local)) return false;
  if (!p.estimateValid || !p.estimateComputedAt) return true;
  return now.getTime() - new Date(p.estimateComputedAt).getTime() > ESTIMATE_MAX_AGE_MS;
}

/**
 * The estimate of /v1/estimate for this property (default radius and age window, its postal code as the fallback),
 * adjusted to the energy class and construction year of the property's own sale when the data holds it (its matched
 * diagnostic and building: lib/valuation/features.ts featuresOfSale), as /v1/estimate does with classe_dpe and
 * annee_construction. Fewer than 3 comparables: null values and a message, charged like /v1/estimate.
 */
export async function computeEstimate(call: Call, d: Metadata): Promise<StoredEstimate> {
  const subject = estimateSubject({
    latitude: d.latitude,
    longitude: d.longitude,
    typeLocal: d.type_local as 'Maison' | 'Appartement',
    surface: d.surface,
    pieces: d.pieces,
    codePostal: d.code_postal,
  });
  const budgetMs = call.ctx.limits.denseQueryBudgetMs;
  const query = (sql: string, params: Params) => call.ctx.db.query(sql, params, { timeoutMs: budgetMs });
  // a lookup past the budget values the property without its features rather than failing it
  const { classe_dpe, annee_construction, distance_m } = await featuresOfSale(query, { latitude: d.latitude, longitude: d.longitude, typeLocal: d.type_local, surface: d.surface }).catch((e: unknown) => {
    if (e instanceof QueryTimeoutError) return { ...NO_FEATURES, distance_m: null };
    throw e;
  });
  const r = await valuate(call, subject, 0, { classe_dpe, annee_construction });
  const source = classe_dpe !== null ? 'dpe' : annee_construction !== null ? 'bdnb' : 'user';
  const estimate_inputs: EstimateInputs = { classe_dpe, annee_construction, source, distance_m: source === 'user' ? null : distance_m };
  const e = r.estimate;
  if (!e) {
    const n = r.comparables.length;
    return {
      estimate_low: null,
      estimate_mid: null,
      estimate_high: null,
      estimate_pm2: null,
      estimate_confidence: null,
      estimate_based_on: n,
      estimate_reference_date: r.reference.date,
      estimate_inputs,
      estimate_message:
        `Only ${n} comparable sale${n === 1 ? '' : 's'} found near this property (at least ${MIN_COMPARABLES} are needed): no estimate. ` +
        'Use GET /v1/estimate with a wider radius_m or max_age_months for a one-off valuation.',
    };
  }
  return {
    estimate_low: e.price_range.low,
    estimate_mid: e.price_range.mid,
    estimate_high: e.price_range.high,
    estimate_pm2: e.price_per_m2.median,
    estimate_confidence: e.confidence,
    estimate_based_on: e.based_on_count,
    estimate_reference_date: r.reference.date,
    estimate_inputs,
  };
}
