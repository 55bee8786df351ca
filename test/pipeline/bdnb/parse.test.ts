// BDNB staging: header mapping by name (full names and the 10-character names of QGIS re-exports), typed staging of
// the real extracts (values pinned, checked with zcat/python when written), and the footprint centroid against an
// independent shoelace + proj4 computation.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import proj4 from 'proj4';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { samplesDir } from '../../../lib/config';
import { all, openMemory, type DuckDBConnection, type DuckDBInstance } from '../../../lib/duck';
import { bdnbArchivePath, mapBdnbHeader, readCsvHeader, stageBdnb } from '../../../pipeline/sources/bdnb';
import { splitCsv, tempDir } from '../../helpers/samples';

proj4.defs('EPSG:2154', '+proj=lcc +lat_0=46.5 +lon_0=3 +lat_1=49 +lat_2=44 +x_0=700000 +y_0=6600000 +ellps=GRS80 +towgs84=0,0,0,0,0,0,0 +units=m +no_defs');

const PERIGUEUX = path.join(samplesDir, 'bdnb', 'bdnb2022_batiment_groupe_s_geom_perigueux_extract.csv.gz');
const PARIS = path.join(samplesDir, 'bdnb', 'bdnb2022_batiment_construction_paris11_qgis-export.csv.gz');

let db: { instance: DuckDBInstance; conn: DuckDBConnection };
beforeAll(async () => {
  db = await openMemory({ threads: 1, memoryLimit: '1GB' });
});
afterAll(() => db.instance.closeSync());

describe('header mapping', () => {
  it('takes full names, QGIS 10-character names and the GDAL WKT column', () => {
    const m = mapBdnbHeader('batiment_groupe', ['fid', 'batiment_g', 'code_commu', 'CODE_IRIS', 's_geom_gro', 'WKT']);
    expect(m.columns).toMatchObject({ batiment_groupe_id: 'batiment_g', code_commune_insee: 'code_commu', code_iris: 'CODE_IRIS', s_geom_groupe: 's_geom_gro', geom_groupe: 'WKT' });
    expect(m.missing.sort()).toEqual(['code_departement_insee', 'libelle_commune_insee']);
  });

  it('never trusts a truncated name that several columns share', () => {
    // prix_m2_local_median, _max, _min and _moyen all truncate to prix_m2_lo
    const m = mapBdnbHeader('batiment_groupe_dvf_open_statistique', ['batiment_g', 'nb_mutatio', 'prix_m2_lo', 'prix_m2__1']);
    expect(m.columns).toEqual({ batiment_groupe_id: 'batiment_g', nb_mutation: 'nb_mutatio' });
    expect(m.missing).toEqual(['prix_m2_local_median']);
    const full = mapBdnbHeader('batiment_groupe_dvf_open_statistique', ['batiment_groupe_id', 'prix_m2_local_max', 'prix_m2_local_median']);
    expect(full.columns.prix_m2_local_median).toBe('prix_m2_local_median');
    // geom_groupe and geom_groupe_pos_wgs84 both truncate to geom_group
    expect(mapBdnbHeader('batiment_groupe', ['batiment_g', 'geom_group']).columns.geom_groupe).toBeUndefined();
  });

  it('reads the header of a gzipped or plain file, with its delimiter and without BOM', async () => {
    expect(await readCsvHeader(PARIS)).toEqual({
      header: ['fid', 'batiment_c', 'batiment_g', 'code_depar', 'code_iris', 'code_commu', 's_geom_cst', 'hauteur', 'altitude_s', 'fictive_ge'],
      delim: ',',
    });
    const f = path.join(tempDir(), 'semi.csv');
    fs.writeFileSync(f, '\uFEFFbatiment_groupe_id;parcelle_id;parcelle_principale\r\nbdnb-bg-1;330010000A0001;t\r\n');
    expect(await readCsvHeader(f)).toEqual({ header: ['batiment_groupe_id', 'parcelle_id', 'parcelle_principale'], delim: ';' });
  });

  it('names the official archive of a département, Corsica in lower case', () => {
    expect(bdnbArchivePath('2025-07-a', '2A')).toBe('bdnb_millesime_2025-07-a/millesime_2025-07-a_dep2a/open_data_millesime_2025-07-a_dep2a_csv.zip');
  });
});

