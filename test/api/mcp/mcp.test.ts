// The MCP server with the SDK's own client, over both transports against the real thing: Streamable HTTP at /mcp on
// the API server (the test harness's app on a loopback port), and stdio (`scripts/mcp.ts` spawned as `npm run mcp`
// would, over the same data folder). Tools are checked against the served OpenAPI document (one per operation), calls
// against REST (same answer, charged once, read from the ledger), errors against the REST error bodies. The SDK client
// validates every structured result against the tool's output schema, so each successful call also checks that.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { ENDPOINTS } from '../../../api/app';
import { KEY_ENDPOINTS } from '../../../api/routes/account';
import { createMcpServer, generateTools } from '../../../api/mcp/tools';
import { z } from '../../../api/params';
import { defineEndpoint } from '../../../api/platform';
import { testData } from '../../helpers/data';
import { balanceOf, startTestApi, type TestApi } from '../../helpers/api';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const TSX = path.join(ROOT, 'node_modules', '.bin', 'tsx');
const MARKET = { code_postal: '33230', type_local: 'Maison', date_debut: '2021-01-01', date_fin: '2021-12-31' };

let api: TestApi;
let dataRoot: string;
beforeAll(async () => {
  dataRoot = await testData('sample');
  // The stdio process runs on the system clock; the API's clock is set to the same month so both see one balance.
  api = await startTestApi({ dataRoot, now: new Date().toISOString() });
});
afterAll(() => api?.close());

async function httpClient(headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'foncier-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), { requestInit: { headers } }));
  return client;
}

