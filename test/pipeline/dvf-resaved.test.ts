// The pipeline reads a geo-DVF file re-saved by a spreadsheet (the Excel re-save of Toulon 2024–2025 S1, see
// shared/data/dvf/PROVENANCE.md) laid out for --from-dir, as it reads the published files; a file that is not geo-DVF
// is refused with a message naming it and what it lacks, never an engine error.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { runSource } from '../../pipeline/run';
import { lakeGlob, queryParquet, tempDir } from '../helpers/samples';

const RESAVE = path.resolve(import.meta.dirname, '../../../shared/data/dvf/geo-dvf_2024-2025S1_83137_toulon_excel-resave.csv.gz');

/** The tree --from-dir reads: {annee}/departements/{dep}.csv.gz. */
function treeWith(annee: number, dep: string, content: Buffer): string {
  const tree = tempDir('foncier-resave-tree-');
  fs.mkdirSync(path.join(tree, String(annee), 'departements'), { recursive: true });
  fs.writeFileSync(path.join(tree, String(annee), 'departements', `${dep}.csv.gz`), content);
  return tree;
}

describe('a geo-DVF file re-saved by Excel', () => {
  it('is imported: its 2025 lines, with their dates, prices and codes as published', async () => {
    const text = zlib.gunzipSync(fs.readFileSync(RESAVE)).toString('utf8').trimEnd().split('\n');
    const header = text[0].split(';');
    const col = (name: string) => header.indexOf(name);
    // Counted here from the file itself: lines dated 2025 (DD/MM/YYYY in the re-save), and their mutations.
    const lines2025 = text.slice(1).map((l) => l.split(';')).filter((f) => f[col('date_mutation')].endsWith('/2025'));
    expect(lines2025.length).toBeGreaterThan(1000);
    const data = tempDir('foncier-resave-data-');
    const [outcome] = await runSource({ source: 'dvf', fromDir: treeWith(2025, '83', fs.readFileSync(RESAVE)), annees: [2025], departements: ['83'], dataRoot: data });
    expect(outcome.error).toBeUndefined();
    expect(outcome.status).toBe('imported');
    const [row] = await queryParquet(
      `select count(*)::INTEGER as n, count(distinct id_mutation)::INTEGER as mutations, min(date_mutation)::VARCHAR as first,
         count(*) filter (code_postal is null or length(code_postal) <> 5)::INTEGER as bad_cp,
         sum(valeur_fonciere) as total from ${lakeGlob(data, 'dvf')}`,
    );
    expect(row.n).toBe(lines2025.length);
    expect(row.mutations).toBe(new Set(lines2025.map((f) => f[col('id_mutation')])).size);
    // Postal codes all back to five digits; only the lines without one have none.
    expect(row.bad_cp).toBe(lines2025.filter((f) => f[col('code_postal')] === '').length);
    // Decimal commas read as numbers: the sum of the prices of the 2025 lines, computed from the file's text.
    const total = lines2025.reduce((s, f) => s + Number(f[col('valeur_fonciere')].replace(',', '.') || 0), 0);
    expect(row.total).toBeCloseTo(total, 2);
  });

  it('a file without the geo-DVF columns is refused with its name and the columns it lacks', async () => {
    const bad = zlib.gzipSync('date;prix;surface\n01/02/2025;100000;50\n');
    const data = tempDir('foncier-resave-bad-');
    const tree = treeWith(2025, '83', bad);
    const [outcome] = await runSource({ source: 'dvf', fromDir: tree, annees: [2025], departements: ['83'], dataRoot: data });
    expect(outcome.status).toBe('failed');
    expect(outcome.error).toContain(path.join('2025', 'departements', '83.csv.gz'));
    expect(outcome.error).toMatch(/is not a geo-DVF file: its header lacks 40 of the 40 geo-DVF columns \(id_mutation, date_mutation/);
    expect(outcome.error).not.toMatch(/Binder Error/);
  });
});
