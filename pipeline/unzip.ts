// Streams the first entry of a ZIP archive to a file. The DGFiP publishes `valeursfoncieres-YYYY.txt.zip`
// (one ~500 MB text file); DuckDB cannot read ZIP, and loading it whole into memory is not an option.
import fs from 'node:fs';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';

const LOCAL_HEADER = 0x04034b50;

export async function unzipFirstEntry(zipPath: string, outPath: string): Promise<string> {
  const fd = fs.openSync(zipPath, 'r');
  const head = Buffer.alloc(30);
  try {
    if (fs.readSync(fd, head, 0, 30, 0) < 30 || head.readUInt32LE(0) !== LOCAL_HEADER) {
      throw new Error(`${zipPath} is not a ZIP archive`);
    }
  } finally {
    fs.closeSync(fd);
  }
  const method = head.readUInt16LE(8);
  const nameLength = head.readUInt16LE(26);
  const extraLength = head.readUInt16LE(28);
  const dataStart = 30 + nameLength + extraLength;
  if (method !== 8 && method !== 0) throw new Error(`${zipPath}: unsupported ZIP compression method ${method}`);

  const tmp = `${outPath}.tmp-${process.pid}`;
  const input = fs.createReadStream(zipPath, { start: dataStart });
  if (method === 8) {
    // inflateRaw stops at the end of the deflate stream, so the unknown compressed size (data descriptor) is harmless.
    await pipeline(input, zlib.createInflateRaw(), fs.createWriteStream(tmp));
  } else {
    const size = head.readUInt32LE(18);
    let left = size;
    const limit = new Transform({
      transform(chunk: Buffer, _enc, done) {
        const slice = chunk.subarray(0, Math.max(0, left));
        left -= slice.length;
        done(null, slice);
      },
    });
    await pipeline(input, limit, fs.createWriteStream(tmp));
  }
  fs.renameSync(tmp, outPath);
  return outPath;
}
