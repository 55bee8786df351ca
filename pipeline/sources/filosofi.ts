// INSEE Filosofi source: the commune file of the "base comparateur de territoires" (CODGEO, NBMENFISC<yy>, MED<yy>),
// one lake partition per income vintage (scope FR). Secrecy markers become nulls with their reason kept.
import fs from 'node:fs';
import { communeCode, decodeText, parseFrenchNumber, readTable } from './text';
import { FILOSOFI_COLUMNS, writeNationalPartition } from './national';
import { filosofiDeclaration } from '../../lib/sources/filosofi';
import type { ImportContext, ImportItem, ImportResult, Part, Selection, Source } from './types';

// INSEE publishes each vintage under a new page number: this is the 2020 one; --base-url selects another.
const FILOSOFI_BASE = 'https://www.insee.fr/fr/statistiques/fichier/6692392';

type RevenuStatut = 'ok' | 'secret' | 'not_available' | 'missing' | 'unparsable';

interface FilosofiRow {
  code_commune: string;
  nb_menages_fiscaux: number | null;
  revenu_median_uc: number | null;
  revenu_median_statut: RevenuStatut;
  annee_revenus: number;
}

interface FilosofiParse {
  annee: number;
  rows: FilosofiRow[];
  rowsRead: number;
  anomalies: Record<string, number>;
}

/** One Filosofi value: a number, or null with why ("s" = statistical secrecy, "nd" = not available). */
export function filosofiValue(s: string): { value: number | null; statut: RevenuStatut } {
  const t = s.trim().toLowerCase();
  if (t === '') return { value: null, statut: 'missing' };
  if (t === 's') return { value: null, statut: 'secret' };
  if (t === 'nd') return { value: null, statut: 'not_available' };
  const n = parseFrenchNumber(t);
  return n === undefined ? { value: null, statut: 'unparsable' } : { value: n, statut: 'ok' };
}

/** Parses a Filosofi commune file; the vintage comes from the MED<yy> column (MED20 → 2020), else from `fileYear`. */
export function parseFilosofi(text: string, fileYear?: number): FilosofiParse {
  const { header, rows } = readTable(text);
  const upper = header.map((h) => h.toUpperCase());
  const col = (re: RegExp) => header[upper.findIndex((h) => re.test(h))];
  const codCol = col(/^CODGEO$/);
  const medCol = col(/^MED\d{2}$/) ?? col(/^MED$/);
  const menCol = col(/^NBMENFISC\d{2}$/) ?? col(/^NBMENFISC$/);
  if (!codCol || !medCol) throw new Error(`not a Filosofi commune file: CODGEO and MED<yy> columns expected, got ${header.slice(0, 5).join(';')}…`);
  const yy = /(\d{2})$/.exec(medCol)?.[1];
  const annee = yy ? 2000 + Number(yy) : fileYear;
  if (!annee) throw new Error('Filosofi vintage unknown: no MED<yy> column and no year in the file name');
  if (fileYear && yy && fileYear !== annee) throw new Error(`Filosofi file for ${fileYear} has ${medCol} (vintage ${annee})`);

  const anomalies: Record<string, number> = { invalid_codgeo: 0, duplicate_codgeo: 0, med_secret: 0, med_not_available: 0, med_missing: 0, med_unparsable: 0, menages_unparsable: 0 };
  const seen = new Set<string>();
  const out: FilosofiRow[] = [];
  for (const r of rows) {
    const code = communeCode(r[codCol]);
    if (!code) {
      anomalies.invalid_codgeo++;
      continue;
    }
    if (seen.has(code)) {
      anomalies.duplicate_codgeo++;
      continue;
    }
    seen.add(code);
    const med = filosofiValue(r[medCol]);
    if (med.statut !== 'ok') anomalies[`med_${med.statut}`]++;
    const men = menCol ? filosofiValue(r[menCol]) : { value: null, statut: 'missing' as const };
    if (men.statut === 'unparsable') anomalies.menages_unparsable++;
    out.push({ code_commune: code, nb_menages_fiscaux: men.value, revenu_median_uc: med.value, revenu_median_statut: med.statut, annee_revenus: annee });
  }
  return { annee, rows: out, rowsRead: rows.length, anomalies };
}

export const filosofiSource: Source = {
  ...filosofiDeclaration,

  parts(sel: Selection): Part[] {
    const base = (sel.baseUrl ?? FILOSOFI_BASE).replace(/\/$/, '');
    return sel.annees.map((annee) => {
      const relPath = `base-cc-filosofi-${annee}_CSV.zip`;
      return {
        source: 'filosofi', key: `FR/${annee}`, format: 'filosofi-com', relPath, url: `${base}/${relPath}`, annee, partitions: [{ scope: 'FR', annee }],
        // The archive also holds other levels; under --from-dir the bare commune file is accepted too.
        zipEntry: `cc_filosofi_${annee}_COM.csv`,
        localAlternatives: [`cc_filosofi_${annee}_COM.csv`, `cc_filosofi_${annee}_COM.csv.gz`],
      };
    });
  },

  batchKey: (part) => part.key,

  async importFiles(ctx: ImportContext, items: ImportItem[]): Promise<ImportResult[]> {
    const results: ImportResult[] = [];
    for (const item of items) {
      const { text, encoding } = decodeText(fs.readFileSync(item.file.path));
      const parsed = parseFilosofi(text, item.part.annee);
      const anomalies = Object.fromEntries(Object.entries(parsed.anomalies).filter(([, n]) => n > 0));
      ctx.log(`filosofi ${parsed.annee} (${encoding}): ${parsed.rows.length} communes; ${Object.entries(anomalies).map(([k, n]) => `${k} ${n}`).join(', ') || 'no anomaly'}`);
      const partition = await writeNationalPartition(ctx, {
        source: 'filosofi', scope: 'FR', annee: parsed.annee, columns: FILOSOFI_COLUMNS, rows: parsed.rows as unknown as Array<Record<string, unknown>>,
        item, rowsRead: parsed.rowsRead, anomalies,
      });
      results.push({ partitions: [partition], fileAnomalies: {} });
    }
    return results;
  },
};
