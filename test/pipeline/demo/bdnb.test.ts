// Demo BDNB generator: the real archive layout and column names, agreement with the demo sales (parcel relation,
// footprints centred on the sales' points, renumbered and missing parcels), the planted age effect in the prices,
// and the staged centroids against an independent JS shoelace + proj4 reading of the written WKT.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import proj4 from 'proj4';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { all, openMemory, type DuckDBConnection, type DuckDBInstance } from '../../../lib/duck';
import { generateDemo } from '../../../pipeline/demo/generate';
import { AGE_PRICE_FACTOR, generateBdnb, type BdnbDemoTruth } from '../../../pipeline/demo/generate-bdnb';
import { bdnbArchivePath, bdnbTableFiles, stageBdnb } from '../../../pipeline/sources/bdnb';
import { writeZip } from '../../helpers/income';
import { splitCsv, tempDir } from '../../helpers/samples';
import { median } from '../../helpers/stats';

proj4.defs('EPSG:2154', '+proj=lcc +lat_0=46.5 +lon_0=3 +lat_1=49 +lat_2=44 +x_0=700000 +y_0=6600000 +ellps=GRS80 +towgs84=0,0,0,0,0,0,0 +units=m +no_defs');

const YEARS = [2020, 2021];
let dir: string;
let truth: BdnbDemoTruth;
let db: { instance: DuckDBInstance; conn: DuckDBConnection };

/** Independent CSV reading (quoted fields, no embedded newlines in these files). */
function readCsv(file: string): Array<Record<string, string>> {
  const text = file.endsWith('.gz') ? zlib.gunzipSync(fs.readFileSync(file)).toString('utf8') : fs.readFileSync(file, 'utf8');
  const [head, ...lines] = text.trim().split('\n');
  const header = splitCsv(head);
  return lines.map((l) => {
    const cells = splitCsv(l);
    return Object.fromEntries(header.map((h, i) => [h, cells[i]]));
  });
}

const tableDir = (dep: string) => path.join(dir, `bdnb_millesime_2025-07-a/millesime_2025-07-a_dep${dep}/open_data_millesime_2025-07-a_dep${dep}_csv/csv`);
const table = (dep: string, name: string) => readCsv(path.join(tableDir(dep), `${name}.csv`));

interface Sale { id: string; parcel: string; type: string; lon: number | null; lat: number | null; price: number; surface: number }
const sales: Sale[] = [];

beforeAll(async () => {
  dir = tempDir('foncier-bdnb-demo-');
  await generateDemo(dir, { years: YEARS });
  truth = await generateBdnb(dir, dir, { years: YEARS });
  for (const y of YEARS) {
    for (const dep of ['23', '33', '69', '75']) {
      for (const r of readCsv(path.join(dir, String(y), 'departements', `${dep}.csv.gz`))) {
        sales.push({
          id: r.id_mutation, parcel: r.id_parcelle, type: r.code_type_local, lon: r.longitude ? Number(r.longitude) : null,
          lat: r.latitude ? Number(r.latitude) : null, price: Number(r.valeur_fonciere), surface: Number(r.surface_reelle_bati),
        });
      }
    }
  }
  db = await openMemory({ threads: 1, memoryLimit: '1GB' });
}, 120_000);
afterAll(() => db?.instance.closeSync());

