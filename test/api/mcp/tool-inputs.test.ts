// What an agent reads in a tool's input schema and may send, with the SDK's client over Streamable HTTP: every
// parameter the OpenAPI document marks required is required by the tool; codes typed as strings are accepted from JSON
// numbers of the right form and refused with REST's own message otherwise; stats/compare takes its zones as a JSON
// array, and its description does not speak of URL encoding.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { startTestApi, type TestApi } from '../../helpers/api';
import { testData } from '../../helpers/data';

let api: TestApi;
let client: Client;
let tools: Tool[];
beforeAll(async () => {
  api = await startTestApi({ dataRoot: await testData('sample'), now: '2022-06-15T12:00:00Z' });
  client = new Client({ name: 'foncier-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), { requestInit: { headers: { 'X-API-Key': api.key() } } }));
  ({ tools } = await client.listTools());
});
afterAll(async () => {
  await client?.close();
  await api?.close();
});

const tool = (name: string) => tools.find((t) => t.name === name)!;
const requiredOf = (name: string) => (tool(name).inputSchema.required ?? []) as string[];
const bodyOf = (r: CallToolResult) => JSON.parse((r.content[0] as { text: string }).text);
const stable = ({ query_time_ms: _t, cache: _c, _credits: _k, ...rest }: Record<string, unknown>) => rest;

describe('required arguments', () => {
  it('every parameter the OpenAPI document requires is required by its tool', async () => {
    const doc = (await api.get('/v1/openapi.json')).body as { paths: Record<string, Record<string, { operationId: string; parameters?: Array<{ name: string; required?: boolean }> }>> };
    let checked = 0;
    for (const ops of Object.values(doc.paths)) {
      for (const op of Object.values(ops)) {
        const t = tools.find((x) => x.name === op.operationId);
        if (!t) continue;
        for (const p of op.parameters ?? []) {
          if (!p.required) continue;
          expect(requiredOf(t.name), `${t.name}.${p.name}`).toContain(p.name);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(10);
  });
  it('the valuation tools publish what prepare requires', () => {
    expect(requiredOf('getEstimate')).toEqual(expect.arrayContaining(['latitude', 'longitude', 'surface']));
    expect(requiredOf('getComparables')).toEqual(expect.arrayContaining(['latitude', 'longitude', 'type_local', 'surface_min', 'surface_max']));
    expect(requiredOf('getStatsCompare')).toContain('locations');
    expect(requiredOf('getStatsRendementLocatif')).toContain('code_insee');
    expect(requiredOf('getBusinessesSearch')).toEqual(expect.arrayContaining(['latitude', 'longitude']));
  });
  it('getStatsCompare describes its zones plainly', () => {
    const d = (tool('getStatsCompare').inputSchema.properties as Record<string, { description: string }>).locations.description;
    expect(d).toMatch(/JSON array of 2 to 5 objects/);
    expect(d).not.toMatch(/URL/i);
  });
});

describe('codes sent as JSON numbers', () => {
  it('a postal code of five digits is the same request as its string', async () => {
    const args = { type_local: 'Maison', date_debut: '2021-01-01', date_fin: '2021-12-31' };
    const asNumber = (await client.callTool({ name: 'getStatsMarket', arguments: { ...args, code_postal: 33230 } })) as CallToolResult;
    const asString = (await client.callTool({ name: 'getStatsMarket', arguments: { ...args, code_postal: '33230' } })) as CallToolResult;
    expect(asNumber.isError).toBeFalsy();
    expect(bodyOf(asNumber).count).toBeGreaterThan(0);
    expect(stable(bodyOf(asNumber))).toEqual(stable(bodyOf(asString)));
  });
  it('a number that lost its leading zero is refused with the message REST gives its digits', async () => {
    const r = (await client.callTool({ name: 'getStatsMarket', arguments: { code_postal: 1000 } })) as CallToolResult;
    expect(r.isError).toBe(true);
    const rest = await api.get('/v1/stats/market?code_postal=1000', api.key());
    expect(rest.status).toBe(400);
    expect(bodyOf(r).error.code).toBe('invalid_params');
    expect(bodyOf(r).error.details).toEqual(rest.body.error.details);
  });
  it('an INSEE code and a département too; a fraction is not a code', async () => {
    const byCode = (await client.callTool({ name: 'getStatsMarket', arguments: { commune: '33063', code_departement: 33, date_debut: '2021-01-01', date_fin: '2021-12-31' } })) as CallToolResult;
    expect(byCode.isError).toBeFalsy();
    const bad = (await client.callTool({ name: 'getStatsRendementLocatif', arguments: { code_insee: 33063.5 } })) as CallToolResult;
    expect(bad.isError).toBe(true);
    expect(bodyOf(bad).error.details[0].param).toBe('code_insee');
  });
});

describe('getStatsCompare over MCP', () => {
  it('takes the zones as a JSON array, the same request as REST’s JSON text', async () => {
    const locations = [{ code_postal: '33230' }, { code_postal: '33000' }];
    const r = (await client.callTool({ name: 'getStatsCompare', arguments: { locations, type_local: 'Maison', date_debut: '2021-01-01' } })) as CallToolResult;
    expect(r.isError).toBeFalsy();
    const rest = await api.get(`/v1/stats/compare?locations=${encodeURIComponent(JSON.stringify(locations))}&type_local=Maison&date_debut=2021-01-01`, api.key());
    expect(rest.status).toBe(200);
    expect(stable(bodyOf(r))).toEqual(stable(rest.body));
    // A postal code of an item given as a number of five digits is the same zone.
    const numeric = (await client.callTool({ name: 'getStatsCompare', arguments: { locations: [{ code_postal: 33230 }, { code_postal: '33000' }], type_local: 'Maison', date_debut: '2021-01-01' } })) as CallToolResult;
    expect(numeric.isError).toBeFalsy();
    expect(stable(bodyOf(numeric))).toEqual(stable(rest.body));
  });
});
