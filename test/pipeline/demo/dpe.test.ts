// The demo's DPE files (pipeline/demo/generate-dpe.ts): real published formats that the DPE parser reads back,
// counts as recorded in the truth, deterministic, and prices of the other sales untouched.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { all, openMemory, type DuckDBConnection, type DuckDBInstance } from '../../../lib/duck';
import { CLASS_EFFECT, DPE_CLASSES, normalisedFactors } from '../../../pipeline/demo/generate-dpe';
import { generateDemo, type DemoTruth } from '../../../pipeline/demo/generate';
import { stageDpeFiles } from '../../../pipeline/sources/dpe/parse';
import { tempDir } from '../../helpers/samples';

const opts = { years: [2021, 2022], scale: 0.3 };
let dir: string;
let truth: DemoTruth;
let db: { instance: DuckDBInstance; conn: DuckDBConnection };

beforeAll(async () => {
  dir = tempDir('foncier-dpe-demo-');
  truth = await generateDemo(dir, opts);
  db = await openMemory({ threads: 2, memoryLimit: '1GB' });
});
afterAll(() => {
  db.instance.closeSync();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('demo DPE files', () => {
  it('use the API field names for v2 and the legacy columns before July 2021', () => {
    const header = (rel: string) => zlib.gunzipSync(fs.readFileSync(path.join(dir, rel))).toString('utf8').split('\n')[0];
    const v2 = truth.dpe.files.find((f) => f.includes('/dpe03existant/'))!;
    const legacy = truth.dpe.files.find((f) => f.includes('/dpe-france/'))!;
    expect(header(v2)).toMatch(/^numero_dpe,date_etablissement_dpe,etiquette_dpe,etiquette_ges,conso_5_usages_par_m2_ep,.*coordonnee_cartographique_x_ban,coordonnee_cartographique_y_ban,_geopoint,numero_dpe_remplace/);
    expect(header(legacy)).toMatch(/classe_consommation_energie,estimation_ges,classe_estimation_ges,.*tv016_departement_code/);
  });

  it('parse back with the real-format parser: every row, every replacement, dates on the right side of the reform', async () => {
    const files = truth.dpe.files.map((rel) => ({ path: path.join(dir, rel), dataset: rel.split('/')[1] }));
    const r = await stageDpeFiles(db.conn, files);
    const expected = Object.values(truth.dpe.diagnostics).reduce((a, b) => a + b, 0);
    expect(r.rowsRead).toBe(expected);
    expect(r.rows).toBe(expected);
    expect(r.anomalies).toMatchObject({ sans_coordonnees: 0, date_invalide: 0, numero_dpe_duplique: 0, remplace_par_un_plus_recent: truth.dpe.replacements });
    const bySource = await all<{ s: string; n: number; early: number; late: number }>(db.conn, `SELECT source_dataset AS s, count(*) AS n,
      count(*) FILTER (avant_reforme_2021) AS early, count(*) FILTER (NOT avant_reforme_2021) AS late FROM dpe_staged GROUP BY 1 ORDER BY 1`);
    expect(Object.fromEntries(bySource.map((b) => [b.s, b.n]))).toEqual(truth.dpe.diagnostics);
    for (const b of bySource) expect(b.s === 'dpe-france' ? b.late : b.early).toBe(0);
    // Coordinates went through Lambert-93 and back: they stay in the demo communes' départements.
    const [box] = await all<{ lat0: number; lat1: number }>(db.conn, 'SELECT min(latitude) AS lat0, max(latitude) AS lat1 FROM dpe_staged');
    expect(box.lat0).toBeGreaterThan(44.5);
    expect(box.lat1).toBeLessThan(49);
  });

  it('normalises the class factors so that the median level is kept and the ratios to D are the planted ones', () => {
    for (const f of [truth.dpe.factors.urban, truth.dpe.factors.rural]) {
      for (const k of DPE_CLASSES) expect(f[k] / f.D).toBeCloseTo(CLASS_EFFECT[k], 10);
    }
    const mix = { A: 1, B: 1, C: 1, D: 1, E: 1, F: 1, G: 1 };
    const even = normalisedFactors(mix);
    expect(DPE_CLASSES.reduce((a, k) => a + Math.log(even[k]), 0)).toBeCloseTo(0, 10);
  });

  it('is deterministic', async () => {
    const again = tempDir('foncier-dpe-demo2-');
    try {
      const t2 = await generateDemo(again, opts);
      expect(t2.dpe).toEqual(truth.dpe);
      const sha = (p: string) => createHash('sha256').update(fs.readFileSync(p)).digest('hex');
      for (const rel of [...truth.dpe.files, ...truth.files]) expect(sha(path.join(again, rel))).toBe(sha(path.join(dir, rel)));
    } finally {
      fs.rmSync(again, { recursive: true, force: true });
    }
  });
});
