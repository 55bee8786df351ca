// DPE parsing by header name (pipeline/sources/dpe/parse.ts + stage.sql) on every real sample of ../shared/data/dpe/.
// Pinned values were read from the files with zcat and Python's csv/json modules (see PROVENANCE.md for each file).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import proj4 from 'proj4';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { samplesDir } from '../../../lib/config';
import { all, openMemory, type DuckDBConnection, type DuckDBInstance } from '../../../lib/duck';
import { stageDpeFiles, stageRawFile, type DpeFile } from '../../../pipeline/sources/dpe/parse';

proj4.defs('EPSG:2154', '+proj=lcc +lat_0=46.5 +lon_0=3 +lat_1=49 +lat_2=44 +x_0=700000 +y_0=6600000 +ellps=GRS80 +towgs84=0,0,0,0,0,0,0 +units=m +no_defs');

const dpe = (name: string) => path.join(samplesDir, 'dpe', name);
const LYON: DpeFile = { path: dpe('dpe-v2-logements-neufs_lyon8_69388.csv.gz'), dataset: 'dpe02neuf' };
const LOZERE: DpeFile = { path: dpe('dpe-v2-existants+neufs_lozere48_R-reexport.csv.gz'), dataset: 'dpe03existant' };
const LEGACY: DpeFile = { path: dpe('dpe-france_api_sample_10000.csv.gz'), dataset: 'dpe-france' };
const NANCY_BAN: DpeFile = { path: dpe('dpe03existant_api_lines_nancy_identifiant-ban.json'), dataset: 'dpe03existant' };
const NANCY_GEO: DpeFile = { path: dpe('dpe03existant_api_lines_nancy_geo50m.json'), dataset: 'dpe03existant' };
const PARIS_GEO: DpeFile = { path: dpe('dpe03existant_api_lines_paris-segur_geo50m.json'), dataset: 'dpe03existant' };

let db: { instance: DuckDBInstance; conn: DuckDBConnection };
beforeAll(async () => {
  db = await openMemory({ threads: 2, memoryLimit: '1GB' });
});
afterAll(() => db.instance.closeSync());

type Staged = Record<string, unknown>;
const byId = async (id: string) => (await all<Staged>(db.conn, 'SELECT * FROM dpe_staged WHERE dpe_id = $id', { id }))[0];
/** Class counts as statistics see them: A–G only, replaced diagnostics left out. */
const classCounts = async () =>
  Object.fromEntries((await all<{ c: string; n: number }>(db.conn, `SELECT classe_energie AS c, count(*) AS n FROM dpe_staged
    WHERE classe_energie IS NOT NULL AND NOT est_remplace GROUP BY 1 ORDER BY 1`)).map((r) => [r.c, r.n]));
const l93 = (x: number, y: number) => {
  const [lon, lat] = proj4('EPSG:2154', 'WGS84', [x, y]);
  return { lat, lon };
};

describe('header names', () => {
  it('maps label-style, API and legacy names to the same columns, and skips R\'s row-number column', async () => {
    const lyon = await stageRawFile(db.conn, LYON);
    expect(lyon.mapping).toMatchObject({ numero_dpe: 'N°DPE', x_l93: 'Coordonnée_cartographique_X_(BAN)', numero_dpe_remplace: 'N°_DPE_remplacé', conso_m2: 'Conso_5_usages_par_m²_é_primaire', identifiant_ban: 'Identifiant__BAN' });
    const lozere = await stageRawFile(db.conn, LOZERE);
    expect(lozere).toMatchObject({ leadingRowNumber: true, delimiter: ';' });
    expect(lozere.mapping).toMatchObject({ geopoint: '_geopoint', annee_construction: 'Année_construction', parcelles: 'cad_parcelles' });
    const legacy = await stageRawFile(db.conn, LEGACY);
    expect(legacy.mapping).toMatchObject({ etiquette_dpe: 'classe_consommation_energie', type_batiment: 'tr002_type_batiment_description', numero_dpe: null });
    const api = await stageRawFile(db.conn, NANCY_GEO);
    expect(api.mapping).toMatchObject({ numero_dpe: 'numero_dpe', geopoint: '_geopoint', numero_dpe_remplace: 'numero_dpe_remplace' });
  });
});

