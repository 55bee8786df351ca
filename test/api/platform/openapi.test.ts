// The published contract: the served OpenAPI document is valid for a standard validator and clean for a standard
// linter (Spectral's OpenAPI rules), every example in it satisfies its own schema, every pattern accepts the values the
// server accepts, every operation has a stable operationId, a named response component and its headers, the tags are
// declared, the service routes are documented, and no endpoint advertises a parameter it always refuses.
import SwaggerParser from '@apidevtools/swagger-parser';
import { Document, Spectral } from '@stoplight/spectral-core';
import { Json } from '@stoplight/spectral-parsers';
import { oas } from '@stoplight/spectral-rulesets';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { locationFields, resolveLocation } from '../../../api/location';
import { RESPONSE_HEADERS, operationIdOf } from '../../../api/platform';
import { criteriaFields } from '../../../api/routes/alerts/common';
import { startTestApi, type TestApi } from '../../helpers/api';
import { testData } from '../../helpers/data';

let api: TestApi;
let doc: any;
beforeAll(async () => {
  api = await startTestApi({ dataRoot: await testData('demo'), now: '2026-02-15T12:00:00Z' });
  doc = (await api.get('/v1/openapi.json')).body;
});
afterAll(() => api.close());

type Op = {
  operationId?: string;
  tags: string[];
  description: string;
  security?: unknown[];
  'x-credits'?: number;
  parameters?: { name: string; in: string; schema: { pattern?: string } }[];
  responses: Record<string, any>;
};
const operations = (d: any): [string, string, Op][] =>
  Object.entries<Record<string, Op>>(d.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => [method, path, op] as [string, string, Op]));

/** Every example of a (dereferenced) document checked against the schema that holds it; the failures. */
function exampleFailures(deref: any): { checked: number; failures: string[] } {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addFormat('date', /^\d{4}-\d{2}-\d{2}$/);
  let checked = 0;
  const failures: string[] = [];
  const seen = new Set<object>();
  const walk = (node: unknown, where: string): void => {
    if (node === null || typeof node !== 'object' || seen.has(node)) return;
    seen.add(node);
    const n = node as Record<string, unknown>;
    const isSchema = 'type' in n || 'properties' in n || 'anyOf' in n || 'oneOf' in n || 'allOf' in n || 'enum' in n;
    if (isSchema) {
      const { example, examples, ...schema } = n;
      const values = [...('example' in n ? [example] : []), ...(Array.isArray(examples) ? examples : [])];
      for (const v of values) {
        checked++;
        const validate = ajv.compile(schema);
        if (!validate(v)) failures.push(`${where}: ${JSON.stringify(v)} ${ajv.errorsText(validate.errors)}`);
      }
    }
    // A parameter's own example is checked against the parameter's schema.
    if ('in' in n && 'schema' in n && 'example' in n) {
      checked++;
      const validate = ajv.compile(n.schema as object);
      if (!validate(n.example)) failures.push(`${where}: ${JSON.stringify(n.example)} ${ajv.errorsText(validate.errors)}`);
    }
    for (const [k, v] of Object.entries(n)) if (k !== 'example' && k !== 'examples') walk(v, `${where}/${k}`);
  };
  walk(deref, '#');
  return { checked, failures };
}

/**
 * Spectral's OpenAPI rules as its `spectral:oas` recommended set, plus four of its rules the set leaves off that this
 * document keeps: tags declared, each described, and a licence with its URL. What it reports (errors, warnings, hints).
 */
async function lint(document: unknown): Promise<string[]> {
  const spectral = new Spectral();
  spectral.setRuleset({
    extends: [[oas as never, 'recommended']],
    rules: { 'openapi-tags': 'warn', 'tag-description': 'warn', 'info-license': 'warn', 'license-url': 'warn' },
  } as never);
  const results = await spectral.run(new Document(JSON.stringify(document), Json));
  return results.map((r) => `${['error', 'warn', 'info', 'hint'][r.severity]} ${r.code} ${r.path.join('.')}: ${r.message}`);
}

