// GET /v1/comparables (10 credits): the most similar recent sales around a property, and the estimate they give.
import { DEFAULT_MAX_AGE_MONTHS, ESTIMATE_K } from '../../../lib/valuation/estimator';
import { invalidParams } from '../../errors';
import { booleanParam, enumParam, numberParam, round2, z } from '../../params';
import { defineEndpoint } from '../../platform';
import { communeFallback, referenceDateField, required, estimateSchema, nullEstimateMessage, requirePoint, subjectFields, TYPE_LOCAL_2, valuate } from './common';

/** Upper bound of max_age_months on this endpoint (specification). */
const MAX_AGE_MONTHS = 36;

const query = z.object({
  ...subjectFields,
  type_local: required(enumParam(TYPE_LOCAL_2, 'Type of the property.').openapi({ example: 'Appartement' })),
  surface_min: required(numberParam({ min: 1, max: 10_000, description: 'Smallest surface of a comparable, m².', example: 40 })),
  surface_max: required(numberParam({ min: 1, max: 10_000, description: 'Largest surface of a comparable, m².', example: 70 })),
  max_age_months: numberParam({ min: 1, max: MAX_AGE_MONTHS, int: true, description: `Oldest comparable, in months before reference_date (today, or the latest sale loaded for the département when the data ends earlier; default ${DEFAULT_MAX_AGE_MONTHS}).` }).default(DEFAULT_MAX_AGE_MONTHS),
  limit: numberParam({ min: 1, max: 20, int: true, description: 'Comparables returned (default 10).' }).default(10),
  exclude_bulk_sales: booleanParam('Leave out sales of several dwellings for one price (default true).').default(true),
});

const comparableSchema = z.object({
  distance_m: z.number().nullable().openapi({ description: 'null for a sale without coordinates found by a fallback.' }),
  age_days: z.number().int(),
  similarity_score: z.number().openapi({ description: 'Between 0 and 1: surface 40 %, distance 30 %, age 20 %, rooms 10 % (docs/valuation.md).' }),
  property: z.object({
    address: z.string().nullable(),
    type: z.string(),
    surface: z.number(),
    rooms: z.number().nullable(),
    price: z.number(),
    price_per_m2: z.number(),
    date: z.string(),
  }),
});

export const comparables = defineEndpoint({
  method: 'get',
  path: '/v1/comparables',
  tag: 'Valuation',
  summary: 'Comparable sales and the estimate they give',
  description:
    `Clean sales of the same type within radius_m and max_age_months, with a surface between surface_min and surface_max, ranked by ` +
    `similarity. The estimate is the weighted median (distance, recency, surface) of up to ${ESTIMATE_K} comparables' €/m², each ` +
    'brought to the reference date along the local price trend, × the middle of the surface range, with a 50 % interval ' +
    'calibrated by a published backtest. Without 3 comparables in the radius, code_postal then commune are searched (flagged in ' +
    'confidence_factors.fallback_used); with fewer than 3 in the end, valuation_estimate is null and the call is still charged. ' +
    'A search past the time budget answers 504 dense_query_timeout and is refunded.',
  query,
  response: z.object({
    comparables: z.array(comparableSchema),
    valuation_estimate: estimateSchema.nullable(),
    message: z.string().optional().openapi({ description: 'Why valuation_estimate is null.' }),
    reference_date: referenceDateField,
    notice: z.string().optional(),
  }),
  credits: 10,
  errors: ['missing_location', 'dense_query_timeout'],
  prepare({ query: q }) {
    const point = requirePoint(q);
    const missing = (['type_local', 'surface_min', 'surface_max'] as const).filter((p) => q[p] === undefined);
    if (missing.length) throw invalidParams(missing.map((param) => ({ param, issue: 'is required' })));
    if (q.surface_min! > q.surface_max!) throw invalidParams([{ param: 'surface_min', issue: 'must not be above surface_max' }]);
    const fallback = communeFallback(q.commune);
    return {
      subject: {
        ...point,
        typeLocal: q.type_local!,
        // The estimate is for the middle of the requested range.
        surface: (q.surface_min! + q.surface_max!) / 2,
        surfaceMin: q.surface_min!,
        surfaceMax: q.surface_max!,
        pieces: q.pieces ?? null,
        radiusM: q.radius_m as number,
        maxAgeMonths: q.max_age_months as number,
        excludeBulk: q.exclude_bulk_sales as boolean,
        codePostal: q.code_postal ?? null,
        communeCodes: fallback.codes,
      },
      limit: q.limit as number,
      notices: fallback.notices,
    };
  },
  async handler({ subject, limit, notices }, call) {
    const r = await valuate(call, subject, limit);
    const notice = [...notices, ...r.notices].join(' ');
    return {
      comparables: r.comparables.slice(0, limit).map((c) => ({
        distance_m: c.distance_m === null ? null : round2(c.distance_m),
        age_days: c.age_days,
        similarity_score: Math.round(c.score * 10_000) / 10_000,
        property: {
          address: c.address,
          type: c.type_local,
          surface: c.surface_reelle_bati,
          rooms: c.nombre_pieces_principales,
          price: c.valeur_fonciere,
          price_per_m2: round2(c.prix_m2),
          date: c.date_mutation,
        },
      })),
      valuation_estimate: r.estimate,
      ...(r.estimate ? {} : { message: nullEstimateMessage(r.comparables.length, MAX_AGE_MONTHS, subject.pieces) }),
      reference_date: r.reference.date,
      ...(notice ? { notice } : {}),
    };
  },
});
