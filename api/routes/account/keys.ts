// Keys from the dashboard: POST /v1/account/roll (a new secret for the calling key, the replaced one kept through a
// grace period of up to 7 days), POST /v1/account/revoke (the calling key, for good), both 0 credits through the
// endpoint platform; and POST /v1/account/free-key, which has no key to authenticate: a Free-plan key for a visitor,
// limited per client address and UTC day (FREE_KEYS, FREE_KEYS_PER_ADDRESS_PER_DAY). None of them is an MCP tool: a
// secret is never handed to an agent, and an agent must not revoke the key it acts for.
import net from 'node:net';
import type { Express, Request, Response } from 'express';
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { AppContext } from '../../context';
import { nextResetDate } from '../../credits';
import { ApiError, fromZodError, invalidParams } from '../../errors';
import { z } from '../../params';
import { defineEndpoint, errorSchema, headerRefs, mountEndpoint, operationIdOf, type AnyEndpoint } from '../../platform';
import { MAX_ROLL_GRACE_MS, PLANS, RevokedKeyError } from '../../store';
import { env } from '../../../lib/env';
import { keyFields, keySchema, TAG } from './account';

const MAX_GRACE_SECONDS = MAX_ROLL_GRACE_MS / 1000;

const secretSchema = z.string().openapi({ description: 'The new secret, in clear: shown this once (only its SHA-256 is kept). Send it as `X-API-Key`.' });

export const rollKey = defineEndpoint({
  method: 'post',
  path: '/v1/account/roll',
  tag: TAG,
  summary: 'Roll the calling key: a new secret, the same key',
  description:
    'Gives the key a new secret, returned once. The key keeps its id, plan, credits, portfolio, alerts and request log. ' +
    `The secret it replaces keeps working for \`grace_period_seconds\` (0: it stops at once; at most ${MAX_GRACE_SECONDS}, 7 days), ` +
    'as `key.previous_secret` shows; a secret replaced by an earlier roll stops at once.',
  body: z
    .object({
      grace_period_seconds: z
        .number()
        .int()
        .min(0)
        .max(MAX_GRACE_SECONDS)
        .openapi({ description: 'How long the replaced secret keeps working, in seconds (0 to 604800).', example: 86_400 }),
    })
    .strict()
    .openapi('AccountRollRequest', { example: { grace_period_seconds: 86_400 } }),
  response: z.object({ key: keySchema, api_key: secretSchema }),
  credits: 0,
  usesDatabase: false,
  analytic: false,
  errors: ['inactive_key'],
  prepare: ({ body }) => ({ graceMs: body.grace_period_seconds * 1000 }),
  async handler({ graceMs }, { ctx, key }) {
    try {
      const r = await ctx.state.keys.roll(key.id, graceMs);
      return { key: keyFields(r.key, ctx.clock.now()), api_key: r.secret };
    } catch (e) {
      // Revoked between the key check and the roll.
      if (e instanceof RevokedKeyError) throw new ApiError('inactive_key', 'this API key has been revoked');
      throw e;
    }
  },
});

export const revokeKey = defineEndpoint({
  method: 'post',
  path: '/v1/account/revoke',
  tag: TAG,
  summary: 'Revoke the calling key, for good',
  description:
    'Every secret of the key stops at once (`401 inactive_key` after this answer); its portfolio and alerts stay, unreachable, and its alerts are no longer delivered. ' +
    'The body repeats the key’s id as a confirmation. There is no undo.',
  body: z
    .object({ key_id: z.string().max(100).openapi({ description: 'The id of the calling key (`GET /v1/account`), as a confirmation.', example: 'key_3kT9wQz1LmN8pR2x' }) })
    .strict()
    .openapi('AccountRevokeRequest', { example: { key_id: 'key_3kT9wQz1LmN8pR2x' } }),
  response: z.object({
    key: keySchema.omit({ previous_secret: true }).extend({
      is_active: z.boolean().openapi({ description: 'false: the key is revoked.' }),
      revoked_at: z.string().openapi({ description: 'When it was revoked (ISO 8601, UTC).' }),
    }),
  }),
  credits: 0,
  usesDatabase: false,
  analytic: false,
  prepare: ({ body }, { key }) => {
    if (body.key_id !== key.id) throw invalidParams([{ param: 'key_id', issue: 'must be the id of the key sending this request' }]);
    return {};
  },
  async handler(_p, { ctx, key, now }) {
    const { key: rec } = await ctx.state.keys.revoke(key.id);
    const { previous_secret: _previous, ...fields } = keyFields(rec, now);
    return { key: { ...fields, is_active: rec.isActive, revoked_at: rec.revokedAt ?? now.toISOString() } };
  },
});

/** The key management endpoints behind /dashboard: mounted and documented like the registry's, but not MCP tools. */
export const KEY_ENDPOINTS: AnyEndpoint[] = [rollKey, revokeKey];

export const FREE_KEY_PATH = '/v1/account/free-key';