describe('demo BDNB', () => {
  it('writes the four tables of each demo département in the unzipped archive layout, with the real column names', () => {
    for (const dep of ['23', '33', '69', '75']) {
      const head = (name: string) => fs.readFileSync(path.join(tableDir(dep), `${name}.csv`), 'utf8').split('\n')[0].split(',');
      expect(head('batiment_groupe')).toEqual(expect.arrayContaining(['batiment_groupe_id', 'code_commune_insee', 's_geom_groupe', 'geom_groupe']));
      expect(head('batiment_groupe_ffo_bat')).toEqual(expect.arrayContaining(['batiment_groupe_id', 'annee_construction', 'nb_log', 'nb_niveau', 'mat_mur_txt', 'mat_toit_txt', 'usage_niveau_1_txt']));
      expect(head('rel_batiment_groupe_parcelle')).toEqual(['batiment_groupe_id', 'code_departement_insee', 'parcelle_id', 'parcelle_principale']);
      expect(head('batiment_groupe_dvf_open_statistique')).toEqual(expect.arrayContaining(['batiment_groupe_id', 'nb_mutation', 'prix_m2_local_median']));
    }
    expect(truth.files.length).toBe(16);
  });

  it('links most built parcels of the sales, renumbers some (building at the sale point) and leaves a few without building', () => {
    const built = new Set(sales.filter((s) => ['1', '2', '3', '4'].includes(s.type)).map((s) => s.parcel));
    const dvfParcels = new Set(sales.map((s) => s.parcel));
    const rel = ['23', '33', '69', '75'].flatMap((d) => table(d, 'rel_batiment_groupe_parcelle'));
    const linked = new Set(rel.map((r) => r.parcelle_id).filter((p) => built.has(p)));
    const foreign = rel.filter((r) => !dvfParcels.has(r.parcelle_id) && !r.parcelle_id.includes('000YY'));
    const share = linked.size / built.size;
    expect(share).toBeGreaterThan(0.84);
    expect(share).toBeLessThan(0.92);
    // renumbered: a parcel id no sale carries, same commune and section as a sold parcel
    expect(foreign.length / built.size).toBeGreaterThan(0.06);
    expect(foreign.length / built.size).toBeLessThan(0.12);
    expect(foreign.every((r) => [...dvfParcels].some((p) => p.slice(0, 10) === r.parcelle_id.slice(0, 10)))).toBe(true);
    const none = built.size - linked.size - foreign.length;
    expect(none / built.size).toBeGreaterThan(0.01);
    expect(none / built.size).toBeLessThan(0.05);
    expect(truth.parcels).toEqual({ linked: linked.size, renumbered: foreign.length, none });
    // the unsold stock doubles the sold buildings
    expect(truth.stockGroups).toBe(built.size);
  });

  it('plants the age effect: Paris flats in pre-1919 and 1946–1970 buildings sell below the 1991–2005 ones, by the planted factors', () => {
    const rel = new Map(table('75', 'rel_batiment_groupe_parcelle').map((r) => [r.parcelle_id, r.batiment_groupe_id]));
    const year = new Map(table('75', 'batiment_groupe_ffo_bat').map((r) => [r.batiment_groupe_id, Number(r.annee_construction) || null]));
    const per = new Map<string, number[]>();
    const seen = new Set<string>();
    for (const s of sales) {
      // one €/m² per single-flat sale of a building linked by parcel (bulk sales and outliers diluted by the median)
      if (s.type !== '2' || !(s.surface > 0) || seen.has(s.id) || !s.parcel.startsWith('75')) continue;
      seen.add(s.id);
      const y = year.get(rel.get(s.parcel) ?? '');
      if (!y) continue;
      const t = y < 1919 ? 'avant_1919' : y <= 1945 ? '1919_1945' : y <= 1970 ? '1946_1970' : y <= 1990 ? '1971_1990' : y <= 2005 ? '1991_2005' : '2006_plus';
      per.set(t, [...(per.get(t) ?? []), s.price / s.surface]);
    }
    const ref = median(per.get('1991_2005')!);
    for (const t of ['avant_1919', '1946_1970', '2006_plus'] as const) {
      const ratio = median(per.get(t)!) / ref;
      expect(Math.abs(ratio - AGE_PRICE_FACTOR[t] / AGE_PRICE_FACTOR['1991_2005'])).toBeLessThan(0.07);
    }
  });

  it('stages footprints whose centroid is the sale point, and equals a JS shoelace + proj4 reading of the WKT', async () => {
    const d = tableDir('23');
    await stageBdnb(db.conn, {
      batiment_groupe: path.join(d, 'batiment_groupe.csv'), batiment_groupe_ffo_bat: path.join(d, 'batiment_groupe_ffo_bat.csv'),
      rel_batiment_groupe_parcelle: path.join(d, 'rel_batiment_groupe_parcelle.csv'),
    });
    const staged = new Map((await all<{ batiment_groupe_id: string; latitude: number; longitude: number; annee_construction: number | null }>(db.conn,
      'SELECT batiment_groupe_id, latitude, longitude, annee_construction FROM bdnb_batiments')).map((r) => [r.batiment_groupe_id, r]));
    const groups = table('23', 'batiment_groupe');
    expect(staged.size).toBe(groups.length);
    for (const g of groups) {
      const rings = g.geom_groupe.replace(/^MULTIPOLYGON \(\(\(|\)\)\)$/g, '').split('),(').map((r) => r.split(',').map((p) => p.split(' ').map(Number)));
      // relative to the first vertex: raw Lambert-93 products (≈ 10^18) would lose metres to rounding
      const [ox, oy] = rings[0][0];
      for (const ring of rings) for (const p of ring) (p[0] -= ox), (p[1] -= oy);
      let a = 0;
      let mx = 0;
      let my = 0;
      rings.forEach((ring, k) => {
        let ra = 0;
        let rx = 0;
        let ry = 0;
        for (let i = 0; i < ring.length - 1; i++) {
          const c = ring[i][0] * ring[i + 1][1] - ring[i + 1][0] * ring[i][1];
          ra += c / 2;
          rx += ((ring[i][0] + ring[i + 1][0]) * c) / 6;
          ry += ((ring[i][1] + ring[i + 1][1]) * c) / 6;
        }
        const s = (k === 0 ? 1 : -1) * Math.sign(ra);
        a += s * ra;
        mx += s * rx;
        my += s * ry;
      });
      const [lon, lat] = proj4('EPSG:2154', 'WGS84', [ox + mx / a, oy + my / a]);
      const r = staged.get(g.batiment_groupe_id)!;
      expect(Math.abs(r.latitude - lat)).toBeLessThan(1e-7);
      expect(Math.abs(r.longitude - lon)).toBeLessThan(1e-7);
    }
    // linked groups stand on their sale's point (footprints are centred on it; 1e-5° ≈ 1 m)
    const rel = new Map(table('23', 'rel_batiment_groupe_parcelle').map((r) => [r.parcelle_id, r.batiment_groupe_id]));
    let checked = 0;
    for (const s of sales) {
      const id = rel.get(s.parcel);
      if (!id || s.lat === null || s.lon === null) continue;
      const r = staged.get(id)!;
      expect(Math.abs(r.latitude - s.lat)).toBeLessThan(1e-5);
      expect(Math.abs(r.longitude - s.lon)).toBeLessThan(1e-5);
      checked++;
    }
    expect(checked).toBeGreaterThan(100);
  });

  it('reads the same tables from the published ZIP (entries under csv/, other tables ignored) as from the unzipped folder', async () => {
    const zip = path.join(dir, 'archive', bdnbArchivePath('2025-07-a', '75'));
    fs.mkdirSync(path.dirname(zip), { recursive: true });
    const names = fs.readdirSync(tableDir('75'));
    writeZip(zip, [
      { name: 'csv/batiment_construction.csv', content: Buffer.from('batiment_construction_id,batiment_groupe_id\nx,y\n') },
      ...names.map((n, i) => ({ name: `csv/${n}`, content: fs.readFileSync(path.join(tableDir('75'), n)), stored: i % 2 === 0 })),
    ]);
    const fromZip = await bdnbTableFiles(zip, path.join(dir, 'work'));
    expect(Object.keys(fromZip).sort()).toEqual(names.map((n) => n.replace(/\.csv$/, '')).sort());
    for (const [t, f] of Object.entries(fromZip)) expect(fs.readFileSync(f).equals(fs.readFileSync(path.join(tableDir('75'), `${t}.csv`)))).toBe(true);
    const fromDir = await bdnbTableFiles(path.dirname(tableDir('75')), path.join(dir, 'unused'));
    expect(fromDir.batiment_groupe).toBe(path.join(tableDir('75'), 'batiment_groupe.csv'));
    await expect(bdnbTableFiles(path.join(dir, '2020', 'departements', '75.csv.gz'), path.join(dir, 'w2'))).rejects.toThrow();
  });
});
