// Checks that the demo generator writes genuine-looking Etalab geo-DVF files (layout, header, value formats,
// quirks), that what demo-truth.json claims is really in the files, and that a seed is reproducible.
// The CSV is parsed with an independent minimal reader rather than the generator's own code.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateDemo, type DemoTruth } from '../../../pipeline/demo/generate';

const SAMPLE = '/work/shared/data/dvf/geo-dvf_2021_33_extrait_abzac.csv';
// The header of the genuine file; a copy is kept so the test still runs where ../shared is absent.
const REAL_HEADER =
  'id_mutation,date_mutation,numero_disposition,nature_mutation,valeur_fonciere,adresse_numero,adresse_suffixe,adresse_nom_voie,adresse_code_voie,code_postal,code_commune,nom_commune,code_departement,ancien_code_commune,ancien_nom_commune,id_parcelle,ancien_id_parcelle,numero_volume,lot1_numero,lot1_surface_carrez,lot2_numero,lot2_surface_carrez,lot3_numero,lot3_surface_carrez,lot4_numero,lot4_surface_carrez,lot5_numero,lot5_surface_carrez,nombre_lots,code_type_local,type_local,surface_reelle_bati,nombre_pieces_principales,code_nature_culture,nature_culture,code_nature_culture_speciale,nature_culture_speciale,surface_terrain,longitude,latitude';

// Independent reference: real INSEE code → (postal codes, name).
const COMMUNES: Record<string, { cps: string[]; name: string }> = {
  '75105': { cps: ['75005'], name: 'Paris 5e Arrondissement' },
  '75111': { cps: ['75011'], name: 'Paris 11e Arrondissement' },
  '75115': { cps: ['75015'], name: 'Paris 15e Arrondissement' },
  '75118': { cps: ['75018'], name: 'Paris 18e Arrondissement' },
  '33063': { cps: ['33000', '33100', '33200', '33300', '33800'], name: 'Bordeaux' },
  '23096': { cps: ['23000'], name: 'Guéret' },
  '23008': { cps: ['23200'], name: 'Aubusson' },
  '23176': { cps: ['23300'], name: 'La Souterraine' },
  '23030': { cps: ['23400'], name: 'Bourganeuf' },
};
for (let n = 1; n <= 9; n++) {
  COMMUNES[`6938${n}`] = { cps: [`6900${n}`], name: `Lyon ${n === 1 ? '1er' : `${n}e`} Arrondissement` };
}

const TYPES: Record<string, string> = {
  '1': 'Maison',
  '2': 'Appartement',
  '3': 'Dépendance',
  '4': 'Local industriel. commercial ou assimilé',
};
const DEPS = ['23', '33', '69', '75'];

type Row = Record<string, string>;

function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(field);
      field = '';
    } else if (ch === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += ch;
  }
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

interface Parsed {
  header: string;
  raw: string;
  rows: Row[];
  widths: number[];
}

function readGeoDvf(path: string): Parsed {
  const raw = gunzipSync(readFileSync(path)).toString('utf8');
  const [head, ...body] = parseCsv(raw);
  return {
    header: raw.slice(0, raw.indexOf('\n')),
    raw,
    widths: body.map((r) => r.length),
    rows: body.map((r) => Object.fromEntries(head.map((h, i) => [h, r[i]]))),
  };
}

function readAll(dir: string, truth: DemoTruth): Array<Row & { __year: string; __dep: string }> {
  const out: Array<Row & { __year: string; __dep: string }> = [];
  for (const rel of truth.files) {
    const [year, , file] = rel.split('/');
    for (const r of readGeoDvf(join(dir, rel)).rows) out.push({ ...r, __year: year, __dep: file.slice(0, 2) });
  }
  return out;
}

const sha = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');
const monthsBetween = (a: string, b: string) =>
  (Number(b.slice(0, 4)) - Number(a.slice(0, 4))) * 12 + Number(b.slice(5, 7)) - Number(a.slice(5, 7));

