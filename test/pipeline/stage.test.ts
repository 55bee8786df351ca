// The streaming template (pipeline/stage.ts) on the real DPE samples (label-style headers with a BOM, an R re-export
// with a leading unnamed row number and NA, raw data-fair API pages, the legacy export) and on hand-made edge cases
// (decimal commas, Windows-1252 past the first lines, malformed lines, ZIP, JSON-lines). Expected values come from the
// files, read independently in the test (csv splitting by hand, JSON.parse).
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { samplesDir } from '../../lib/config';
import { all, one } from '../../lib/duck';
import { normalizeName, stageFile, type StageColumn } from '../../pipeline/stage';
import { testConnection, writeZip } from '../helpers/income';
import { splitCsv, tempDir } from '../helpers/samples';

const duck = testConnection();
const DPE = path.join(samplesDir, 'dpe');
const gunzip = (f: string) => zlib.gunzipSync(fs.readFileSync(path.join(DPE, f))).toString('utf8');

/** The columns a DPE import reads, by API name, with the label-style names of the CSV exports where they differ. */
const DPE_COLUMNS: Record<string, StageColumn> = {
  numero_dpe: { type: 'VARCHAR', names: ['numero_dpe', 'N°DPE'], required: true },
  date_etablissement_dpe: { type: 'DATE' },
  annee_construction: { type: 'INTEGER' },
  surface_habitable_logement: { type: 'DOUBLE' },
  type_batiment: { type: 'VARCHAR' },
  code_insee_ban: { type: 'VARCHAR' },
  coordonnee_cartographique_x_ban: { type: 'DOUBLE' },
  version_dpe: { type: 'VARCHAR' },
  score_ban: { type: 'DOUBLE' },
};

function file(name: string, content: string | Buffer): string {
  const f = path.join(tempDir(), name);
  fs.writeFileSync(f, content);
  return f;
}

describe('header names', () => {
  it('match ignoring case, accents and punctuation', () => {
    expect(normalizeName('Coordonnée_cartographique_X_(BAN)')).toBe(normalizeName('coordonnee_cartographique_x_ban'));
    expect(normalizeName('Nom__commune_(BAN)')).toBe('nomcommuneban');
    expect(normalizeName('Conso_5_usages_par_m²_é_primaire')).toBe('conso5usagesparm2eprimaire');
    expect(normalizeName('N°DPE')).not.toBe(normalizeName('numero_dpe')); // hence the list of accepted names
  });
});

describe('DPE v2 label-style export (Lyon 8e): BOM, 220 quoted headers, newlines inside quoted fields', () => {
  it('maps API names onto the labels and reads every row with its values', async () => {
    const raw = gunzip('dpe-v2-logements-neufs_lyon8_69388.csv.gz');
    const header = splitCsv(raw.slice(1, raw.indexOf('\n')));
    const r = await stageFile(duck.conn, { file: path.join(DPE, 'dpe-v2-logements-neufs_lyon8_69388.csv.gz'), table: 'lyon', columns: DPE_COLUMNS });
    expect(r.header).toEqual(header);
    expect(r.header).toHaveLength(220);
    expect(r.header[0]).toBe('N°DPE'); // BOM removed
    expect(r.mapping).toMatchObject({ numero_dpe: 'N°DPE', coordonnee_cartographique_x_ban: 'Coordonnée_cartographique_X_(BAN)', code_insee_ban: 'Code_INSEE_(BAN)', type_batiment: 'Type_bâtiment', annee_construction: null });
    expect(r.leadingRowNumber).toBe(false);
    // PROVENANCE and an independent csv reading: 2,851 rows, 15 of them with a newline inside a quoted address
    expect([r.rowsRead, r.rowsStaged, r.anomalies]).toEqual([2851, 2851, {}]);
    const counts = await all(duck.conn, `SELECT type_batiment, count(*)::INTEGER AS n, count(surface_habitable_logement)::INTEGER AS surfaces FROM lyon GROUP BY 1 ORDER BY 1`);
    expect(counts.map((c) => [c.type_batiment, c.n])).toEqual([['appartement', 2781], ['immeuble', 41], ['maison', 29]]);
    const [agg] = await all(duck.conn, `SELECT count(*) FILTER (code_insee_ban = '69388')::INTEGER AS lyon8, round(sum(coordonnee_cartographique_x_ban), 2) AS x,
      count(*) FILTER (surface_habitable_logement IS NULL)::INTEGER AS no_surface, count(annee_construction)::INTEGER AS years FROM lyon`);
    expect(agg).toEqual({ lyon8: 2835, x: 2408877358.84, no_surface: 6, years: 0 });
    expect(await one(duck.conn, 'SELECT * FROM lyon LIMIT 1')).toEqual({
      numero_dpe: '2469N0892797M', date_etablissement_dpe: '2024-03-11', annee_construction: null, surface_habitable_logement: 43.9,
      type_batiment: 'appartement', code_insee_ban: '69388', coordonnee_cartographique_x_ban: 844363.05, version_dpe: '2.3', score_ban: 0.69,
    });
    expect(await one(duck.conn, `SELECT count(*)::INTEGER AS n FROM lyon WHERE numero_dpe = '2269N1374437A'`)).toEqual({ n: 1 });
  });
});

