// pipeline/sources/dpe/datafair.ts against a loopback server imitating ADEME's data-fair API (the shape of the real
// responses in ../shared/data/dpe/: {total, next, results}), with scripted faults: 429, 500, a connection cut mid-page.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { samplesDir } from '../../../lib/config';
import { all, openMemory } from '../../../lib/duck';
import { dpeDatasets } from '../../../pipeline/sources/dpe';
import { DPE_API_FIELDS } from '../../../pipeline/sources/dpe/columns';
import { fetchDepartement, type DataFairFetchOptions } from '../../../pipeline/sources/dpe/datafair';
import { stageDpeFiles } from '../../../pipeline/sources/dpe/parse';

// The real rows of one API response, spread over two départements so the `qs` filter is observable.
const REAL = JSON.parse(fs.readFileSync(path.join(samplesDir, 'dpe', 'dpe03existant_api_lines_nancy_geo50m.json'), 'utf8')) as { results: Array<Record<string, unknown>> };
const ROWS: Array<Record<string, unknown>> = REAL.results.map((r, i) => ({ ...r, code_departement_ban: i % 6 === 5 ? '57' : '54' }));
const IN_54 = ROWS.filter((r) => r.code_departement_ban === '54');

interface Fault { status?: number; retryAfter?: string; cut?: boolean }

