// GET /v1/account, /v1/account/usage, /v1/account/requests (0 credits): what the key holder's dashboard (/dashboard)
// shows, about the calling key only. Rolling and revoking the key, and free keys, are in ./keys.ts.
import { nextResetDate } from '../../credits';
import { numberParam, z } from '../../params';
import { defineEndpoint } from '../../platform';
import { PLANS, type KeyRecord } from '../../store';
import { requestLogOf, RETENTION_DAYS } from './request-log';

export const TAG = 'Account';

/** A key as the account endpoints show it (never its secret). */
export const keySchema = z.object({
  id: z.string().openapi({ description: 'The key’s id: it stays the same when the key is rolled.' }),
  prefix: z.string().openapi({ description: 'The first characters of the key’s current secret, to tell keys apart (never the secret).' }),
  label: z.string(),
  plan: z.enum(Object.keys(PLANS) as [keyof typeof PLANS, ...(keyof typeof PLANS)[]]),
  created_at: z.string(),
  previous_secret: z
    .object({
      prefix: z.string(),
      expires_at: z.string().openapi({ description: 'When the replaced secret stops working (ISO 8601, UTC).' }),
    })
    .nullable()
    .openapi({ description: 'The secret the last roll replaced, while it still works (its grace period); null otherwise.' }),
});

export function keyFields(key: KeyRecord, now: Date): z.input<typeof keySchema> {
  const prev = key.previousSecret && key.previousSecret.expiresAt > now.toISOString() ? key.previousSecret : null;
  return {
    id: key.id,
    prefix: key.prefix,
    label: key.label,
    plan: key.plan,
    created_at: key.createdAt,
    previous_secret: prev && { prefix: prev.prefix, expires_at: prev.expiresAt },
  };
}

export const account = defineEndpoint({
  method: 'get',
  path: '/v1/account',
  tag: TAG,
  summary: 'The calling key: plan, credits left and reset date',
  description: 'Its secret is rolled with `POST /v1/account/roll` and the key revoked with `POST /v1/account/revoke`; the operator creates keys of any plan and tops them up.',
  response: z.object({
    key: keySchema,
    credits: z.object({
      remaining: z.number().int().openapi({ description: 'What the key can spend now: this month’s allotment left plus top-ups.' }),
      monthly_allotment: z.number().int().openapi({ description: 'Credits the plan restores on the first day of each UTC month.' }),
      monthly_remaining: z.number().int(),
      topup: z.number().int().openapi({ description: 'Top-up credits left; they do not expire at the monthly reset.' }),
      resets_on: z.string().openapi({ description: 'Day (UTC) the monthly allotment is next restored, YYYY-MM-DD.', format: 'date' }),
    }),
    rate_limit_per_minute: z.number().int(),
  }),
  credits: 0,
  usesDatabase: false,
  prepare: () => ({}),
  async handler(_p, { ctx, key, now }) {
    const b = await ctx.state.credits.balance(key.id);
    return {
      key: keyFields(key, now),
      credits: {
        remaining: b?.remaining ?? 0,
        monthly_allotment: PLANS[key.plan].monthly,
        monthly_remaining: b?.monthly ?? 0,
        topup: b?.topup ?? 0,
        resets_on: b?.resetsOn ?? nextResetDate(now),
      },
      rate_limit_per_minute: ctx.limits.rateLimitPerMinute ?? PLANS[key.plan].rpm,
    };
  },
});

const dailySchema = z.object({
  date: z.string().openapi({ format: 'date' }),
  endpoint: z.string().openapi({ description: 'Method and path as in this document, e.g. `GET /v1/stats/market`.' }),
  requests: z.number().int(),
  credits: z.number().int().openapi({ description: 'Credits finally kept (refunds deducted).' }),
});

export const accountUsage = defineEndpoint({
  method: 'get',
  path: '/v1/account/usage',
  tag: TAG,
  summary: 'Requests and credits of the calling key per endpoint and day',
  description: `Every authenticated call of the key (REST and MCP tool calls, refused ones included), per UTC day and endpoint, over the last \`days\` days (today included). Days without calls are absent. The log keeps ${RETENTION_DAYS} days; this request itself is not counted yet.`,
  query: z.object({ days: numberParam({ min: 1, max: 30, int: true, description: 'Days to cover, today included (default 30).', example: 30 }).optional() }),
  response: z.object({
    date_debut: z.string().openapi({ format: 'date' }),
    date_fin: z.string().openapi({ format: 'date' }),
    usage: z.array(dailySchema),
    totals: z.array(z.object({ endpoint: z.string(), requests: z.number().int(), credits: z.number().int() })).openapi({ description: 'Per endpoint over the period, most credits first.' }),
  }),
  credits: 0,
  usesDatabase: false,
  prepare: ({ query }) => ({ days: query.days ?? 30 }),
  async handler({ days }, { ctx, key, now }) {
    const fin = now.toISOString().slice(0, 10);
    const debut = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - (days - 1))).toISOString().slice(0, 10);
    const usage = await requestLogOf(ctx).daily(key.id, debut);
    const totals = new Map<string, { endpoint: string; requests: number; credits: number }>();
    for (const u of usage) {
      const t = totals.get(u.endpoint) ?? { endpoint: u.endpoint, requests: 0, credits: 0 };
      t.requests += u.requests;
      t.credits += u.credits;
      totals.set(u.endpoint, t);
    }
    return {
      date_debut: debut,
      date_fin: fin,
      usage,
      totals: [...totals.values()].sort((a, b) => b.credits - a.credits || b.requests - a.requests || a.endpoint.localeCompare(b.endpoint)),
    };
  },
});

export const accountRequests = defineEndpoint({
  method: 'get',
  path: '/v1/account/requests',
  tag: TAG,
  summary: 'Recent requests of the calling key',
  description: 'Newest first: request id (the X-Request-Id of the answer, to quote when reporting a problem), endpoint, transport, status and credits kept. This request itself is not listed yet.',
  query: z.object({ limit: numberParam({ min: 1, max: 100, int: true, description: 'How many (default 20).', example: 20 }).optional() }),
  response: z.object({
    requests: z.array(
      z.object({
        request_id: z.string(),
        at: z.string().openapi({ description: 'When it was answered (ISO 8601, UTC).' }),
        endpoint: z.string(),
        transport: z.enum(['rest', 'mcp']),
        status: z.number().int(),
        credits: z.number().int(),
      }),
    ),
  }),
  credits: 0,
  usesDatabase: false,
  prepare: ({ query }) => ({ limit: query.limit ?? 20 }),
  handler: async ({ limit }, { ctx, key }) => ({ requests: await requestLogOf(ctx).recent(key.id, limit) }),
});
