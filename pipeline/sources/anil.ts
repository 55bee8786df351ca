// ANIL "carte des loyers" source: predicted advertised rents per m² (charges included, unfurnished) per commune, in four
// files per edition (all flats, T1–T2, T3+, houses), one lake partition per file (scope FR-<segment>, edition year).
import fs from 'node:fs';
import { communeCode, decodeText, parseFrenchNumber, readTable } from './text';
import { ANIL_COLUMNS, writeNationalPartition } from './national';
import { anilDeclaration } from '../../lib/sources/anil';
import type { ImportContext, ImportItem, ImportResult, Part, Selection, Source } from './types';

// data.gouv.fr dataset "Carte des loyers - Indicateurs de loyers d'annonce par commune en <year>": one folder per
// edition under this base (a mirror laid out the same way can be given with --base-url).
const ANIL_BASE = 'https://static.data.gouv.fr/resources';
const datasetFolder = (annee: number) => `carte-des-loyers-indicateurs-de-loyers-dannonce-par-commune-en-${annee}`;

/** Segment → published file name of an edition. */
export const ANIL_FILES = {
  appartement: 'pred-app-mef-dhup.csv',
  appartement_t1_t2: 'pred-app12-mef-dhup.csv',
  appartement_t3_plus: 'pred-app3-mef-dhup.csv',
  maison: 'pred-mai-mef-dhup.csv',
} as const;

export type AnilSegment = keyof typeof ANIL_FILES;

interface AnilRow {
  code_commune: string;
  segment: AnilSegment;
  libelle_commune: string | null;
  id_zone: string | null;
  loyer_m2_cc: number;
  loyer_m2_cc_bas: number | null;
  loyer_m2_cc_haut: number | null;
  niveau_prediction: string | null;
  nb_observations_commune: number | null;
  nb_observations_maille: number | null;
  r2_ajuste: number | null;
  millesime: number;
}

/** Parses one ANIL file (dotted column names such as lwr.IPm2, decimal commas, CRLF or LF, optional quotes). */
export function parseAnil(text: string, segment: AnilSegment, millesime: number): { rows: AnilRow[]; rowsRead: number; anomalies: Record<string, number> } {
  const { header, rows } = readTable(text);
  const byLower = new Map(header.map((h) => [h.toLowerCase(), h]));
  const col = (...names: string[]) => names.map((n) => byLower.get(n.toLowerCase())).find((h) => h !== undefined);
  const c = {
    insee: col('INSEE_C', 'INSEE_COM', 'INSEE'), libgeo: col('LIBGEO'), zone: col('id_zone'), loyer: col('loypredm2'),
    lwr: col('lwr.IPm2'), upr: col('upr.IPm2'), typpred: col('TYPPRED'), nbCom: col('nbobs_com'), nbMail: col('nbobs_mail'), r2: col('R2_adj'),
  };
  if (!c.insee || !c.loyer) throw new Error(`not an ANIL rent file: INSEE_C and loypredm2 columns expected, got ${header.slice(0, 6).join(';')}…`);
  const anomalies: Record<string, number> = { invalid_insee: 0, duplicate_insee: 0, missing_loyer: 0, unparsable_value: 0, prediction_not_commune: 0 };
  const num = (r: Record<string, string>, k: string | undefined): number | null => {
    if (!k || r[k] === '' || r[k] === undefined || /^(na|nan)$/i.test(r[k])) return null;
    const n = parseFrenchNumber(r[k]);
    if (n === undefined) anomalies.unparsable_value++;
    return n ?? null;
  };
  const seen = new Set<string>();
  const out: AnilRow[] = [];
  for (const r of rows) {
    const code = communeCode(r[c.insee]);
    if (!code) {
      anomalies.invalid_insee++;
      continue;
    }
    if (seen.has(code)) {
      anomalies.duplicate_insee++;
      continue;
    }
    const loyer = num(r, c.loyer);
    if (loyer === null) {
      anomalies.missing_loyer++;
      continue;
    }
    seen.add(code);
    const niveau = c.typpred && r[c.typpred] ? r[c.typpred].toLowerCase() : null;
    if (niveau !== 'commune') anomalies.prediction_not_commune++;
    const int = (k: string | undefined) => {
      const v = num(r, k);
      return v === null ? null : Math.round(v);
    };
    out.push({
      code_commune: code, segment, libelle_commune: c.libgeo ? r[c.libgeo] || null : null, id_zone: c.zone ? r[c.zone] || null : null,
      loyer_m2_cc: loyer, loyer_m2_cc_bas: num(r, c.lwr), loyer_m2_cc_haut: num(r, c.upr), niveau_prediction: niveau,
      nb_observations_commune: int(c.nbCom), nb_observations_maille: int(c.nbMail), r2_ajuste: num(r, c.r2), millesime,
    });
  }
  return { rows: out, rowsRead: rows.length, anomalies };
}

export const anilSource: Source = {
  ...anilDeclaration,

  parts(sel: Selection): Part[] {
    const base = (sel.baseUrl ?? ANIL_BASE).replace(/\/$/, '');
    return sel.annees.flatMap((annee) =>
      (Object.entries(ANIL_FILES) as Array<[AnilSegment, string]>).map(([segment, name]) => ({
        source: 'anil', key: `FR-${segment}/${annee}`, format: segment, relPath: `${annee}/${name}`,
        url: `${base}/${datasetFolder(annee)}/${name}`, annee, partitions: [{ scope: `FR-${segment}`, annee }],
      })),
    );
  },

  batchKey: (part) => part.key,

  async importFiles(ctx: ImportContext, items: ImportItem[]): Promise<ImportResult[]> {
    const results: ImportResult[] = [];
    for (const item of items) {
      const segment = item.part.format as AnilSegment;
      const { text, encoding } = decodeText(fs.readFileSync(item.file.path));
      const parsed = parseAnil(text, segment, item.part.annee!);
      const anomalies = Object.fromEntries(Object.entries(parsed.anomalies).filter(([, n]) => n > 0));
      ctx.log(`anil ${segment} ${item.part.annee} (${encoding}): ${parsed.rows.length} communes; ${Object.entries(anomalies).map(([k, n]) => `${k} ${n}`).join(', ') || 'no anomaly'}`);
      const partition = await writeNationalPartition(ctx, {
        source: 'anil', scope: `FR-${segment}`, annee: item.part.annee!, columns: ANIL_COLUMNS, rows: parsed.rows as unknown as Array<Record<string, unknown>>,
        item, rowsRead: parsed.rowsRead, anomalies,
      });
      results.push({ partitions: [partition], fileAnomalies: {} });
    }
    return results;
  },
};
