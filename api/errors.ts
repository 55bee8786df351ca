// The API's one error type: a closed list of codes, each with its HTTP status, rendered by one middleware as
// {error: {code, message, details?}} (specification, Errors).
import type { ZodError } from 'zod';

export const ERROR_STATUS = {
  invalid_params: 400,
  invalid_request: 400,
  missing_location: 400,
  unsupported_location: 400,
  missing_bearer_token: 401,
  unknown_key: 401,
  inactive_key: 401,
  insufficient_credits: 402,
  plan_required: 403,
  not_found: 404,
  request_timeout: 408,
  alert_limit_reached: 409,
  rate_limited: 429,
  // POST /v1/account/free-key: the client address had its free keys of the UTC day (docs/decisions.md, Keys from the dashboard).
  free_key_limit_reached: 429,
  request_too_large: 431,
  query_failed: 500,
  at_capacity: 503,
  service_unavailable: 503,
  dense_query_timeout: 504,
  // GET /v1/businesses/:siren, INSEE's registry behind it (docs/decisions.md, Businesses).
  registry_error: 502,
  registry_unavailable: 503,
  registry_busy: 503,
  registry_timeout: 504,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ParamIssue {
  param: string;
  issue: string;
}

export class ApiError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly opts: { details?: ParamIssue[]; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.status = ERROR_STATUS[code];
  }

  get body(): { error: { code: ErrorCode; message: string; details?: ParamIssue[] } } {
    return { error: { code: this.code, message: this.message, ...(this.opts.details ? { details: this.opts.details } : {}) } };
  }

  /** The error body as sent: with the request's id, so a caller can quote it and we can find it in the logs and ledger. */
  bodyFor(requestId: string): { error: { code: ErrorCode; message: string; details?: ParamIssue[]; request_id: string } } {
    return { error: { ...this.body.error, request_id: requestId } };
  }
}

/** invalid_params naming each offending parameter. */
export function invalidParams(details: ParamIssue[]): ApiError {
  const summary = details.map((d) => `${d.param}: ${d.issue}`).join('; ');
  return new ApiError('invalid_params', `invalid parameters (${summary})`, { details });
}

/** Zod failures take the same road as every other error: one detail per parameter. */
export function fromZodError(err: ZodError, where: 'query' | 'path' | 'body'): ApiError {
  const seen = new Map<string, string>();
  for (const issue of err.issues) {
    // A strict body's unknown fields: one detail each, named.
    if (issue.code === 'unrecognized_keys') {
      for (const k of issue.keys) seen.set([...issue.path.map(String), k].join('.'), 'is not a known field');
      continue;
    }
    const param = issue.path.length ? issue.path.map(String).join('.') : where;
    if (!seen.has(param)) seen.set(param, issue.message);
  }
  return invalidParams([...seen].map(([param, issue]) => ({ param, issue })));
}
