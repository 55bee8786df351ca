// ANIL rent-map source: the parser on the real Lyon extracts (dotted column names, decimal commas, CRLF and a last line
// without newline, "maille" rows sharing a zone), a Windows-1252 national-style file, and the four files of an edition
// downloaded from a loopback mirror into the lake and the loyers_communes mart.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { samplesDir } from '../../lib/config';
import { all } from '../../lib/duck';
import { buildMarts } from '../../marts/runner';
import { Lake } from '../../lib/lake';
import { runSource } from '../../pipeline/run';
import { ANIL_FILES, stageAnil, type AnilSegment } from '../../pipeline/sources/anil';
import { ANIL_SAMPLES, mirror, testConnection } from '../helpers/income';
import { queryParquet, sampleTree, tempDir } from '../helpers/samples';

// The parsing runs in DuckDB: this adapter stages a file and reads the staged rows back.
const duck = testConnection();
async function parseAnil(file: string, segment: AnilSegment, millesime: number) {
  const parsed = await stageAnil(duck.conn, file, segment, millesime);
  return { ...parsed, rows: await all<Record<string, string | number | null>>(duck.conn, `SELECT * FROM ${parsed.table}`) };
}

/** Independent reading of a sample: the header's positions, the comma turned into a dot. */
function rawRows(file: string): Array<Record<string, string>> {
  const [head, ...lines] = fs.readFileSync(file, 'utf8').split(/\r?\n/).filter(Boolean).map((l) => l.split(';'));
  return lines.map((cells) => Object.fromEntries(head.map((h, i) => [h, cells[i]])));
}
const num = (s: string) => Number(s.replace(',', '.'));

describe('ANIL parser on the real Lyon extracts', () => {
  for (const [segment, file] of Object.entries(ANIL_SAMPLES) as Array<[AnilSegment, string]>) {
    it(`reads every arrondissement of ${path.basename(file)} with its rent, interval, level, counts and R²`, async () => {
      const raw = rawRows(file);
      const parsed = await parseAnil(file, segment, 2024);
      expect(parsed.rows.length).toBe(raw.length);
      for (const r of raw) {
        const row = parsed.rows.find((x) => x.code_commune === r.INSEE_C)!;
        expect(row).toMatchObject({
          segment, millesime: 2024, id_zone: r.id_zone, niveau_prediction: r.TYPPRED, libelle_commune: r.LIBGEO,
          nb_observations_commune: Number(r.nbobs_com), nb_observations_maille: Number(r.nbobs_mail),
        });
        expect(row.loyer_m2_cc).toBeCloseTo(num(r.loypredm2), 12);
        expect(row.loyer_m2_cc_bas).toBeCloseTo(num(r['lwr.IPm2']), 12);
        expect(row.loyer_m2_cc_haut).toBeCloseTo(num(r['upr.IPm2']), 12);
        expect(row.r2_ajuste).toBeCloseTo(num(r.R2_adj), 12);
      }
      expect(parsed.anomalies.prediction_not_commune).toBe(raw.filter((r) => r.TYPPRED !== 'commune').length);
    });
  }

  it('keys rows by INSEE_C even when maille rows share a zone id and a rent (houses)', async () => {
    const raw = rawRows(ANIL_SAMPLES.maison);
    const parsed = await parseAnil(ANIL_SAMPLES.maison, 'maison', 2024);
    const zones = raw.map((r) => r.id_zone);
    expect(new Set(zones).size).toBeLessThan(zones.length);
    expect(new Set(parsed.rows.map((r) => r.code_commune)).size).toBe(raw.length);
    expect(parsed.anomalies.duplicate_insee).toBe(0);
  });

  it('reads a Windows-1252 file with quoted fields, skips bad codes and rows without rent, and counts them', async () => {
    const text = ['"id_zone";"INSEE_C";"LIBGEO";"EPCI";"DEP";"REG";"loypredm2";"lwr.IPm2";"upr.IPm2";"TYPPRED";"nbobs_com";"nbobs_mail";"R2_adj"',
      '"12";"23096";"Guéret";"200034379";"23";"75";"8,41";"6,1";"11,5";"commune";"45";"300";"0,61"',
      '"13";"XX";"Nowhere";"";"";"";"8";"6";"11";"commune";"1";"1";"0,5"',
      '"14";"2B033";"Bastia";"";"2B";"94";"NA";"";"";"commune";"3";"3";""',
      '"15";"23096";"Guéret";"";"";"";"9";"6";"11";"commune";"1";"1";"0,5"'].join('\r\n');
    const file = path.join(tempDir(), 'pred-app-mef-dhup.csv');
    fs.writeFileSync(file, Buffer.from(text, 'latin1'));
    const parsed = await parseAnil(file, 'appartement', 2025);
    expect(parsed.encoding).toBe('windows-1252');
    expect(parsed.rows).toHaveLength(1);
    expect(parsed.rows[0]).toMatchObject({ code_commune: '23096', libelle_commune: 'Guéret', loyer_m2_cc: 8.41, r2_ajuste: 0.61 });
    expect(parsed.anomalies).toMatchObject({ invalid_insee: 1, missing_loyer: 1, duplicate_insee: 1 });
  });
});

