// ZIP extraction (pipeline/unzip.ts): the DGFiP's single-entry archives and INSEE's multi-entry ones, deflated or
// stored, written by the test's own archiver and compared byte for byte; ZIP64 records (archives over 4 GB) and a
// corrupt archive (CRC-32 mismatch).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { unzipEntry, unzipFirstEntry } from '../../pipeline/unzip';
import { writeZip } from '../helpers/income';
import { tempDir } from '../helpers/samples';

const text = Buffer.from('id_mutation|date_mutation\n'.repeat(2000) + 'é;à;ç\n');

describe('unzip', () => {
  for (const stored of [false, true]) {
    it(`extracts the first entry and a named entry, ${stored ? 'stored' : 'deflated'}`, async () => {
      const dir = tempDir();
      const zip = path.join(dir, 'a.zip');
      writeZip(zip, [
        { name: 'valeursfoncieres-2024.txt', content: text, stored },
        { name: 'meta/cc_filosofi_2020_COM.csv', content: Buffer.from('CODGEO;MED20\n01001;22000\n'), stored },
        { name: 'empty.csv', content: Buffer.alloc(0), stored },
      ]);
      expect(fs.readFileSync(await unzipFirstEntry(zip, path.join(dir, 'first.txt')))).toEqual(text);
      expect(fs.readFileSync(await unzipEntry(zip, 'cc_filosofi_2020_COM.csv', path.join(dir, 'com.csv'))).toString()).toBe('CODGEO;MED20\n01001;22000\n');
      expect(fs.readFileSync(await unzipEntry(zip, 'EMPTY.CSV', path.join(dir, 'empty.csv'))).length).toBe(0);
      expect(fs.readdirSync(dir).filter((f) => f.includes('.tmp-'))).toEqual([]);
    });
  }

  it('names what is wrong: not an archive, or no such entry (with the entries it has)', async () => {
    const dir = tempDir();
    const notZip = path.join(dir, 'x.zip');
    fs.writeFileSync(notZip, 'this is not a zip archive, just text long enough');
    await expect(unzipFirstEntry(notZip, path.join(dir, 'o'))).rejects.toThrow(/is not a ZIP archive/);
    await expect(unzipEntry(notZip, 'a.csv', path.join(dir, 'o'))).rejects.toThrow(/is not a ZIP archive/);
    const zip = path.join(dir, 'a.zip');
    writeZip(zip, [{ name: 'a.csv', content: Buffer.from('x') }]);
    await expect(unzipEntry(zip, 'b.csv', path.join(dir, 'o'))).rejects.toThrow(/has no entry b\.csv \(entries: a\.csv\)/);
    expect(fs.existsSync(path.join(dir, 'o'))).toBe(false);
  });

  it('reads ZIP64 records: sizes, local offset and central directory found through the ZIP64 end record', async () => {
    const dir = tempDir();
    const zip = path.join(dir, 'z64.zip');
    const content = Buffer.from('INSEE_C;LIBGEO\n23096;Guéret\n'.repeat(50));
    writeZip64(zip, 'pred-app-mef-dhup.csv', content);
    expect(fs.readFileSync(await unzipEntry(zip, 'pred-app-mef-dhup.csv', path.join(dir, 'a.csv')))).toEqual(content);
    expect(fs.readFileSync(await unzipFirstEntry(zip, path.join(dir, 'b.csv')))).toEqual(content);
  });

  it.skipIf(!hasZipCli())('reads an archive the zip tool wrote in ZIP64 format (zip -fz)', async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'cc_filosofi_2020_COM.csv'), text);
    execFileSync('zip', ['-q', '-fz', 'z64.zip', 'cc_filosofi_2020_COM.csv'], { cwd: dir });
    // the tool did write ZIP64 records: the end-of-central-directory offset is 0xFFFFFFFF
    const bytes = fs.readFileSync(path.join(dir, 'z64.zip'));
    expect(bytes.readUInt32LE(bytes.length - 22 + 16)).toBe(0xffffffff);
    expect(fs.readFileSync(await unzipEntry(path.join(dir, 'z64.zip'), 'cc_filosofi_2020_COM.csv', path.join(dir, 'out.csv')))).toEqual(text);
  });

  for (const stored of [true, false]) {
    it(`fails loudly on a corrupt ${stored ? 'stored' : 'deflated'} entry and leaves no output`, async () => {
      const dir = tempDir();
      const zip = path.join(dir, 'bad.zip');
      writeZip(zip, [{ name: 'valeursfoncieres-2024.txt', content: text, stored }]);
      const bytes = fs.readFileSync(zip);
      // one byte of the entry's data changed (30-byte local header, 25-byte name), sizes untouched
      bytes[30 + 25 + 100] ^= 0x01;
      fs.writeFileSync(zip, bytes);
      await expect(unzipFirstEntry(zip, path.join(dir, 'out.txt'))).rejects.toThrow(stored ? /CRC-32 mismatch on valeursfoncieres-2024\.txt/ : /bad\.zip/);
      expect(fs.readdirSync(dir)).toEqual(['bad.zip']);
    });
  }
});

