// The pipeline's network path end to end: --base-url on a loopback mirror of the official tree (real samples).
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Lake } from '../../lib/lake';
import { runSource } from '../../pipeline/run';
import { lakeGlob, queryParquet, sampleTree, tempDir } from '../helpers/samples';

describe('pipeline over HTTP', () => {
  const tree = sampleTree();
  const requests: Array<{ url: string; inm?: string }> = [];
  let server: http.Server;
  let base = '';
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      requests.push({ url: req.url!, inm: req.headers['if-none-match'] as string | undefined });
      const file = path.join(tree, decodeURIComponent(req.url!.replace(/^\/mirror\//, '')));
      if (!fs.existsSync(file)) return void res.writeHead(404).end();
      const body = fs.readFileSync(file);
      const etag = `"${crypto.createHash('md5').update(body).digest('hex')}"`;
      if (req.headers['if-none-match'] === etag) return void res.writeHead(304).end();
      res.writeHead(200, { etag, 'content-length': body.length, 'last-modified': 'Tue, 15 Apr 2025 08:00:00 GMT' }).end(body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mirror`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('downloads, imports, records the vintage, then skips the unchanged file; a missing file fails alone', async () => {
    const data = tempDir();
    const sel = { source: 'dvf', baseUrl: base, annees: [2021], departements: ['33', '40'], dataRoot: data };
    const first = await runSource(sel);
    expect(first.map((o) => o.status)).toEqual(['imported', 'failed']);
    expect(first[1].error).toMatch(/404/);
    const p = new Lake(data).readManifest().sources.dvf.partitions!['33/2021'];
    expect(p.source_url).toBe(`${base}/2021/departements/33.csv.gz`);
    expect(p.vintage).toBe('2025-04-15');
    expect(fs.existsSync(path.join(data, 'downloads', 'dvf', '2021', 'departements', '33.csv.gz'))).toBe(true);

    const second = await runSource({ ...sel, departements: ['33'] });
    expect(second[0].status).toBe('unchanged');
    expect(requests.at(-1)?.inm).toBeDefined(); // a conditional request, answered 304
    const [{ n }] = await queryParquet(`select count(*) n from ${lakeGlob(data)}`);
    expect(n).toBe(164);
  });
});
