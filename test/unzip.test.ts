// ZIP extraction (pipeline/unzip.ts): the DGFiP's single-entry archives and INSEE's multi-entry ones, deflated or
// stored, written by the test's own archiver and compared byte for byte.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { unzipEntry, unzipFirstEntry } from '../pipeline/unzip';
import { writeZip } from './helpers/income';
import { tempDir } from './helpers/samples';

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
});