async function stdioClient(key: string, stderr: string[] = []): Promise<Client> {
  const transport = new StdioClientTransport({
    command: TSX,
    args: [path.join(ROOT, 'scripts', 'mcp.ts')],
    cwd: ROOT,
    env: { ...(process.env as Record<string, string>), DATA_DIR: dataRoot, FONCIER_API_KEY: key, LOG_LEVEL: 'info' },
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (d: Buffer) => stderr.push(d.toString()));
  const client = new Client({ name: 'foncier-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

/** What REST and MCP must agree on: the body without the per-call fields (timing, cache state, balance). */
function stable(body: Record<string, unknown>): Record<string, unknown> {
  const { query_time_ms: _t, cache: _c, _credits: _k, ...rest } = body;
  return rest;
}

const errorOf = (r: CallToolResult) => JSON.parse((r.content[0] as { text: string }).text).error;

/** Every operation of the served OpenAPI document, as "METHOD /path/:param". */
async function documentedOperations(): Promise<Array<{ op: string; operationId?: string }>> {
  const doc = (await api.get('/v1/openapi.json')).body as { paths: Record<string, Record<string, { operationId?: string; security?: unknown[] }>> };
  return Object.entries(doc.paths).flatMap(([p, ops]) =>
    Object.entries(ops)
      // Operations without a key (health, the document itself) are not endpoints of the registry.
      .filter(([, o]) => o.security?.length)
      .map(([m, o]) => ({ op: `${m.toUpperCase()} ${p.replace(/\{(\w+)\}/g, ':$1')}`, operationId: o.operationId }))
      // Rolling and revoking the key are documented but are not tools (a secret is never handed to an agent).
      .filter(({ op }) => !KEY_ENDPOINTS.some((e) => `${e.method.toUpperCase()} ${e.path}` === op)),
  );
}

function checkTools(tools: Tool[], documented: Array<{ op: string; operationId?: string }>): void {
  expect(tools).toHaveLength(ENDPOINTS.length);
  expect(new Set(tools.map((t) => t.name)).size).toBe(tools.length);
  const restOf = (t: Tool) => /REST: (\w+ \S+)\./.exec(t.description ?? '')?.[1];
  expect(tools.map(restOf).sort()).toEqual(documented.map((d) => d.op).sort());
  for (const t of tools) {
    const d = documented.find((x) => x.op === restOf(t))!;
    if (d.operationId) expect(t.name).toBe(d.operationId);
    else expect(t.name).toMatch(/^(get|post|put|delete)[A-Z]\w*$/);
    const spec = ENDPOINTS.find((e) => `${e.method.toUpperCase()} ${e.path}` === d.op)!;
    if (typeof spec.credits === 'number') expect(t.description).toContain(`Costs ${spec.credits} credit`);
    expect(t.inputSchema.type).toBe('object');
    expect(t.outputSchema?.type).toBe('object');
    // Draft-07, which the SDK's Ajv-based validator accepts (zod 4's default, 2020-12, it refuses).
    expect(t.inputSchema.$schema).toBe('http://json-schema.org/draft-07/schema#');
    expect(t.annotations?.readOnlyHint).toBe(spec.method === 'get');
    // The input schema has exactly the request's parameters, less those the OpenAPI document does not advertise.
    const names = [spec.query, spec.params, spec.body]
      .flatMap((s) => (s && 'shape' in s ? Object.keys(s.shape as object) : []))
      .filter((n) => !spec.undocumentedQuery?.includes(n));
    expect(Object.keys(t.inputSchema.properties ?? {}).sort()).toEqual(names.sort());
  }
}

describe('MCP over Streamable HTTP at /mcp', () => {
  it('lists one tool per operation of the registry, with its cost and its schemas', async () => {
    const client = await httpClient({ 'X-API-Key': api.key() });
    const { tools } = await client.listTools();
    checkTools(tools, await documentedOperations());
    const market = tools.find((t) => t.name === 'getStatsMarket')!;
    expect(market.description).toContain('Costs 5 credits');
    expect((market.inputSchema.properties as Record<string, { description?: string }>).code_postal.description).toBe('Postal code (5 digits).');
    await client.close();
  });

  it('answers as REST does and charges the credits once', async () => {
    const restKey = api.key();
    const rest = await api.get(`/v1/stats/market?${new URLSearchParams(MARKET)}`, restKey);
    expect(rest.status).toBe(200);
    const key = api.key({ balance: 100 });
    // Bearer, the REST API's other way to send the key.
    const client = await httpClient({ Authorization: `Bearer ${key}` });
    const r = (await client.callTool({ name: 'getStatsMarket', arguments: MARKET })) as CallToolResult;
    expect(r.isError).toBeFalsy();
    const body = r.structuredContent as Record<string, any>;
    expect(stable(body)).toEqual(stable(rest.body));
    expect(JSON.parse((r.content[0] as { text: string }).text)).toEqual(body);
    expect(body._credits).toEqual({ used: 5, remaining: 95 });
    expect(balanceOf(api, key)).toBe(95);

    // Native JSON types (numbers, booleans), not query-string text, are what an agent sends.
    const page = (await client.callTool({ name: 'getTransactions', arguments: { code_postal: '33230', limit: 3, exclude_outliers: false } })) as CallToolResult;
    const restPage = await api.get('/v1/transactions?code_postal=33230&limit=3&exclude_outliers=false', restKey);
    expect(page.isError).toBeFalsy();
    expect(stable(page.structuredContent!)).toEqual(stable(restPage.body));
    const id = String((restPage.body.transactions as Array<{ id: number }>)[0].id);
    const one = (await client.callTool({ name: 'getTransactionsById', arguments: { id } })) as CallToolResult;
    expect(stable(one.structuredContent!)).toEqual(stable((await api.get(`/v1/transactions/${id}`, restKey)).body));
    const sources = (await client.callTool({ name: 'getMetaSources', arguments: {} })) as CallToolResult;
    expect(stable(sources.structuredContent!)).toEqual(stable((await api.get('/v1/meta/sources', restKey)).body));
    expect(balanceOf(api, key)).toBe(95 - 5 - 2 - 0);
    await client.close();
  });

  it('maps errors to the API error body, with the same refunds', async () => {
    const key = api.key({ balance: 10 });
    const client = await httpClient({ 'X-API-Key': key });
    // Validation: the REST body, details included, and nothing charged.
    const bad = (await client.callTool({ name: 'getStatsMarket', arguments: { code_postal: '3323', type_local: 'Chateau' } })) as CallToolResult;
    expect(bad.isError).toBe(true);
    expect(bad.structuredContent).toBeUndefined();
    const restBad = await api.get('/v1/stats/market?code_postal=3323&type_local=Chateau', api.key());
    const { request_id: _r, ...restError } = restBad.body.error;
    expect(errorOf(bad)).toMatchObject({ ...restError, code: 'invalid_params' });
    expect(errorOf(bad).details.map((d: { param: string }) => d.param).sort()).toEqual(['code_postal', 'type_local']);
    expect(bad._meta?.['foncier/status']).toBe(400);
    // A lookup of an unknown id: 404 not_found, its 2 credits refunded.
    const missing = (await client.callTool({ name: 'getTransactionsById', arguments: { id: '999999999999' } })) as CallToolResult;
    expect(errorOf(missing)).toMatchObject({ code: 'not_found' });
    expect(balanceOf(api, key)).toBe(10);
    // Two market calls spend 10; the third is refused for credits, with the API's message.
    await client.callTool({ name: 'getStatsMarket', arguments: MARKET });
    await client.callTool({ name: 'getStatsMarket', arguments: MARKET });
    const broke = (await client.callTool({ name: 'getStatsMarket', arguments: MARKET })) as CallToolResult;
    expect(errorOf(broke)).toMatchObject({ code: 'insufficient_credits', message: 'this call costs 5 credits and the key has 0 left' });
    expect(balanceOf(api, key)).toBe(0);
    // An unknown tool is a protocol error, not a charge.
    await expect(client.callTool({ name: 'getNothing', arguments: {} })).rejects.toThrow(/unknown tool getNothing/);
    await client.close();
  });

  it('shares the key’s rate limit with REST', async () => {
    const key = api.key({ plan: 'Free' });
    const client = await httpClient({ 'X-API-Key': key });
    for (let i = 0; i < 60; i++) expect((await api.get('/v1/meta/sources', key)).status).toBe(200);
    const limited = (await client.callTool({ name: 'getMetaSources', arguments: {} })) as CallToolResult;
    expect(errorOf(limited)).toMatchObject({ code: 'rate_limited' });
    expect(limited._meta?.['foncier/status']).toBe(429);
    await client.close();
  });

  it('refuses a request without a valid key exactly as REST does', async () => {
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } };
    const post = (headers: Record<string, string>) =>
      fetch(`${api.url}/mcp`, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers }, body: JSON.stringify(init) });
    const none = await post({});
    expect(none.status).toBe(401);
    expect(((await none.json()) as { error: unknown }).error).toMatchObject({ code: 'missing_bearer_token' });
    const unknown = await post({ 'X-API-Key': 'fk_nope' });
    expect(unknown.status).toBe(401);
    expect(((await unknown.json()) as { error: unknown }).error).toMatchObject({ code: 'unknown_key' });
    await expect(httpClient({})).rejects.toThrow();
    // Stateless: no stream to open with GET.
    expect((await fetch(`${api.url}/mcp`, { headers: { 'X-API-Key': api.key() } })).status).toBe(405);
  });
});