/** Values the API accepts under a name: every pattern the document publishes for a parameter or property of that name must match each. */
const VALID: Record<string, string[]> = {
  code_postal: ['75015', '01000', '20000', '97400'],
  code_departement: ['01', '33', '2A', '2a', '2B', '971', '976'],
  code_insee: ['33063', '75115', '2A004', '2b033', '97411'],
  code_commune: ['33063', '75115', '2A004', '2b033', '97411'],
  code_commune_insee: ['33063', '75115', '2A004', '2b033', '97411'],
  siren: ['552032534', '356000000'],
  section: ['AB', 'D', '0D'],
  no_plan: ['123', '0123'],
};
/** Names whose parameters must publish a pattern (codes a client can check before calling). */
const CODES = ['code_postal', 'code_departement', 'code_insee', 'code_commune', 'code_commune_insee', 'siren'];

/** Every published pattern: where, the name it is published under, the pattern, and the examples beside it. */
function patternsOf(deref: any): { where: string; name: string; pattern: string; examples: unknown[] }[] {
  const found: { where: string; name: string; pattern: string; examples: unknown[] }[] = [];
  const exampleValues = (n: any) => [...(n?.example !== undefined ? [n.example] : []), ...(Array.isArray(n?.examples) ? n.examples : [])];
  const seen = new Set<object>();
  const schemaPatterns = (schema: any): string[] =>
    schema?.pattern ? [schema.pattern] : [...(schema?.anyOf ?? []), ...(schema?.oneOf ?? [])].flatMap(schemaPatterns);
  const walk = (node: any, where: string): void => {
    if (node === null || typeof node !== 'object' || seen.has(node)) return;
    seen.add(node);
    if (typeof node.in === 'string' && typeof node.name === 'string' && node.schema) {
      for (const pattern of schemaPatterns(node.schema)) found.push({ where, name: node.name, pattern, examples: [...exampleValues(node), ...exampleValues(node.schema)] });
    }
    for (const [name, prop] of Object.entries<any>(node.properties ?? {})) {
      for (const pattern of schemaPatterns(prop)) found.push({ where: `${where}/properties/${name}`, name, pattern, examples: exampleValues(prop) });
    }
    for (const [k, v] of Object.entries(node)) walk(v, `${where}/${k}`);
  };
  walk(deref, '#');
  return found;
}