describe('ANIL parser on the complete national file of the first ("2018") edition', () => {
  it('reads the older column names and pads the codes that lost their leading zero', async () => {
    const file = path.join(samplesDir, 'loyers_anil', 'carte-des-loyers-2018_indicateurs-loyers-appartements_national.csv.gz');
    const [head, ...lines] = zlib.gunzipSync(fs.readFileSync(file)).toString('utf8').trim().split('\n').map((l) => l.split(';'));
    const raw = lines.map((cells) => Object.fromEntries(head.map((h, i) => [h, cells[i]])));
    const parsed = await parseAnil(file, 'appartement', 2018);
    expect([parsed.rowsRead, parsed.rowsKept]).toEqual([raw.length, raw.length]);
    expect(parsed.anomalies).toMatchObject({ invalid_insee: 0, duplicate_insee: 0, missing_loyer: 0, unparsable_value: 0 });
    expect(parsed.anomalies.prediction_not_commune).toBe(raw.filter((r) => r.TYPPRED !== 'commune').length);
    const short = raw.filter((r) => r.INSEE.length === 4);
    expect(short.length).toBe(3179);
    const byCode = new Map(parsed.rows.map((r) => [r.code_commune, r]));
    for (const r of [short[0], short.at(-1)!, raw.find((x) => x.INSEE === '75101')!]) {
      expect(byCode.get(r.INSEE.padStart(5, '0'))).toMatchObject({
        libelle_commune: r.LIBGEO, nb_observations_commune: Number(r.NBobs_commune), nb_observations_maille: Number(r.NBobs_maille), niveau_prediction: r.TYPPRED,
      });
      expect(byCode.get(r.INSEE.padStart(5, '0'))!.loyer_m2_cc).toBeCloseTo(num(r.loypredm2), 12);
      expect(byCode.get(r.INSEE.padStart(5, '0'))!.r2_ajuste).toBeCloseTo(num(r.R2adj), 12);
    }
  });
});

describe('ANIL download', () => {
  it('fetches the four files of an edition from a mirror, one partition each, into the loyers_communes mart', async () => {
    const site = tempDir('foncier-anil-site-');
    const folder = path.join(site, 'carte-des-loyers-indicateurs-de-loyers-dannonce-par-commune-en-2024');
    fs.mkdirSync(folder);
    for (const [segment, file] of Object.entries(ANIL_SAMPLES)) fs.copyFileSync(file, path.join(folder, ANIL_FILES[segment as AnilSegment]));
    const server = await mirror(site);
    try {
      const data = tempDir();
      // The marts need DVF: the Gironde sample.
      await runSource({ source: 'dvf', fromDir: sampleTree(), annees: [2021], departements: ['33'], dataRoot: data });
      const outcomes = await runSource({ source: 'anil', baseUrl: server.base, annees: [2024], departements: [], dataRoot: data });
      expect(outcomes.map((o) => o.status)).toEqual(['imported', 'imported', 'imported', 'imported']);
      const partitions = new Lake(data).readManifest().sources.anil.partitions!;
      expect(Object.keys(partitions).sort()).toEqual(['FR-appartement/2024', 'FR-appartement_t1_t2/2024', 'FR-appartement_t3_plus/2024', 'FR-maison/2024']);
      await buildMarts({ dataRoot: data });
      const rows = await queryParquet(`select segment, count(*) as n, max(loyer_m2_cc) filter (code_commune = '69383') as lyon3
        from read_parquet('${path.join(data, 'marts', 'loyers_communes.parquet')}') group by all order by segment`);
      for (const r of rows) {
        const raw = rawRows(ANIL_SAMPLES[r.segment as AnilSegment]);
        expect(r.n).toBe(raw.length);
        expect(r.lyon3).toBeCloseTo(num(raw.find((x) => x.INSEE_C === '69383')!.loypredm2), 10);
      }
      expect(rows).toHaveLength(4);
    } finally {
      await server.close();
    }
  });
});
