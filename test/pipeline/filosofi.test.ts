// INSEE Filosofi source: the parser on the real 2020 commune file (secrecy markers, vintage from MED20, arrondissement
// lines), the text helpers, and the download of the published multi-entry ZIP from a loopback mirror into the lake.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { all, lit, one } from '../../lib/duck';
import { Lake } from '../../lib/lake';
import { runSource } from '../../pipeline/run';
import { filosofiStatutSql, stageFilosofi } from '../../pipeline/sources/filosofi';
import { communeCodeSql, frenchNumberSql } from '../../pipeline/sources/text';
import { stageFile } from '../../pipeline/stage';
import { FILOSOFI_SAMPLE, mirror, testConnection, writeZip } from '../helpers/income';
import { lakeGlob, queryParquet, tempDir } from '../helpers/samples';

// The parsing runs in DuckDB: these adapters stage a file (or evaluate one SQL helper) and read the result back.
const duck = testConnection();
interface Row { code_commune: string; nb_menages_fiscaux: number | null; revenu_median_uc: number | null; revenu_median_statut: string }
async function parseFilosofi(file: string, fileYear?: number) {
  const parsed = await stageFilosofi(duck.conn, file, fileYear);
  return { ...parsed, rows: await all<Row>(duck.conn, `SELECT * FROM ${parsed.table}`) };
}
const textFile = (content: string | Buffer) => {
  const f = path.join(tempDir(), 'f.csv');
  fs.writeFileSync(f, content);
  return f;
};
const sqlOf = async (expr: (e: string) => string, s: string) => (await one<{ v: unknown }>(duck.conn, `SELECT ${expr(`nullif(trim(${lit(s)}), '')`)} AS v`))!.v;
const parseFrenchNumber = async (s: string) => ((await sqlOf(frenchNumberSql, s)) as number | null) ?? undefined;
const communeCode = async (s: string) => ((await sqlOf(communeCodeSql, s)) as string | null) ?? undefined;
const filosofiValue = async (s: string) => ({ value: (await sqlOf(frenchNumberSql, s)) as number | null, statut: await sqlOf(filosofiStatutSql, s) });

const sampleText = zlib.gunzipSync(fs.readFileSync(FILOSOFI_SAMPLE)).toString('utf8');
// Independent reading of the sample: plain split, no quotes in this file.
const rawLines = sampleText.trim().split('\n').map((l) => l.split(';'));
const header = rawLines[0];
const raw = new Map(rawLines.slice(1).map((cells) => [cells[0], Object.fromEntries(header.map((h, i) => [h, cells[i]]))]));

describe('Filosofi parser on the real 2020 commune file', () => {
  let parsed: Awaited<ReturnType<typeof parseFilosofi>>;
  let byCode: Map<string, Row>;
  beforeAll(async () => {
    parsed = await parseFilosofi(FILOSOFI_SAMPLE);
    byCode = new Map(parsed.rows.map((r) => [r.code_commune, r]));
  });

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

  it('refuses a file whose vintage contradicts the one asked for, and one without MED', async () => {
    await expect(parseFilosofi(textFile(sampleText), 2021)).rejects.toThrow(/MED20/);
    await expect(parseFilosofi(textFile('CODGEO;P20_POP\n01001;800\n'))).rejects.toThrow(/Filosofi/);
  });
});

describe('text helpers', () => {
  it('reads decimal commas, spaces as thousands separators, and refuses text', async () => {
    expect(await parseFrenchNumber('19,6723304671415')).toBeCloseTo(19.6723304671415, 12);
    expect(await parseFrenchNumber('-18,5')).toBe(-18.5);
    expect(await parseFrenchNumber('1 032 431')).toBe(1032431);
    expect(await parseFrenchNumber('0')).toBe(0);
    expect(await parseFrenchNumber('s')).toBeUndefined();
    expect(await parseFrenchNumber('nan')).toBeUndefined();
    expect(await filosofiValue('nd')).toEqual({ value: null, statut: 'not_available' });
    expect(await filosofiValue('')).toEqual({ value: null, statut: 'missing' });
    expect(await filosofiValue('12,5')).toEqual({ value: 12.5, statut: 'ok' });
  });

  it('pads commune codes lost by spreadsheets and keeps Corsican letters', async () => {
    expect(await communeCode('1001')).toBe('01001');
    expect(await communeCode('2a004')).toBe('2A004');
    expect(await communeCode('2C004')).toBeUndefined();
    expect(await communeCode('123')).toBeUndefined();
  });

  it('decodes gzip, strips a BOM and falls back to Windows-1252', async () => {
    const gz = path.join(tempDir(), 'a.csv.gz');
    fs.writeFileSync(gz, zlib.gzipSync(Buffer.from('\uFEFFa;b\n1;2\n')));
    expect((await stageFile(duck.conn, { file: gz, table: 't', columns: { a: 'VARCHAR' } })).header).toEqual(['a', 'b']);
    const latin = await stageFile(duck.conn, { file: textFile(Buffer.from('INSEE_C;LIBGEO\n23096;Guéret\n', 'latin1')), table: 't', columns: { libgeo: 'VARCHAR' } });
    expect(latin.encoding).toBe('windows-1252');
    expect(await all(duck.conn, 'SELECT libgeo FROM t')).toEqual([{ libgeo: 'Guéret' }]);
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