describe('R re-export (Lozère): a leading row number without a header name, NA, ";"', () => {
  it('drops the row number, reads NA as NULL and keeps the values aligned with their names', async () => {
    const lines = gunzip('dpe-v2-existants+neufs_lozere48_R-reexport.csv.gz').trim().split('\n').map((l) => splitCsv(l, ';'));
    const [header, ...rows] = lines;
    const at = (row: string[], name: string) => row[header.indexOf(name) + 1]; // +1: the unnamed row number
    expect(rows.every((row) => row.length === header.length + 1)).toBe(true);
    const r = await stageFile(duck.conn, { file: path.join(DPE, 'dpe-v2-existants+neufs_lozere48_R-reexport.csv.gz'), table: 'lozere', columns: DPE_COLUMNS });
    expect(r).toMatchObject({ leadingRowNumber: true, delimiter: ';', rowsRead: rows.length, rowsStaged: 2594, anomalies: {} });
    expect(r.mapping.annee_construction).toBe('Année_construction');
    const [agg] = await all(duck.conn, `SELECT count(*) FILTER (annee_construction IS NULL)::INTEGER AS no_year, count(*) FILTER (surface_habitable_logement IS NULL)::INTEGER AS no_surface,
      round(sum(surface_habitable_logement), 1) AS surface, count(*) FILTER (code_insee_ban = '48095')::INTEGER AS mende FROM lozere`);
    const na = (name: string) => rows.filter((row) => at(row, name) === 'NA').length;
    expect(agg).toEqual({ no_year: na('Année_construction'), no_surface: na('Surface_habitable_logement'), surface: 198718.2, mende: 982 });
    expect([agg.no_year, agg.no_surface]).toEqual([1056, 49]);
    const staged = await all<Record<string, unknown>>(duck.conn, 'SELECT numero_dpe, annee_construction, coordonnee_cartographique_x_ban FROM lozere');
    for (const i of [0, 1, 1000, rows.length - 1]) {
      const year = at(rows[i], 'Année_construction');
      expect(staged[i]).toEqual({
        numero_dpe: at(rows[i], 'N°DPE'), annee_construction: year === 'NA' ? null : Number(year),
        coordonnee_cartographique_x_ban: Number(at(rows[i], 'Coordonnée_cartographique_X_(BAN)')),
      });
    }
    expect(staged[0]).toEqual({ numero_dpe: '2348E1316663V', annee_construction: 2001, coordonnee_cartographique_x_ban: 719546.98 });
  });
});