const dirs: string[] = [];
async function tmp(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'foncier-demo-'));
  dirs.push(d);
  return d;
}
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe('generateDemo — small run (scale 0.05, 2023–2024)', () => {
  const opts = { seed: 42, years: [2023, 2024], scale: 0.05 };
  let dirA: string;
  let dirB: string;
  let dirC: string;
  let truth: DemoTruth;
  let rows: Array<Row & { __year: string; __dep: string }>;

  beforeAll(async () => {
    [dirA, dirB, dirC] = [await tmp(), await tmp(), await tmp()];
    truth = await generateDemo(dirA, opts);
    await generateDemo(dirB, opts);
    await generateDemo(dirC, { ...opts, seed: 43 });
    rows = readAll(dirA, truth);
  });

  it('writes the official layout <annee>/departements/<dep>.csv.gz and demo-truth.json', async () => {
    const expected = opts.years.flatMap((y) => DEPS.map((d) => `${y}/departements/${d}.csv.gz`));
    expect(truth.files).toEqual(expected);
    for (const rel of expected) expect(existsSync(join(dirA, rel))).toBe(true);
    const onDisk = JSON.parse(await readFile(join(dirA, 'demo-truth.json'), 'utf8'));
    expect(onDisk).toEqual(truth);
    expect(truth.seed).toBe(42);
    expect(truth.years).toEqual([2023, 2024]);
  });

  it('uses exactly the header of the genuine Etalab sample, 40 fields on every line', () => {
    const sampleHeader = existsSync(SAMPLE) ? readFileSync(SAMPLE, 'utf8').split('\n')[0] : REAL_HEADER;
    expect(sampleHeader).toBe(REAL_HEADER);
    for (const rel of truth.files) {
      const p = readGeoDvf(join(dirA, rel));
      expect(p.header).toBe(sampleHeader);
      expect(p.raw.endsWith('\n')).toBe(true);
      expect(p.widths.every((w) => w === 40)).toBe(true);
    }
    expect(rows.length).toBe(truth.lines);
    expect(new Set(rows.map((r) => r.id_mutation)).size).toBe(truth.mutations);
  });

  it('formats values like geo-DVF: ids, ISO dates in the file year, dispositions, prices, coordinates', () => {
    for (const r of rows) {
      expect(r.id_mutation).toMatch(new RegExp(`^${r.__year}-\\d+$`));
      expect(r.date_mutation).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(r.date_mutation.slice(0, 4)).toBe(r.__year);
      expect(new Date(`${r.date_mutation}T00:00:00Z`).toISOString().slice(0, 10)).toBe(r.date_mutation);
      expect(r.numero_disposition).toMatch(/^\d{6}$/);
      expect(r.valeur_fonciere).toMatch(/^\d+(\.\d+)?$/);
      expect(['Vente', "Vente en l'état futur d'achèvement", 'Echange', 'Adjudication']).toContain(r.nature_mutation);
      expect(r.longitude === '').toBe(r.latitude === '');
      if (r.longitude !== '') {
        expect(r.longitude).toMatch(/^-?\d+(\.\d{1,6})?$/);
        expect(r.latitude).toMatch(/^\d+(\.\d{1,6})?$/);
      }
      for (const k of [1, 2, 3, 4, 5]) {
        if (r[`lot${k}_surface_carrez`]) expect(r[`lot${k}_surface_carrez`]).toMatch(/^\d+(\.\d{1,2})?$/);
      }
      if (r.code_type_local) expect(r.type_local).toBe(TYPES[r.code_type_local]);
      else expect(r.type_local).toBe('');
      if (r.type_local === '') expect(r.code_nature_culture).not.toBe('');
    }
    // One mutation = several lines sharing date, nature and the (repeated, not split) price.
    const byId = new Map<string, Row>();
    for (const r of rows) {
      const first = byId.get(r.id_mutation);
      if (!first) byId.set(r.id_mutation, r);
      else {
        expect(r.date_mutation).toBe(first.date_mutation);
        expect(r.valeur_fonciere).toBe(first.valeur_fonciere);
        expect(r.nature_mutation).toBe(first.nature_mutation);
      }
    }
    expect(rows.length).toBeGreaterThan(byId.size);
  });

  it('keeps INSEE codes, postal codes, names, départements and parcel ids consistent', () => {
    const seen = new Set<string>();
    for (const r of rows) {
      seen.add(r.code_commune);
      expect(r.code_departement).toBe(r.__dep);
      expect(r.code_commune.slice(0, 2)).toBe(r.code_departement);
      const ref = COMMUNES[r.code_commune];
      if (ref) {
        expect(ref.cps).toContain(r.code_postal);
        expect(r.nom_commune).toBe(ref.name);
      } else {
        // Creuse villages: only the département-level consistency is checked.
        expect(r.code_departement).toBe('23');
        expect(r.code_postal).toMatch(/^23\d{3}$/);
      }
      expect(r.id_parcelle).toMatch(/^\d{5}000[0-9A-Z]{2}\d{4}$/);
      expect(r.id_parcelle.slice(0, 5)).toBe(r.code_commune);
      expect(r.adresse_code_voie).toMatch(/^[0-9B]\d{3}$/);
    }
    for (const code of Object.keys(COMMUNES)) expect(seen.has(code)).toBe(true);
    expect(Object.keys(truth.perCommune).sort()).toEqual([...seen].sort());
  });

  it('contains the realistic quirks: VEFA, missing coordinates, Dépendance lines, land lines, Carrez', () => {
    const vefa = rows.filter((r) => r.nature_mutation === "Vente en l'état futur d'achèvement");
    expect(vefa.length).toBeGreaterThan(0);
    expect(vefa.every((r) => ['33', '69', '75'].includes(r.code_departement))).toBe(true);
    expect(rows.filter((r) => r.longitude === '').length).toBeGreaterThan(0);
    expect(rows.some((r) => r.type_local === 'Dépendance')).toBe(true);
    expect(rows.some((r) => r.type_local === '' && r.code_departement === '23')).toBe(true);
    const apts = rows.filter((r) => r.type_local === 'Appartement' && r.lot1_surface_carrez !== '');
    expect(apts.length).toBeGreaterThan(0);
    for (const a of apts) {
      const carrez = [1, 2, 3, 4, 5].reduce((s, k) => s + Number(a[`lot${k}_surface_carrez`] || 0), 0);
      expect(carrez).toBeLessThan(Number(a.surface_reelle_bati));
      expect(carrez).toBeGreaterThan(Number(a.surface_reelle_bati) * 0.9);
    }
  });

  it('puts the planted resales in the files with the recorded parcels, dates and prices', () => {
    expect(truth.plantedResales.length).toBeGreaterThan(0);
    for (const p of truth.plantedResales) {
      const find = (date: string, price: number) =>
        rows.filter(
          (r) =>
            r.id_parcelle === p.id_parcelle && r.date_mutation === date && r.type_local === p.type_local &&
            Number(r.valeur_fonciere) === price && r.code_commune === p.code_commune,
        );
      const a = find(p.first_date, p.first_price);
      const b = find(p.second_date, p.second_price);
      expect(a.length).toBeGreaterThan(0);
      expect(b.length).toBeGreaterThan(0);
      expect(a[0].id_mutation).not.toBe(b[0].id_mutation);
      // Same property: same lots, surface and address.
      for (const f of ['lot1_numero', 'surface_reelle_bati', 'adresse_numero', 'adresse_nom_voie']) {
        expect(b[0][f]).toBe(a[0][f]);
      }
      expect(p.months_apart).toBe(monthsBetween(p.first_date, p.second_date));
      expect(p.months_apart).toBeGreaterThanOrEqual(18);
      expect(p.months_apart).toBeLessThanOrEqual(24);
      expect(p.second_price).toBeGreaterThanOrEqual(p.first_price * 1.05);
      expect(p.second_price).toBeLessThanOrEqual(p.first_price * 1.25 + 100);
    }
  });

  it('is deterministic: same seed → byte-identical files, other seed → different files', () => {
    for (const rel of [...truth.files, 'demo-truth.json']) {
      expect(sha(join(dirB, rel))).toBe(sha(join(dirA, rel)));
      expect(sha(join(dirC, rel))).not.toBe(sha(join(dirA, rel)));
    }
  });
});