describe('the served OpenAPI document', () => {
  it('passes Spectral’s OpenAPI rules with no error and no warning', async () => {
    expect(await lint(doc)).toEqual([]);
  });

  it('the linter reports what it should (the check itself can fail)', async () => {
    const broken = structuredClone(doc);
    delete broken.tags;
    delete broken.info.license;
    const found = await lint(broken);
    expect(found.filter((f) => f.includes('operation-tag-defined')).length).toBe(operations(doc).length);
    expect(found).toEqual(expect.arrayContaining([expect.stringMatching(/^warn info-license /), expect.stringMatching(/^warn openapi-tags /)]));
  });

  it('every pattern is a valid expression that accepts its own examples and the valid values of its name', async () => {
    const found = patternsOf(await SwaggerParser.dereference(structuredClone(doc)));
    const ajv = new Ajv2020({ strict: true });
    const failures: string[] = [];
    let checked = 0;
    for (const { where, name, pattern, examples } of found) {
      const validate = ajv.compile({ type: 'string', pattern });
      for (const v of [...examples, ...(VALID[name] ?? [])]) {
        checked++;
        if (!validate(v)) failures.push(`${where} (${name}): ${pattern} refuses ${JSON.stringify(v)}`);
      }
    }
    expect(failures).toEqual([]);
    expect(checked).toBeGreaterThan(100);
    // Every code parameter has a pattern, and every named code was checked somewhere.
    for (const [method, path, op] of operations(doc)) {
      for (const p of op.parameters ?? []) if (CODES.includes(p.name)) expect(p.schema.pattern, `${method} ${path} ${p.name}`).toBeTruthy();
    }
    expect(new Set(found.map((f) => f.name))).toEqual(expect.objectContaining(new Set(Object.keys(VALID))));
  });

  it('publishes the département patterns the server applies: the same codes accepted, the same refused', () => {
    const published = (schema: any): RegExp => new RegExp(schema.pattern ?? schema.anyOf.find((s: any) => s.pattern).pattern, 'u');
    const candidates = [
      ...Array.from({ length: 10 }, (_, i) => String(i)),
      ...Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0')),
      ...Array.from({ length: 12 }, (_, i) => String(968 + i)),
      ...['2A', '2a', '2B', '2b', '2C', '2c', '20', '100', '033', 'A1', 'ab', '2A0', '971a'],
    ];
    const alerts = published(doc.components.schemas.AlertCreate.properties.code_departement);
    const alertAccepts = (c: string) => criteriaFields.code_departement.safeParse(c).success;
    expect(candidates.filter((c) => alerts.test(c) !== alertAccepts(c))).toEqual([]);
    expect(['33', '2A', '2a', '971'].every(alertAccepts)).toBe(true);

    const zone = published(doc.paths['/v1/stats/market'].get.parameters.find((p: { name: string }) => p.name === 'code_departement').schema);
    const zoneAccepts = (c: string) => {
      const parsed = locationFields.code_departement.safeParse(c);
      if (!parsed.success) return false;
      try {
        resolveLocation({ code_departement: parsed.data }, { accept: ['code_departement'] });
        return true;
      } catch {
        return false;
      }
    };
    expect(candidates.filter((c) => zone.test(c) !== zoneAccepts(c))).toEqual([]);
    expect(['1', '01', '33', '2A', '2b', '971', '976'].every(zoneAccepts)).toBe(true);
  });

  it('declares the tags its operations use, each with a description, and no other', () => {
    const used = new Set(operations(doc).flatMap(([, , op]) => op.tags));
    expect(doc.tags.map((t: { name: string }) => t.name).sort()).toEqual([...used].sort());
    for (const t of doc.tags) expect(t.description, t.name).toMatch(/\w{3,}/);
  });

  it('documents its response headers as components, on every response, as the server sends them', async () => {
    expect(Object.keys(doc.components.headers).sort()).toEqual(Object.keys(RESPONSE_HEADERS).sort());
    for (const [method, path, op] of operations(doc)) {
      const keyed = op.security?.length !== 0;
      for (const [status, r] of Object.entries(op.responses)) {
        const names = Object.keys(r.headers ?? {});
        const where = `${method} ${path} ${status}`;
        for (const h of Object.values<{ $ref: string }>(r.headers ?? {})) expect(h.$ref, where).toMatch(/^#\/components\/headers\//);
        expect(names, where).toContain('X-Request-Id');
        if (keyed && status !== '401') expect(names, where).toEqual(expect.arrayContaining(['X-RateLimit-Limit', 'X-RateLimit-Remaining']));
        if (status === '429') expect(names, where).toContain('Retry-After');
      }
    }
    const requestId = new RegExp(doc.components.headers['X-Request-Id'].schema.pattern);
    const ok = await api.get('/v1/meta/sources', api.key());
    expect(ok.status).toBe(200);
    expect(ok.headers.get('X-Request-Id')).toMatch(requestId);
    expect(Number(ok.headers.get('X-RateLimit-Limit'))).toBeGreaterThan(0);
    expect(Number(ok.headers.get('X-RateLimit-Remaining'))).toBeLessThan(Number(ok.headers.get('X-RateLimit-Limit')));
    const refused = await api.get('/v1/meta/sources', 'fk_live_unknown');
    expect(refused.status).toBe(401);
    expect(refused.headers.get('X-Request-Id')).toMatch(requestId);
    expect(refused.headers.get('X-RateLimit-Limit')).toBeNull();
  });

  it('states an operation’s credit cost once, at the head of its description', () => {
    for (const [method, path, op] of operations(doc)) {
      const { description, 'x-credits': credits } = op;
      if (credits === undefined) continue;
      expect(description.startsWith(`**${credits} credits**`), `${method} ${path}`).toBe(true);
      // In bold, the cost is stated; elsewhere a sentence may explain it (a page costs 5 credits whatever its size).
      expect(description.match(/\*\*[^*]*\bcredits?\b[^*]*\*\*/g), `${method} ${path}: ${description}`).toHaveLength(1);
    }
  });

  it('passes @apidevtools/swagger-parser validation', async () => {
    await expect(SwaggerParser.validate(structuredClone(doc))).resolves.toBeTruthy();
  });

  it('every example satisfies its own schema', async () => {
    const { checked, failures } = exampleFailures(await SwaggerParser.dereference(structuredClone(doc)));
    expect(failures).toEqual([]);
    expect(checked).toBeGreaterThanOrEqual(10);
  });

  it('the example check catches a wrong example (the check itself can fail)', async () => {
    const broken = structuredClone(doc);
    const param = broken.paths['/v1/flips'].get.parameters.find((p: { name: string }) => p.name === 'code_insee');
    param.schema.example = '2C004';
    const { failures } = exampleFailures(await SwaggerParser.dereference(broken));
    expect(failures.length).toBe(1);
  });

  it('every operation has a unique camelCase operationId, derived from its method and path unless explicit', () => {
    const ids = operations(doc).map(([method, path, op]) => {
      expect(op.operationId, `${method} ${path}`).toMatch(/^[a-z][A-Za-z0-9]*$/);
      return op.operationId;
    });
    expect(new Set(ids).size).toBe(ids.length);
    expect(doc.paths['/v1/transactions/{id}'].get.operationId).toBe('getTransactionsById');
    expect(doc.paths['/v1/stats/pouvoir-achat'].get.operationId).toBe('getStatsPouvoirAchat');
    expect(operationIdOf('post', '/v1/portfolio/:id/refresh')).toBe('postPortfolioByIdRefresh');
    expect(operationIdOf('get', '/health')).toBe('getHealth');
  });

  it('every success response is a named component, and the errors share the Error component', () => {
    for (const [method, path, op] of operations(doc)) {
      for (const [status, r] of Object.entries(op.responses)) {
        const ref = r.content?.['application/json']?.schema?.$ref as string | undefined;
        expect(ref, `${method} ${path} ${status}`).toMatch(/^#\/components\/schemas\/\w+$/);
        expect(doc.components.schemas[ref!.split('/').pop()!], ref).toBeTruthy();
        if (Number(status) >= 400 && path !== '/health') expect(ref).toBe('#/components/schemas/Error');
      }
    }
  });

  it('documents /health and /v1/openapi.json, without a key', () => {
    for (const path of ['/health', '/v1/openapi.json']) {
      expect(doc.paths[path]?.get, path).toBeTruthy();
      expect(doc.paths[path].get.security).toEqual([]);
    }
  });

  it('lists the new error codes', () => {
    for (const code of ['invalid_request', 'request_too_large', 'request_timeout']) expect(doc.info.description).toContain(`\`${code}\``);
    expect(doc.paths['/v1/transactions'].get.responses['431']).toBeTruthy();
  });

  it('does not advertise the radius search where it is always refused, and still refuses it', async () => {
    // The tests above keep the event loop busy for seconds without a timer turn: let the server's keep-alive timeout
    // close the idle connection now, rather than just after the next request has been written on it (ECONNRESET).
    await new Promise((resolve) => setTimeout(resolve, 10));
    const key = api.key({ balance: 10_000 });
    const refusing = ['/v1/market-activity', '/v1/market-score', '/v1/stats/pouvoir-achat', '/v1/stats/dpe-premium', '/v1/bdnb/age-stats', '/v1/bdnb/renovation-score'];
    for (const path of [...refusing, ...['stats', 'prix-par-classe', 'passoires-thermiques', 'evolution-prime-verte', 'commune-stats'].map((p) => `/v1/dpe/${p}`)]) {
      const names = doc.paths[path].get.parameters.map((p: { name: string }) => p.name);
      for (const n of ['latitude', 'longitude', 'radius_m']) expect(names, path).not.toContain(n);
      const r = await api.get(`${path}?latitude=44.84&longitude=-0.58`, key);
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe('unsupported_location');
    }
    // Where it is accepted, it stays documented.
    expect(doc.paths['/v1/stats/market'].get.parameters.map((p: { name: string }) => p.name)).toContain('radius_m');
  });
});