describe('raw dpe03existant API pages (JSON, records under "results", absent fields omitted)', () => {
  const page = (f: string) => JSON.parse(fs.readFileSync(path.join(DPE, f), 'utf8')) as { total: number; results: Array<Record<string, unknown>> };

  it('reads the records of each page, NULL where a record omits a field', async () => {
    for (const f of ['dpe03existant_api_lines_nancy_geo50m.json', 'dpe03existant_api_lines_nancy_identifiant-ban.json']) {
      const { results } = page(f);
      const r = await stageFile(duck.conn, { file: path.join(DPE, f), table: 'api', jsonRecords: 'results', columns: { ...DPE_COLUMNS, surface_habitable_logement: { type: 'DOUBLE', required: true } } });
      expect(r.format).toBe('json');
      expect(new Set(r.header)).toEqual(new Set(results.flatMap((x) => Object.keys(x))));
      expect(r.rowsRead).toBe(results.length);
      expect(r.anomalies).toEqual({ missing_surface_habitable_logement: results.filter((x) => !('surface_habitable_logement' in x)).length });
      const staged = await all(duck.conn, 'SELECT numero_dpe, surface_habitable_logement, date_etablissement_dpe, score_ban, type_batiment FROM api');
      expect(staged).toEqual(results.map((x) => ({
        numero_dpe: x.numero_dpe, surface_habitable_logement: x.surface_habitable_logement ?? null, date_etablissement_dpe: x.date_etablissement_dpe,
        score_ban: x.score_ban, type_batiment: x.type_batiment,
      })));
    }
    expect(page('dpe03existant_api_lines_nancy_geo50m.json').results[0]).toMatchObject({ numero_dpe: '2654E2145604N', surface_habitable_logement: 30 });
  });

  it('refuses a page without a required field (the Paris query did not select numero_dpe)', async () => {
    await expect(stageFile(duck.conn, { file: path.join(DPE, 'dpe03existant_api_lines_paris-segur_geo50m.json'), table: 'api', jsonRecords: 'results', columns: DPE_COLUMNS }))
      .rejects.toThrow(/required column\(s\) not found: numero_dpe \(numero_dpe \| N°DPE\)/);
  });

  it('reads the same records as JSON-lines, gzipped, and as a JSON array', async () => {
    const { results } = page('dpe03existant_api_lines_nancy_geo50m.json');
    const jsonl = file('page.jsonl.gz', zlib.gzipSync(results.map((x) => JSON.stringify(x)).join('\n') + '\n'));
    const array = file('page.json', JSON.stringify(results));
    for (const f of [jsonl, array]) {
      const r = await stageFile(duck.conn, { file: f, table: 'lines', columns: DPE_COLUMNS });
      expect(r.rowsRead).toBe(18);
      expect(await one(duck.conn, 'SELECT round(sum(surface_habitable_logement), 1) AS s, count(DISTINCT numero_dpe)::INTEGER AS n FROM lines')).toEqual({ s: 1042.4, n: 18 });
    }
  });
});

describe('legacy dpe-france export: BOM, comma, empty coordinates', () => {
  it('reads empty fields as NULL and numbers as typed', async () => {
    const [header, ...rows] = gunzip('dpe-france_api_sample_10000.csv.gz').replace(/^\uFEFF/, '').trim().split('\n').map((l) => splitCsv(l));
    const r = await stageFile(duck.conn, {
      file: path.join(DPE, 'dpe-france_api_sample_10000.csv.gz'), table: 'legacy',
      columns: { annee_construction: 'INTEGER', latitude: 'DOUBLE', consommation_energie: 'DOUBLE', classe_consommation_energie: { type: 'VARCHAR', required: true } },
    });
    expect([r.rowsRead, r.anomalies]).toEqual([rows.length, {}]);
    const col = (name: string) => rows.map((row) => row[header.indexOf(name)]);
    expect(await one(duck.conn, `SELECT count(*) FILTER (latitude IS NULL)::INTEGER AS no_lat, count(*) FILTER (classe_consommation_energie = 'N')::INTEGER AS n,
      round(sum(consommation_energie), 2) AS conso, first(annee_construction) AS first_year FROM legacy`)).toEqual({
      no_lat: col('latitude').filter((v) => v === '').length, n: col('classe_consommation_energie').filter((v) => v === 'N').length,
      conso: Math.round(col('consommation_energie').reduce((a, v) => a + Number(v), 0) * 100) / 100, first_year: 5200,
    });
  });
});

