// pipeline/download.ts against a loopback HTTP server serving the real DVF samples, with scripted faults.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { samplesDir } from '../../lib/config';
import { download, DownloadError } from '../../pipeline/download';

const GEO = fs.readFileSync(path.join(samplesDir, 'dvf', 'geo-dvf_2021_33_extrait_abzac.csv'));
const VF = fs.readFileSync(path.join(samplesDir, 'dvf', 'valeursfoncieres-2020_extrait_dep01.txt'));
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** One scripted response; consumed in order, then the server behaves normally. */
interface Fault {
  status?: number; // answer this status with an empty body
  headers?: Record<string, string>;
  dropAfter?: number; // send this many body bytes, then kill the socket
  stallAfter?: number; // send this many body bytes, then go silent
  claimTotal?: number; // a 206 whose Content-Range announces this total size
}

interface Served {
  body: Buffer;
  etag?: string;
  lastModified: string;
  ignoreConditionals: boolean;
  faults: Fault[];
  requests: http.IncomingHttpHeaders[];
}

let server: http.Server;
let base: string;
let state: Served;
let dir: string;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'foncier-download-'));
  state = { body: GEO, etag: '"geo-v1"', lastModified: 'Wed, 01 May 2024 10:00:00 GMT', ignoreConditionals: false, faults: [], requests: [] };
  server = http.createServer((req, res) => {
    state.requests.push(req.headers);
    const fault = state.faults.shift();
    if (fault?.status) {
      res.writeHead(fault.status, fault.headers).end();
      return;
    }
    const validators: Record<string, string> = { 'last-modified': state.lastModified, 'accept-ranges': 'bytes' };
    if (state.etag) validators.etag = state.etag;
    if (!state.ignoreConditionals && state.etag && req.headers['if-none-match'] === state.etag) {
      res.writeHead(304, validators).end();
      return;
    }
    const { body } = state;
    let start = 0;
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    const ifRange = req.headers['if-range'];
    if (range && (!ifRange || ifRange === state.etag || ifRange === state.lastModified)) {
      start = Number(range[1]);
      if (start >= body.length) {
        res.writeHead(416, { 'content-range': `bytes */${body.length}` }).end();
        return;
      }
    }
    const slice = body.subarray(start);
    const headers = { ...validators, 'content-type': 'text/csv', 'content-length': String(slice.length) };
    if (start > 0) res.writeHead(206, { ...headers, 'content-range': `bytes ${start}-${body.length - 1}/${fault?.claimTotal ?? body.length}` });
    else res.writeHead(200, headers);
    // The pause lets the client consume the bytes before the drop: undici discards chunks still queued when it sees the
    // reset (50 ms was too short on a loaded machine: the client had read nothing and restarted from byte 0).
    if (fault?.dropAfter !== undefined) res.write(slice.subarray(0, fault.dropAfter), () => setTimeout(() => res.socket?.destroy(), 300));
    else if (fault?.stallAfter !== undefined) res.write(slice.subarray(0, fault.stallAfter));
    else res.end(slice);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  fs.rmSync(dir, { recursive: true, force: true });
});

const fast = { backoffMs: 5 };

