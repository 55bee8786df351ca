// The DVF pipeline on the real published samples: exact values, anomaly counts, both formats, ids, re-imports.
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { Lake } from '../../lib/lake';
import { runSource } from '../../pipeline/run';
import { GEO_SAMPLE, RAW_SAMPLE, lakeGlob, queryParquet, sampleTree, splitCsv, tempDir, writeGeoFile } from '../helpers/samples';

const geoLines = fs.readFileSync(GEO_SAMPLE, 'utf8').trimEnd().split('\n');
const rawLines = fs.readFileSync(RAW_SAMPLE, 'utf8').trimEnd().split('\n');

async function importTree(dataRoot: string, tree: string, format: 'geo-dvf' | 'dgfip', annee: number, departements: string[], now?: Date) {
  return runSource({ source: 'dvf', format, fromDir: tree, annees: [annee], departements, dataRoot, now });
}

describe('geo-DVF sample (Abzac 2021)', () => {
  const data = tempDir();
  beforeAll(async () => {
    const [outcome] = await importTree(data, sampleTree(), 'geo-dvf', 2021, ['33']);
    expect(outcome.error).toBeUndefined();
  });

  it('keeps every line and counts duplicates and missing coordinates like an independent count of the file', async () => {
    const body = geoLines.slice(1);
    const duplicates = body.length - new Set(body).size;
    const noCoords = body.filter((l) => { const f = splitCsv(l); return f[38] === '' || f[39] === ''; }).length;
    const mutations = new Set(body.map((l) => splitCsv(l)[0])).size;
    const p = new Lake(data).readManifest().sources.dvf.partitions!['33/2021'];
    expect(p.rows_read).toBe(body.length);
    expect(p.rows_kept).toBe(body.length);
    expect(p.anomalies.duplicate_lines).toBe(duplicates);
    expect(duplicates).toBe(5);
    expect(p.anomalies.missing_coordinates).toBe(noCoords);
    expect(p.count).toBe(mutations);
    expect(p.sha256).toMatch(/^[0-9a-f]{64}$/);
    const [{ n, repeated }] = await queryParquet(`select count(*) n, count(*) filter (line_occurrence > 1) repeated from ${lakeGlob(data)}`);
    expect(n).toBe(body.length);
    expect(repeated).toBe(duplicates);
  });

  it('pins the values of one sale read from the file', async () => {
    const [r] = await queryParquet(`select * from ${lakeGlob(data)} where id_mutation = '2021-543193'`);
    expect(r).toMatchObject({
      date_mutation: '2021-11-08', nature_mutation: 'Vente', valeur_fonciere: 92000, adresse_numero: '7',
      adresse_nom_voie: 'RUE AVITIACUS', code_postal: '33230', code_commune: '33001', nom_commune: 'ABZAC',
      code_departement: '33', annee: 2021, id_parcelle: '33001000AB0396', section: 'AB', no_plan: '0396',
      type_local: 'Maison', code_type_local: 1, surface_reelle_bati: 99, nombre_pieces_principales: 2,
      code_nature_culture: 'S', surface_terrain: 223, longitude: -0.127109, latitude: 45.014462, source_format: 'geo-dvf',
    });
    expect(Math.floor(Number(r.id) / 1e8)).toBe(2021 * 1000 + 33);
  });
});

describe('DGFiP raw sample (Ain, January 2020)', () => {
  const data = tempDir();
  beforeAll(async () => {
    const [outcome] = await importTree(data, sampleTree(), 'dgfip', 2020, ['01']);
    expect(outcome.error).toBeUndefined();
  });

  it('rebuilds postal codes, INSEE codes and parcels; reads decimal commas and dd/mm/yyyy dates', async () => {
    const [a] = await queryParquet(`select * from ${lakeGlob(data)} where lot1_numero = '211'`);
    expect(a).toMatchObject({
      date_mutation: '2020-01-06', valeur_fonciere: 54800, code_postal: '01000', code_commune: '01053',
      nom_commune: 'BOURG-EN-BRESSE', adresse_nom_voie: 'AV DU CHAMP DE FOIRE', adresse_numero: '6',
      id_parcelle: '01053000BK0197', section: 'BK', no_plan: '0197', lot1_surface_carrez: 31.68, lot2_numero: '39',
      type_local: 'Appartement', surface_reelle_bati: 32, nombre_pieces_principales: 1, nombre_lots: 2,
    });
    const [b] = await queryParquet(`select * from ${lakeGlob(data)} where nom_commune = 'CEYZERIAT'`);
    expect(b).toMatchObject({ date_mutation: '2020-01-07', valeur_fonciere: 8000, code_postal: '01250', code_commune: '01072',
      id_parcelle: '01072000AK0216', code_nature_culture: 'T', nature_culture: 'terres', surface_terrain: 1061 });
  });

  it('groups the lines of one sale without summing the repeated price', async () => {
    const rows = await queryParquet(`select distinct id, valeur_fonciere from ${lakeGlob(data)} where valeur_fonciere = 350750`);
    expect(rows).toHaveLength(1);
    const [{ n }] = await queryParquet(`select count(*) n from ${lakeGlob(data)} where id = ${rows[0].id}`);
    expect(n).toBe(rawLines.filter((l) => l.includes('|350750,00|')).length);
  });
});

