// The real multi-year DVF samples of shared/data/dvf (see its PROVENANCE.md) turned into geo-DVF trees that the
// pipeline imports as it imports the published files: Toulon 2023–2024 as published, Toulon 2025 S1 rebuilt from its
// Excel re-save, Lyon flats 2014–2018 rebuilt from a reduced extract. Used by `npm run backtest -- --real-samples`.
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import zlib from 'node:zlib';

export interface RealDataset {
  /** Section of docs/valuation.md. */
  label: string;
  /** geo-DVF tree: {annee}/departements/{dep}.csv.gz */
  tree: string;
  departements: string[];
  annees: number[];
}

const GEO_HEADER =
  'id_mutation,date_mutation,numero_disposition,nature_mutation,valeur_fonciere,adresse_numero,adresse_suffixe,adresse_nom_voie,' +
  'adresse_code_voie,code_postal,code_commune,nom_commune,code_departement,ancien_code_commune,ancien_nom_commune,id_parcelle,' +
  'ancien_id_parcelle,numero_volume,lot1_numero,lot1_surface_carrez,lot2_numero,lot2_surface_carrez,lot3_numero,lot3_surface_carrez,' +
  'lot4_numero,lot4_surface_carrez,lot5_numero,lot5_surface_carrez,nombre_lots,code_type_local,type_local,surface_reelle_bati,' +
  'nombre_pieces_principales,code_nature_culture,nature_culture,code_nature_culture_speciale,nature_culture_speciale,surface_terrain,' +
  'longitude,latitude';
export const COLUMNS = GEO_HEADER.split(',');

const csvField = (v: string) => (/[",\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v);

async function* lines(file: string): AsyncGenerator<string> {
  const input = fs.createReadStream(file).pipe(zlib.createGunzip());
  for await (const line of readline.createInterface({ input, crlfDelay: Infinity })) yield line;
}

/** Streams `rows` (already in geo-DVF column order) into a gzipped geo-DVF file. */
async function writeGeo(file: string, rows: AsyncIterable<string[]>): Promise<number> {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const gz = zlib.createGzip();
  const out = fs.createWriteStream(file);
  gz.pipe(out);
  const done = new Promise<void>((resolve, reject) => (out.on('finish', resolve), out.on('error', reject)));
  gz.write(`${GEO_HEADER}\n`);
  let n = 0;
  for await (const r of rows) {
    if (!gz.write(`${r.map(csvField).join(',')}\n`)) await new Promise((resolve) => gz.once('drain', resolve));
    n++;
  }
  gz.end();
  await done;
  return n;
}

/**
 * One line of the Excel re-save (file 5 of PROVENANCE.md) back in the Etalab form: `;` → `,`, DD/MM/YYYY → ISO,
 * `numero_disposition` zero-padded to 6 and a purely numeric `adresse_code_voie` to 4 (the only three differences).
 */
export function fromExcelResave(line: string): string[] {
  const f = line.split(';');
  if (f.length !== COLUMNS.length) throw new Error(`expected ${COLUMNS.length} fields, got ${f.length}: ${line.slice(0, 80)}`);
  const [d, m, y] = f[1].split('/');
  f[1] = `${y}-${m}-${d}`;
  if (f[2]) f[2] = f[2].padStart(6, '0');
  if (/^\d+$/.test(f[8])) f[8] = f[8].padStart(4, '0');
  return f;
}

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

export async function buildRealDatasets(dvfDir: string, outDir: string): Promise<RealDataset[]> {
  const toulon = path.join(outDir, 'toulon');
  for (const year of [2023, 2024]) {
    const dest = path.join(toulon, String(year), 'departements', '83.csv.gz');
    fs.mkdirSync(path.dirname(dest), { recursive: true });
    fs.copyFileSync(path.join(dvfDir, `geo-dvf_${year}_83137_toulon.csv.gz`), dest);
  }
  await writeGeo(path.join(toulon, '2025', 'departements', '83.csv.gz'), (async function* () {
    let header = true;
    for await (const line of lines(path.join(dvfDir, 'geo-dvf_2024-2025S1_83137_toulon_excel-resave.csv.gz'))) {
      if (header) { header = false; continue; }
      if (!line) continue;
      const f = fromExcelResave(line);
      if (f[1].startsWith('2025-')) yield f; // its 2024 part is file 4's, line for line
    }
  })());

  const lyon = path.join(outDir, 'lyon');
  const lyonYears = [2014, 2015, 2016, 2017, 2018];
  for (const year of lyonYears) {
    const ids = new Map<string, string>();
    await writeGeo(path.join(lyon, String(year), 'departements', '69.csv.gz'), (async function* () {
      let header = true;
      for await (const line of lines(path.join(dvfDir, 'lyon_appartements_2014-2018_reduced', `${year}.csv.gz`))) {
        if (header) { header = false; continue; }
        if (!line) continue;
        const f = line.split(',');
        const key = `${f[1]}|${f[2]}|${f[4]}`;
        if (!ids.has(key)) ids.set(key, `${year}-L${ids.size + 1}`);
        yield fromLyonReduced(f, ids.get(key)!);
      }
    })());
  }
  return [
    { label: 'real DVF: Toulon 2023 – 2025 S1 (geo-DVF)', tree: toulon, departements: ['83'], annees: [2023, 2024, 2025] },
    { label: 'real DVF: Lyon flats 2014–2018 (reduced extract)', tree: lyon, departements: ['69'], annees: lyonYears },
  ];
}