describe('download', () => {
  it('downloads a file atomically, with the right bytes, sha256, validators and sidecar meta', async () => {
    const url = `${base}/geo-dvf/latest/csv/2021/communes/33/33001.csv`;
    const dest = path.join(dir, 'nested', 'deeper', 'abzac.csv');
    const seen: Array<[number, number | undefined, boolean]> = [];
    const r = await download(url, dest, { ...fast, onProgress: (n, t) => seen.push([n, t, fs.existsSync(dest)]) });

    expect(r).toMatchObject({ url, path: dest, status: 'downloaded', bytes: GEO.length, etag: '"geo-v1"', lastModified: state.lastModified });
    expect(r.sha256).toBe(sha(GEO));
    expect(fs.readFileSync(dest).equals(GEO)).toBe(true);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.at(-1)).toEqual([GEO.length, GEO.length, false]);
    expect(seen.every(([, , destExists]) => !destExists)).toBe(true);
    expect(fs.existsSync(`${dest}.part`)).toBe(false);
    expect(fs.existsSync(`${dest}.part.meta.json`)).toBe(false);
    const meta = JSON.parse(fs.readFileSync(`${dest}.meta.json`, 'utf8'));
    expect(meta).toMatchObject({ url, etag: '"geo-v1"', lastModified: state.lastModified, sha256: sha(GEO), bytes: GEO.length });
    expect(Number.isNaN(Date.parse(meta.completedAt))).toBe(false);
    expect(state.requests[0]['accept-encoding']).toBe('identity');
  });

  it('returns not_modified on 304 without touching the file', async () => {
    const url = `${base}/geo.csv`;
    const dest = path.join(dir, 'geo.csv');
    await download(url, dest, fast);
    const old = new Date('2020-01-01T00:00:00Z');
    fs.utimesSync(dest, old, old);

    const r = await download(url, dest, fast);
    expect(r).toMatchObject({ status: 'not_modified', bytes: GEO.length, sha256: sha(GEO), etag: '"geo-v1"' });
    expect(state.requests).toHaveLength(2);
    expect(state.requests[1]['if-none-match']).toBe('"geo-v1"');
    expect(state.requests[1]['if-modified-since']).toBe(state.lastModified);
    expect(fs.statSync(dest).mtime.getTime()).toBe(old.getTime());
    expect(fs.readFileSync(dest).equals(GEO)).toBe(true);
  });

  it('returns not_modified when the server ignores conditionals but sends the same ETag', async () => {
    const url = `${base}/geo.csv`;
    const dest = path.join(dir, 'geo.csv');
    await download(url, dest, fast);
    state.ignoreConditionals = true;
    const before = fs.statSync(dest).mtimeMs;
    const r = await download(url, dest, fast);
    expect(r.status).toBe('not_modified');
    expect(r.sha256).toBe(sha(GEO));
    expect(fs.statSync(dest).mtimeMs).toBe(before);
    expect(fs.existsSync(`${dest}.part`)).toBe(false);
  });

  it('returns not_modified by content hash when the ETag changed but the bytes did not', async () => {
    const url = `${base}/geo.csv`;
    const dest = path.join(dir, 'geo.csv');
    await download(url, dest, fast);
    const old = new Date('2020-01-01T00:00:00Z');
    fs.utimesSync(dest, old, old);
    state.etag = '"geo-regenerated"';

    const r = await download(url, dest, fast);
    expect(r).toMatchObject({ status: 'not_modified', sha256: sha(GEO), etag: '"geo-regenerated"' });
    expect(state.requests[1]['if-none-match']).toBe('"geo-v1"');
    expect(fs.statSync(dest).mtime.getTime()).toBe(old.getTime());
    expect(fs.existsSync(`${dest}.part`)).toBe(false);
    // The new validators are remembered, so the next call gets a 304.
    expect(JSON.parse(fs.readFileSync(`${dest}.meta.json`, 'utf8')).etag).toBe('"geo-regenerated"');
    expect((await download(url, dest, fast)).status).toBe('not_modified');
    expect(state.requests[2]['if-none-match']).toBe('"geo-regenerated"');
  });

  it('downloads again when the content changed', async () => {
    const url = `${base}/dvf.txt`;
    const dest = path.join(dir, 'dvf.txt');
    await download(url, dest, fast);
    state.body = VF;
    state.etag = '"vf-v2"';

    const r = await download(url, dest, fast);
    expect(r).toMatchObject({ status: 'downloaded', bytes: VF.length, etag: '"vf-v2"' });
    expect(r.sha256).toBe(sha(VF));
    expect(r.sha256).not.toBe(sha(GEO));
    expect(fs.readFileSync(dest).equals(VF)).toBe(true);
    expect(JSON.parse(fs.readFileSync(`${dest}.meta.json`, 'utf8')).sha256).toBe(sha(VF));
  });

  it('resumes with Range after the connection drops mid-body', async () => {
    state.faults = [{ dropAfter: 10_000 }];
    const dest = path.join(dir, 'geo.csv');
    const r = await download(`${base}/geo.csv`, dest, fast);

    expect(r.status).toBe('resumed');
    expect(r.bytes).toBe(GEO.length);
    expect(r.sha256).toBe(sha(GEO));
    expect(fs.readFileSync(dest).equals(GEO)).toBe(true);
    expect(state.requests).toHaveLength(2);
    expect(state.requests[1].range).toBe('bytes=10000-');
    expect(state.requests[1]['if-range']).toBe('"geo-v1"');
  });

  it('leaves only a .part after a failed run, and the next run resumes it', async () => {
    state.faults = [{ dropAfter: 7_000 }];
    const url = `${base}/geo.csv`;
    const dest = path.join(dir, 'geo.csv');
    await expect(download(url, dest, { ...fast, retries: 0 })).rejects.toThrow(/failed after 1 attempt: /);
    expect(fs.existsSync(dest)).toBe(false);
    expect(fs.statSync(`${dest}.part`).size).toBe(7_000);

    const r = await download(url, dest, fast);
    expect(r).toMatchObject({ status: 'resumed', bytes: GEO.length, sha256: sha(GEO) });
    expect(state.requests[1].range).toBe('bytes=7000-');
    expect(fs.readFileSync(dest).equals(GEO)).toBe(true);
  });

  it('resumes a .part left by an earlier killed run', async () => {
    const url = `${base}/geo.csv`;
    const dest = path.join(dir, 'geo.csv');
    fs.writeFileSync(`${dest}.part`, GEO.subarray(0, 12_345));
    fs.writeFileSync(`${dest}.part.meta.json`, JSON.stringify({ url, etag: '"geo-v1"', lastModified: state.lastModified }));

    const r = await download(url, dest, fast);
    expect(r).toMatchObject({ status: 'resumed', bytes: GEO.length, sha256: sha(GEO) });
    expect(state.requests).toHaveLength(1);
    expect(state.requests[0].range).toBe('bytes=12345-');
    expect(state.requests[0]['if-range']).toBe('"geo-v1"');
    expect(fs.readFileSync(dest).equals(GEO)).toBe(true);
    expect(fs.existsSync(`${dest}.part.meta.json`)).toBe(false);
  });

  it('restarts from zero when the part belongs to an older version (If-Range fails → 200)', async () => {
    const url = `${base}/geo.csv`;
    const dest = path.join(dir, 'geo.csv');
    fs.writeFileSync(`${dest}.part`, VF.subarray(0, 5_000));
    fs.writeFileSync(`${dest}.part.meta.json`, JSON.stringify({ url, etag: '"vf-old"' }));

    const r = await download(url, dest, fast);
    expect(r).toMatchObject({ status: 'downloaded', bytes: GEO.length, sha256: sha(GEO) });
    expect(state.requests[0]['if-range']).toBe('"vf-old"');
    expect(fs.readFileSync(dest).equals(GEO)).toBe(true);
  });

  it('restarts from zero on 416, and ignores a .part of unknown origin', async () => {
    const url = `${base}/geo.csv`;
    const dest = path.join(dir, 'geo.csv');
    fs.writeFileSync(`${dest}.part`, Buffer.concat([GEO, Buffer.from('trailing garbage')]));
    fs.writeFileSync(`${dest}.part.meta.json`, JSON.stringify({ url, etag: '"geo-v1"' }));
    const r = await download(url, dest, fast);
    expect(r).toMatchObject({ status: 'downloaded', sha256: sha(GEO) });
    expect(state.requests.map((h) => h.range)).toEqual([`bytes=${GEO.length + 16}-`, undefined]);

    const other = path.join(dir, 'other.csv');
    fs.writeFileSync(`${other}.part`, 'no meta, cannot be validated');
    expect((await download(url, other, fast)).sha256).toBe(sha(GEO));
    expect(state.requests[2].range).toBeUndefined();
    expect(fs.readFileSync(other).equals(GEO)).toBe(true);
  });

  it('never publishes a file shorter than the Content-Range total', async () => {
    const url = `${base}/geo.csv`;
    const dest = path.join(dir, 'geo.csv');
    fs.writeFileSync(`${dest}.part`, GEO.subarray(0, 20_000));
    fs.writeFileSync(`${dest}.part.meta.json`, JSON.stringify({ url, etag: '"geo-v1"' }));
    state.faults = [{ claimTotal: GEO.length + 1_000 }];
    await expect(download(url, dest, { ...fast, retries: 0 })).rejects.toThrow(
      `GET ${url} failed after 1 attempt: truncated body: received ${GEO.length} of ${GEO.length + 1_000} bytes`,
    );
    expect(fs.existsSync(dest)).toBe(false);
    expect(fs.statSync(`${dest}.part`).size).toBe(GEO.length);
  });

  it('retries on 5xx and succeeds', async () => {
    state.faults = [{ status: 503 }, { status: 502 }];
    const dest = path.join(dir, 'geo.csv');
    const r = await download(`${base}/geo.csv`, dest, fast);
    expect(r).toMatchObject({ status: 'downloaded', sha256: sha(GEO) });
    expect(state.requests).toHaveLength(3);
    expect(fs.readFileSync(dest).equals(GEO)).toBe(true);
  });

  it('honours Retry-After on 429, capped by maxDelayMs', async () => {
    state.faults = [{ status: 429, headers: { 'retry-after': '0' } }, { status: 503, headers: { 'retry-after': '3600' } }];
    const started = Date.now();
    // A 10 s backoff would time the test out: only Retry-After (0, then 3600 capped to 20 ms) keeps it fast.
    const r = await download(`${base}/geo.csv`, path.join(dir, 'geo.csv'), { backoffMs: 10_000, maxDelayMs: 20 });
    expect(r.sha256).toBe(sha(GEO));
    expect(state.requests).toHaveLength(3);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('fails with DownloadError after the last retry on persistent 503', async () => {
    state.faults = Array.from({ length: 10 }, () => ({ status: 503 }));
    const url = `${base}/geo.csv`;
    const dest = path.join(dir, 'geo.csv');
    const err = await download(url, dest, fast).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DownloadError);
    expect((err as DownloadError).message).toBe(`GET ${url} failed after 5 attempts: HTTP 503 Service Unavailable`);
    expect(err).toMatchObject({ url, status: 503, attempts: 5 });
    expect(state.requests).toHaveLength(5);
    expect(fs.existsSync(dest)).toBe(false);
  });

  it('fails at once on 404', async () => {
    state.faults = [{ status: 404 }];
    const url = `${base}/missing.csv`;
    const dest = path.join(dir, 'missing.csv');
    const err = await download(url, dest, fast).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DownloadError);
    expect((err as DownloadError).message).toBe(`GET ${url}: HTTP 404 Not Found (not retried)`);
    expect(err).toMatchObject({ status: 404, attempts: 1 });
    expect(state.requests).toHaveLength(1);
    expect(fs.existsSync(dest)).toBe(false);
  });

  it('times out a stalled transfer and resumes it', async () => {
    state.faults = [{ stallAfter: 4_096 }];
    const dest = path.join(dir, 'geo.csv');
    const r = await download(`${base}/geo.csv`, dest, { ...fast, timeoutMs: 300 });
    expect(r).toMatchObject({ status: 'resumed', sha256: sha(GEO) });
    expect(state.requests[1].range).toBe('bytes=4096-');
    expect(fs.readFileSync(dest).equals(GEO)).toBe(true);
  });

  it('reports a timeout clearly when every attempt stalls', async () => {
    state.faults = [{ stallAfter: 100 }, { stallAfter: 100 }];
    const url = `${base}/geo.csv`;
    await expect(download(url, path.join(dir, 'geo.csv'), { ...fast, retries: 1, timeoutMs: 150 })).rejects.toThrow(
      `GET ${url} failed after 2 attempts: no data received for 150 ms`,
    );
  });
});
