// `npm run lab -- backtest-real`: the real multi-year DVF samples rebuilt as geo-DVF trees (PROVENANCE.md of
// shared/data/dvf), values pinned from the files themselves.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import zlib from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, samplesDir } from '../../lib/config';
import { cutTree, monthStart } from '../backtest/api-replay';
import { buildRealDatasets, COLUMNS, fromExcelResave, fromLyonReduced, type RealDataset } from '../backtest/real-samples';
import { splitCsv, tempDir } from '../../test/helpers/samples';

async function readGeo(file: string): Promise<Array<Record<string, string>>> {
  const rows: string[][] = [];
  const input = fs.createReadStream(file).pipe(zlib.createGunzip());
  for await (const line of readline.createInterface({ input, crlfDelay: Infinity })) if (line) rows.push(splitCsv(line));
  const [head, ...body] = rows;
  return body.map((r) => Object.fromEntries(head.map((h, i) => [h, r[i]])));
}

describe('the Excel re-save of Toulon 2025 back in the Etalab form', () => {
  it('differs from the published form only by separator, date, numero_disposition and a numeric code voie', () => {
    // Line 8,653 of geo-dvf_2024-2025S1_83137_toulon_excel-resave.csv.gz
    const f = fromExcelResave('2025-413972;02/01/2025;1;Vente;95000;289;;AV ANDRE LE CHATELIER;305;83200;83137;Toulon;83;;;83137000DS0106;;;49;;;;;;;;;;1;3;Dépendance;;0;;;;;;5.90193;43.138967');
    expect(f).toHaveLength(40);
    expect(f.slice(0, 5)).toEqual(['2025-413972', '2025-01-02', '000001', 'Vente', '95000']);
    expect(f[8]).toBe('0305');
    expect(f[15]).toBe('83137000DS0106');
    expect(f.slice(-2)).toEqual(['5.90193', '43.138967']);
    expect(fromExcelResave('x;01/02/2025;2;Vente;1;;;;A002;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;')[8]).toBe('A002');
    expect(() => fromExcelResave('a;b;c')).toThrow(/expected 40 fields/);
  });
});

describe('the reduced Lyon flats', () => {
  it('become geo-DVF flat lines of their arrondissement', () => {
    const f = fromLyonReduced(['1675809', '2014-01-06', '170000.0', '66.0', '69004.0', '4.816632', '45.779399'], '2014-L1');
    const all = Object.fromEntries(COLUMNS.map((c, i) => [c, f[i]]));
    const r = Object.fromEntries(['id_mutation', 'date_mutation', 'valeur_fonciere', 'code_postal', 'code_commune', 'type_local', 'surface_reelle_bati', 'longitude', 'latitude'].map((c) => [c, all[c]]));
    expect(r).toEqual({ id_mutation: '2014-L1', date_mutation: '2014-01-06', valeur_fonciere: '170000', code_postal: '69004', code_commune: '69384', type_local: 'Appartement', surface_reelle_bati: '66', longitude: '4.816632', latitude: '45.779399' });
  });
});

