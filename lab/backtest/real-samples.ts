// Real multi-year DVF files (by default the samples of shared/data/dvf, see its PROVENANCE.md) turned into geo-DVF
// trees that the pipeline imports as it imports the published files: on the samples, Toulon 2023–2024 as published,
// Toulon 2025 S1 rebuilt from its Excel re-save, Lyon flats 2014–2018 rebuilt from a reduced extract. Used by
// `npm run lab -- backtest-real [--samples DIR]`.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { splitDelimited } from '../../lib/csv';
import { COLUMNS, csvField, fileLines, GEO_HEADER, geoReader } from '../../lib/geo-dvf-files';

// The readers moved to lib/geo-dvf-files.ts (the pipeline reads re-saved files too); re-exported for the backtest.
export { COLUMNS, fileLines, geoReader };

export interface RealDataset {
  /** Section of docs/valuation.md. */
  label: string;
  /** Short name of the data folder (the commune's code, or the département's). */
  slug: string;
  /** geo-DVF tree: {annee}/departements/{dep}.csv.gz */
  tree: string;
  departements: string[];
  annees: number[];
}



export interface LineWriter {
  write(line: string): Promise<void>;
  end(): Promise<void>;
}

/** A gzipped text file written line by line, waiting for the stream to drain. */
export function gzipLines(file: string): LineWriter {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const gz = zlib.createGzip();
  const out = fs.createWriteStream(file);
  gz.pipe(out);
  const done = new Promise<void>((resolve, reject) => (out.on('finish', resolve), out.on('error', reject)));
  return {
    async write(line) {
      if (!gz.write(`${line}\n`)) await new Promise((resolve) => gz.once('drain', resolve));
    },
    async end() {
      gz.end();
      await done;
    },
  };
}

interface GeoWriter {
  write(row: string[]): Promise<void>;
  end(): Promise<void>;
}

/** A gzipped geo-DVF file written row by row (rows already in geo-DVF column order), the header first. */
async function geoWriter(file: string): Promise<GeoWriter> {
  const out = gzipLines(file);
  await out.write(GEO_HEADER);
  return { write: (r) => out.write(r.map(csvField).join(',')), end: () => out.end() };
}

/** One line of the Excel re-save (file 5 of PROVENANCE.md) back in the Etalab form. */
export const fromExcelResave = geoReader(GEO_HEADER.replaceAll(',', ';'))!;

/**
 * The reduced Lyon extract (file 7: row index, date, price, surface, postal code as floats, coordinates) as geo-DVF
 * flat lines. It has no mutation id: lines of the same day, price and postal code are one mutation (a sale of several
 * flats repeats the total price on each line), which the marts then flag as a bulk sale, as they do for real DVF.
 */
export function fromLyonReduced(fields: string[], idMutation: string): string[] {
  const [, date, price, surface, cp, lon, lat] = fields;
  const codePostal = String(Math.round(Number(cp)));
  const arrondissement = Number(codePostal) - 69000;
  const row: Record<string, string> = {
    id_mutation: idMutation, date_mutation: date, numero_disposition: '000001', nature_mutation: 'Vente',
    valeur_fonciere: String(Number(price)), code_postal: codePostal, code_commune: String(69380 + arrondissement),
    nom_commune: `Lyon ${arrondissement}${arrondissement === 1 ? 'er' : 'e'} Arrondissement`, code_departement: '69',
    code_type_local: '2', type_local: 'Appartement', surface_reelle_bati: String(Number(surface)), longitude: lon, latitude: lat,
  };
  return COLUMNS.map((c) => row[c] ?? '');
}

/** The forms of real DVF files the backtest reads: Etalab geo-DVF, the same re-saved by another tool, the reduced Lyon extract. */
type Kind = 'geo-DVF' | 'Excel re-save' | 're-saved geo-DVF' | 'reduced extract';

const REDUCED_HEADER = /^,date_mutation,valeur_fonciere,surface_reelle_bati,code_postal,longitude,latitude$/;

/** The kind of a file from its header, and its line reader (undefined: not a DVF file the backtest reads). */
function kindOf(header: string): { kind: Kind; read: (line: string) => string[] } | undefined {
  if (REDUCED_HEADER.test(header)) return { kind: 'reduced extract', read: (line) => line.split(',') };
  const read = geoReader(header);
  if (!read) return undefined;
  const kind = header === GEO_HEADER ? 'geo-DVF' : header.includes(';') ? 'Excel re-save' : 're-saved geo-DVF';
  return { kind, read: kind === 'geo-DVF' ? (line) => splitDelimited(line, ',') : read };
}

async function headerOf(file: string): Promise<string> {
  for await (const line of fileLines(file)) return line.replace(/^\uFEFF/, '');
  return '';
}

/** The lines of a DVF file of any kind, in the Etalab form (fields in GEO_HEADER order). */
async function* geoRows(file: string, kind: Kind, read: (line: string) => string[]): AsyncGenerator<string[]> {
  const ids = new Map<string, string>();
  let header = true;
  for await (const line of fileLines(file)) {
    if (header) { header = false; continue; }
    if (!line) continue;
    const f = read(line);
    if (kind !== 'reduced extract') yield f;
    else {
      const key = `${f[1]}|${f[2]}|${f[4]}`;
      if (!ids.has(key)) ids.set(key, `${f[1].slice(0, 4)}-L${ids.size + 1}`);
      yield fromLyonReduced(f, ids.get(key)!);
    }
  }
}

const DATE = COLUMNS.indexOf('date_mutation');
const COMMUNE = COLUMNS.indexOf('code_commune');
const NOM_COMMUNE = COLUMNS.indexOf('nom_commune');
const DEPARTEMENT = COLUMNS.indexOf('code_departement');

