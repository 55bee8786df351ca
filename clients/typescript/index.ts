// The typed foncier client: one method per operationId of /v1/openapi.json, over openapi-fetch and the types
// openapi-typescript generated (schema.ts, operations.ts: `npm run client:generate`). Depends on nothing of the server.
import createFetchClient from 'openapi-fetch';
import type { Client as FetchClient } from 'openapi-fetch';
import type { components, operations, paths } from './schema.js';
import { OPERATIONS } from './operations.js';

export type * from './operations.js';
export { OPERATIONS } from './operations.js';
export type { components, operations, paths } from './schema.js';

export type OperationId = keyof typeof OPERATIONS & keyof operations;

/** Drops the request parts an operation does not have (typed `never`), keeping the optional ones optional. */
type Present<T> = { [P in keyof T as [NonNullable<T[P]>] extends [never] ? never : P]: T[P] };
type BodyPart<K extends OperationId> = operations[K] extends { requestBody: { content: { 'application/json': infer B } } } ? { body: B } : unknown;

/** What an operation takes: `{ query?, path?, body? }` as its OpenAPI document declares them. */
export type RequestOf<K extends OperationId> = Present<Pick<operations[K]['parameters'], 'query' | 'path'>> & BodyPart<K>;

/** What an operation answers on success (undefined for 204 No Content). */
export type ResponseOf<K extends OperationId> = {
  [S in keyof operations[K]['responses']]: S extends 200 | 201
    ? operations[K]['responses'][S] extends { content: { 'application/json': infer R } }
      ? R
      : never
    : S extends 204
      ? undefined
      : never;
}[keyof operations[K]['responses']];

/** The request may be left out when none of its parts is required. */
type ArgsOf<K extends OperationId> = object extends RequestOf<K> ? [request?: RequestOf<K>] : [request: RequestOf<K>];

/** Operations answering pages: a `next_cursor` to pass back as `offset`. */
export type PaginatedOperationId = {
  [K in OperationId]: ResponseOf<K> extends { next_cursor: number | null } ? (RequestOf<K> extends { query?: { offset?: number } } ? K : never) : never;
}[OperationId];

/** The element type of a page's list (transactions, properties, alerts…). */
export type ItemOf<K extends PaginatedOperationId> = {
  [P in keyof ResponseOf<K>]-?: NonNullable<ResponseOf<K>[P]> extends readonly (infer T)[] ? T : never;
}[keyof ResponseOf<K>];

export type ErrorBody = components['schemas']['Error'];

/** Every non-2xx answer: the API's error body, its HTTP status and its stable code. */
export class FoncierError extends Error {
  override readonly name = 'FoncierError';

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId?: string,
    readonly details?: ErrorBody['error']['details'],
    /** Seconds the server asked to wait (Retry-After), when it said. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }

  /** From a response and its parsed body; a body that is not the API's (a proxy's HTML page) still gives an error. */
  static from(response: Response, body: unknown): FoncierError {
    const retryAfter = retryAfterSeconds(response.headers.get('Retry-After'));
    const e = (body as Partial<ErrorBody> | undefined)?.error;
    if (e && typeof e.code === 'string' && typeof e.message === 'string') {
      return new FoncierError(response.status, e.code, e.message, e.request_id, e.details, retryAfter);
    }
    const text = typeof body === 'string' && body ? body.slice(0, 200) : response.statusText;
    return new FoncierError(response.status, `http_${response.status}`, text || `HTTP ${response.status}`, response.headers.get('X-Request-Id') ?? undefined, undefined, retryAfter);
  }
}

/** Retry-After as seconds: delay-seconds or an HTTP date (RFC 9110 §10.2.3); undefined when absent or unreadable. */
function retryAfterSeconds(value: string | null): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

export interface ClientOptions {
  /** The API's origin, e.g. https://api.example.fr (no trailing /v1: the paths carry it). */
  baseUrl: string;
  /** Sent as X-API-Key on every request. */
  apiKey?: string;
  /** Retries after 429 rate_limited or 503 at_capacity (default 2, so 3 attempts at most); 0 disables them. */
  maxRetries?: number;
  /** A wait longer than this (Retry-After included) is not waited for: the error is thrown (default 60 000 ms). */
  maxRetryDelayMs?: number;
  /** How to wait between attempts (tests inject one that moves a clock instead). */
  sleep?: (ms: number) => Promise<void>;
  /** A fetch implementation (default: the global one). */
  fetch?: (input: Request) => Promise<Response>;
}