describe('buildRealDatasets', () => {
  let datasets: RealDataset[];
  const logged: string[] = [];
  const bySlug = (slug: string) => datasets.find((d) => d.slug === slug)!;
  beforeAll(async () => {
    datasets = await buildRealDatasets(path.join(samplesDir, 'dvf'), tempDir('foncier-real-'), (m) => logged.push(m));
  });

  it('finds the two multi-year sets of the samples and says why it skips the other files', () => {
    expect(datasets.map((d) => [d.slug, d.departements, d.annees])).toEqual([
      ['69', ['69'], [2014, 2015, 2016, 2017, 2018]],
      ['83137', ['83'], [2023, 2024, 2025]],
    ]);
    expect(datasets.map((d) => d.label)).toEqual([
      'real DVF: Lyon, 9 communes of département 69, 2014–2018 (reduced extract)',
      'real DVF: Toulon (83137), 2023–2025 (Excel re-save, geo-DVF)',
    ]);
    const skipped = logged.filter((m) => m.startsWith('skipped '));
    expect(skipped.map((m) => m.split(':')[0]).sort()).toEqual([
      'skipped dvf-app-api_83137_toulon_2020S2-2025S1_par_mutation.csv.gz',
      'skipped dvfplus_mutations_d44_thouare-sur-loire_44204.csv',
      'skipped geo-dvf_2018_69_rhone_release2019_partial.csv.gz', // one year only; not merged into Lyon's (other communes)
      'skipped geo-dvf_2021_33_extrait_abzac.csv',
      'skipped valeursfoncieres-2020_extrait_dep01.txt',
    ]);
  });

  it('reads any folder of geo-DVF files: per-commune files of the Etalab tree, plain CSV, any names', async () => {
    const dir = tempDir('foncier-real-any-');
    for (const year of [2023, 2024]) {
      const dest = path.join(dir, String(year), 'communes', '83', '83137.csv');
      fs.mkdirSync(path.dirname(dest), { recursive: true });
      fs.writeFileSync(dest, zlib.gunzipSync(fs.readFileSync(path.join(samplesDir, 'dvf', `geo-dvf_${year}_83137_toulon.csv.gz`))));
    }
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'not a DVF file\n');
    const found = await buildRealDatasets(dir, tempDir('foncier-real-any-out-'));
    expect(found.map((d) => [d.label, d.annees])).toEqual([['real DVF: Toulon (83137), 2023–2024 (geo-DVF)', [2023, 2024]]]);
    const original = await readGeo(path.join(samplesDir, 'dvf', 'geo-dvf_2024_83137_toulon.csv.gz'));
    expect(await readGeo(path.join(found[0].tree, '2024', 'departements', '83.csv.gz'))).toEqual(original);
  });

  it('reads geo-DVF re-saved by a dataframe or a spreadsheet: index column, any order, `;`, DD/MM/YYYY, float codes, lost zeros, decimal commas', async () => {
    const dir = tempDir('foncier-real-resaved-');
    const rows = await readGeo(path.join(samplesDir, 'dvf', 'geo-dvf_2023_83137_toulon.csv.gz'));
    const order = [...COLUMNS].reverse();
    const damage = (c: string, v: string) => {
      if (c === 'date_mutation') return v.split('-').reverse().join('/');
      if (c === 'code_postal' || c === 'code_commune') return v ? `${v}.0` : v;
      if (c === 'numero_disposition') return String(Number(v));
      if (c === 'adresse_code_voie' && /^\d+$/.test(v)) return String(Number(v));
      if (c === 'latitude' || c === 'longitude') return v.replace('.', ',');
      return v;
    };
    const quote = (v: string) => (/[";]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v);
    const lines = rows.map((r, i) => [String(i), ...order.map((c) => quote(damage(c, r[c] ?? '')))].join(';'));
    fs.writeFileSync(path.join(dir, 'toulon-2023.csv'), ['', ...order].join(';') + '\n' + lines.join('\n') + '\n');
    fs.copyFileSync(path.join(samplesDir, 'dvf', 'geo-dvf_2024_83137_toulon.csv.gz'), path.join(dir, 'toulon-2024.csv.gz'));
    const [found] = await buildRealDatasets(dir, tempDir('foncier-real-resaved-out-'));
    expect(found.label).toBe('real DVF: Toulon (83137), 2023–2024 (Excel re-save, geo-DVF)');
    expect(await readGeo(path.join(found.tree, '2023', 'departements', '83.csv.gz'))).toEqual(rows);
  });

  it('splits a file of several départements and years into its partitions in one dataset', async () => {
    const dir = tempDir('foncier-real-multi-');
    const toulon = await readGeo(path.join(samplesDir, 'dvf', 'geo-dvf_2023_83137_toulon.csv.gz'));
    const quote = (v: string) => (/[",]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v);
    const line = (r: Record<string, string>) => COLUMNS.map((c) => quote(r[c] ?? '')).join(',');
    // the same sales twice: in 83 as published and moved to 84 (Avignon), dated 2023 and 2024
    const rows = toulon.flatMap((r) => [r, { ...r, code_departement: '84', code_commune: '84007', nom_commune: 'Avignon', date_mutation: r.date_mutation.replace('2023-', '2024-') }]);
    fs.writeFileSync(path.join(dir, 'two-departements.csv'), [COLUMNS.join(','), ...rows.map(line)].join('\n') + '\n');
    const [found, ...others] = await buildRealDatasets(dir, tempDir('foncier-real-multi-out-'));
    expect(others).toEqual([]);
    expect([found.departements, found.annees]).toEqual([['83', '84'], [2023, 2024]]);
    expect(await readGeo(path.join(found.tree, '2023', 'departements', '83.csv.gz'))).toEqual(toulon);
    expect(await readGeo(path.join(found.tree, '2024', 'departements', '84.csv.gz'))).toEqual(rows.filter((r) => r.code_departement === '84'));
    expect(fs.existsSync(path.join(found.tree, '2023', 'departements', '84.csv.gz'))).toBe(false);
  });

  it('keeps the 2025 lines of Toulon: 3,444 lines, 1,589 mutations, 2025-01-02 to 2025-06-30 (PROVENANCE.md)', async () => {
    const rows = await readGeo(path.join(bySlug('83137').tree, '2025', 'departements', '83.csv.gz'));
    expect(rows).toHaveLength(3444);
    expect(new Set(rows.map((r) => r.id_mutation)).size).toBe(1589);
    const dates = rows.map((r) => r.date_mutation).sort();
    expect([dates[0], dates.at(-1)]).toEqual(['2025-01-02', '2025-06-30']);
    // The last line of the file, which has no line end.
    expect(rows.at(-1)).toMatchObject({ longitude: '5.935729', latitude: '43.121547' });
    // 2023 and 2024 from the published files (the Excel re-save's 2024 is the same lines).
    for (const year of [2023, 2024]) {
      expect(await readGeo(path.join(bySlug('83137').tree, String(year), 'departements', '83.csv.gz'))).toEqual(await readGeo(path.join(samplesDir, 'dvf', `geo-dvf_${year}_83137_toulon.csv.gz`)));
    }
  });

  it('keeps every Lyon line and groups lines of the same day, price and postal code into one mutation', async () => {
    const rows = await readGeo(path.join(bySlug('69').tree, '2014', 'departements', '69.csv.gz'));
    expect(rows).toHaveLength(7601);
    const groups = new Map<string, Set<string>>();
    for (const r of rows) {
      const k = `${r.date_mutation}|${r.valeur_fonciere}|${r.code_postal}`;
      groups.set(k, (groups.get(k) ?? new Set()).add(r.id_mutation));
    }
    expect([...groups.values()].every((ids) => ids.size === 1)).toBe(true);
    expect(new Set(rows.map((r) => r.id_mutation)).size).toBe(groups.size);
    expect(groups.size).toBeLessThan(7601);
  });

  it('cuts a tree before a day for the API replay: whole earlier years, the lines before the day, no later year', async () => {
    const dest = tempDir('foncier-cut-');
    const toulon = bySlug('83137');
    const years = await cutTree(toulon, '2024-03-01', dest);
    expect(years).toEqual([2023, 2024]);
    expect(fs.existsSync(path.join(dest, '2025'))).toBe(false);
    const full2023 = await readGeo(path.join(toulon.tree, '2023', 'departements', '83.csv.gz'));
    expect(await readGeo(path.join(dest, '2023', 'departements', '83.csv.gz'))).toEqual(full2023);
    const full2024 = await readGeo(path.join(toulon.tree, '2024', 'departements', '83.csv.gz'));
    const cut2024 = await readGeo(path.join(dest, '2024', 'departements', '83.csv.gz'));
    const before = full2024.filter((r) => new Date(r.date_mutation) < new Date('2024-03-01'));
    expect(before.length).toBeGreaterThan(1000);
    expect(cut2024).toEqual(before);
  });

  it('names the first day of a month some months earlier', () => {
    expect(monthStart('2025-01', 0)).toBe('2025-01-01');
    expect(monthStart('2025-01', 12)).toBe('2024-01-01');
    expect(monthStart('2018-07', 7)).toBe('2017-12-01');
  });
});

describe('npm run lab -- backtest-real --samples DIR', () => {
  it('imports, builds and backtests a folder of geo-DVF files in one command, and says what it skipped', async () => {
    const dir = tempDir('foncier-real-cli-');
    for (const year of [2023, 2024]) fs.copyFileSync(path.join(samplesDir, 'dvf', `geo-dvf_${year}_83137_toulon.csv.gz`), path.join(dir, `${year}.csv.gz`));
    fs.writeFileSync(path.join(dir, 'readme.txt'), 'not DVF\n');
    const docs = fs.readFileSync(path.join(repoRoot, 'docs', 'valuation.md'));
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'lab/backtest/real.ts', '--samples', dir, '--no-docs'], { cwd: repoRoot, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('skipped readme.txt: not geo-DVF');
    expect(r.stdout).toContain('### real DVF: Toulon (83137), 2023–2024 (geo-DVF)');
    // the window is 2024, valued from the sales before; the estimator and the kNN rows are there
    expect(r.stdout).toMatch(/targets sold from 2024-01-01 to 2024-12-31/);
    expect(r.stdout).toMatch(/\| \*\*estimator \(comparables\)\*\* \| \d+ \| (9\d|100)\.\d %/);
    expect(r.stdout).toContain('baseline: plain kNN');
    expect(fs.readFileSync(path.join(repoRoot, 'docs', 'valuation.md'))).toEqual(docs);
    const missing = spawnSync(process.execPath, ['--import', 'tsx', 'lab/backtest/real.ts', '--samples', path.join(dir, 'nope')], { cwd: repoRoot, encoding: 'utf8' });
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain('no such folder');
  }, 120_000);
});
