// The MCP tools: one per endpoint of the registry (api/app.ts ENDPOINTS), generated, so a new endpoint is a new tool
// with no edit here. A tool's name is its operation's operationId, its description carries the credit cost, its input
// and output schemas are converted from the same zod schemas that validate the REST request and describe its response,
// and a call goes through callEndpoint(), the one call path of REST: same key, rate limit, validation, cache, capacity
// gate, charge, refunds and error codes.
//
// We use the SDK's low-level Server rather than McpServer on purpose (docs/decisions.md, MCP server): McpServer parses
// the arguments with its own zod pass and turns a failure into a JSON-RPC protocol error, so a bad parameter would not
// get the API's `invalid_params` body nor its details; and its zod 4 → JSON Schema conversion drops the descriptions,
// examples and formats the API's schemas carry in their OpenAPI metadata.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode as McpErrorCode, ListToolsRequestSchema, McpError, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { zodToOpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { AppContext } from '../context';
import type { KeyRecord } from '../store';
import { z } from '../params';
import { endpointLabel, requestLogOf } from '../routes/account/request-log';
import { cacheSchema, callEndpoint, creditsSchema, operationIdOf, requestIdOf, type AnyEndpoint, type CallResult } from '../platform';

type JsonSchema = Record<string, unknown>;
type AnyObject = z.ZodObject<z.ZodRawShape>;

/** The tool's name: the operation's operationId. */
export const toolNameOf = (spec: AnyEndpoint): string => spec.operationId ?? operationIdOf(spec.method, spec.path);

/**
 * zod → JSON Schema with zod's own converter, in draft-07: the SDK's client validates structured output with Ajv's
 * default (draft-07) instance, which refuses a schema whose $schema names draft 2020-12 (zod 4's default target). The
 * OpenAPI metadata (.openapi({description, example, examples, format})) lives in zod-to-openapi's registry, not in zod's global
 * one, so it is copied over here.
 */
function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  return z.toJSONSchema(schema, {
    target: 'draft-7',
    io,
    // Preprocessed parameters are represented by their target type (zod does it); a transform's result, should a
    // response ever hold one, is left open rather than failing the whole tool list.
    unrepresentable: 'any',
    override: ({ zodSchema, jsonSchema }) => {
      const meta = zodToOpenAPIRegistry.get(zodSchema as never) as { description?: string; example?: unknown; examples?: unknown[]; format?: string } | undefined;
      if (!meta) return;
      if (meta.description && !jsonSchema.description) jsonSchema.description = meta.description;
      // `example` is what /docs prefills, `examples` the documented others (api/params.ts): a tool lists them all.
      const examples = [...(meta.example !== undefined ? [meta.example] : []), ...(meta.examples ?? [])];
      if (examples.length && !jsonSchema.examples) jsonSchema.examples = examples;
      if (meta.format && jsonSchema.type === 'string' && !jsonSchema.format) jsonSchema.format = meta.format;
    },
  }) as JsonSchema;
}

/** Responses may gain fields (an additive change is not a breaking one): a client must not refuse them. */
function openObjects(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(openObjects);
  if (!schema || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) if (!(k === 'additionalProperties' && v === false)) out[k] = openObjects(v);
  return out;
}

const shapeOf = (s: z.ZodType | undefined): string[] => (s instanceof z.ZodObject ? Object.keys(s.shape) : []);

/**
 * How a tool's flat arguments map to the request: path and query parameters by name; a JSON object body's fields
 * are flattened beside them when no name collides (the usual case), else the body is the `body` argument.
 */
function bodyIsFlat(spec: AnyEndpoint): boolean {
  if (!(spec.body instanceof z.ZodObject)) return false;
  const taken = new Set([...shapeOf(spec.query), ...shapeOf(spec.params)]);
  return shapeOf(spec.body).every((k) => !taken.has(k) && k !== 'body');
}

/** The query parameters a tool advertises: as the OpenAPI document, without those declared only to be refused. */
function advertisedQuery(spec: AnyEndpoint): z.ZodType | undefined {
  const hidden = spec.undocumentedQuery ?? [];
  return spec.query && hidden.length ? (spec.query as AnyObject).omit(Object.fromEntries(hidden.map((k) => [k, true]))) : spec.query;
}

function inputSchemaOf(spec: AnyEndpoint): Tool['inputSchema'] {
  const properties: Record<string, object> = {};
  const required: string[] = [];
  const parts: z.ZodType[] = [spec.params, advertisedQuery(spec), bodyIsFlat(spec) ? spec.body : undefined].filter((s): s is z.ZodType => s !== undefined);
  for (const part of parts) {
    const js = jsonSchemaOf(part, 'input');
    Object.assign(properties, js.properties ?? {});
    required.push(...((js.required as string[] | undefined) ?? []));
    // Parameters zod lets be absent but the operation requires (params.ts, required()): required here too.
    if (part instanceof z.ZodObject) {
      for (const [name, field] of Object.entries(part.shape as z.ZodRawShape)) {
        const meta = zodToOpenAPIRegistry.get(field as never) as { param?: { required?: boolean } } | undefined;
        if (meta?.param?.required && !required.includes(name)) required.push(name);
      }
    }
  }
  if (spec.body && !bodyIsFlat(spec)) {
    const { $schema: _, ...body } = jsonSchemaOf(spec.body, 'input');
    properties.body = { ...body, description: 'The JSON body of the request.' };
    required.push('body');
  }
  return { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties, ...(required.length ? { required } : {}) };
}