describe('real samples', () => {
  it('Lyon 8e neufs (label-style, BOM): every row, Lambert-93 converted, the replaced diagnostic not counted twice', async () => {
    const r = await stageDpeFiles(db.conn, [LYON]);
    expect(r.rowsRead).toBe(2851);
    expect(r.rows).toBe(2851);
    expect(r.anomalies.remplace_par_un_plus_recent).toBe(1);
    // 2169N1048308O (class B) replaces 2169N0759630O (class B) of the same file: 831 B rows, 830 counted.
    expect(await byId('2169N0759630O')).toMatchObject({ est_remplace: true, classe_energie: 'B' });
    expect(await byId('2169N1048308O')).toMatchObject({ est_remplace: false, numero_dpe_remplace: '2169N0759630O' });
    expect(await classCounts()).toEqual({ A: 93, B: 831 - 1, C: 1904, D: 15, E: 8 });
    const row = await byId('2469N0892797M');
    expect(row).toMatchObject({
      date_etablissement_dpe: '2024-03-11', classe_energie: 'C', classe_ges: 'A', surface_habitable: 43.9, type_batiment: 'appartement',
      code_insee: '69388', code_postal: '69008', code_departement: '69', conso_energie_kwh_m2_an: 112.6, emission_ges_kg_m2_an: 3.2,
      identifiant_ban: '69388_tit1oq_00019_bis', address: '19bis Rue Antoine Dumont 69008 Lyon', version_dpe: '2.3',
      annee_construction: null, coord_source: 'lambert93', avant_reforme_2021: false, est_remplace: false,
    });
    const ref = l93(844363.05, 6516619.71);
    expect(row.latitude as number).toBeCloseTo(ref.lat, 7);
    expect(row.longitude as number).toBeCloseTo(ref.lon, 7);
    expect(await all(db.conn, "SELECT type_batiment, count(*) AS n FROM dpe_staged GROUP BY 1 ORDER BY 1")).toEqual([
      { type_batiment: 'appartement', n: 2781 }, { type_batiment: 'immeuble', n: 41 }, { type_batiment: 'maison', n: 29 },
    ]);
  });

  it('Lozère R re-export: the row-number column skipped, NA read as missing, invented years of new builds flagged', async () => {
    const r = await stageDpeFiles(db.conn, [LOZERE]);
    expect(r.rows).toBe(2594);
    expect(await classCounts()).toEqual({ A: 28, B: 90, C: 193, D: 673, E: 770, F: 452, G: 388 });
    // 1,056 NA years, plus 11 new builds whose uploader-invented 2024 lies after their 2021/2022 diagnostic.
    const [c] = await all<Record<string, number>>(db.conn, `SELECT count(*) FILTER (annee_construction IS NULL) AS annee_null,
      count(*) FILTER (surface_habitable IS NULL) AS surface_null, count(*) FILTER (id_parcelle IS NOT NULL) AS parcelles FROM dpe_staged`);
    expect(c).toEqual({ annee_null: 1056 + 11, surface_null: 49, parcelles: 566 });
    expect(r.anomalies.annee_construction_absurde).toBe(11);
    const row = await byId('2348E1316663V');
    expect(row).toMatchObject({
      date_etablissement_dpe: '2023-04-18', classe_energie: 'E', classe_ges: 'E', surface_habitable: 143, annee_construction: 2001,
      conso_energie_kwh_m2_an: 239.9, emission_ges_kg_m2_an: 52.8, code_insee: '48002', code_postal: '48200', code_departement: '48',
      type_batiment: 'maison', version_dpe: '2.3', id_parcelle: '48002000AA0059', identifiant_ban: '48002_0039_00038',
    });
    const ref = l93(719546.98, 6420265.99);
    expect(row.latitude as number).toBeCloseTo(ref.lat, 7);
    expect(row.longitude as number).toBeCloseTo(ref.lon, 7);
  });

  it('legacy dpe-france: classes N and I kept as unknown and counted, absurd years and missing coordinates flagged', async () => {
    const r = await stageDpeFiles(db.conn, [LEGACY]);
    expect(r.rows).toBe(10000); // no number in this export: identical lines are not merged
    expect(r.anomalies).toMatchObject({ classe_hors_a_g: 1112 + 1, annee_construction_absurde: 216, sans_coordonnees: 2372, surface_absurde: 17, sans_numero: 10000 });
    expect(await classCounts()).toEqual({ A: 199, B: 262, C: 1109, D: 2785, E: 2660, F: 1286, G: 586 });
    const [first] = await all<Staged>(db.conn, `SELECT * FROM dpe_staged WHERE date_etablissement_dpe = DATE '2013-04-12' AND code_insee = '01430'`);
    expect(first).toMatchObject({
      classe_energie: 'C', classe_ges: 'D', conso_energie_kwh_m2_an: 132, emission_ges_kg_m2_an: 29, annee_construction: null,
      surface_habitable: 190, latitude: 46.3333359, longitude: 5.4893103, coord_source: 'wgs84', type_batiment: 'maison',
      code_departement: '01', methode: '3CL', version_dpe: '3CL-DPE, version 1.3', modele: 'Vente', avant_reforme_2021: true,
    });
    expect(await all(db.conn, "SELECT etiquette_dpe_brute AS e, count(*) AS n FROM dpe_staged WHERE classe_energie IS NULL GROUP BY 1 ORDER BY 1")).toEqual([
      { e: 'I', n: 1 }, { e: 'N', n: 1112 },
    ]);
  });

  it('raw data-fair API responses: rows under results, _geopoint read as "lat,lon", absent fields as missing', async () => {
    const r = await stageDpeFiles(db.conn, [NANCY_BAN, NANCY_GEO, PARIS_GEO]);
    // The two Nancy responses overlap (the identifiant_ban query's 2 rows are within 50 m): each diagnostic once.
    expect(r.rowsRead).toBe(2 + 18 + 15);
    expect(r.anomalies.numero_dpe_duplique).toBe(2);
    expect(r.rows).toBe(18 + 15);
    expect(r.anomalies.sans_numero).toBe(15); // the Paris query did not select numero_dpe
    const immeuble = await byId('2654E1190898B');
    expect(immeuble).toMatchObject({
      type_batiment: 'immeuble', surface_habitable: null, classe_energie: 'D', classe_ges: 'B', periode_construction: '1978-1982',
      latitude: 48.70319300100884, longitude: 6.1620899707672665, coord_source: 'geopoint', date_etablissement_dpe: '2026-04-30',
    });
    expect(await byId('2554E2636705Z')).toMatchObject({ numero_dpe_remplace: '2554E2636671R', surface_habitable: expect.any(Number) });
    expect(await classCounts()).toEqual({ C: 3, D: 11 + 2, E: 3 + 11, F: 1 + 2 });
  });

  it('a CSV that turns out to be Windows-1252 past its first lines is read again transcoded, first file or not', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'foncier-dpe-1252-'));
    const header = 'numero_dpe,date_etablissement_dpe,etiquette_dpe,adresse_ban,_geopoint';
    const lines = (prefix: string) => Array.from({ length: 50 }, (_, i) =>
      `${prefix}${String(i).padStart(5, '0')}X,2024-05-01,${'ABCDEFG'[i % 7]},${i === 40 ? 'Allée des Érables' : `${i} rue Haute`},"48.7,6.16"`);
    const latin = path.join(dir, '54-latin.csv');
    fs.writeFileSync(latin, Buffer.from([header, ...lines('2454E1'), ''].join('\n'), 'latin1')); // é = one byte 0xE9: not UTF-8
    const utf8 = path.join(dir, '54.csv');
    fs.writeFileSync(utf8, [header, ...lines('2454E2'), ''].join('\n'));
    try {
      for (const files of [[latin, utf8], [utf8, latin]]) {
        const r = await stageDpeFiles(db.conn, files.map((f) => ({ path: f, dataset: f === latin ? 'dpe02neuf' : 'dpe03existant' })));
        expect(r).toMatchObject({ rowsRead: 100, rows: 100 });
        expect(r.anomalies.malformed_line).toBeUndefined();
        expect(r.anomalies.numero_dpe_duplique).toBe(0); // the rows of the UTF-8 attempt were undone, not deduplicated
        expect(await byId('2454E100040X')).toMatchObject({ address: 'Allée des Érables', classe_energie: 'F', source_dataset: 'dpe02neuf' });
        expect(await byId('2454E200040X')).toMatchObject({ address: 'Allée des Érables', source_dataset: 'dpe03existant' });
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('NDJSON pages of the data-fair client: a field first seen far into the file is still read', async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'foncier-dpe-ndjson-')), '54.ndjson');
    const rows = Array.from({ length: 30_000 }, (_, i) => JSON.stringify({
      numero_dpe: `2454E${String(i).padStart(7, '0')}X`, date_etablissement_dpe: '2024-05-01', etiquette_dpe: 'D', type_batiment: 'appartement',
      _geopoint: '48.7,6.16', ...(i === 29_999 ? { numero_dpe_remplace: '2454E0000007X' } : {}),
    }));
    fs.writeFileSync(file, rows.join('\n') + '\n');
    try {
      const r = await stageDpeFiles(db.conn, [{ path: file, dataset: 'dpe03existant' }]);
      expect(r.rows).toBe(30_000);
      expect(r.anomalies.remplace_par_un_plus_recent).toBe(1);
      expect(await byId('2454E0000007X')).toMatchObject({ est_remplace: true });
    } finally {
      fs.rmSync(path.dirname(file), { recursive: true, force: true });
    }
  });
});