describe('one sale, both formats', () => {
  // The same Abzac sale written in the DGFiP layout by hand (43 columns, decimal comma, dd/mm/yyyy, commune code without
  // its département): parsed, it must give the same normalised line as the geo-DVF line it comes from.
  const raw = (f: Record<number, string>) => Array.from({ length: 43 }, (_, i) => f[i] ?? '').join('|');
  const header = rawLines[0];
  const rawFile = [header,
    raw({ 7: '000001', 8: '08/11/2021', 9: 'Vente', 10: '92000,00', 11: '7', 13: 'RUE', 14: '0010', 15: 'AVITIACUS', 16: '33230',
      17: 'ABZAC', 18: '33', 19: '1', 21: 'AB', 22: '396', 34: '0', 35: '1', 36: 'Maison', 38: '99', 39: '2', 40: 'S', 42: '223' }),
    raw({ 7: '000001', 8: '19/02/2021', 9: 'Vente', 10: '220000,00', 11: '59', 12: 'A', 14: 'B140', 15: 'ROCHEREAU', 16: '33230',
      17: 'ABZAC', 18: '33', 19: '1', 21: 'ZD', 22: '187', 34: '0', 35: '1', 36: 'Maison', 38: '124', 39: '3', 40: 'S', 42: '485' }),
  ].join('\n');
  const geoFile = [geoLines[0], ...geoLines.filter((l) => /^2021-(543193|527717),/.test(l))].join('\n') + '\n';
  const compared = `date_mutation, numero_disposition, nature_mutation, valeur_fonciere, adresse_numero, adresse_suffixe,
    adresse_nom_voie, adresse_code_voie, code_postal, code_commune, nom_commune, code_departement, id_parcelle, section, no_plan,
    prefixe_section, nombre_lots, code_type_local, type_local, surface_reelle_bati, nombre_pieces_principales,
    code_nature_culture, nature_culture, surface_terrain, mutation_key`;

  it('gives identical normalised rows and the same mutation key', async () => {
    const tree = tempDir();
    writeGeoFile(tree, 2021, '33', geoFile);
    fs.writeFileSync(path.join(tree, 'valeursfoncieres-2021.txt'), rawFile);
    const geoData = tempDir();
    const rawData = tempDir();
    await importTree(geoData, tree, 'geo-dvf', 2021, ['33']);
    await importTree(rawData, tree, 'dgfip', 2021, ['33']);
    const fromGeo = await queryParquet(`select ${compared} from ${lakeGlob(geoData)} order by date_mutation`);
    const fromRaw = await queryParquet(`select ${compared} from ${lakeGlob(rawData)} order by date_mutation`);
    expect(fromGeo).toHaveLength(2);
    expect(fromRaw).toEqual(fromGeo);
  });
});

describe('re-imports', () => {
  it('a newer release keeps ids and first-seen timestamps, adds new sales once, drops nothing twice', async () => {
    const tree = tempDir();
    const body = geoLines.slice(1);
    writeGeoFile(tree, 2021, '33', [geoLines[0], ...body.filter((l) => !l.startsWith('2021-546022,'))].join('\n') + '\n');
    const data = tempDir();
    const t1 = new Date('2025-04-15T00:00:00Z');
    const t2 = new Date('2025-10-15T00:00:00Z');
    await importTree(data, tree, 'geo-dvf', 2021, ['33'], t1);
    const before = await queryParquet(`select distinct id, mutation_key, imported_at from ${lakeGlob(data)} order by id`);

    const again = await importTree(data, tree, 'geo-dvf', 2021, ['33'], t2);
    expect(again[0].status).toBe('unchanged');

    writeGeoFile(tree, 2021, '33', geoLines.join('\n') + '\n'); // the newer release has one more sale
    const [outcome] = await importTree(data, tree, 'geo-dvf', 2021, ['33'], t2);
    expect(outcome.status).toBe('imported');
    expect(outcome.newCount).toBe(1);
    const after = await queryParquet(`select distinct id, mutation_key, imported_at from ${lakeGlob(data)} order by id`);
    expect(after).toHaveLength(before.length + 1);
    expect(after.slice(0, before.length)).toEqual(before);
    const added = after[after.length - 1];
    expect(added.imported_at).toBe(t2.toISOString());
    expect(Number(added.id)).toBe(Math.max(...before.map((r) => Number(r.id))) + 1);
    const [{ n }] = await queryParquet(`select count(*) n from ${lakeGlob(data)}`);
    expect(n).toBe(body.length);
  });
});