describe('the real extracts (pre-2023 millésime, QGIS re-exports)', () => {
  it('Périgueux batiment_groupe: 9,295 groups, 94 without area, pinned values', async () => {
    const staged = await stageBdnb(db.conn, { batiment_groupe: PERIGUEUX });
    expect(staged.rowsRead).toBe(9295);
    expect(staged.anomalies).toMatchObject({ duplicate_batiment_groupe_id: 0, unparsable_s_geom_groupe: 0, missing_geometry: 9295 });
    expect(staged.missingColumns.batiment_groupe).toContain('geom_groupe');
    const rows = await all<{ batiment_groupe_id: string; s_geom_groupe: number | null }>(db.conn, 'SELECT batiment_groupe_id, s_geom_groupe FROM bdnb_batiments');
    const byId = new Map(rows.map((r) => [r.batiment_groupe_id, r.s_geom_groupe]));
    expect(byId.size).toBe(9295);
    expect(byId.get('24053000AA0194_e137f562db6bce9')).toBe(94);
    expect(byId.get('uf245570382019_04418dca75967cd')).toBe(103);
    expect(byId.get('uf243220171171_0562b548a0ccf04')).toBeNull();
    expect(rows.filter((r) => r.s_geom_groupe === null).length).toBe(94);
    expect(rows.reduce((a, r) => a + (r.s_geom_groupe ?? 0), 0)).toBe(1_539_974);
    expect(Math.max(...rows.map((r) => r.s_geom_groupe ?? 0))).toBe(34369);
    expect(rows.filter((r) => r.batiment_groupe_id.startsWith('24322')).length).toBe(7853);
  });

  it('Paris 11e (a batiment_construction export): truncated names mapped, repeated groups counted, arrondissement from IRIS', async () => {
    const staged = await stageBdnb(db.conn, { batiment_groupe: PARIS });
    expect(staged.rowsRead).toBe(5227);
    // 5,227 constructions of 4,061 groups
    expect(staged.anomalies.duplicate_batiment_groupe_id).toBe(5227 - 4061);
    // s_geom_cst is s_geom_cstr (the construction's area), not s_geom_groupe
    expect(staged.missingColumns.batiment_groupe).toEqual(expect.arrayContaining(['s_geom_groupe', 'geom_groupe']));
    const perCommune = await all<{ code_commune_insee: string; n: number }>(db.conn,
      'SELECT code_commune_insee, count(*)::INTEGER AS n FROM bdnb_batiments GROUP BY ALL ORDER BY ALL');
    // The file says 75056 (Paris) on every row; the IRIS code carries the arrondissement.
    expect(perCommune).toEqual([{ code_commune_insee: '75103', n: 103 }, { code_commune_insee: '75111', n: 3955 }, { code_commune_insee: '75112', n: 3 }]);
    // Independent reading of the file: first row, quoted fields unquoted.
    const lines = zlib.gunzipSync(fs.readFileSync(PARIS)).toString('utf8').trim().split('\n');
    const first = splitCsv(lines[1]);
    const [row] = await all(db.conn, 'SELECT * FROM bdnb_batiments WHERE batiment_groupe_id = $id', { id: first[2] });
    expect(first[2]).toBe('75111000AY0075_1f0ac083aa6cecb');
    expect(row).toMatchObject({ code_commune_insee: first[4].slice(0, 5), s_geom_groupe: null, latitude: null });
  });
});