const freeKeyBody = z
  .object({ label: z.string().max(100).optional().openapi({ description: 'A name for the key, for you (at most 100 characters).', example: 'my laptop' }) })
  .strict()
  .openapi('AccountFreeKeyRequest', { example: { label: 'my laptop' } });

const freeKeyResponse = z
  .object({
    key: keySchema,
    api_key: secretSchema,
    credits: z.object({
      remaining: z.number().int(),
      monthly_allotment: z.number().int(),
      resets_on: z.string().openapi({ format: 'date' }),
    }),
  })
  .openapi('PostAccountFreeKeyResponse');

/**
 * What a client address counts as: an IPv4 address (also when mapped into IPv6), or the /64 prefix of an IPv6 address
 * (one subscriber's network: the addresses inside it cost nothing to change).
 */
export function addressKey(ip: string | undefined): string {
  const raw = (ip ?? '').replace(/%.*$/, '');
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(raw);
  if (mapped) return mapped[1];
  if (net.isIPv4(raw)) return raw;
  if (!net.isIPv6(raw)) return raw || 'unknown';
  const [head, tail = ''] = raw.toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = raw.includes('::') && tail ? tail.split(':') : [];
  const groups = raw.includes('::') ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, '')).join(':')}::/64`;
}

/** Seconds from `now` to the next UTC midnight, when an address's count starts again. */
const secondsToNextDay = (now: Date) => Math.ceil((Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) - now.getTime()) / 1000);

/**
 * POST /v1/account/free-key: outside the endpoint platform, which authenticates a key first. Refusals take the API's
 * error road (the app's error renderer); a key issued is logged as its first request (`res.locals.keyId`).
 */
export function mountFreeKeys(app: Express, registry: OpenAPIRegistry, ctx: AppContext): void {
  app.post(FREE_KEY_PATH, async (req: Request, res: Response) => {
    const { FREE_KEYS, FREE_KEYS_PER_ADDRESS_PER_DAY: perDay } = env();
    if (FREE_KEYS !== 'on') throw new ApiError('not_found', 'this server does not give free keys; ask its operator for a key');
    // JSON only, even for an empty body: another site's page cannot send that without this server's consent (CORS
    // preflight), so it cannot spend its visitors' free keys with a form.
    if (!/^application\/json\b/i.test(req.get('content-type') ?? '')) {
      throw invalidParams([{ param: 'body', issue: 'must be JSON: send it with Content-Type: application/json (`{}` will do)' }]);
    }
    const parsed = freeKeyBody.safeParse(req.body ?? {});
    if (!parsed.success) throw fromZodError(parsed.error, 'body');
    const r = await ctx.state.keys.issueFreeKey({ address: addressKey(req.ip ?? req.socket.remoteAddress), perDay, label: parsed.data.label });
    const now = ctx.clock.now();
    if (!r.ok) {
      const wait = secondsToNextDay(now);
      throw new ApiError(
        'free_key_limit_reached',
        `this address has had its ${perDay} free key${perDay > 1 ? 's' : ''} of the day (UTC); retry in ${wait} s, or ask the operator for a key`,
        { headers: { 'Retry-After': String(wait) } },
      );
    }
    const rec = (await ctx.state.keys.findById(r.id))!;
    res.locals.keyId = r.id;
    res.locals.creditsUsed = 0;
    res.status(201).json({
      key: keyFields(rec, now),
      api_key: r.key,
      credits: { remaining: rec.balance, monthly_allotment: PLANS.Free.monthly, resets_on: nextResetDate(now) },
    });
  });
  if (env().FREE_KEYS !== 'on') return;
  const json = (description: string, schema: z.ZodType, ...extra: 'Retry-After'[]) => ({
    description,
    headers: headerRefs('X-Request-Id', ...extra),
    content: { 'application/json': { schema } },
  });
  registry.registerPath({
    method: 'post',
    path: FREE_KEY_PATH,
    operationId: operationIdOf('post', FREE_KEY_PATH),
    tags: [TAG],
    summary: 'A Free-plan key for a visitor, without an operator',
    description:
      `**No key, 0 credits.** Creates a Free-plan key (${PLANS.Free.monthly} credits a month) and returns its secret once. The body is JSON (\`{}\` will do). ` +
      'Each client address (an IPv4 address, or an IPv6 /64) may receive a few per UTC day (the operator sets how many); past it `429 free_key_limit_reached` with `Retry-After` (seconds to the next UTC day).',
    security: [],
    request: { body: { content: { 'application/json': { schema: freeKeyBody } }, required: true } },
    responses: {
      201: json('The key, created.', freeKeyResponse),
      400: json('Error: invalid_params, invalid_request.', errorSchema),
      429: json('Error: free_key_limit_reached.', errorSchema, 'Retry-After'),
    },
  });
}

/** Mounts the key management routes (after the registry's endpoints, before the not-found handler). */
export function mountKeyRoutes(app: Express, registry: OpenAPIRegistry, ctx: AppContext): void {
  for (const endpoint of KEY_ENDPOINTS) mountEndpoint(app, registry, ctx, endpoint);
  mountFreeKeys(app, registry, ctx);
}