function hasZipCli(): boolean {
  try {
    execFileSync('zip', ['-v'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** One stored entry in ZIP64 form (APPNOTE 4.3.14–4.3.15, 4.5.3): every 32-bit size and offset is 0xFFFFFFFF. */
function writeZip64(file: string, entryName: string, content: Buffer): void {
  const name = Buffer.from(entryName);
  const crc = zlib.crc32(content);
  const extra = (fields: bigint[]) => {
    const b = Buffer.alloc(4 + 8 * fields.length);
    b.writeUInt16LE(0x0001, 0);
    b.writeUInt16LE(8 * fields.length, 2);
    fields.forEach((f, i) => b.writeBigUInt64LE(f, 4 + 8 * i));
    return b;
  };
  const size = BigInt(content.length);
  const localExtra = extra([size, size]);
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(45, 4);
  local.writeUInt32LE(crc, 14);
  local.writeUInt32LE(0xffffffff, 18);
  local.writeUInt32LE(0xffffffff, 22);
  local.writeUInt16LE(name.length, 26);
  local.writeUInt16LE(localExtra.length, 28);
  const centralExtra = extra([size, size, 0n]);
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE(45, 4);
  central.writeUInt16LE(45, 6);
  central.writeUInt32LE(crc, 16);
  central.writeUInt32LE(0xffffffff, 20);
  central.writeUInt32LE(0xffffffff, 24);
  central.writeUInt16LE(name.length, 28);
  central.writeUInt16LE(centralExtra.length, 30);
  central.writeUInt32LE(0xffffffff, 42);
  const cdOffset = 30 + name.length + localExtra.length + content.length;
  const cd = Buffer.concat([central, name, centralExtra]);
  const end64 = Buffer.alloc(56);
  end64.writeUInt32LE(0x06064b50, 0);
  end64.writeBigUInt64LE(44n, 4);
  end64.writeUInt16LE(45, 12);
  end64.writeUInt16LE(45, 14);
  end64.writeBigUInt64LE(1n, 24);
  end64.writeBigUInt64LE(1n, 32);
  end64.writeBigUInt64LE(BigInt(cd.length), 40);
  end64.writeBigUInt64LE(BigInt(cdOffset), 48);
  const locator = Buffer.alloc(20);
  locator.writeUInt32LE(0x07064b50, 0);
  locator.writeBigUInt64LE(BigInt(cdOffset + cd.length), 8);
  locator.writeUInt32LE(1, 16);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(0xffff, 8);
  end.writeUInt16LE(0xffff, 10);
  end.writeUInt32LE(0xffffffff, 12);
  end.writeUInt32LE(0xffffffff, 16);
  fs.writeFileSync(file, Buffer.concat([local, name, localExtra, content, cd, end64, locator, end]));
}