describe('MCP over stdio (npm run mcp)', () => {
  it('serves DATA_DIR in its process with the key of FONCIER_API_KEY: same tools, same answers, same credits', async () => {
    const key = api.key({ balance: 50 });
    const stderr: string[] = [];
    const client = await stdioClient(key, stderr);
    try {
      const { tools } = await client.listTools();
      checkTools(tools, await documentedOperations());
      const r = (await client.callTool({ name: 'getStatsMarket', arguments: MARKET })) as CallToolResult;
      expect(r.isError).toBeFalsy();
      expect(stable(r.structuredContent!)).toEqual(stable((await api.get(`/v1/stats/market?${new URLSearchParams(MARKET)}`, api.key())).body));
      expect((r.structuredContent as any)._credits).toEqual({ used: 5, remaining: 45 });
      expect(balanceOf(api, key)).toBe(45);
      const bad = (await client.callTool({ name: 'getStatsMarket', arguments: { ...MARKET, date_debut: '2021-02-30' } })) as CallToolResult;
      expect(errorOf(bad)).toMatchObject({ code: 'invalid_params', details: [{ param: 'date_debut' }] });
      const missing = (await client.callTool({ name: 'getTransactionsById', arguments: { id: '999999999999' } })) as CallToolResult;
      expect(errorOf(missing)).toMatchObject({ code: 'not_found' });
      expect(balanceOf(api, key)).toBe(45);
    } finally {
      await client.close();
    }
    // Logs go to standard error (standard output is the protocol): one line per tool call, without the key.
    const lines = stderr.join('').split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
    expect(lines.filter((l) => l.tool === 'getStatsMarket').map((l) => [l.status, l.credits_used])).toEqual([[200, 5], [400, 0]]);
    expect(stderr.join('')).not.toContain(key);
  });

  it('does not start without a valid key', async () => {
    const run = (env: Record<string, string>) =>
      new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = spawn(TSX, [path.join(ROOT, 'scripts', 'mcp.ts')], { cwd: ROOT, env: { ...process.env, DATA_DIR: dataRoot, ...env } });
        let stderr = '';
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        child.on('close', (code) => resolve({ code, stderr }));
      });
    const unknown = await run({ FONCIER_API_KEY: 'fk_unknown' });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('FONCIER_API_KEY: this API key does not exist');
  });
});