interface FileInfo {
  file: string;
  kind: Kind;
  read: (line: string) => string[];
  lines: Map<string, number>; // "département|year" → lines
  communes: Map<string, string>; // code → name
}

function* walk(dir: string): Generator<string> {
  for (const e of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) yield* walk(p);
    else if (/\.(csv|txt)(\.gz)?$/.test(e.name)) yield p;
  }
}

/**
 * Every multi-year set of real DVF sales under `dvfDir` (any depth), rebuilt as a geo-DVF tree the pipeline imports
 * as it imports the published files. Files are recognised by their header (Etalab geo-DVF, plain or gzipped; its
 * Excel re-save; the reduced Lyon extract); others are skipped with the reason. Files of the same area (a shared
 * département and mostly the same communes) form one dataset; where two files hold the same département and year,
 * the one with more lines of it provides that year (a re-save of the same year gives the same lines). A dataset needs
 * two calendar years: the backtest values its last twelve months from the sales before.
 */
export async function buildRealDatasets(dvfDir: string, outDir: string, log: (m: string) => void = () => {}): Promise<RealDataset[]> {
  const infos: FileInfo[] = [];
  for (const file of walk(dvfDir)) {
    const header = await headerOf(file);
    const found = kindOf(header);
    if (!found) {
      log(`skipped ${path.relative(dvfDir, file)}: not geo-DVF (header ${JSON.stringify(header.slice(0, 60))})`);
      continue;
    }
    const info: FileInfo = { file, ...found, lines: new Map(), communes: new Map() };
    for await (const r of geoRows(file, info.kind, info.read)) {
      if (!r[DEPARTEMENT] || !/^\d{4}-\d\d-\d\d$/.test(r[DATE] ?? '')) continue; // no partition to put it in: left out
      const key = `${r[DEPARTEMENT]}|${r[DATE].slice(0, 4)}`;
      info.lines.set(key, (info.lines.get(key) ?? 0) + 1);
      if (r[COMMUNE]) info.communes.set(r[COMMUNE], r[NOM_COMMUNE]);
    }
    infos.push(info);
  }

  // Files of the same area: a shared département and a Jaccard index of their communes of at least one half.
  const sameArea = (a: FileInfo, b: FileInfo) => {
    const deps = (f: FileInfo) => new Set([...f.lines.keys()].map((k) => k.split('|')[0]));
    if (![...deps(a)].some((d) => deps(b).has(d))) return false;
    const shared = [...a.communes.keys()].filter((c) => b.communes.has(c)).length;
    return shared / (a.communes.size + b.communes.size - shared) >= 0.5;
  };
  const groups: FileInfo[][] = [];
  for (const info of infos) {
    const joined = groups.filter((g) => g.some((f) => sameArea(f, info)));
    const merged = [info, ...joined.flat()];
    for (const g of joined) groups.splice(groups.indexOf(g), 1);
    groups.push(merged);
  }

  const datasets: RealDataset[] = [];
  for (const files of groups) {
    const owner = new Map<string, FileInfo>(); // "département|year" → the file providing it
    // More lines win; on a tie, the published form (a re-save of the same year has the same lines).
    const rank = (f: FileInfo | undefined, key: string) => (f ? (f.lines.get(key) ?? 0) * 2 + (f.kind === 'geo-DVF' ? 1 : 0) : -1);
    for (const f of files) for (const key of f.lines.keys()) if (rank(f, key) > rank(owner.get(key), key)) owner.set(key, f);
    const annees = [...new Set([...owner.keys()].map((k) => Number(k.split('|')[1])))].sort();
    const departements = [...new Set([...owner.keys()].map((k) => k.split('|')[0]))].sort();
    const communes = new Map(files.flatMap((f) => [...f.communes]));
    const only = communes.size === 1 ? [...communes][0] : undefined;
    const slug = only ? only[0] : departements.join('-');
    const firstWords = new Set([...communes.values()].map((n) => n.split(' ')[0]));
    const area = firstWords.size === 1 ? `${[...firstWords][0]}, ` : ''; // Lyon, Paris, Marseille: their arrondissements
    const names = only ? `${only[1]} (${only[0]})` : `${area}${communes.size} communes of département ${departements.join(', ')}`;
    const kinds = [...new Set([...owner.values()].map((f) => f.kind))].sort().join(', ');
    const label = `real DVF: ${names}, ${annees[0]}–${annees.at(-1)} (${kinds})`;
    const used = [...new Set(owner.values())].map((f) => path.relative(dvfDir, f.file)).join(', ');
    if (annees.length < 2) {
      log(`skipped ${used}: ${names} has one year of sales (${annees.join('')}); the backtest needs two`);
      continue;
    }
    const tree = path.join(outDir, slug);
    // One pass over each file, its rows dispatched to the partitions it provides (a national file: ~100 of them).
    for (const f of new Set(owner.values())) {
      const outs = new Map<string, GeoWriter>();
      for (const [key, o] of owner) {
        const [dep, year] = key.split('|');
        if (o === f) outs.set(key, await geoWriter(path.join(tree, year, 'departements', `${dep}.csv.gz`)));
      }
      for await (const r of geoRows(f.file, f.kind, f.read)) await outs.get(`${r[DEPARTEMENT]}|${r[DATE]?.slice(0, 4)}`)?.write(r);
      for (const w of outs.values()) await w.end();
    }
    log(`${label}: ${used}`);
    datasets.push({ label, slug, tree, departements, annees });
  }
  return datasets.sort((a, b) => a.label.localeCompare(b.label));
}
