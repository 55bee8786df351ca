// GET /v1/estimate (10 credits): the value of a house or flat from its comparables, with a calibrated 50 % interval.
import { DEFAULT_MAX_AGE_MONTHS, ESTIMATE_K, ESTIMATE_SURFACE_FACTOR } from '../../../lib/valuation/estimator';
import { DPE_CLASSES, YEAR_BOUNDS } from '../../../lib/valuation/features';
import { invalidParams } from '../../errors';
import { enumParam, numberParam, z } from '../../params';
import { defineEndpoint } from '../../platform';
import { adjustmentsField, communeFallback, referenceDateField, required, estimateSchema, estimateSubject, nullEstimateMessage, requirePoint, subjectFields, TYPE_LOCAL_2, valuate } from './common';

/** Upper bound of max_age_months on this endpoint (specification). */
const MAX_AGE_MONTHS = 24;

const query = z.object({
  ...subjectFields,
  surface: required(numberParam({ min: 5, max: 5000, description: 'Surface of the property, m².', example: 55 })),
  type_local: enumParam(TYPE_LOCAL_2, 'Type of the property (default Appartement).').default('Appartement'),
  classe_dpe: enumParam(DPE_CLASSES, "Energy class (DPE) of the property: comparables are adjusted toward it by the class effects estimated from the sales' matched diagnostics.").optional(),
  annee_construction: numberParam({
    min: YEAR_BOUNDS.min,
    max: YEAR_BOUNDS.max,
    int: true,
    description: "Construction year of the building: comparables are adjusted toward its bracket (BDNB tranches) by the effects estimated from the sales' matched buildings.",
    example: 1965,
  }).optional(),
  max_age_months: numberParam({ min: 1, max: MAX_AGE_MONTHS, int: true, description: `Oldest comparable, in months before reference_date (today, or the latest sale loaded for the département when the data ends earlier; default ${DEFAULT_MAX_AGE_MONTHS}).` }).default(DEFAULT_MAX_AGE_MONTHS),
});

export const estimate = defineEndpoint({
  method: 'get',
  path: '/v1/estimate',
  tag: 'Valuation',
  summary: 'Estimated value of a house or flat',
  description:
    `Weighted median €/m² (distance, recency, surface) of up to ${ESTIMATE_K} clean sales within radius_m and max_age_months (surface ` +
    `within ×/÷ ${ESTIMATE_SURFACE_FACTOR}), each brought to the reference date along the local price trend, multiplied by the surface, ` +
    'with a 50 % interval calibrated by a published backtest (docs/valuation.md). With classe_dpe or annee_construction, each comparable ' +
    "whose own class or building year is known is adjusted toward the property's by effects estimated from the sales (adjustments). Fewer than 3 comparables: " +
    'estimate null with a message, still charged. A search past the time budget answers 504 dense_query_timeout and is refunded.',
  query,
  response: z.object({
    estimate: estimateSchema.nullable(),
    message: z.string().optional().openapi({ description: 'Why estimate is null.' }),
    input: z.object({
      latitude: z.number(),
      longitude: z.number(),
      surface: z.number(),
      type_local: z.enum(['Maison', 'Appartement']),
      pieces: z.number().int().nullable(),
      classe_dpe: z.enum(DPE_CLASSES).nullable(),
      annee_construction: z.number().int().nullable(),
    }).openapi({ description: 'The property as valued: the parameters given, null when not given.' }),
    reference_date: referenceDateField,
    adjustments: adjustmentsField.optional(),
    notice: z.string().optional(),
  }),
  credits: 10,
  errors: ['missing_location', 'dense_query_timeout'],
  prepare({ query: q }) {
    const point = requirePoint(q);
    if (q.surface === undefined) throw invalidParams([{ param: 'surface', issue: 'is required' }]);
    const fallback = communeFallback(q.commune);
    return {
      subject: estimateSubject({
        ...point,
        typeLocal: q.type_local as 'Maison' | 'Appartement',
        surface: q.surface,
        pieces: q.pieces,
        radiusM: q.radius_m as number,
        maxAgeMonths: q.max_age_months as number,
        codePostal: q.code_postal,
        communeCodes: fallback.codes,
      }),
      features: { classe_dpe: q.classe_dpe ?? null, annee_construction: (q.annee_construction as number | undefined) ?? null },
      notices: fallback.notices,
    };
  },
  async handler({ subject, features, notices }, call) {
    const r = await valuate(call, subject, 0, features);
    const notice = [...notices, ...r.notices].join(' ');
    return {
      estimate: r.estimate,
      ...(r.estimate ? {} : { message: nullEstimateMessage(r.comparables.length, MAX_AGE_MONTHS, subject.pieces) }),
      input: {
        latitude: subject.latitude,
        longitude: subject.longitude,
        surface: subject.surface,
        type_local: subject.typeLocal,
        pieces: subject.pieces,
        classe_dpe: features.classe_dpe,
        annee_construction: features.annee_construction,
      },
      reference_date: r.reference.date,
      ...(r.adjustments.length ? { adjustments: r.adjustments } : {}),
      ...(notice ? { notice } : {}),
    };
  },
});
