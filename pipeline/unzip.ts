// Streams entries of a ZIP archive to files. The DGFiP publishes `valeursfoncieres-YYYY.txt.zip` (one ~500 MB text
// file), INSEE and the CSTB multi-entry archives; DuckDB cannot read ZIP, and loading one whole into memory is not an
// option. yauzl reads the central directory (ZIP64 included: archives and entries over 4 GB); the entry is inflated
// here in 1 MiB chunks (yauzl's own stream inflates and writes in 16 KiB ones, which costs about twice the CPU of the
// inflation itself), and its CRC-32 and size are checked, so a corrupt archive fails loudly instead of importing.
import fs from 'node:fs';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import yauzl, { type Entry, type ZipFile } from 'yauzl';

const CHUNK = 1 << 20;

/** Streams the archive's first file entry to outPath (through a temporary file renamed on success). */
export async function unzipFirstEntry(zipPath: string, outPath: string): Promise<string> {
  return withZip(zipPath, async (zip) => {
    const entries = await listEntries(zip);
    const entry = entries.find((e) => !e.fileName.endsWith('/'));
    if (!entry) throw new Error(`${zipPath} has no file entry (entries: ${entries.map((e) => e.fileName).join(', ')})`);
    return writeEntry(zipPath, zip, entry, outPath);
  });
}

/** Streams the entry whose name ends with `name` (case-insensitive; INSEE archives hold several levels) to outPath. */
export async function unzipEntry(zipPath: string, name: string, outPath: string): Promise<string> {
  const [out] = await unzipEntries(zipPath, [{ name, outPath }]);
  if (out === undefined) throw new Error(`${zipPath} has no entry ${name} (entries: ${(await withZip(zipPath, listEntries)).map((e) => e.fileName).join(', ')})`);
  return out;
}

/**
 * Streams several entries out of one archive (opened once; names matched as unzipEntry does), one after the other.
 * Returns each one's output path, or undefined for a name the archive lacks.
 */
export async function unzipEntries(zipPath: string, wanted: Array<{ name: string; outPath: string }>): Promise<Array<string | undefined>> {
  return withZip(zipPath, async (zip) => {
    const entries = (await listEntries(zip)).filter((e) => !e.fileName.endsWith('/'));
    const out: Array<string | undefined> = [];
    for (const { name, outPath } of wanted) {
      const entry = entries.find((e) => e.fileName.toLowerCase().endsWith(name.toLowerCase()));
      out.push(entry ? await writeEntry(zipPath, zip, entry, outPath) : undefined);
    }
    return out;
  });
}

async function withZip<T>(zipPath: string, use: (zip: ZipFile) => Promise<T>): Promise<T> {
  let zip: ZipFile;
  try {
    zip = await yauzl.openPromise(zipPath, { lazyEntries: true, autoClose: false, validateEntrySizes: true, strictFileNames: false });
  } catch (e) {
    const message = (e as Error).message;
    if (/central directory|signature|zip/i.test(message)) throw new Error(`${zipPath} is not a ZIP archive (${message})`);
    throw e;
  }
  try {
    return await use(zip);
  } finally {
    zip.close();
  }
}

function listEntries(zip: ZipFile): Promise<Entry[]> {
  return new Promise<Entry[]>((resolve, reject) => {
    const entries: Entry[] = [];
    zip.on('entry', (e: Entry) => {
      entries.push(e);
      zip.readEntry();
    });
    zip.on('end', () => resolve(entries));
    zip.on('error', reject);
    zip.readEntry();
  });
}

async function writeEntry(zipPath: string, zip: ZipFile, entry: Entry, outPath: string): Promise<string> {
  const tmp = `${outPath}.tmp-${process.pid}`;
  let crc = 0;
  let size = 0;
  const check = new Transform({
    transform(chunk: Buffer, _enc, done) {
      crc = zlib.crc32(chunk, crc);
      size += chunk.length;
      done(null, chunk);
    },
  });
  try {
    // Deflated entries: the raw bytes, inflated here in large chunks; other methods (stored) through yauzl.
    const deflated = entry.compressionMethod === 8;
    const raw: Readable = await zip.openReadStreamPromise(entry, deflated ? { decompress: false } : {});
    const stages = deflated ? [raw, zlib.createInflateRaw({ chunkSize: CHUNK })] : [raw];
    await pipeline([...stages, check, fs.createWriteStream(tmp, { highWaterMark: CHUNK })]);
    if (crc >>> 0 !== entry.crc32 >>> 0) {
      throw new Error(`${zipPath}: CRC-32 mismatch on ${entry.fileName} (expected ${hex(entry.crc32)}, got ${hex(crc)}): the archive is corrupt`);
    }
    if (size !== entry.uncompressedSize) {
      throw new Error(`${zipPath}: ${entry.fileName} inflated to ${size} bytes instead of ${entry.uncompressedSize}: the archive is corrupt`);
    }
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    const message = (e as Error).message;
    throw message.startsWith(zipPath) ? e : new Error(`${zipPath}: cannot extract ${entry.fileName}: ${message}`);
  }
  fs.renameSync(tmp, outPath);
  return outPath;
}

const hex = (n: number) => (n >>> 0).toString(16).padStart(8, '0');
