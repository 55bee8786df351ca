// The declared half of the source contract (lib/sources) agrees with what the importers write, and the CLI takes each
// source's own defaults.
import { describe, expect, it } from 'vitest';
import { Lake } from '../../lib/lake';
import { sourceDeclaration } from '../../lib/sources';
import { parseAnnees, parseDepartements } from '../../pipeline/cli';
import { runSource, SOURCES } from '../../pipeline/run';
import { queryParquet, sampleTree, tempDir } from '../helpers/samples';

describe('source declarations', () => {
  it('an unloaded DVF reads as an empty table with exactly the columns and types of an imported one', async () => {
    const empty = tempDir();
    const loaded = tempDir();
    await runSource({ source: 'dvf', fromDir: sampleTree(), annees: [2021], departements: ['33'], dataRoot: loaded });
    const decl = sourceDeclaration('dvf')!;
    const shape = async (root: string) => (await queryParquet(`describe select * from ${new Lake(root).readSql(decl)}`))
      .map((r) => `${r.column_name} ${r.column_type}`).sort();
    const [a, b] = [await shape(empty), await shape(loaded)];
    expect(a).toEqual(b);
    expect(a).toContain('annee INTEGER');
  });

  it('gives each source its CLI defaults: DVF leaves Alsace-Moselle out and starts in 2014; vintages are the source’s', () => {
    const dvf = parseDepartements(undefined, SOURCES.dvf.defaults.departements);
    expect(dvf).toHaveLength(97); // 101 départements less 57, 67, 68 and 976
    for (const d of ['57', '67', '68', '976']) expect(dvf).not.toContain(d);
    expect(parseAnnees(undefined, new Date('2026-03-01T00:00:00Z'), SOURCES.dvf)).toEqual([2021, 2022, 2023, 2024, 2025]);
    expect(() => parseAnnees('2013-2015', new Date(), SOURCES.dvf)).toThrow(/starts in 2014/);
    expect(parseAnnees(undefined, new Date(), SOURCES.filosofi)).toEqual([2020]);
    // a source publishing earlier vintages is not held to DVF's first year
    expect(parseAnnees('2013', new Date(), SOURCES.filosofi)).toEqual([2013]);
    expect(parseAnnees(undefined, new Date(), SOURCES.anil)).toEqual([2024]);
  });
});