type NamedOperations = { [K in OperationId]: (...args: ArgsOf<K>) => Promise<ResponseOf<K>> };

export type FoncierClient = NamedOperations & {
  /** Any operation by its operationId: `call('getStatsMarket', { query: { code_postal: '75011' } })`. */
  call<K extends OperationId>(operationId: K, ...args: ArgsOf<K>): Promise<ResponseOf<K>>;
  /** Every page of a paginated operation, following next_cursor from the request's offset (default 0). */
  pages<K extends PaginatedOperationId>(operationId: K, ...args: ArgsOf<K>): AsyncGenerator<ResponseOf<K>, void, undefined>;
  /** Every item of every page of a paginated operation. */
  items<K extends PaginatedOperationId>(operationId: K, ...args: ArgsOf<K>): AsyncGenerator<ItemOf<K>, void, undefined>;
  /** The underlying openapi-fetch client (same key, no retries), for what the named methods do not cover. */
  raw: FetchClient<paths>;
};

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function createClient(options: ClientOptions): FoncierClient {
  const { maxRetries = 2, maxRetryDelayMs = 60_000, sleep = defaultSleep } = options;
  // The key is set here, once: openapi-fetch adds these headers to every request.
  const raw = createFetchClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: options.apiKey ? { 'X-API-Key': options.apiKey } : {},
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });

  /** How long to wait before attempt `attempt + 1`, or undefined to give up. Both retried answers mean the request did no work. */
  const retryDelay = (err: FoncierError, attempt: number): number | undefined => {
    const retryable = err.status === 429 || (err.status === 503 && err.code === 'at_capacity');
    if (!retryable || attempt >= maxRetries) return undefined;
    const ms = err.retryAfterSeconds !== undefined ? err.retryAfterSeconds * 1000 : 1000 * 2 ** attempt;
    return ms <= maxRetryDelayMs ? ms : undefined;
  };

  async function call<K extends OperationId>(operationId: K, ...args: ArgsOf<K>): Promise<ResponseOf<K>> {
    const op = OPERATIONS[operationId];
    if (!op) throw new TypeError(`unknown operation ${String(operationId)}`);
    const request = (args[0] ?? {}) as { query?: object; path?: object; body?: unknown };
    const init = { params: { query: request.query, path: request.path }, ...(request.body !== undefined ? { body: request.body } : {}) };
    for (let attempt = 0; ; attempt++) {
      // openapi-fetch's own typing wants a literal path; the operation table is typed by operationId instead.
      const { data, error, response } = await (raw.request as (m: string, p: string, i: object) => Promise<{ data?: unknown; error?: unknown; response: Response }>)(op.method, op.path, init);
      if (response.ok) return data as ResponseOf<K>;
      const err = FoncierError.from(response, error);
      const delay = retryDelay(err, attempt);
      if (delay === undefined) throw err;
      await sleep(delay);
    }
  }

  async function* pages<K extends PaginatedOperationId>(operationId: K, ...args: ArgsOf<K>): AsyncGenerator<ResponseOf<K>, void, undefined> {
    const request = (args[0] ?? {}) as { query?: { offset?: number } };
    let offset = request.query?.offset ?? 0;
    for (;;) {
      const page = (await call(operationId, ...([{ ...request, query: { ...request.query, offset } }] as unknown as ArgsOf<K>))) as ResponseOf<K>;
      yield page;
      const next = (page as { next_cursor: number | null }).next_cursor;
      if (next === null || next === undefined) return;
      // A cursor that does not move forward would loop for ever: the server broke its contract.
      if (next <= offset) throw new Error(`${operationId}: next_cursor ${next} does not move past offset ${offset}`);
      offset = next;
    }
  }

  async function* items<K extends PaginatedOperationId>(operationId: K, ...args: ArgsOf<K>): AsyncGenerator<ItemOf<K>, void, undefined> {
    for await (const page of pages(operationId, ...args)) {
      const lists = Object.values(page as object).filter(Array.isArray);
      if (lists.length !== 1) throw new Error(`${operationId}: a page holds ${lists.length} lists, expected one`);
      yield* lists[0] as ItemOf<K>[];
    }
  }

  const named = Object.fromEntries(
    (Object.keys(OPERATIONS) as OperationId[]).map((id) => [id, (...args: unknown[]) => call(id, ...(args as ArgsOf<typeof id>))]),
  ) as unknown as NamedOperations;
  return { ...named, call, pages, items, raw };
}