describe('repeated ids in the other tables', () => {
  it('keeps one ffo_bat row per group (a construction year first) and the dvf row with the most sales; relation pairs counted once', async () => {
    const dir = tempDir();
    const f = (name: string, text: string) => {
      fs.writeFileSync(path.join(dir, name), text);
      return path.join(dir, name);
    };
    const files = {
      batiment_groupe: f('bg.csv', 'batiment_groupe_id,code_commune_insee\nA,75111\nB,75111\nC,75111\n'),
      batiment_groupe_ffo_bat: f('ffo.csv', 'batiment_groupe_id,annee_construction,nb_log\nA,,1\nA,1930,2\nB,1975,3\nZ,2001,4\nZ,2002,5\n'),
      batiment_groupe_dvf_open_statistique: f('dvf.csv', 'batiment_groupe_id,nb_mutation,prix_m2_local_median\nB,1,1000\nB,4,4000\nB,2,2000\n'),
      rel_batiment_groupe_parcelle: f('rel.csv', 'batiment_groupe_id,parcelle_id,parcelle_principale\nA,75111000AA0002,f\nA,75111000AA0001,t\nA,75111000AA0002,t\nA,75111000AA0003,f\nA,75111000AA0003,f\nQ,75111000AA0009,t\n'),
    };
    const staged = await stageBdnb(db.conn, files);
    expect(staged.anomalies).toMatchObject({ duplicate_batiment_groupe_id: 0, relation_unknown_group: 1, missing_annee_construction: 1 });
    const rows = await all(db.conn, `SELECT batiment_groupe_id, annee_construction, nb_log, dvf_nb_mutations, dvf_prix_m2_median,
      parcelles_principales, parcelles_secondaires FROM bdnb_batiments ORDER BY 1`);
    expect(rows).toEqual([
      { batiment_groupe_id: 'A', annee_construction: 1930, nb_log: 2, dvf_nb_mutations: null, dvf_prix_m2_median: null,
        parcelles_principales: '75111000AA0001,75111000AA0002', parcelles_secondaires: '75111000AA0003' },
      { batiment_groupe_id: 'B', annee_construction: 1975, nb_log: 3, dvf_nb_mutations: 4, dvf_prix_m2_median: 4000, parcelles_principales: null, parcelles_secondaires: null },
      { batiment_groupe_id: 'C', annee_construction: null, nb_log: null, dvf_nb_mutations: null, dvf_prix_m2_median: null, parcelles_principales: null, parcelles_secondaires: null },
    ]);
  });
});

/** Independent centroid: shoelace per ring in JS (outline minus holes), then proj4. */
function jsCentroid(polys: number[][][][]): { lat: number; lon: number } {
  // relative to the first vertex: raw Lambert-93 products (≈ 10^18) would lose metres to rounding
  const [ox, oy] = polys[0][0][0];
  let a = 0;
  let mx = 0;
  let my = 0;
  for (const poly of polys.map((p) => p.map((r) => r.map(([x, y]) => [x - ox, y - oy])))) {
    poly.forEach((ring, k) => {
      let ra = 0;
      let rx = 0;
      let ry = 0;
      for (let i = 0; i < ring.length - 1; i++) {
        const [x1, y1] = ring[i];
        const [x2, y2] = ring[i + 1];
        const c = x1 * y2 - x2 * y1;
        ra += c / 2;
        rx += ((x1 + x2) * c) / 6;
        ry += ((y1 + y2) * c) / 6;
      }
      const s = (k === 0 ? 1 : -1) * Math.sign(ra);
      a += s * ra;
      mx += s * rx;
      my += s * ry;
    });
  }
  const [lon, lat] = proj4('EPSG:2154', 'WGS84', [ox + mx / a, oy + my / a]);
  return { lat, lon };
}

const wkt = (polys: number[][][][]) =>
  `MULTIPOLYGON (${polys.map((p) => `(${p.map((r) => `(${r.map(([x, y]) => `${x} ${y}`).join(', ')})`).join(', ')})`).join(', ')})`;