/** The response as a caller receives it: the endpoint's schema plus what the platform adds (cache, _credits, query_time_ms). */
function outputSchemaOf(spec: AnyEndpoint): Tool['outputSchema'] {
  let response: AnyObject = spec.response;
  if (spec.cacheTtlSeconds) response = response.extend({ cache: cacheSchema });
  if (spec.analytic ?? true) response = response.extend({ _credits: creditsSchema, query_time_ms: z.number() });
  return openObjects(jsonSchemaOf(response, 'output')) as Tool['outputSchema'];
}

function descriptionOf(spec: AnyEndpoint): string {
  const cost = typeof spec.credits === 'number' ? `Costs ${spec.credits} credit${spec.credits === 1 ? '' : 's'}` : 'Credits depend on the input';
  const cache = spec.cacheTtlSeconds ? `; answers are cached ${spec.cacheTtlSeconds / 3600} h (a cached answer is charged too)` : '';
  return [`${spec.summary}. ${cost}${cache}. REST: ${spec.method.toUpperCase()} ${spec.path}.`, spec.description].filter(Boolean).join('\n\n');
}

export interface GeneratedTool {
  tool: Tool;
  spec: AnyEndpoint;
}

/** One tool per endpoint, in the registry's order. Throws when two endpoints would share a name. */
export function generateTools(endpoints: readonly AnyEndpoint[]): GeneratedTool[] {
  const seen = new Set<string>();
  return endpoints.map((spec) => {
    const name = toolNameOf(spec);
    if (seen.has(name)) throw new Error(`two endpoints map to the MCP tool name ${name}`);
    seen.add(name);
    const tool: Tool = {
      name,
      title: spec.summary,
      description: descriptionOf(spec),
      inputSchema: inputSchemaOf(spec),
      outputSchema: outputSchemaOf(spec),
      annotations: {
        title: spec.summary,
        readOnlyHint: spec.method === 'get',
        destructiveHint: spec.method === 'delete',
        idempotentHint: spec.method !== 'post',
        // Only the service's own data: no call reaches outside it.
        openWorldHint: false,
      },
    };
    return { tool, spec };
  });
}

/** The REST request a tool's arguments stand for. */
export function requestOf(spec: AnyEndpoint, args: Record<string, unknown>): { query: Record<string, unknown>; params: Record<string, unknown>; body: unknown } {
  const params = new Set(shapeOf(spec.params));
  const flat = bodyIsFlat(spec);
  const out = { query: {} as Record<string, unknown>, params: {} as Record<string, unknown>, body: undefined as unknown };
  const body: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(args)) {
    if (params.has(k)) out.params[k] = v;
    else if (spec.body && !flat && k === 'body') out.body = v;
    // With a flat body, what is neither a path nor a query parameter belongs to the body (whose schema judges it).
    else if (flat && !shapeOf(spec.query).includes(k)) body[k] = v;
    else out.query[k] = v;
  }
  if (flat) out.body = body;
  return out;
}

/** A call's answer as an MCP tool result: the body as structured content and as JSON text; an error is isError with
 * the API's error body ({"error": {code, message, details?, request_id}}) as its text. */
export function toolResultOf(r: CallResult, requestId: string): CallToolResult {
  const text = JSON.stringify(r.body);
  const _meta = { 'foncier/request_id': requestId, 'foncier/status': r.status };
  if (r.error) return { content: [{ type: 'text', text }], isError: true, _meta };
  return { content: [{ type: 'text', text }], structuredContent: r.body, _meta };
}

export interface McpServerOptions {
  /** The raw API key every tool call is made with (authenticated on each call, as REST does), or the key an OAuth
   * access token acts for (api/mcp/http.ts checked the token and the key for this request). */
  credential: string | KeyRecord | undefined;
  /** The request id of each call: HTTP uses the POST's X-Request-Id; stdio a new one per call. */
  requestId?: () => string;
  /** Told of every call once answered (access log of the HTTP transport). */
  onCall?: (name: string, r: CallResult, requestId: string) => void;
}

export const SERVER_INFO = { name: 'foncier', version: '1.0.0' };

const INSTRUCTIONS =
  'French property-market statistics from open data (DVF sales, incomes, rents, …). Every tool call is charged in credits ' +
  'on your API key exactly as the REST API is (each description gives the cost; `_credits` in the result shows what ' +
  'was used and what remains). Errors come back as isError results whose text is the API error body ' +
  '{"error": {"code", "message", "details"?, "request_id"}}.';

/** An MCP server over `tools`, all calls made with one key. */
export function createMcpServer(ctx: AppContext, tools: GeneratedTool[], opts: McpServerOptions): Server {
  const byName = new Map(tools.map((t) => [t.tool.name, t]));
  const server = new Server(SERVER_INFO, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: tools.map((t) => t.tool) }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const found = byName.get(request.params.name);
    if (!found) throw new McpError(McpErrorCode.InvalidParams, `unknown tool ${request.params.name}`);
    const requestId = opts.requestId?.() ?? requestIdOf(undefined);
    const r = await callEndpoint(ctx, found.spec, { key: opts.credential, input: requestOf(found.spec, request.params.arguments ?? {}), requestId });
    // The key holder's dashboard lists tool calls beside REST requests, under the endpoint they called.
    if (r.keyId) {
      requestLogOf(ctx).record(r.keyId, { request_id: requestId, endpoint: endpointLabel(found.spec.method, found.spec.path), transport: 'mcp', status: r.status, credits: r.creditsUsed });
    }
    opts.onCall?.(found.tool.name, r, requestId);
    return toolResultOf(r, requestId);
  });
  return server;
}
