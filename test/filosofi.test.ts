// INSEE Filosofi source: the parser on the real 2020 commune file (secrecy markers, vintage from MED20, arrondissement
// lines), the text helpers, and the download of the published multi-entry ZIP from a loopback mirror into the lake.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { Lake } from '../lib/lake';
import { runSource } from '../pipeline/run';
import { filosofiValue, parseFilosofi } from '../pipeline/sources/filosofi';
import { communeCode, decodeText, parseFrenchNumber } from '../pipeline/sources/text';
import { FILOSOFI_SAMPLE, mirror, writeZip } from './helpers/income';
import { lakeGlob, queryParquet, tempDir } from './helpers/samples';

const sampleText = zlib.gunzipSync(fs.readFileSync(FILOSOFI_SAMPLE)).toString('utf8');
// Independent reading of the sample: plain split, no quotes in this file.
const rawLines = sampleText.trim().split('\n').map((l) => l.split(';'));
const header = rawLines[0];
const raw = new Map(rawLines.slice(1).map((cells) => [cells[0], Object.fromEntries(header.map((h, i) => [h, cells[i]]))]));

describe('Filosofi parser on the real 2020 commune file', () => {
  const parsed = parseFilosofi(decodeText(fs.readFileSync(FILOSOFI_SAMPLE)).text);
  const byCode = new Map(parsed.rows.map((r) => [r.code_commune, r]));

  it('takes the vintage from the MED20 column and keeps every commune line', () => {
    expect(parsed.annee).toBe(2020);
    expect(parsed.rows.length).toBe(raw.size);
    expect(parsed.rowsRead).toBe(raw.size);
    expect(parsed.anomalies.invalid_codgeo + parsed.anomalies.duplicate_codgeo).toBe(0);
  });

  it('turns statistical secrecy (s) and not available (nd) into nulls with the reason, and counts them', () => {
    const secret = [...raw.values()].filter((r) => r.MED20 === 's').length;
    const nd = [...raw.values()].filter((r) => r.MED20 === 'nd').length;
    expect(secret).toBeGreaterThan(0);
    expect(nd).toBeGreaterThan(0);
    expect(parsed.anomalies.med_secret).toBe(secret);
    expect(parsed.anomalies.med_not_available).toBe(nd);
    expect(parsed.rows.filter((r) => r.revenu_median_statut === 'secret').every((r) => r.revenu_median_uc === null)).toBe(true);
    const aSecret = [...raw.values()].find((r) => r.MED20 === 's')!;
    expect(byCode.get(aSecret.CODGEO)).toMatchObject({ revenu_median_uc: null, revenu_median_statut: 'secret' });
  });

  it('keeps the arrondissement lines (Lyon, Paris, Marseille) and the whole cities, and Corsican codes', () => {
    for (const code of ['69381', '69388', '75101', '75120', '13201', '69123', '75056', '2A004']) {
      expect(raw.has(code)).toBe(true);
      expect(byCode.get(code)).toMatchObject({ revenu_median_uc: Number(raw.get(code)!.MED20), nb_menages_fiscaux: Number(raw.get(code)!.NBMENFISC20), revenu_median_statut: 'ok' });
    }
    expect(byCode.get('69388')!.revenu_median_uc).not.toBe(byCode.get('69123')!.revenu_median_uc);
  });

  it('refuses a file whose vintage contradicts the one asked for, and one without MED', () => {
    expect(() => parseFilosofi(sampleText, 2021)).toThrow(/MED20/);
    expect(() => parseFilosofi('CODGEO;P20_POP\n01001;800\n')).toThrow(/Filosofi/);
  });
});

describe('text helpers', () => {
  it('reads decimal commas, spaces as thousands separators, and refuses text', () => {
    expect(parseFrenchNumber('19,6723304671415')).toBeCloseTo(19.6723304671415, 12);
    expect(parseFrenchNumber('-18,5')).toBe(-18.5);
    expect(parseFrenchNumber('1 032 431')).toBe(1032431);
    expect(parseFrenchNumber('0')).toBe(0);
    expect(parseFrenchNumber('s')).toBeUndefined();
    expect(filosofiValue('nd')).toEqual({ value: null, statut: 'not_available' });
    expect(filosofiValue('')).toEqual({ value: null, statut: 'missing' });
    expect(filosofiValue('12,5')).toEqual({ value: 12.5, statut: 'ok' });
  });

  it('pads commune codes lost by spreadsheets and keeps Corsican letters', () => {
    expect(communeCode('1001')).toBe('01001');
    expect(communeCode('2a004')).toBe('2A004');
    expect(communeCode('2C004')).toBeUndefined();
    expect(communeCode('123')).toBeUndefined();
  });

  it('decodes gzip, strips a BOM and falls back to Windows-1252', () => {
    expect(decodeText(zlib.gzipSync(Buffer.from('\uFEFFa;b'))).text).toBe('a;b');
    const latin = decodeText(Buffer.from('INSEE_C;LIBGEO\n23096;Guéret\n', 'latin1'));
    expect(latin.encoding).toBe('windows-1252');
    expect(latin.text).toContain('Guéret');
  });
});

describe('Filosofi download', () => {
  it('fetches the published ZIP from a mirror, extracts the commune entry among others and writes the lake partition', async () => {
    const site = tempDir('foncier-filosofi-site-');
    const csv = zlib.gunzipSync(fs.readFileSync(FILOSOFI_SAMPLE));
    // The real archive also holds other geographic levels and a metadata file: the commune entry is not the first one.
    writeZip(path.join(site, 'base-cc-filosofi-2020_CSV.zip'), [
      { name: 'meta_base-cc-filosofi-2020.csv', content: Buffer.from('COD_VAR;LIB_VAR\nMED20;Médiane\n') },
      { name: 'cc_filosofi_2020_DEP.csv', content: Buffer.from('CODGEO;NBMENFISC20;MED20\n01;280000;23880\n') },
      { name: 'cc_filosofi_2020_COM.csv', content: csv },
    ]);
    const server = await mirror(site);
    try {
      const data = tempDir();
      const [outcome] = await runSource({ source: 'filosofi', baseUrl: server.base, annees: [2020], departements: [], dataRoot: data });
      expect(outcome.status).toBe('imported');
      expect(server.requests).toEqual(['/mirror/base-cc-filosofi-2020_CSV.zip']);
      const p = new Lake(data).readManifest().sources.filosofi.partitions!['FR/2020'];
      expect(p.vintage).toBe('2025-12-10');
      expect(p.anomalies.med_secret).toBe([...raw.values()].filter((r) => r.MED20 === 's').length);
      const rows = await queryParquet(`select count(*) as n, count(*) filter (revenu_median_statut = 'secret') as secret,
        max(revenu_median_uc) filter (code_commune = '69388') as lyon8 from ${lakeGlob(data, 'filosofi')}`);
      expect(rows[0]).toEqual({ n: raw.size, secret: p.anomalies.med_secret, lyon8: Number(raw.get('69388')!.MED20) });
      const again = await runSource({ source: 'filosofi', baseUrl: server.base, annees: [2020], departements: [], dataRoot: data });
      expect(again[0].status).toBe('unchanged');
    } finally {
      await server.close();
    }
  });
});