describe('generateDemo — all years at scale 0.25', () => {
  let dir: string;
  let truth: DemoTruth;
  let rows: Array<Row & { __year: string; __dep: string }>;

  beforeAll(async () => {
    dir = await tmp();
    truth = await generateDemo(dir, { scale: 0.25 });
    rows = readAll(dir, truth);
  });

  it('defaults to seed 42 and 2019–2025, every month of every year, with seasonality', () => {
    expect(truth.seed).toBe(42);
    expect(truth.years).toEqual([2019, 2020, 2021, 2022, 2023, 2024, 2025]);
    const perMonth = new Map<string, Set<string>>();
    for (const r of rows) {
      const k = r.date_mutation.slice(0, 7);
      if (!perMonth.has(k)) perMonth.set(k, new Set());
      perMonth.get(k)!.add(r.id_mutation);
    }
    expect(perMonth.size).toBe(84);
    const byCalMonth = (m: string) =>
      [...perMonth].filter(([k]) => k.endsWith(`-${m}`)).reduce((s, [, v]) => s + v.size, 0);
    expect(byCalMonth('08')).toBeLessThan(byCalMonth('06'));
    expect(byCalMonth('01')).toBeLessThan(byCalMonth('07'));
  });

  it('matches the truth counts per commune and overall', () => {
    expect(rows.length).toBe(truth.lines);
    const ids = new Map<string, Set<string>>();
    for (const r of rows) {
      if (!ids.has(r.code_commune)) ids.set(r.code_commune, new Set());
      ids.get(r.code_commune)!.add(r.id_mutation);
    }
    expect([...ids.values()].reduce((s, v) => s + v.size, 0)).toBe(truth.mutations);
    for (const [code, set] of ids) expect(set.size).toBe(truth.perCommune[code].mutations);
  });

  it('the only properties sold twice are the planted resales and near misses', () => {
    const sales = new Map<string, Map<string, string>>();
    for (const r of rows) {
      if (r.type_local !== 'Appartement' && r.type_local !== 'Maison') continue;
      const key = `${r.id_parcelle}|${r.type_local}|${r.lot1_numero}`;
      if (!sales.has(key)) sales.set(key, new Map());
      sales.get(key)!.set(r.id_mutation, r.date_mutation);
    }
    const repeated = [...sales]
      .filter(([, m]) => m.size > 1)
      .map(([k, m]) => {
        expect(m.size).toBe(2);
        const [d1, d2] = [...m.values()].sort();
        return `${k.split('|')[0]}|${d1}|${d2}`;
      })
      .sort();
    const planted = [...truth.plantedResales, ...truth.nearMissResales]
      .map((p) => `${p.id_parcelle}|${p.first_date}|${p.second_date}`)
      .sort();
    expect(repeated).toEqual(planted);

    expect(truth.nearMissResales.length).toBeGreaterThan(0);
    for (const n of truth.nearMissResales) {
      expect([17, 25]).toContain(n.months_apart);
      expect(monthsBetween(n.first_date, n.second_date)).toBe(n.months_apart);
    }
    // ~1 % of house and flat sales are resold 18–24 months later.
    const sold = new Set(rows.filter((r) => r.type_local === 'Maison' || r.type_local === 'Appartement').map((r) => r.id_mutation));
    const share = truth.plantedResales.length / sold.size;
    expect(share).toBeGreaterThan(0.005);
    expect(share).toBeLessThan(0.015);
  });

  it('has duplicates, quoted fields, outliers and a price trend peaking in 2022', () => {
    const lines = rows.map((r) => JSON.stringify(r));
    expect(new Set(lines).size).toBeLessThan(lines.length);
    expect(rows.some((r) => r.adresse_nom_voie.includes(','))).toBe(true);
    expect(rows.some((r) => Number(r.valeur_fonciere) <= 15)).toBe(true);
    const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const ppm2 = (year: string) =>
      median(
        rows
          .filter((r) => r.code_departement === '75' && r.type_local === 'Appartement' && r.__year === year)
          .map((r) => Number(r.valeur_fonciere) / Number(r.surface_reelle_bati)),
      );
    expect(ppm2('2022')).toBeGreaterThan(ppm2('2019'));
    expect(ppm2('2022')).toBeGreaterThan(ppm2('2025'));
    expect(ppm2('2022')).toBeGreaterThan(9000);
    expect(ppm2('2022')).toBeLessThan(13000);
  });
});
