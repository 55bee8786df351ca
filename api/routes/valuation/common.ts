// What GET /v1/comparables and GET /v1/estimate share: parameters, the estimate's response schema, and the call of
// the one estimator (lib/valuation) with the dense-query budget, the fallbacks and the published calibration.
import { loadCalibration } from '../../../lib/valuation/calibration';
import { applyFeatures, loadCoefficients, NO_FEATURES, type AppliedAdjustment, type SubjectFeatures } from '../../../lib/valuation/features';
import { referenceDate, referenceNotice, type ReferenceDate } from '../../../lib/valuation/reference';
import { DEFAULT_RADIUS_M } from '../../../lib/distance';
import { DEFAULT_MAX_AGE_MONTHS, ESTIMATE_SURFACE_FACTOR, estimateFrom, MIN_COMPARABLES, searchComparables, type Estimate, type SearchResult, type ValuationSubject } from '../../../lib/valuation/estimator';
import { QueryTimeoutError } from '../../db';
import { ApiError, invalidParams } from '../../errors';
import { locationFields, resolveLocation } from '../../location';
import { isoDay, numberParam, required, z } from '../../params';
import type { Call } from '../../platform';

export const TYPE_LOCAL_2 = ['Maison', 'Appartement'] as const;

export { required };

/** Parameters both endpoints take with the same meaning. */
export const subjectFields = {
  latitude: required(numberParam({ min: -90, max: 90, description: 'WGS84 latitude of the property.', example: 48.8414 })),
  longitude: required(numberParam({ min: -180, max: 180, description: 'WGS84 longitude of the property.', example: 2.3003 })),
  code_postal: locationFields.code_postal.openapi({ description: 'Administrative fallback: searched when the radius, even widened, gives fewer than 3 comparables.' }),
  commune: locationFields.commune.openapi({ description: 'Commune fallback, after code_postal (name or INSEE code).' }),
  pieces: numberParam({ min: 1, max: 50, int: true, description: 'Main rooms: comparables within ±1 room.' }).optional(),
  radius_m: numberParam({ min: 100, max: 2000, description: `Search radius in metres (default ${DEFAULT_RADIUS_M}).` }).default(DEFAULT_RADIUS_M),
};

/** latitude and longitude are required; without either the request has no location at all (missing_location). */
export function requirePoint(q: { latitude?: number; longitude?: number; code_postal?: string; commune?: string }): { latitude: number; longitude: number } {
  if (q.latitude === undefined && q.longitude === undefined) {
    if (q.code_postal === undefined && q.commune === undefined) {
      throw new ApiError('missing_location', 'latitude and longitude of the property are required');
    }
    throw invalidParams([{ param: 'latitude', issue: 'is required: code_postal and commune are only fallbacks of the radius search' }]);
  }
  if (q.latitude === undefined || q.longitude === undefined) {
    throw invalidParams([{ param: q.latitude === undefined ? 'latitude' : 'longitude', issue: 'latitude and longitude must be given together' }]);
  }
  return { latitude: q.latitude, longitude: q.longitude };
}

/** INSEE codes of the commune fallback (the shared resolution: accents, arrondissements, homonyms with a notice). */
export function communeFallback(commune: string | undefined): { codes: string[]; notices: string[] } {
  if (commune === undefined) return { codes: [], notices: [] };
  const loc = resolveLocation({ commune }, { accept: ['commune'] });
  return { codes: loc.communes.map((c) => c.code), notices: loc.notices };
}

const ratiosSchema = z.object({
  method: z.literal('iqr_p25_p75'),
  coverage_label: z.literal('50%'),
  basis: z.enum(['cohort', 'global']).openapi({ description: 'cohort when the cohort has at least 30 measured backtest targets.' }),
  cohort: z.string().openapi({ description: 'type|surface band|dispersion band of the comparables (docs/valuation.md).' }),
  cohort_eligible_n: z.number().int(),
  ratio_low: z.number().openapi({ description: 'low = mid × ratio_low.' }),
  ratio_high: z.number().openapi({ description: 'high = mid × ratio_high.' }),
  contract_version: z.string(),
  calibration_generated_at: z.string().nullable().openapi({ description: 'null when no backtest was published (conservative default).' }),
});

export const estimateSchema = z
  .object({
    price_range: z.object({ low: z.number(), mid: z.number(), high: z.number() }),
    price_per_m2: z.object({ median: z.number(), used_surface: z.number() }),
    confidence: z.enum(['high', 'medium', 'low']),
    based_on_count: z.number().int(),
    methodology: z.string(),
    interval: ratiosSchema,
    confidence_factors: z.object({
      comparable_count: z.number().int(),
      average_similarity: z.number(),
      fallback_used: z.boolean(),
      positive_factors: z.array(z.string()),
      limiting_factors: z.array(z.string()),
    }),
  })
  .openapi('ValuationEstimate');

export const adjustmentsField = z
  .array(
    z.object({
      feature: z.enum(['classe_dpe', 'annee_construction']),
      value: z.union([z.string(), z.number()]).openapi({ description: 'The value given.' }),
      modalite: z.string().openapi({ description: 'The class, or the construction bracket of the year (BDNB tranches).' }),
      applied: z.boolean().openapi({ description: 'False when the data holds no estimated effect for it.' }),
      effet: z.number().nullable().openapi({ description: 'Effect of the value on ln(€/m²) against class D or the 1971_1990 bracket, estimated from the sales (docs/valuation.md).' }),
      coefficients: z.enum(['departement', 'national']).nullable().openapi({ description: "Whose effects: the département's, or the national ones where it has too few matched sales." }),
      comparables_adjusted: z.number().int().openapi({ description: "Comparables of the estimate whose €/m² was brought to the value (their own is known)." }),
    }),
  )
  .openapi('ValuationAdjustments', {
    description:
      'Present when classe_dpe or annee_construction is given: each comparable\'s €/m² × exp(effect of the given value − effect of its own) when its own is known.',
  });