describe('footprint centroid', () => {
  it('reads Z coordinates and spaces around parentheses like the plain spelling; an unreadable number does not stop the import', async () => {
    const dir = tempDir();
    const ring = [[654000, 6862000], [654040, 6862000], [654040, 6862010], [654010, 6862030], [654000, 6862000]];
    const hole = [[654002, 6862002], [654002, 6862006], [654006, 6862006], [654002, 6862002]];
    const plain = `MULTIPOLYGON(((${ring.map(([x, y]) => `${x} ${y}`).join(',')}),(${hole.map(([x, y]) => `${x} ${y}`).join(',')})))`;
    const spaced = ` MULTIPOLYGON Z ( ( ( ${ring.map(([x, y]) => `${x} ${y} 35.5`).join(' , ')} ) , ( ${hole.map(([x, y]) => `${x} ${y} 35.5`).join(',')}) ) )  `;
    const file = path.join(dir, 'batiment_groupe.csv');
    fs.writeFileSync(file, 'batiment_groupe_id,geom_groupe\n' +
      `a,"${plain}"\nb,"${spaced}"\nc,"POLYGON ((654000 6862000,654040 x,654040 6862010,654000 6862000))"\n`);
    const staged = await stageBdnb(db.conn, { batiment_groupe: file });
    expect(staged.rowsRead).toBe(3);
    const rows = new Map((await all<{ batiment_groupe_id: string; latitude: number; longitude: number }>(db.conn,
      'SELECT batiment_groupe_id, latitude, longitude FROM bdnb_batiments')).map((r) => [r.batiment_groupe_id, r]));
    const expected = jsCentroid([[ring, hole]]);
    for (const id of ['a', 'b']) {
      expect(Math.abs(rows.get(id)!.latitude - expected.lat)).toBeLessThan(1e-7);
      expect(Math.abs(rows.get(id)!.longitude - expected.lon)).toBeLessThan(1e-7);
    }
    expect(rows.has('c')).toBe(true);
  });

  it('matches a JS shoelace + proj4 on footprints with holes, several parts and either orientation', async () => {
    const dir = tempDir();
    // An L-shaped block in Paris 11e with a courtyard (hole, clockwise), a detached annex, and a counter-clockwise
    // triangle near Périgueux: real Lambert-93 magnitudes.
    const shapes: Record<string, number[][][][]> = {
      'bdnb-bg-AAAA-AAAA-AAAA': [
        [[[654000, 6862000], [654040, 6862000], [654040, 6862010], [654010, 6862010], [654010, 6862030], [654000, 6862030], [654000, 6862000]],
          [[654002, 6862002], [654002, 6862006], [654006, 6862006], [654006, 6862002], [654002, 6862002]]],
        [[[654050, 6862050], [654055, 6862050], [654055, 6862058], [654050, 6862058], [654050, 6862050]]],
      ],
      'bdnb-bg-BBBB-BBBB-BBBB': [[[[521000.5, 6455000.25], [520990, 6455020], [521030, 6455012.75], [521000.5, 6455000.25]]]],
    };
    const file = path.join(dir, 'batiment_groupe.csv');
    fs.writeFileSync(file, 'batiment_groupe_id,code_commune_insee,geom_groupe\n' +
      Object.entries(shapes).map(([id, p]) => `${id},75111,"${wkt(p)}"`).join('\n') + '\nbdnb-bg-CCCC-CCCC-CCCC,75111,"POLYGON EMPTY"\n');
    const staged = await stageBdnb(db.conn, { batiment_groupe: file });
    expect(staged.anomalies.unplaced_geometry).toBe(1);
    const rows = await all<{ batiment_groupe_id: string; latitude: number; longitude: number }>(db.conn,
      'SELECT batiment_groupe_id, latitude, longitude FROM bdnb_batiments WHERE latitude IS NOT NULL');
    expect(rows.length).toBe(2);
    for (const r of rows) {
      const expected = jsCentroid(shapes[r.batiment_groupe_id]);
      expect(Math.abs(r.latitude - expected.lat)).toBeLessThan(1e-7); // ~1 cm
      expect(Math.abs(r.longitude - expected.lon)).toBeLessThan(1e-7);
    }
  });
});
