// Geo-DVF files as other tools re-save them: a spreadsheet (`;` separator, DD/MM/YYYY dates, decimal commas, codes
// that lost their leading zeros) or a dataframe (columns in another order, an index column, float codes `83137.0`).
// geoReader() reads their lines back in the Etalab form; normaliseGeoDvfFile() gives the pipeline a file it can parse
// as published, or refuses with a message naming the file and what is wrong. Shared by the pipeline's DVF source and
// the backtest's real samples.
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import zlib from 'node:zlib';
import { once } from 'node:events';
import { splitDelimited } from './csv';

/** The Etalab geo-DVF header, as published. */
export const GEO_HEADER =
  'id_mutation,date_mutation,numero_disposition,nature_mutation,valeur_fonciere,adresse_numero,adresse_suffixe,adresse_nom_voie,' +
  'adresse_code_voie,code_postal,code_commune,nom_commune,code_departement,ancien_code_commune,ancien_nom_commune,id_parcelle,' +
  'ancien_id_parcelle,numero_volume,lot1_numero,lot1_surface_carrez,lot2_numero,lot2_surface_carrez,lot3_numero,lot3_surface_carrez,' +
  'lot4_numero,lot4_surface_carrez,lot5_numero,lot5_surface_carrez,nombre_lots,code_type_local,type_local,surface_reelle_bati,' +
  'nombre_pieces_principales,code_nature_culture,nature_culture,code_nature_culture_speciale,nature_culture_speciale,surface_terrain,' +
  'longitude,latitude';

export const COLUMNS = GEO_HEADER.split(',');

/** Numeric geo-DVF columns, whose decimal comma a French spreadsheet may have written. */
const DECIMALS = new Set(['valeur_fonciere', 'surface_reelle_bati', 'surface_terrain', 'longitude', 'latitude', 'nombre_pieces_principales',
  ...[1, 2, 3, 4, 5].map((k) => `lot${k}_surface_carrez`)]);

/** The separator of a header line: `;` when it splits it more than `,` does. */
const separatorOf = (header: string) => (header.split(';').length > header.split(',').length ? ';' : ',');

/** The column names of a header line (a byte-order mark and surrounding spaces removed). */
const namesOf = (header: string) => splitDelimited(header.replace(/^\uFEFF/, ''), separatorOf(header)).map((n) => n.trim());

/** The geo-DVF columns a header lacks (none: it can be read). */
export function missingColumns(header: string): string[] {
  const names = new Set(namesOf(header));
  return COLUMNS.filter((c) => !names.has(c));
}

/**
 * A reader of geo-DVF lines written by another tool, back in the Etalab form: the columns found by name (any order,
 * extra columns such as a pandas index ignored), `,` or `;` as separator, and what spreadsheets and dataframes do to
 * the values undone — DD/MM/YYYY dates to ISO, decimal commas to points, float codes (`83137.0`) to integers, and
 * the zeros they drop put back (`numero_disposition` to 6 digits, a numeric `adresse_code_voie` to 4, postal and
 * commune codes to 5, the département to 2, the parcel id to 14). Undefined when a geo-DVF column is missing.
 */
export function geoReader(header: string): ((line: string) => string[]) | undefined {
  const sep = separatorOf(header);
  const names = namesOf(header);
  const at = COLUMNS.map((c) => names.indexOf(c));
  if (at.includes(-1)) return undefined;
  const pad = (v: string, n: number) => (/^\d+$/.test(v) ? v.padStart(n, '0') : v);
  const widths: Record<string, number> = {
    numero_disposition: 6, adresse_code_voie: 4, code_postal: 5, code_commune: 5, ancien_code_commune: 5, code_departement: 2,
  };
  return (line) => {
    const f = splitDelimited(line, sep);
    if (f.length !== names.length) throw new Error(`expected ${names.length} fields, got ${f.length}: ${line.slice(0, 80)}`);
    return COLUMNS.map((c, i) => {
      let v = f[at[i]];
      const dmy = c === 'date_mutation' && /^(\d\d)\/(\d\d)\/(\d{4})$/.exec(v);
      if (dmy) v = `${dmy[3]}-${dmy[2]}-${dmy[1]}`;
      if (DECIMALS.has(c) && /^-?\d+,\d+$/.test(v)) v = v.replace(',', '.');
      if (c in widths) v = pad(v.replace(/^(\d+)\.0+$/, '$1'), widths[c]);
      if (c === 'id_parcelle' && /^\d[0-9A-Z]{12}$/.test(v)) v = `0${v}`; // a parcel of départements 01–09 that lost its zero
      return v;
    });
  };
}

/** A field of a comma-separated line, quoted when it must be. */
export const csvField = (v: string) => (/[",\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v);

/** The lines of a text file, gunzipped when its name ends in .gz. */
export async function* fileLines(file: string): AsyncGenerator<string> {
  const raw = fs.createReadStream(file);
  const input = file.endsWith('.gz') ? raw.pipe(zlib.createGunzip()) : raw;
  for await (const line of readline.createInterface({ input, crlfDelay: Infinity })) yield line;
}

/** The first line of a file (gunzipped when .gz), without a byte-order mark. */
export async function headerOf(file: string): Promise<string> {
  for await (const line of fileLines(file)) return line.replace(/^\uFEFF/, '');
  return '';
}

/**
 * A geo-DVF file the pipeline's parser can read: the file itself when its header is Etalab's, else a copy in `tmpDir`
 * rewritten by geoReader (a spreadsheet's or a dataframe's re-save). A file that is neither is refused with an Error
 * naming it and what is wrong (the columns it lacks, or the line whose fields do not match its header).
 */
export async function normaliseGeoDvfFile(file: string, tmpDir: string): Promise<string> {
  const header = await headerOf(file);
  if (header === GEO_HEADER) return file;
  const read = geoReader(header);
  if (!read) {
    const missing = missingColumns(header);
    throw new Error(
      `${file} is not a geo-DVF file: its header lacks ${missing.length} of the ${COLUMNS.length} geo-DVF columns (${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', …' : ''})`,
    );
  }
  fs.mkdirSync(tmpDir, { recursive: true });
  const out = path.join(tmpDir, `${path.basename(file).replace(/\.gz$/, '').replace(/\.csv$/, '')}.normalised.csv.gz`);
  const gzip = zlib.createGzip({ level: 1 });
  const sink = fs.createWriteStream(out);
  gzip.pipe(sink);
  const write = async (s: string) => {
    if (!gzip.write(`${s}\n`)) await once(gzip, 'drain');
  };
  try {
    await write(GEO_HEADER);
    let n = 0;
    for await (const line of fileLines(file)) {
      n++;
      if (n === 1 || !line) continue;
      let row: string[];
      try {
        row = read(line);
      } catch (e) {
        throw new Error(`${file}, line ${n}: ${(e as Error).message}`);
      }
      await write(row.map(csvField).join(','));
    }
  } finally {
    gzip.end();
    await once(sink, 'close');
  }
  return out;
}