export const referenceDateField = z.string().openapi({
  description: 'The day max_age_months counts back from: today, or the latest sale loaded for the département when the data ends earlier (DVF is published months after the sales).',
  example: '2025-06-30',
});

export function nullEstimateMessage(found: number, maxAgeLimit: number, pieces: number | null = null): string {
  const head = `Only ${found} comparable sale${found === 1 ? '' : 's'} found (at least ${MIN_COMPARABLES} are needed for an estimate)`;
  // The ±1-room filter is the narrowest criterion when given: say so first.
  if (pieces !== null) {
    return (
      `${head}: pieces=${pieces} keeps only sales of ${Math.max(1, pieces - 1)} to ${pieces + 1} main rooms. Retry without pieces, ` +
      `or increase radius_m (up to 2000) or max_age_months (up to ${maxAgeLimit}), or add code_postal or commune as a fallback.`
    );
  }
  return `${head}: increase radius_m (up to 2000) or max_age_months (up to ${maxAgeLimit}), or add code_postal or commune as a fallback.`;
}

export type Subject = Omit<ValuationSubject, 'refDate' | 'includeRefDate' | 'excludeMutation'>;

/** The subject of /v1/estimate (and of the portfolio's estimates): one surface, comparables within ×/÷ 1.5 of it. */
export function estimateSubject(p: {
  latitude: number;
  longitude: number;
  typeLocal: 'Maison' | 'Appartement';
  surface: number;
  pieces?: number | null;
  radiusM?: number;
  maxAgeMonths?: number;
  codePostal?: string | null;
  communeCodes?: string[];
}): Subject {
  return {
    latitude: p.latitude,
    longitude: p.longitude,
    typeLocal: p.typeLocal,
    surface: p.surface,
    surfaceMin: p.surface / ESTIMATE_SURFACE_FACTOR,
    surfaceMax: p.surface * ESTIMATE_SURFACE_FACTOR,
    pieces: p.pieces ?? null,
    radiusM: p.radiusM ?? DEFAULT_RADIUS_M,
    maxAgeMonths: p.maxAgeMonths ?? DEFAULT_MAX_AGE_MONTHS,
    excludeBulk: true,
    codePostal: p.codePostal ?? null,
    communeCodes: p.communeCodes ?? [],
  };
}

/**
 * Comparables and estimate of a subject as of its reference date (the request's day, or the latest sale loaded for
 * its département when the data ends earlier: a notice then says so). A timeout of the radius search is a 504, refunded.
 */
export async function valuate(
  call: Call,
  subject: Subject,
  limit: number,
  features: SubjectFeatures = NO_FEATURES,
): Promise<SearchResult & { estimate: Estimate | null; reference: ReferenceDate; adjustments: AppliedAdjustment[] }> {
  const { ctx } = call;
  const budgetMs = ctx.limits.denseQueryBudgetMs;
  let reference: ReferenceDate;
  let search: SearchResult;
  let adjustments: AppliedAdjustment[] = [];
  try {
    reference = await referenceDate((sql, params) => ctx.db.query(sql, params, { timeoutMs: budgetMs }), subject, isoDay(call.now));
    const full: ValuationSubject = { ...subject, refDate: reference.date, includeRefDate: true, excludeMutation: null };
    search = await searchComparables(full, {
      query: (sql, params, timeoutMs) => ctx.db.query(sql, params, { timeoutMs }),
      isTimeout: (e) => e instanceof QueryTimeoutError,
      budgetMs,
      limit,
    });
    // Building and energy adjustments (lib/valuation/features.ts): only when the subject has a feature.
    if (features.classe_dpe !== null || features.annee_construction !== null) {
      const coefs = await loadCoefficients((sql, params) => ctx.db.query(sql, params, { timeoutMs: budgetMs }), subject.typeLocal, reference.departement, reference.date);
      const adjusted = applyFeatures(search.pool, features, coefs);
      search = { ...search, pool: adjusted.pool };
      adjustments = adjusted.applied;
    }
  } catch (e) {
    if (e instanceof QueryTimeoutError) {
      throw new ApiError('dense_query_timeout', `the comparables search exceeded its ${ctx.limits.denseQueryBudgetMs} ms budget: retry with a smaller radius_m or max_age_months`);
    }
    throw e;
  }
  const calibration = loadCalibration(ctx.db.opts.dataRoot, ctx.db.file);
  const estimate = estimateFrom(search.pool, { typeLocal: subject.typeLocal, surface: subject.surface, fallbacks: search.fallbacks }, calibration);
  const notices = [...(reference.lagging ? [referenceNotice(reference, subject.maxAgeMonths)] : []), ...search.notices];
  const missing = adjustments.filter((a) => !a.applied).map((a) => a.feature);
  if (missing.length) notices.push(`No ${missing.join(' or ')} adjustment: the loaded data holds no estimated effect for it (no matched diagnostics or buildings).`);
  return { ...search, notices, estimate, reference, adjustments };
}
