// Streams one entry of a ZIP archive to a file. The DGFiP publishes `valeursfoncieres-YYYY.txt.zip` (one ~500 MB text
// file), INSEE multi-entry archives; DuckDB cannot read ZIP, and loading one whole into memory is not an option.
// yauzl reads the central directory (ZIP64 included: archives and entries over 4 GB) and inflates as a stream; it does
// not check CRC-32, so the extracted bytes are checked here and a corrupt archive fails loudly instead of importing.
import fs from 'node:fs';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import yauzl, { type Entry, type ZipFile } from 'yauzl';

/** Streams the archive's first file entry to outPath (through a temporary file renamed on success). */
export async function unzipFirstEntry(zipPath: string, outPath: string): Promise<string> {
  return extract(zipPath, () => true, outPath, 'no file entry');
}

/** Streams the entry whose name ends with `name` (case-insensitive; INSEE archives hold several levels) to outPath. */
export async function unzipEntry(zipPath: string, name: string, outPath: string): Promise<string> {
  const wanted = name.toLowerCase();
  return extract(zipPath, (entryName) => entryName.toLowerCase().endsWith(wanted), outPath, `no entry ${name}`);
}

async function open(zipPath: string): Promise<ZipFile> {
  try {
    return await yauzl.openPromise(zipPath, { lazyEntries: true, autoClose: false, validateEntrySizes: true, strictFileNames: false });
  } catch (e) {
    const message = (e as Error).message;
    if (/central directory|signature|zip/i.test(message)) throw new Error(`${zipPath} is not a ZIP archive (${message})`);
    throw e;
  }
}

async function extract(zipPath: string, pick: (name: string) => boolean, outPath: string, missing: string): Promise<string> {
  const zip = await open(zipPath);
  try {
    const names: string[] = [];
    const entry = await new Promise<Entry | undefined>((resolve, reject) => {
      zip.on('entry', (e: Entry) => {
        if (!e.fileName.endsWith('/') && pick(e.fileName)) return resolve(e);
        names.push(e.fileName);
        zip.readEntry();
      });
      zip.on('end', () => resolve(undefined));
      zip.on('error', reject);
      zip.readEntry();
    });
    if (!entry) throw new Error(`${zipPath} has ${missing} (entries: ${names.join(', ')})`);
    const tmp = `${outPath}.tmp-${process.pid}`;
    let crc = 0;
    const check = new Transform({
      transform(chunk: Buffer, _enc, done) {
        crc = zlib.crc32(chunk, crc);
        done(null, chunk);
      },
    });
    try {
      await pipeline(await zip.openReadStreamPromise(entry), check, fs.createWriteStream(tmp));
      if (crc >>> 0 !== entry.crc32 >>> 0) {
        throw new Error(`${zipPath}: CRC-32 mismatch on ${entry.fileName} (expected ${hex(entry.crc32)}, got ${hex(crc)}): the archive is corrupt`);
      }
    } catch (e) {
      fs.rmSync(tmp, { force: true });
      const message = (e as Error).message;
      throw message.startsWith(zipPath) ? e : new Error(`${zipPath}: cannot extract ${entry.fileName}: ${message}`);
    }
    fs.renameSync(tmp, outPath);
    return outPath;
  } finally {
    zip.close();
  }
}

const hex = (n: number) => (n >>> 0).toString(16).padStart(8, '0');
