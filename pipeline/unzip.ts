// Streams one entry of a ZIP archive to a file. The DGFiP publishes `valeursfoncieres-YYYY.txt.zip`
// (one ~500 MB text file); DuckDB cannot read ZIP, and loading it whole into memory is not an option.
import fs from 'node:fs';
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
  const dataStart = 30 + head.readUInt16LE(26) + head.readUInt16LE(28);
  // A deflate stream ends by itself, so its size may be unknown here (data descriptor); a stored one is bounded.
  return writeEntry(zipPath, dataStart, method, method === 0 ? head.readUInt32LE(18) : undefined, outPath);
}

/** Writes the entry's data starting at `start` to outPath, through a temporary file renamed on success. */
async function writeEntry(zipPath: string, start: number, method: number, compressedSize: number | undefined, outPath: string): Promise<string> {
  if (method !== 8 && method !== 0) throw new Error(`${zipPath}: unsupported ZIP compression method ${method}`);
  const tmp = `${outPath}.tmp-${process.pid}`;
  if (compressedSize === 0) fs.writeFileSync(tmp, '');
  else {
    const input = fs.createReadStream(zipPath, { start, ...(compressedSize !== undefined ? { end: start + compressedSize - 1 } : {}) });
    await (method === 8 ? pipeline(input, zlib.createInflateRaw(), fs.createWriteStream(tmp)) : pipeline(input, fs.createWriteStream(tmp)));
  }
  fs.renameSync(tmp, outPath);
  return outPath;
}

const CENTRAL_HEADER = 0x02014b50;
const END_OF_CENTRAL_DIR = 0x06054b50;

/** Streams the entry whose name ends with `name` (INSEE archives hold several levels) to a file, via the central directory. */
export async function unzipEntry(zipPath: string, name: string, outPath: string): Promise<string> {
  const fd = fs.openSync(zipPath, 'r');
  let offset: number;
  let method: number;
  let compressedSize: number;
  try {
    const size = fs.fstatSync(fd).size;
    const tailLength = Math.min(size, 65_557); // end record (22 bytes) plus the longest comment
    const tail = Buffer.alloc(tailLength);
    fs.readSync(fd, tail, 0, tailLength, size - tailLength);
    let eocd = -1;
    for (let i = tailLength - 22; i >= 0; i--) if (tail.readUInt32LE(i) === END_OF_CENTRAL_DIR) { eocd = i; break; }
    if (eocd < 0) throw new Error(`${zipPath} is not a ZIP archive`);
    const entries = tail.readUInt16LE(eocd + 10);
    const cdSize = tail.readUInt32LE(eocd + 12);
    const cd = Buffer.alloc(cdSize);
    fs.readSync(fd, cd, 0, cdSize, tail.readUInt32LE(eocd + 16));
    const names: string[] = [];
    let found: { method: number; compressedSize: number; localOffset: number } | undefined;
    for (let p = 0, i = 0; i < entries && cd.readUInt32LE(p) === CENTRAL_HEADER; i++) {
      const nameLength = cd.readUInt16LE(p + 28);
      const entryName = cd.toString('utf8', p + 46, p + 46 + nameLength);
      names.push(entryName);
      if (!found && entryName.toLowerCase().endsWith(name.toLowerCase())) {
        found = { method: cd.readUInt16LE(p + 10), compressedSize: cd.readUInt32LE(p + 20), localOffset: cd.readUInt32LE(p + 42) };
      }
      p += 46 + nameLength + cd.readUInt16LE(p + 30) + cd.readUInt16LE(p + 32);
    }
    if (!found) throw new Error(`${zipPath} has no entry ${name} (entries: ${names.join(', ')})`);
    const local = Buffer.alloc(30);
    fs.readSync(fd, local, 0, 30, found.localOffset);
    offset = found.localOffset + 30 + local.readUInt16LE(26) + local.readUInt16LE(28);
    method = found.method;
    compressedSize = found.compressedSize;
  } finally {
    fs.closeSync(fd);
  }
  return writeEntry(zipPath, offset, method, compressedSize, outPath);
}
