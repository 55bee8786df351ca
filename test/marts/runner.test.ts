// The marts runner (order, checks, atomic serving swap) and the `ventes` rules, checked on the real DVF samples.
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { all, DuckDBInstance, type Row } from '../../lib/duck';
import { currentServingFile } from '../../lib/serving';
import { buildMarts, checkQuery, columnMeanings, loadModels, orderModels, type Model } from '../../marts/runner';
import { runSource } from '../../pipeline/run';
import { GEO_SAMPLE, sampleTree, splitCsv, tempDir, writeGeoFile } from '../helpers/samples';

async function servingRows(file: string, sql: string): Promise<Row[]> {
  const instance = await DuckDBInstance.create(file, { access_mode: 'READ_ONLY' });
  const conn = await instance.connect();
  try {
    return await all(conn, sql);
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

describe('marts runner', () => {
  const model = (name: string, refs: string[]): Model =>
    ({ name, refs, file: '', sql: '', materialized: 'table', sort: [], indexes: [], checks: [], sources: [], columns: [] });

  it('orders models by their references and rejects cycles and unknown references', () => {
    const ordered = orderModels([model('c', ['b']), model('a', []), model('b', ['a'])]).map((m) => m.name);
    expect(ordered).toEqual(['a', 'b', 'c']);
    expect(() => orderModels([model('a', ['b']), model('b', ['a'])])).toThrow(/cycle/);
    expect(() => orderModels([model('a', ['zz'])])).toThrow(/unknown model zz/);
  });

  it('resolves a column meaning given as "= model[.column]", and refuses one that names no documented column', () => {
    const a = { ...model('a', []), columns: [{ name: 'id', meaning: 'the key' }, { name: 'n', meaning: 'a count' }] };
    const b = { ...model('b', []), columns: [{ name: 'id', meaning: '= a' }, { name: 'total', meaning: '= a.n' }] };
    const meanings = columnMeanings([a, b]);
    expect(meanings.get('b')).toEqual(new Map([['id', 'the key (as `a.id`)'], ['total', 'a count (as `a.n`)']]));
    const dangling = { ...model('c', []), columns: [{ name: 'x', meaning: '= a.gone' }] };
    expect(() => columnMeanings([a, dangling])).toThrow(/c.x: "= a.gone" names no documented column/);
  });

  it('builds the target of a relationships check first, as a reference', () => {
    const child = { ...model('child', []), checks: ['relationships(parent_id, parent.id)'] };
    expect(orderModels([child, model('parent', [])]).map((m) => m.name)).toEqual(['parent', 'child']);
    expect(() => checkQuery('t', 'relationships(a, b)')).toThrow(/relationships\(column, model.column\)/);
  });

  it('reads grain, sort, index and checks from the model headers', () => {
    const ventes = loadModels().find((m) => m.name === 'ventes')!;
    expect(ventes.sort).toEqual(['code_departement', 'code_postal', 'date_mutation']);
    expect(ventes.indexes).toEqual(['id']);
    expect(ventes.refs.sort()).toEqual(['stg_commune_codes', 'stg_dvf_lines']);
    expect(ventes.checks).toContain('unique(id)');
    expect(() => checkQuery('t', 'nonsense(x)')).toThrow(/unknown check/);
  });
});

describe('model contracts: relationships checks and declared columns', () => {
  // Models that read no source: a build of them needs no lake.
  const build = async (files: Record<string, string>) => {
    const models = tempDir();
    for (const [name, sql] of Object.entries(files)) fs.writeFileSync(path.join(models, `${name}.sql`), sql);
    return buildMarts({ dataRoot: tempDir(), modelsDir: models });
  };
  const parent = `-- column: id: the key\nselect * from (values (1), (2)) t(id)`;

  it('a relationships check passes when every non-null value exists in the target column', async () => {
    const report = await build({
      parent,
      child: `-- check: relationships(parent_id, parent.id)\nselect * from (values (1), (2), (2), (null)) t(parent_id)`,
    });
    expect(report.models.map((m) => m.name)).toEqual(['parent', 'child']);
  });

  it('a relationships check fails the build on a value missing from the target, counting the offending rows', async () => {
    await expect(build({
      parent,
      child: `-- check: relationships(parent_id, parent.id)\nselect * from (values (1), (3), (3), (null)) t(parent_id)`,
    })).rejects.toThrow(/check failed on child: relationships\(parent_id, parent.id\) \(2 offending rows\)/);
  });

  it('a model whose built columns differ from its "-- column:" lines fails the build, naming them', async () => {
    await expect(build({ parent: `-- column: id: the key\n-- column: gone: a column no longer built\nselect 1 as id, 2 as extra` }))
      .rejects.toThrow(/columns of parent differ from its header: no "-- column:" line for extra; declared but not built: gone/);
    await expect(build({ parent: `-- column: id: the key\n-- column: id: again\nselect 1 as id` })).rejects.toThrow(/declared twice/);
  });
});

describe('ventes on the real samples', () => {
  const data = tempDir();
  let serving = '';
  beforeAll(async () => {
    const tree = sampleTree();
    await runSource({ source: 'dvf', fromDir: tree, annees: [2021], departements: ['33'], dataRoot: data });
    await runSource({ source: 'dvf', format: 'dgfip', fromDir: tree, annees: [2020], departements: ['01'], dataRoot: data });
    serving = (await buildMarts({ dataRoot: data })).servingFile;
  });

  it('makes the new serving file current and exports the mart as Parquet', () => {
    expect(currentServingFile(data)).toBe(serving);
    expect(fs.existsSync(path.join(data, 'marts', 'ventes.parquet'))).toBe(true);
  });

  it('the serving file has every index the model headers declare (created after all models)', async () => {
    const declared = loadModels().flatMap((m) => m.indexes.map((c) => `${m.name}_${c}_idx`)).sort();
    const rows = await servingRows(serving, `select index_name from duckdb_indexes() order by 1`);
    expect(rows.map((r) => r.index_name)).toEqual(declared);
    expect(declared).toContain('ventes_id_idx');
  });

  it('one row per sale: every geo-DVF mutation except exchanges, counted independently from the file', async () => {
    const body = fs.readFileSync(GEO_SAMPLE, 'utf8').trimEnd().split('\n').slice(1).map((l) => splitCsv(l));
    const expected = new Set(body.filter((f) => f[3] !== 'Echange' && Number(f[4]) > 0).map((f) => f[0])).size;
    const [{ n }] = await servingRows(serving, `select count(*) n from ventes where code_departement = '33'`);
    expect(n).toBe(expected);
  });

  it('a house with its outbuilding, sold on five lines over three parcels, is one non-bulk Maison sale', async () => {
    // valeursfoncieres lines 17-22: the price 350750 repeated; house 201 m² 7 rooms on AC39 listed once per culture
    // (J 1267 m², S 1497 m²); one Dépendance; bare parcels AC34 (S 19 m²) and AC180 (AB 91 m²).
    const [r] = await servingRows(serving, `select * from ventes where valeur_fonciere = 350750`);
    expect(r).toMatchObject({ type_local: 'Maison', surface_reelle_bati: 201, nombre_pieces_principales: 7,
      surface_terrain: 19 + 1267 + 1497 + 91, nb_dependances: 1, is_bulk_sale: false, code_commune: '01344',
      address: '904B CHE DES GDES CADALLES', date_mutation: '2020-01-03' });
    expect(r.prix_m2).toBeCloseTo(350750 / 201, 2);
  });

  it('a flat sold with a cellar is not bulk; its Carrez surface comes from the lot that has one', async () => {
    const [r] = await servingRows(serving, `select * from ventes where valeur_fonciere = 105000 and code_commune = '01053'`);
    expect(r).toMatchObject({ type_local: 'Appartement', surface_reelle_bati: 76, surface_carrez: 77.24, nb_dependances: 1,
      nb_locaux: 1, is_bulk_sale: false });
    expect(r.prix_m2).toBeCloseTo(105000 / 76, 2);
  });

  it('three flats sold for one price are a bulk sale (identical lines count as distinct flats)', async () => {
    const [r] = await servingRows(serving, `select * from ventes where id_mutation = '2021-527270'`);
    expect(r).toMatchObject({ type_local: 'Appartement', nb_locaux: 3, surface_reelle_bati: 35 + 56 + 56, is_bulk_sale: true });
  });

  it('flags symbolic prices as outliers, not cheap rural land, and never computes a price per m² for land', async () => {
    const [plot] = await servingRows(serving, `select * from ventes where id_mutation = '2021-527101'`); // 337 m², 505.5 €
    expect(plot).toMatchObject({ type_local: 'Terrain', valeur_fonciere: 505.5, prix_m2: null, is_outlier: false });
    expect(plot.prix_m2_terrain).toBeCloseTo(505.5 / 337, 6);
    const [symbolic] = await servingRows(serving, `select * from ventes where code_commune = '01451' and valeur_fonciere = 1`);
    expect(symbolic).toMatchObject({ type_local: 'Terrain', is_outlier: true });
  });

  it('a failing check fails the build and leaves the current serving database in place', async () => {
    const models = tempDir();
    fs.writeFileSync(path.join(models, 'bad.sql'), `-- check: expression(prix_m2 > 1000000)\nselect * from {{ source('dvf') }} join (select 1.0 as prix_m2) on true`);
    await expect(buildMarts({ dataRoot: data, modelsDir: models })).rejects.toThrow(/check failed on bad/);
    expect(currentServingFile(data)).toBe(serving);
    expect(fs.readdirSync(path.join(data, 'serving')).filter((f) => f.startsWith('.building'))).toEqual([]);
  });

  it('the next build removes what a killed build left: its file, WAL and spill folder', async () => {
    const leftover = path.join(data, 'serving', '.building-999999999-foncier-killed.duckdb');
    fs.writeFileSync(leftover, 'x');
    fs.writeFileSync(`${leftover}.wal`, 'x');
    fs.mkdirSync(`${leftover}.tmp`);
    fs.writeFileSync(path.join(`${leftover}.tmp`, 'spill.block'), 'x');
    await buildMarts({ dataRoot: data });
    expect(fs.readdirSync(path.join(data, 'serving')).filter((f) => f.startsWith('.building'))).toEqual([]);
  });
});

describe('outlier rule', () => {
  it('is relative to the commune: the same €/m² is an outlier in a cheap commune and normal in a dear one', async () => {
    // 30 flats per commune around 2,000 €/m² (33001) and 9,000 €/m² (33063), plus one 9,000 €/m² flat in 33001
    const header = fs.readFileSync(GEO_SAMPLE, 'utf8').split('\n')[0];
    const line = (id: string, commune: string, cp: string, price: number) =>
      `${id},2021-03-01,000001,Vente,${price},1,,RUE TEST,0001,${cp},${commune},X,33,,,${commune}000AB${id.slice(-4)},,,,,,,,,,,,,0,2,Appartement,50,2,,,,,,-0.1,45.0`;
    const rows: string[] = [];
    for (let i = 0; i < 30; i++) {
      rows.push(line(`2021-1${String(i).padStart(4, '0')}`, '33001', '33230', 50 * (1900 + 7 * i)));
      rows.push(line(`2021-2${String(i).padStart(4, '0')}`, '33063', '33000', 50 * (8600 + 30 * i)));
    }
    rows.push(line('2021-39999', '33001', '33230', 50 * 9000));
    const tree = tempDir();
    writeGeoFile(tree, 2021, '33', [header, ...rows].join('\n') + '\n');
    const data = tempDir();
    await runSource({ source: 'dvf', fromDir: tree, annees: [2021], departements: ['33'], dataRoot: data });
    const file = (await buildMarts({ dataRoot: data })).servingFile;
    const flagged = await servingRows(file, `select code_commune, prix_m2 from ventes where is_outlier order by all`);
    expect(flagged).toEqual([{ code_commune: '33001', prix_m2: 9000 }]);
  });
});

describe('reference geography in the marts', () => {
  it('maps a former commune code to the commune nouvelle and serves the communes table', async () => {
    const header = fs.readFileSync(GEO_SAMPLE, 'utf8').split('\n')[0];
    // Pierrefitte-sur-Seine (93059) merged into Saint-Denis (93066) on 2025-01-01
    const line = `2024-1,2024-05-02,000001,Vente,250000,3,,RUE DE PARIS,0001,93380,93059,Pierrefitte-sur-Seine,93,,,93059000AB0001,,,,,,,,,,,,,0,2,Appartement,50,2,,,,,,2.36,48.96`;
    const tree = tempDir();
    writeGeoFile(tree, 2024, '93', `${header}\n${line}\n`);
    const data = tempDir();
    await runSource({ source: 'dvf', fromDir: tree, annees: [2024], departements: ['93'], dataRoot: data });
    const file = (await buildMarts({ dataRoot: data })).servingFile;
    const [sale] = await servingRows(file, 'select code_commune, code_commune_actuel from ventes');
    expect(sale).toEqual({ code_commune: '93059', code_commune_actuel: '93066' });
    const paris = await servingRows(file, `select code from communes where parent = '75056' order by code`);
    expect(paris.map((r) => r.code)).toEqual(Array.from({ length: 20 }, (_, i) => String(75101 + i)));
  });
});
