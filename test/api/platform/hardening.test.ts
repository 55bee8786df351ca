// Bad input a client can send, found by a black-box probe of the running API: each case used to answer a
// 500, an empty body or a misleading message. Every answer here must be the JSON error body with the right status.
import net from 'node:net';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../../api/app';
import { answerParserErrors } from '../../../api/server';
import { startTestApi, type TestApi } from '../../helpers/api';
import { testData } from '../../helpers/data';

let api: TestApi;
let key: string;
beforeAll(async () => {
  api = await startTestApi({ dataRoot: await testData('demo'), now: '2026-02-15T12:00:00Z' });
  key = api.key({ balance: 1_000_000 });
});
afterAll(() => api.close());

/** A request written byte for byte on a socket (fetch normalises paths and refuses bad headers); the raw answer. */
function rawRequest(port: number, request: string | Buffer): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
    const chunks: Buffer[] = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head, ...rest] = text.split('\r\n\r\n');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), headers: head, body: rest.join('\r\n\r\n') });
    });
  });
}
const portOf = (url: string) => Number(new URL(url).port);

function expectError(r: { status: number; body: string }, status: number, code: string): void {
  expect(r.status, r.body).toBe(status);
  const body = JSON.parse(r.body);
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe('string');
}

describe('malformed percent-encoding in the path', () => {
  for (const path of ['/v1/transactions/%ZZ', '/%', '/%E0%A4%A', '/v1/transactions/%E0%A4%A', '/health/%C0']) {
    it(`GET ${path} is 400 invalid_request`, async () => {
      const r = await rawRequest(portOf(api.url), `GET ${path} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\nConnection: close\r\n\r\n`);
      expectError(r, 400, 'invalid_request');
    });
  }
});

describe('a body that is not what Content-Encoding says', () => {
  const send = (path: string, encoding: string, body: Buffer | string, method = 'GET') =>
    rawRequest(
      portOf(api.url),
      Buffer.concat([
        Buffer.from(
          `${method} ${path} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\nContent-Type: application/json\r\n` +
            `Content-Encoding: ${encoding}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`,
        ),
        Buffer.from(body),
      ]),
    );
  for (const path of ['/health', '/v1/transactions?code_postal=75015', '/v1/nowhere']) {
    it(`gzip that is not gzip on ${path}: 400 invalid_request`, async () => expectError(await send(path, 'gzip', 'xx'), 400, 'invalid_request'));
    it(`truncated gzip and bad deflate on ${path}: 400 invalid_request`, async () => {
      expectError(await send(path, 'gzip', gzipSync('{"a":1}').subarray(0, 12)), 400, 'invalid_request');
      expectError(await send(path, 'deflate', 'not deflate'), 400, 'invalid_request');
    });
  }
  it('an unknown encoding is 400 invalid_request too, and real gzip JSON still passes', async () => {
    expectError(await send('/health', 'foo', 'xx'), 400, 'invalid_request');
    const ok = await send('/health', 'gzip', gzipSync('{"a":1}'));
    expect(ok.status).toBe(200);
  });
});

describe('numbers past any sensible range', () => {
  const huge = ['18446744073709551616', '1e19', '1e300', '9223372036854775807', '1e400', '-1e300'];
  for (const param of ['prix_min', 'prix_max', 'surface_min', 'surface_max', 'pieces_min', 'pieces_max', 'offset']) {
    it(`${param} huge is 400 invalid_params naming it`, async () => {
      for (const v of huge) {
        const r = await api.get(`/v1/transactions?code_postal=75015&${param}=${v}`, key);
        expect(r.status, `${param}=${v}: ${JSON.stringify(r.body)}`).toBe(400);
        expect(r.body.error.code).toBe('invalid_params');
        expect(r.body.error.details[0].param).toBe(param);
      }
    });
  }
  it('the largest accepted values still run', async () => {
    const r = await api.get('/v1/transactions?code_postal=75015&prix_min=10000000000&surface_max=1000000&pieces_max=1000&offset=10000000', key);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.transactions).toEqual([]);
  });
  it('every numeric query parameter of the published document has a minimum and a maximum', async () => {
    const doc = (await api.get('/v1/openapi.json')).body;
    const unbounded: string[] = [];
    for (const [path, item] of Object.entries<Record<string, { parameters?: { name: string; schema: Record<string, unknown> }[] }>>(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        for (const p of op.parameters ?? []) {
          const t = p.schema.type;
          if ((t === 'number' || t === 'integer') && (typeof p.schema.minimum !== 'number' || typeof p.schema.maximum !== 'number')) unbounded.push(`${method} ${path} ${p.name}`);
        }
      }
    }
    expect(unbounded).toEqual([]);
  });
});