let server: http.Server;
let base: string;
let dir: string;
let vintage: string;
let faults: Array<Fault | undefined>; // consumed by /lines requests in order
let lineRequests: URL[];

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'foncier-datafair-'));
  vintage = '2026-11-01T03:00:00.000Z';
  faults = [];
  lineRequests = [];
  server = http.createServer((req, res) => {
    const url = new URL(req.url!, base);
    const m = /^\/data-fair\/api\/v1\/datasets\/([^/]+)(\/lines)?$/.exec(url.pathname);
    if (!m || m[1] !== 'dpe03existant') return void res.writeHead(404).end('{"error":"not found"}');
    if (!m[2]) return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: 'dpe03existant', dataUpdatedAt: vintage, count: ROWS.length }));
    lineRequests.push(url);
    const fault = faults.shift();
    if (fault?.status) return void res.writeHead(fault.status, fault.retryAfter ? { 'retry-after': fault.retryAfter } : {}).end();
    const qs = /^code_departement_ban:"(\w+)"$/.exec(url.searchParams.get('qs') ?? '');
    const rows = ROWS.filter((r) => !qs || r.code_departement_ban === qs[1]);
    const size = Number(url.searchParams.get('size') ?? 12);
    const after = Number(url.searchParams.get('after') ?? 0);
    const page = rows.slice(after, after + size);
    const next = new URL(url);
    next.searchParams.set('after', String(after + page.length));
    const more = after + page.length < rows.length;
    if (url.searchParams.get('format') === 'csv') {
      // With select=, data-fair answers the selected fields in the dataset's own order (here the records' key order).
      const select = url.searchParams.get('select')?.split(',');
      const cols = select ? [...new Set(ROWS.flatMap((r) => Object.keys(r)))].filter((k) => select.includes(k)) : ['numero_dpe', 'etiquette_dpe', 'code_departement_ban'];
      const cell = (v: unknown) => (v === undefined ? '' : /[",\n]/.test(String(v)) ? `"${String(v).replace(/"/g, '""')}"` : String(v));
      const csv = [cols.join(','), ...page.map((r) => cols.map((c) => cell(r[c])).join(','))].join('\n') + '\n';
      return void res.writeHead(200, { 'content-type': 'text/csv', ...(more ? { link: `<${next}>; rel=next` } : {}) }).end(csv);
    }
    const body = JSON.stringify({ total: rows.length, ...(more ? { next: next.toString() } : {}), results: page });
    if (fault?.cut) {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.write(body.slice(0, body.length >> 1), () => res.socket?.destroy());
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  await new Promise((resolve) => server.close(resolve));
  fs.rmSync(dir, { recursive: true, force: true });
});

const sleeps: number[] = [];
const opts = (extra: Partial<DataFairFetchOptions> = {}): DataFairFetchOptions => ({
  baseUrl: `${base}/data-fair/api/v1`, dataset: { id: 'dpe03existant', departementField: 'code_departement_ban' },
  departement: '54', dest: path.join(dir, 'dpe03existant', '54.ndjson'), size: 4,
  backoff: (n) => 10 * n, sleep: async (ms) => void sleeps.push(ms), ...extra,
});
const readRows = (file: string) => fs.readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);

describe('data-fair client', () => {
  it('follows the next links page by page and keeps only the département asked for', async () => {
    const r = await fetchDepartement(opts());
    expect(r).toMatchObject({ status: 'downloaded', rows: IN_54.length, pages: Math.ceil(IN_54.length / 4), vintage });
    expect(readRows(r.path).map((x) => x.numero_dpe)).toEqual(IN_54.map((x) => x.numero_dpe));
    expect(lineRequests[0].searchParams.get('qs')).toBe('code_departement_ban:"54"');
    expect(lineRequests.slice(1).map((u) => u.searchParams.get('after'))).toEqual(['4', '8', '12'].slice(0, lineRequests.length - 1));
    expect(fs.existsSync(`${r.path}.part`)).toBe(false);
  });

  it('retries a 429 after its Retry-After, a 500 after the backoff, and a page cut mid-body', async () => {
    sleeps.length = 0;
    faults = [undefined, { status: 429, retryAfter: '3' }, { status: 500 }, { cut: true }];
    const r = await fetchDepartement(opts());
    expect(sleeps).toEqual([3000, 20, 30]);
    const got = readRows(r.path).map((x) => x.numero_dpe);
    expect(got).toEqual(IN_54.map((x) => x.numero_dpe));
    expect(new Set(got).size).toBe(got.length);
  });

  it('gives up after the retries, then resumes from the saved cursor instead of the first page', async () => {
    faults = [undefined, undefined, { status: 503 }, { status: 503 }];
    await expect(fetchDepartement(opts({ retries: 1 }))).rejects.toThrow(/failed after 2 attempts/);
    const state = JSON.parse(fs.readFileSync(path.join(dir, 'dpe03existant', '54.ndjson.state.json'), 'utf8'));
    expect(state).toMatchObject({ rows: 8, pages: 2, complete: false });
    // A half-written page after the committed bytes (a killed process) must be dropped on resume.
    fs.appendFileSync(path.join(dir, 'dpe03existant', '54.ndjson.part'), '{"numero_dpe":"half');
    lineRequests = [];
    const r = await fetchDepartement(opts());
    expect(r.status).toBe('resumed');
    expect(lineRequests[0].searchParams.get('after')).toBe('8');
    expect(readRows(r.path).map((x) => x.numero_dpe)).toEqual(IN_54.map((x) => x.numero_dpe));
  });

  it('skips a département whose dataset update date is unchanged, fetches it again when it changed', async () => {
    await fetchDepartement(opts());
    lineRequests = [];
    expect((await fetchDepartement(opts())).status).toBe('not_modified');
    expect(lineRequests).toHaveLength(0);
    vintage = '2026-11-20T03:00:00.000Z';
    const r = await fetchDepartement(opts());
    expect(r).toMatchObject({ status: 'downloaded', vintage });
    expect(lineRequests.length).toBeGreaterThan(0);
  });

  it('restarts from the first page when the data changed under an interrupted download', async () => {
    faults = [undefined, { status: 500 }];
    await expect(fetchDepartement(opts({ retries: 0 }))).rejects.toThrow();
    vintage = '2026-11-21T00:00:00.000Z';
    lineRequests = [];
    const r = await fetchDepartement(opts());
    expect(r.status).toBe('downloaded');
    expect(lineRequests[0].searchParams.get('after')).toBeNull();
    expect(readRows(r.path)).toHaveLength(IN_54.length);
  });

  it('writes CSV pages under one header, following the Link header', async () => {
    const r = await fetchDepartement(opts({ format: 'csv', dest: path.join(dir, '54.csv') }));
    const lines = fs.readFileSync(r.path, 'utf8').trim().split('\n');
    expect(lines[0]).toBe('numero_dpe,etiquette_dpe,code_departement_ban');
    expect(lines.slice(1).map((l) => l.split(',')[0])).toEqual(IN_54.map((x) => x.numero_dpe));
  });

  it('asks for the parser\'s fields only (select=), and the CSV it gets, in the server\'s column order, parses', async () => {
    const dataset = dpeDatasets('dpe03existant')[0];
    expect(dataset.select).toEqual(DPE_API_FIELDS.dpe03existant);
    const r = await fetchDepartement(opts({ format: 'csv', dataset, dest: path.join(dir, '54.csv') }));
    expect(lineRequests[0].searchParams.get('select')).toBe(DPE_API_FIELDS.dpe03existant.join(','));
    expect(lineRequests.slice(1).every((u) => u.searchParams.get('select') === lineRequests[0].searchParams.get('select'))).toBe(true);
    const header = fs.readFileSync(r.path, 'utf8').split('\n')[0].split(',');
    expect(header).not.toEqual(DPE_API_FIELDS.dpe03existant.filter((f) => header.includes(f))); // another order
    expect(header).toContain('_geopoint');
    const { instance, conn } = await openMemory({ threads: 1, memoryLimit: '512MB' });
    try {
      const staged = await stageDpeFiles(conn, [{ path: r.path, dataset: 'dpe03existant' }]);
      expect(staged).toMatchObject({ rowsRead: IN_54.length, rows: IN_54.length });
      const got = await all<Record<string, unknown>>(conn, 'SELECT dpe_id, classe_energie, surface_habitable, latitude, longitude FROM dpe_staged ORDER BY dpe_id');
      // independently from the JSON rows served: "_geopoint" is "lat,lon"
      const want = [...IN_54].sort((a, b) => String(a.numero_dpe).localeCompare(String(b.numero_dpe))).map((x) => {
        const [lat, lon] = String(x._geopoint).split(',').map(Number);
        return { dpe_id: x.numero_dpe, classe_energie: x.etiquette_dpe, surface_habitable: x.surface_habitable_logement ?? null, latitude: lat, longitude: lon };
      });
      expect(got).toEqual(want);
    } finally {
      conn.closeSync();
      instance.closeSync();
    }
  });

  it('does not retry a 404 (wrong dataset id)', async () => {
    await expect(fetchDepartement(opts({ dataset: { id: 'dpe-v2-logements-existants', departementField: 'x' } }))).rejects.toThrow(/404/);
  });
});