describe('one pass over several files', () => {
  const body = geoLines.slice(1);
  // The sample moved to the Landes (40): other commune, parcels and sale ids.
  const in40 = (line: string) => {
    const f = line.split(',');
    [f[0], f[10], f[12], f[15]] = [`${f[0]}-40`, f[10].replace(/^33/, '40'), '40', f[15].replace(/^33/, '40')];
    return f.join(',');
  };

  it('imports the files of a year together exactly as one by one, each file accounted on its own', async () => {
    const tree = tempDir();
    writeGeoFile(tree, 2021, '33', geoLines.join('\n') + '\n');
    // 60 lines of the Landes, and one line of the Gironde file, which the Landes file does not own
    writeGeoFile(tree, 2021, '40', [geoLines[0], ...body.slice(0, 60).map(in40), body[0]].join('\n') + '\n');
    const now = new Date('2025-04-15T00:00:00Z');
    const together = tempDir();
    const outcomes = await runSource({ source: 'dvf', fromDir: tree, annees: [2021], departements: ['33', '40'], dataRoot: together, now });
    expect(outcomes.map((o) => [o.part.key, o.status, o.rowsRead, o.rowsKept])).toEqual([['33/2021', 'imported', 164, 164], ['40/2021', 'imported', 61, 60]]);
    const apart = tempDir();
    for (const d of ['33', '40']) await runSource({ source: 'dvf', fromDir: tree, annees: [2021], departements: [d], dataRoot: apart, now });

    const [diff] = await queryParquet(`select
      (select count(*) from (from ${lakeGlob(together)} except all from ${lakeGlob(apart)})) a,
      (select count(*) from (from ${lakeGlob(apart)} except all from ${lakeGlob(together)})) b, (select count(*) from ${lakeGlob(together)}) n`);
    expect(diff).toEqual({ a: 0, b: 0, n: 224 });
    const partitions = (root: string) => new Lake(root).readManifest().sources.dvf.partitions;
    expect(partitions(together)).toEqual(partitions(apart));
    const duplicates = 60 - new Set(body.slice(0, 60)).size;
    expect(partitions(together)!['40/2021']).toMatchObject({ rows_read: 61, rows_kept: 60, anomalies: { outside_partition: 1, duplicate_lines: duplicates } });
  });

  it('a corrupt file fails alone; the other files of its year are imported', async () => {
    const tree = sampleTree();
    writeGeoFile(tree, 2021, '40', [geoLines[0], ...body.slice(0, 10).map(in40)].join('\n') + '\n');
    fs.writeFileSync(path.join(tree, '2021', 'departements', '40.csv.gz'), Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 1, 2, 3, 4, 5]));
    const data = tempDir();
    const outcomes = await runSource({ source: 'dvf', fromDir: tree, annees: [2021], departements: ['33', '40'], dataRoot: data });
    expect(outcomes.map((o) => o.status)).toEqual(['imported', 'failed']);
    expect(outcomes[1].error).toBeTruthy();
    const [{ n }] = await queryParquet(`select count(*) n from ${lakeGlob(data)}`);
    expect(n).toBe(164);
    expect(Object.keys(new Lake(data).readManifest().sources.dvf.files!)).toEqual(['33/2021']);
  });
});

describe('mutation keys', () => {
  it('list the sorted distinct parcels and skip missing ones, as the published key definition (string_agg) does', async () => {
    const [first] = geoLines.slice(1);
    const line = (id: string, price: string, parcelle: string) => {
      const f = first.split(',');
      [f[0], f[4], f[15]] = [id, price, parcelle];
      return f.join(',');
    };
    const tree = tempDir();
    writeGeoFile(tree, 2021, '33', [geoLines[0],
      line('K-1', '1000', ''), line('K-1', '1000', ''), // no parcel at all (as DGFiP lines without a plan number)
      line('K-2', '2000', '33001000AB0002'), line('K-2', '2000', ''), // one line without its parcel
      line('K-3', '3000', '33001000AB0009'), line('K-3', '3000', '33001000AB0001'), line('K-3', '3000', '33001000AB0009'),
    ].join('\n') + '\n');
    const data = tempDir();
    await importTree(data, tree, 'geo-dvf', 2021, ['33']);
    const rows = await queryParquet(`select id_mutation, any_value(mutation_key) as mutation_key,
        md5(concat_ws('|', code_departement, any_value(date_mutation), any_value(nature_mutation), any_value(valeur_fonciere),
          string_agg(distinct id_parcelle, ',' order by id_parcelle))) || '-1' as expected
      from ${lakeGlob(data)} group by id_mutation, code_departement order by id_mutation`);
    expect(rows.map((r) => r.id_mutation)).toEqual(['K-1', 'K-2', 'K-3']);
    for (const r of rows) expect(r.mutation_key).toBe(r.expected);
    const [{ k }] = await queryParquet(`select md5('33|2021-01-06|Vente|1000.0') || '-1' as k`);
    expect(rows[0].mutation_key).toBe(k);
  });
});
