// Test helpers for the income and rent sources: the real samples' paths, a loopback HTTP mirror of a folder, a ZIP
// writer (INSEE ships Filosofi as a multi-entry archive) and the import of the samples into a data folder.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import zlib from 'node:zlib';
import { samplesDir } from '../../lib/config';
import { buildMarts } from '../../marts/runner';
import { runSource } from '../../pipeline/run';
import { ANIL_FILES } from '../../pipeline/sources/anil';
import { afterAll, beforeAll } from 'vitest';
import { openMemory, type DuckDBConnection } from '../../lib/duck';
import { tempDir } from './samples';

/** One DuckDB connection for a test file's parsers (which run in DuckDB), opened before its tests, closed after. */
export function testConnection(): { conn: DuckDBConnection } {
  const holder = {} as { conn: DuckDBConnection };
  let close = () => {};
  beforeAll(async () => {
    const { instance, conn } = await openMemory({ threads: 1 });
    holder.conn = conn;
    close = () => (conn.closeSync(), instance.closeSync());
  });
  afterAll(() => close());
  return holder;
}

export const FILOSOFI_SAMPLE = path.join(samplesDir, 'filosofi', 'cc_filosofi_2020_COM.csv.gz');
export const ANIL_SAMPLES = {
  appartement: path.join(samplesDir, 'loyers_anil', 'lyon_pred-appartements.csv'),
  appartement_t1_t2: path.join(samplesDir, 'loyers_anil', 'lyon_pred-app_t1_t2.csv'),
  appartement_t3_plus: path.join(samplesDir, 'loyers_anil', 'lyon_pred-app_t3.csv'),
  maison: path.join(samplesDir, 'loyers_anil', 'lyon_pred-maison.csv'),
} as const;

/** Serves `root` on a loopback port under /mirror/, with Last-Modified; records the paths asked for. */
export async function mirror(root: string): Promise<{ base: string; requests: string[]; close: () => Promise<void> }> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(req.url!);
    const file = path.join(root, decodeURIComponent(req.url!.replace(/^\/mirror\//, '')));
    if (!fs.existsSync(file) || fs.statSync(file).isDirectory()) return void res.writeHead(404).end();
    const body = fs.readFileSync(file);
    res.writeHead(200, { 'content-length': body.length, 'last-modified': 'Wed, 10 Dec 2025 08:00:00 GMT' }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mirror`,
    requests,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** A ZIP archive (deflated entries, or stored ones), written like common archivers do (local headers, central directory, end record). */
export function writeZip(file: string, entries: Array<{ name: string; content: Buffer; stored?: boolean }>): void {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const method = e.stored ? 0 : 8;
    const data = e.stored ? e.content : zlib.deflateRawSync(e.content);
    const name = Buffer.from(e.name);
    const crc = zlib.crc32(e.content);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(method, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(e.content.length, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(method, 10);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(e.content.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, data);
    centrals.push(central, name);
    offset += 30 + name.length + data.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  fs.writeFileSync(file, Buffer.concat([...locals, cd, end]));
}

/** A local tree with the real samples in the sources' layouts: Filosofi 2020 and the (Lyon) ANIL files as edition `anilYear`. */
export function incomeSampleTree(anilYear: number, dir = tempDir('foncier-income-tree-')): string {
  fs.copyFileSync(FILOSOFI_SAMPLE, path.join(dir, 'cc_filosofi_2020_COM.csv.gz'));
  fs.mkdirSync(path.join(dir, String(anilYear)));
  for (const [segment, file] of Object.entries(ANIL_SAMPLES)) fs.copyFileSync(file, path.join(dir, String(anilYear), ANIL_FILES[segment as keyof typeof ANIL_FILES]));
  return dir;
}

/** Imports the real Filosofi and ANIL samples into an existing data folder and rebuilds its marts. */
export async function addIncomeSamples(dataRoot: string, anilYear = 2024): Promise<void> {
  const tree = incomeSampleTree(anilYear);
  for (const [source, annee] of [['filosofi', 2020], ['anil', anilYear]] as const) {
    const out = await runSource({ source, fromDir: tree, annees: [annee], departements: [], dataRoot });
    const failed = out.filter((o) => o.status === 'failed');
    if (failed.length) throw new Error(failed.map((o) => o.error).join('; '));
  }
  await buildMarts({ dataRoot });
}
