// The published contract (issue 12, items 11–12): the served OpenAPI document is valid for a standard validator,
// every example in it satisfies its own schema, every operation has a stable operationId and a named response
// component, the service routes are documented, and no endpoint advertises a parameter it always refuses.
import SwaggerParser from '@apidevtools/swagger-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operationIdOf } from '../../../api/platform';
import { startTestApi, type TestApi } from '../../helpers/api';
import { testData } from '../../helpers/data';

let api: TestApi;
let doc: any;
beforeAll(async () => {
  api = await startTestApi({ dataRoot: await testData('demo'), now: '2026-02-15T12:00:00Z' });
  doc = (await api.get('/v1/openapi.json')).body;
});
afterAll(() => api.close());

type Op = { operationId?: string; parameters?: { name: string; in: string }[]; responses: Record<string, any> };
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

describe('the served OpenAPI document', () => {
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
    const key = api.key({ balance: 10_000 });
    for (const path of ['/v1/market-activity', '/v1/market-score', '/v1/stats/pouvoir-achat']) {
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