describe("Node's HTTP parser refusals carry the JSON error body", () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = await new Promise<Server>((resolve) => {
      const s = createApp(api.ctx).listen(0, '127.0.0.1', () => resolve(s));
    });
    answerParserErrors(server);
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise((r) => server.close(r)));

  it('headers over 16 kB: 431 request_too_large', async () => {
    const r = await rawRequest(port, `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expectError(r, 431, 'request_too_large');
    expect(r.headers).toMatch(/content-type: application\/json/i);
  });
  it('a URL over 16 kB: 431 request_too_large', async () => {
    expectError(await rawRequest(port, `GET /v1/transactions?commune=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`), 431, 'request_too_large');
  });
  it('a control character in a header value: 400 invalid_request', async () => {
    expectError(await rawRequest(port, `GET /health HTTP/1.1\r\nHost: x\r\nX-API-Key: ab\x01cd\r\n\r\n`), 400, 'invalid_request');
  });
  it('a broken request line: 400 invalid_request', async () => {
    expectError(await rawRequest(port, `GET /health HTTP/9 nonsense\r\n\r\n`), 400, 'invalid_request');
  });
  it('a refusal after an answered keep-alive request still gets its JSON body', async () => {
    const text = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n'));
      let got = '';
      socket.on('data', (c) => {
        // The second request leaves once the first answer is complete, so no response is in flight on the socket.
        if (!got.includes('"status"') && (got += c.toString()).includes('"status"')) socket.write('GET /health HTTP/1.1\r\nHost: x\r\nX-Bad: a\x7fb\r\n\r\n');
        else got += c.toString();
      });
      socket.on('error', reject);
      socket.on('close', () => resolve(got));
    });
    expect(text).toMatch(/^HTTP\/1\.1 200/);
    expect(text).toMatch(/HTTP\/1\.1 400 Bad Request[\s\S]*\{"error":\{"code":"invalid_request"/);
  });
});

describe('the INSEE-code pattern as published', () => {
  it('every published pattern compiles without flags and accepts its own example', async () => {
    const doc = (await api.get('/v1/openapi.json')).body;
    const inseeParams: string[] = [];
    for (const [path, item] of Object.entries<Record<string, { parameters?: { name: string; schema: { pattern?: string; example?: unknown }; example?: unknown }[] }>>(doc.paths)) {
      for (const op of Object.values(item)) {
        for (const p of op.parameters ?? []) {
          if (!p.schema.pattern) continue;
          expect(p.schema.pattern, `${path} ${p.name}`).not.toMatch(/\/[gimsuy]*$/);
          const re = new RegExp(p.schema.pattern, 'u');
          const example = p.example ?? p.schema.example;
          if (typeof example === 'string') expect(re.test(example), `${path} ${p.name} example ${example}`).toBe(true);
          if (p.name === 'code_insee' || p.name === 'code_commune') {
            inseeParams.push(`${path} ${p.name}`);
            for (const ok of ['33063', '2A004', '2b033']) expect(re.test(ok), `${path} ${p.name} ${ok}`).toBe(true);
            for (const bad of ['3306', '2C004', '330633']) expect(re.test(bad), `${path} ${p.name} ${bad}`).toBe(false);
          }
        }
      }
    }
    expect(inseeParams.length).toBeGreaterThanOrEqual(5);
  });
  it('the API accepts 2a and 2A alike', async () => {
    const lower = await api.get('/v1/flips?code_insee=2a004', key);
    const upper = await api.get('/v1/flips?code_insee=2A004', key);
    expect(lower.status).toBe(upper.status);
    expect(lower.status).not.toBe(400);
  });
});

describe('messages that say what is wrong', () => {
  it('a repeated parameter says it was given more than once', async () => {
    const r = await api.get('/v1/transactions?code_postal=75015&code_postal=75011', key);
    expect(r.status).toBe(400);
    expect(r.body.error.details).toEqual([{ param: 'code_postal', issue: expect.stringMatching(/more than once/) }]);
    const n = await api.get('/v1/transactions?code_postal=75015&limit=1&limit=2', key);
    expect(n.body.error.details).toEqual([{ param: 'limit', issue: expect.stringMatching(/more than once/) }]);
  });
  it('a bracketed parameter is another name, so the location is missing', async () => {
    for (const q of ['code_postal[]=75015', 'code_postal[a]=75015']) {
      const r = await api.get(`/v1/transactions?${q}`, key);
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe('missing_location');
    }
  });
  it('several properties at a given number: the notice says so and does not ask for the number', async () => {
    const r = await api.get(`/v1/property-history?address=${encodeURIComponent('6 avenue Charles de Gaulle')}&code_postal=23000`, key);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.notice).toMatch(/several properties match/);
    expect(r.body.notice).not.toMatch(/house number/);
    expect(r.body.notice).toMatch(/section \+ no_plan \+ code_commune/);
  });
});