describe('write operations become tools with no edit of the MCP code', () => {
  // Endpoints shaped like the portfolio's (a JSON body, a cost that depends on it, a path id), defined here only.
  const item = z.object({ name: z.string(), size: z.number().int() });
  const create = defineEndpoint({
    method: 'post',
    path: '/v1/toy-items',
    tag: 'Test',
    summary: 'Create an item',
    body: item.strict(),
    response: z.object({ item }),
    credits: ({ body }) => body.size,
    usesDatabase: false,
    status: 201,
    prepare: ({ body }) => body,
    handler: async (body) => ({ item: body }),
  });
  // A body field named like a query parameter: the body is then the `body` argument.
  const update = defineEndpoint({
    method: 'put',
    path: '/v1/toy-items/:id',
    tag: 'Test',
    summary: 'Update an item',
    params: z.object({ id: z.string() }),
    query: z.object({ name: z.string().optional() }),
    body: z.object({ name: z.string() }).strict(),
    response: z.object({ id: z.string(), query_name: z.string().nullable(), body_name: z.string() }),
    credits: 1,
    usesDatabase: false,
    analytic: false,
    prepare: ({ params, query, body }) => ({ id: params.id, query_name: query.name ?? null, body_name: body.name }),
    handler: async (p) => p,
  });

  it('flattens a JSON body into the arguments, charges what the body says, and validates it with the endpoint’s schema', async () => {
    const key = api.key({ balance: 20 });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const server = createMcpServer(api.ctx, generateTools([create, update]), { credential: key });
    await server.connect(serverSide);
    const client = new Client({ name: 'foncier-test', version: '1.0.0' });
    await client.connect(clientSide);
    const { tools } = await client.listTools();
    expect(tools.map((t) => [t.name, Object.keys(t.inputSchema.properties ?? {}).sort(), t.inputSchema.required?.sort(), t.annotations?.readOnlyHint])).toEqual([
      ['postToyItems', ['name', 'size'], ['name', 'size'], false],
      ['putToyItemsById', ['body', 'id', 'name'], ['body', 'id'], false],
    ]);
    expect(tools[0].description).toContain('Credits depend on the input');
    const made = (await client.callTool({ name: 'postToyItems', arguments: { name: 'a', size: 3 } })) as CallToolResult;
    expect(made.structuredContent).toMatchObject({ item: { name: 'a', size: 3 }, _credits: { used: 3, remaining: 17 } });
    expect(made._meta?.['foncier/status']).toBe(201);
    const extra = (await client.callTool({ name: 'postToyItems', arguments: { name: 'a', size: 3, colour: 'red' } })) as CallToolResult;
    expect(errorOf(extra)).toMatchObject({ code: 'invalid_params' });
    const put = (await client.callTool({ name: 'putToyItemsById', arguments: { id: 'x1', name: 'q', body: { name: 'b' } } })) as CallToolResult;
    expect(put.structuredContent).toEqual({ id: 'x1', query_name: 'q', body_name: 'b' });
    expect(balanceOf(api, key)).toBe(16);
    await client.close();
    await server.close();
  });
});

describe('DNS-rebinding protection (MCP_ALLOWED_HOSTS)', () => {
  it('refuses a Host header outside the list when the list is set, before any key check', async () => {
    const saved = process.env.MCP_ALLOWED_HOSTS;
    const apis: TestApi[] = [];
    try {
      for (const hosts of ['api.example.org', 'api.example.org,127.0.0.1']) {
        process.env.MCP_ALLOWED_HOSTS = hosts;
        apis.push(await startTestApi({ dataRoot }));
      }
    } finally {
      if (saved === undefined) delete process.env.MCP_ALLOWED_HOSTS;
      else process.env.MCP_ALLOWED_HOSTS = saved;
    }
    try {
      const [strict, local] = apis;
      const post = (a: TestApi) => fetch(`${a.url}/mcp`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
      expect((await post(strict)).status).toBe(403);
      // Allowed host: the request gets as far as the key check.
      expect((await post(local)).status).toBe(401);
      // REST is not concerned.
      expect((await strict.get('/v1/meta/sources', strict.key())).status).toBe(200);
    } finally {
      for (const a of apis) await a.close();
    }
  });
});
