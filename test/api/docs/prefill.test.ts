// What /docs prefills works: "Try it out" fills each parameter as Swagger UI does (the parameter's example, else its
// schema's example, else its default; `examples` are shown, not filled) and the body with its schema's example, so every
// operation sent as prefilled must answer 2xx on the demo dataset, with one location (not code_postal, commune,
// code_departement and a point that contradict each other). The browser side is test/e2e/docs.test.ts.
import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../../helpers/api';
import { testData } from '../../helpers/data';

let api: TestApi;
let doc: any;
beforeAll(async () => {
  api = await startTestApi({ dataRoot: await testData('demo'), now: '2026-02-15T12:00:00Z' });
  // The prefilled alert's receiver: allow-listed, so that creating it asks no DNS server about example.com.
  api.ctx.webhooks.allowedHosts.push('example.com');
  doc = await SwaggerParser.dereference((await api.get('/v1/openapi.json')).body);
});
afterAll(() => api.close());

/** Operations whose prefilled request cannot answer 2xx here, and why; their prefilled values must still be valid. */
const CANNOT_ANSWER: Record<string, string> = {
  'GET /v1/businesses/{siren}': 'asks INSEE live: 503 registry_unavailable without an INSEE key',
};
/** Operations whose prefilled body is refused on purpose, on one parameter only: a confirmation no example can know. */
const REFUSED_ON: Record<string, string> = {
  'POST /v1/account/revoke': 'key_id', // the caller's own key id, repeated to confirm the revocation
};
/** Parameters naming a zone: an operation prefills one (latitude with longitude counting as one; an address is a place
 * within its code_postal). */
const ZONE = ['code_postal', 'commune', 'code_departement', 'latitude', 'code_commune', 'code_insee', 'code_commune_insee', 'locations'];
/** comparables and estimate take a point and, as its fallback, the postal code of the same place. */
const FALLBACK_ZONE: Record<string, string[]> = { '/v1/comparables': ['code_postal'], '/v1/estimate': ['code_postal'] };

type Param = { name: string; in: string; example?: unknown; schema?: { example?: unknown; default?: unknown } };

/** The value Swagger UI puts in a parameter's box when "Try it out" opens (OpenAPI 3: its parameter-row component). */
function prefilled(p: Param): unknown {
  return p.example ?? p.schema?.example ?? p.schema?.default;
}

/** Each operation as "Try it out" sends it untouched: its URL and body, or undefined when a path parameter is blank. */
function prefilledRequests(): { name: string; path: string; method: string; url?: string; body?: unknown; zone: string[] }[] {
  return Object.entries<Record<string, any>>(doc.paths).flatMap(([path, item]) =>
    Object.entries<any>(item).map(([method, op]) => {
      const name = `${method.toUpperCase()} ${path}`;
      let url: string | undefined = path;
      const query = new URLSearchParams();
      const zone: string[] = [];
      for (const p of (op.parameters ?? []) as Param[]) {
        const v = prefilled(p);
        if (v === undefined) {
          if (p.in === 'path') url = undefined;
          continue;
        }
        if (p.in === 'path') url = url?.replace(`{${p.name}}`, encodeURIComponent(String(v)));
        else query.set(p.name, String(v));
        if (ZONE.includes(p.name) && !FALLBACK_ZONE[path]?.includes(p.name)) zone.push(p.name);
      }
      const content = op.requestBody?.content?.['application/json'];
      const body = content ? (content.example ?? content.schema?.example) : undefined;
      return { name, path, method, url: url && `${url}${query.size ? `?${query}` : ''}`, body, zone };
    }),
  );
}

describe('the values /docs prefills', () => {
  it('answer 2xx on every operation, each with one location', async () => {
    const key = api.key({ plan: 'Scale', balance: 100_000 });
    const answers: string[] = [];
    const expected: string[] = [];
    let sent = 0;
    for (const r of prefilledRequests()) {
      // A blank path parameter: the ids of portfolio properties and alerts exist only once created.
      if (!r.url) {
        expect(r.path, r.name).toMatch(/^\/v1\/(portfolio|alerts)\/\{id\}/);
        continue;
      }
      expect(r.zone.length, `${r.name} prefills ${r.zone.join(', ')}`).toBeLessThanOrEqual(1);
      const res = await fetch(api.url + r.url, {
        method: r.method.toUpperCase(),
        headers: { 'X-API-Key': key, ...(r.body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
        body: r.body !== undefined ? JSON.stringify(r.body) : undefined,
      });
      sent++;
      const text = await res.text();
      const answer = res.status < 300 ? '2xx' : res.status === 400 ? `400 ${text.slice(0, 300)}` : String(res.status);
      answers.push(`${r.name} → ${answer}`);
      const refused = answer.startsWith('400');
      if (REFUSED_ON[r.name]) {
        const params = refused ? (JSON.parse(text) as { error: { details?: { param: string }[] } }).error.details?.map((d) => d.param) : undefined;
        answers[answers.length - 1] = `${r.name} → ${refused ? `400 on ${params?.join(', ')}` : answer}`;
        expected.push(`${r.name} → 400 on ${REFUSED_ON[r.name]}`);
        continue;
      }
      expected.push(`${r.name} → ${!CANNOT_ANSWER[r.name] ? '2xx' : refused ? 'anything but a 400' : answer}`);
    }
    expect(answers).toEqual(expected);
    expect(sent).toBeGreaterThanOrEqual(35);
  });

  it('prefill the location of stats/market and transactions alone, not four that contradict each other', () => {
    const byName = new Map(prefilledRequests().map((r) => [r.name, r]));
    for (const name of ['GET /v1/stats/market', 'GET /v1/transactions']) {
      const url = new URL(byName.get(name)!.url!, 'http://x');
      expect(url.searchParams.get('code_postal')).toBe('75015');
      for (const other of ['commune', 'code_departement', 'latitude', 'longitude']) expect(url.searchParams.has(other), `${name} ${other}`).toBe(false);
    }
    // The other location parameters keep their examples, documented without being prefilled.
    const commune = doc.paths['/v1/stats/market'].get.parameters.find((p: Param) => p.name === 'commune');
    expect(commune.schema.examples).toContain('PARIS 15');
  });

  it('give every request body an example', () => {
    for (const r of prefilledRequests()) {
      const op = doc.paths[r.path][r.method];
      if (op.requestBody) expect(r.body, r.name).toBeTypeOf('object');
    }
  });
});