describe('edge cases', () => {
  const columns: Record<string, StageColumn | string> = {
    code: { type: 'VARCHAR', names: ['INSEE_C', 'code'], required: true },
    loyer: { type: 'DOUBLE', names: ['loypredm2'], required: true },
    n: 'INTEGER',
    jour: 'DATE',
    absent: 'BIGINT',
  };

  it('decimal commas, spaced thousands, dd/mm/yyyy, unparsable values, a missing required value, a malformed line', async () => {
    const f = file('a.csv', [
      'INSEE_C;loypredm2;N;Jour;extra',
      '01001;12,5;1 032;05/01/2024;x',
      '01002;abc;7;2024-01-06;x',
      '01003;;8;not a date;x',
      '01004;9,75;12;;x;one field too many',
      '"01005";"-3,5";"NA";"";"x"',
    ].join('\r\n'));
    const r = await stageFile(duck.conn, { file: f, table: 'edge', columns });
    expect(r.rowsRead).toBe(5);
    expect(r.rowsStaged).toBe(4);
    expect(r.anomalies).toEqual({ malformed_line: 1, unparsable_loyer: 1, unparsable_jour: 1, missing_loyer: 1 });
    expect(r.mapping.absent).toBeNull();
    expect(await all(duck.conn, 'SELECT * FROM edge')).toEqual([
      { code: '01001', loyer: 12.5, n: 1032, jour: '2024-01-05', absent: null },
      { code: '01002', loyer: null, n: 7, jour: '2024-01-06', absent: null },
      { code: '01003', loyer: null, n: 8, jour: null, absent: null },
      { code: '01005', loyer: -3.5, n: null, jour: null, absent: null },
    ]);
  });

  it('falls back to Windows-1252 when invalid UTF-8 appears after the first lines', async () => {
    const lines = ['code;libelle;loypredm2', '01001;Abergement;10'];
    for (let i = 2; i < 5000; i++) lines.push(`${String(i).padStart(5, '0')};Commune ${i};10`);
    // 0x92 is ’ in Windows-1252 (a C1 control in Latin-1, which DuckDB's own latin-1 decoder refuses)
    const last = Buffer.concat([Buffer.from('23096;Guéret l', 'latin1'), Buffer.from([0x92]), Buffer.from('Église;8,41\n', 'latin1')]);
    const bytes = Buffer.concat([Buffer.from(lines.join('\n') + '\n'), last]);
    const r = await stageFile(duck.conn, { file: file('w.csv', bytes), table: 'w', columns: { ...columns, libelle: 'VARCHAR' } });
    expect(r.encoding).toBe('windows-1252');
    expect(r.rowsRead).toBe(5000);
    expect(await one(duck.conn, `SELECT libelle, loyer FROM w WHERE code = '23096'`)).toEqual({ libelle: 'Guéret l’Église', loyer: 8.41 });
  });

  it('stages an entry of a ZIP archive, and names the columns it lacks', async () => {
    const zip = path.join(tempDir(), 'a.zip');
    writeZip(zip, [
      { name: 'meta.csv', content: Buffer.from('COD_VAR;LIB_VAR\nMED20;Médiane\n') },
      { name: 'dir/data.csv', content: Buffer.from('code,loypredm2\n01001,"1,5"\n') },
    ]);
    const r = await stageFile(duck.conn, { file: zip, zipEntry: 'data.csv', table: 'z', columns, tmpDir: tempDir() });
    expect([r.delimiter, r.rowsRead]).toEqual([',', 1]);
    expect(await all(duck.conn, 'SELECT code, loyer FROM z')).toEqual([{ code: '01001', loyer: 1.5 }]);
    await expect(stageFile(duck.conn, { file: zip, table: 'z', columns })).rejects.toThrow(/required column\(s\) not found: code \(INSEE_C \| code\), loyer \(loypredm2\); the file has COD_VAR, LIB_VAR/);
  });
});
