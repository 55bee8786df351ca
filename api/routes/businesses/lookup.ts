// GET /v1/businesses/:siren (2 credits): the head office of a legal unit, fetched live from INSEE's API Sirene by the
// registry client (lib/registry.ts). Its failures become the API's registry codes, all refunded (5xx, and not_found
// on this direct lookup); a malformed SIREN is refused before any charge or registry call.
import { RegistryError, type RegistryFailure } from '../../../lib/registry';
import { sirenIssue } from '../../../lib/sirene';
import { ApiError, invalidParams, type ErrorCode } from '../../errors';
import { codeFromNumber, z } from '../../params';
import { defineEndpoint } from '../../platform';

export const businessDetailSchema = z
  .object({
    siren: z.string().openapi({ description: '9 digits.' }),
    siret: z.string().openapi({ description: 'The head office’s SIRET (14 digits).' }),
    denomination: z.string().nullable().openapi({
      description: 'The legal unit’s name, else the head office’s usual name or sign, else (sole traders) first name and last name. ' +
        'Null when INSEE publishes the unit under partial diffusion and the name would be a person’s.',
    }),
    naf_code: z.string().nullable().openapi({ description: 'The head office’s NAF rev. 2 code, without its dot (e.g. 6831Z).', example: '6831Z' }),
    etat: z.string().nullable().openapi({ description: 'The legal unit’s administrative state: A (active) or C (ceased).', example: 'A' }),
    date_creation: z.string().nullable().openapi({ description: 'The legal unit’s creation date (YYYY-MM-DD).', format: 'date' }),
    adresse: z.string().nullable().openapi({ description: 'Number and street of the head office; null under partial diffusion.' }),
    code_postal: z.string().nullable(),
    commune: z.string().nullable(),
    source: z.literal('insee_api'),
  })
  .openapi('BusinessDetail');

const CODE_OF: Record<RegistryFailure, ErrorCode> = {
  unavailable: 'registry_unavailable',
  busy: 'registry_busy',
  timeout: 'registry_timeout',
  not_found: 'not_found',
  bad_answer: 'registry_error',
};

export const getBusiness = defineEndpoint({
  method: 'get',
  path: '/v1/businesses/:siren',
  tag: 'Businesses',
  summary: 'One business’s head office, live from the INSEE registry',
  description:
    'Fetched in real time from INSEE’s API Sirene (successful lookups are kept 24 h, still charged). Refunded: unknown ' +
    'SIREN (404 not_found), registry not configured on this server (503 registry_unavailable), registry busy (503 ' +
    'registry_busy, with Retry-After), no answer within 5 s (504 registry_timeout), unusable answer (502 registry_error). ' +
    'A SIREN that is not 9 digits or fails its check digit is refused (400) without calling the registry.',
  params: z.object({
    // The digits as a pattern; the Luhn check digit, which no pattern expresses, is sirenIssue's in prepare.
    siren: z.preprocess(codeFromNumber, z.string()).openapi({ description: 'The legal unit’s 9-digit SIREN (its last digit a Luhn check digit).', pattern: '^\\d{9}$', example: '552032534' }),
  }),
  response: z.object({ business: businessDetailSchema }),
  credits: 2,
  refundOn: ['not_found'],
  usesDatabase: false,
  errors: ['not_found', 'registry_error', 'registry_unavailable', 'registry_busy', 'registry_timeout'],
  prepare({ params }) {
    const issue = sirenIssue(params.siren);
    if (issue) throw invalidParams([{ param: 'siren', issue }]);
    return { siren: params.siren };
  },
  async handler({ siren }, { ctx }) {
    try {
      return { business: await ctx.registry.lookup(siren) };
    } catch (e) {
      if (!(e instanceof RegistryError)) throw e;
      throw new ApiError(CODE_OF[e.kind], e.message, e.retryAfterSeconds ? { headers: { 'Retry-After': String(e.retryAfterSeconds) } } : {});
    }
  },
});
