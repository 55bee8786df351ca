// SIRENE source plug-in: Etalab's géo-SIRENE establishment files (one per département, Paris per arrondissement) and
// INSEE's StockUniteLegale, imported together as one dated snapshot of the real-estate professionals
// (lib/sources/sirene.ts). Files are read by DuckDB where they lie (pipeline/sources/sirene/stage.ts); the snapshot's
// date is the newest processing day in the establishment files.
import { lit, one, run } from '../../lib/duck';
import { SIRENE_SCHEMA, sireneDeclaration } from '../../lib/sources/sirene';
import { writeQueryPartition } from './national';
import { joinBusinesses, stageEtablissements, stageUnitesLegales } from './sirene/stage';
import type { ImportContext, ImportItem, ImportResult, Part, Selection, Source } from './types';

/** Both publishers are on files.data.gouv.fr; a mirror laid out the same way replaces it with --base-url. */
export const SIRENE_BASE = 'https://files.data.gouv.fr';
export const GEO_SIRENE_DIR = 'geo-sirene/last/dep';
export const UNITES_LEGALES_REL = 'insee-sirene/StockUniteLegale_utf8.zip';

/** The géo-SIRENE files of a département: Paris is published per arrondissement (75101 … 75120). */
export function geoSireneFiles(dep: string): string[] {
  return dep === '75' ? Array.from({ length: 20 }, (_, i) => `751${String(i + 1).padStart(2, '0')}`) : [dep];
}

const SNAPSHOT_BATCH = 'snapshot';

export const sireneSource: Source = {
  ...sireneDeclaration,

  parts(sel: Selection): Part[] {
    const base = (sel.baseUrl ?? SIRENE_BASE).replace(/\/$/, '');
    const geo = sel.departements.flatMap(geoSireneFiles).map((f): Part => {
      const relPath = `${GEO_SIRENE_DIR}/geo_siret_${f}.csv.gz`;
      return { source: 'sirene', key: `dep/${f}`, format: 'geo-sirene', relPath, url: `${base}/${relPath}`, partitions: [], localAlternatives: [relPath.replace(/\.gz$/, '')] };
    });
    const ul: Part = {
      source: 'sirene', key: 'unites-legales', format: 'stock-unite-legale', relPath: UNITES_LEGALES_REL, url: `${base}/${UNITES_LEGALES_REL}`,
      partitions: [], zipEntry: 'StockUniteLegale_utf8.csv', localAlternatives: ['insee-sirene/StockUniteLegale_utf8.csv', 'insee-sirene/StockUniteLegale_utf8.csv.gz'],
    };
    return [...geo, ul];
  },

  // One snapshot = every file of the selection in one import (the run imports them all when any changed).
  batchKey: () => SNAPSHOT_BATCH,

  async importFiles(ctx: ImportContext, items: ImportItem[]): Promise<ImportResult[]> {
    const geo = items.filter((i) => i.part.format === 'geo-sirene');
    const ul = items.filter((i) => i.part.format === 'stock-unite-legale');
    if (!geo.length || ul.length !== 1) {
      throw new Error('a SIRENE snapshot needs its géo-SIRENE files and the StockUniteLegale file, imported together');
    }
    const anomalies: Record<string, number> = {};
    const add = (a: Record<string, number>) => {
      for (const [k, v] of Object.entries(a)) if (v) anomalies[k] = (anomalies[k] ?? 0) + v;
    };
    let rowsRead = 0;
    let latest: string | null = null;
    // File by file: each file's communes get their reference point from that file, and DuckDB holds one file at a time.
    await run(ctx.conn, 'DROP TABLE IF EXISTS sirene_all_etab');
    for (const [i, item] of geo.entries()) {
      ctx.progress?.(`géo-SIRENE ${item.part.key}`, i, geo.length + 2);
      const report = await stageEtablissements(ctx.conn, [item.file.path]);
      rowsRead += report.rowsRead;
      add(report.anomalies);
      if (report.latestTreatment && (!latest || report.latestTreatment > latest)) latest = report.latestTreatment;
      const fichier = lit(item.part.key);
      await run(ctx.conn, i === 0
        ? `CREATE TEMP TABLE sirene_all_etab AS SELECT *, ${fichier} AS fichier FROM sirene_etablissements_stg`
        : `INSERT INTO sirene_all_etab SELECT *, ${fichier} AS fichier FROM sirene_etablissements_stg`);
    }
    // A SIRET in two files (never seen, but the files are independent publications) is kept once.
    await run(ctx.conn, `CREATE OR REPLACE TEMP TABLE sirene_etablissements_stg AS
      SELECT * FROM sirene_all_etab QUALIFY row_number() OVER (PARTITION BY siret ORDER BY fichier) = 1`);
    const { dup } = (await one<{ dup: number }>(ctx.conn, 'SELECT (SELECT count(*) FROM sirene_all_etab) - (SELECT count(*) FROM sirene_etablissements_stg) AS dup'))!;
    add({ duplicate_siret: Number(dup) });
    await run(ctx.conn, 'DROP TABLE sirene_all_etab');

    ctx.progress?.('StockUniteLegale', geo.length, geo.length + 2);
    const units = await stageUnitesLegales(ctx.conn, [ul[0].file.path], 'SELECT siren FROM sirene_etablissements_stg');
    add(units.anomalies);
    ctx.progress?.('snapshot', geo.length + 1, geo.length + 2);
    await joinBusinesses(ctx.conn);
    // The stock's date; files without processing dates fall back to their publication date.
    const snapshot = latest ?? geo.map((g) => g.file.vintage).sort().at(-1)!;
    const { kept } = (await one<{ kept: number }>(ctx.conn, 'SELECT count(*)::INTEGER AS kept FROM sirene_businesses'))!;
    ctx.log(`sirene ${snapshot}: ${kept} establishments kept of ${rowsRead} lines; ${Object.entries(anomalies).map(([k, n]) => `${k} ${n}`).join(', ') || 'no anomaly'}`);
    const columns = Object.keys(SIRENE_SCHEMA).filter((c) => c !== 'imported_at');
    const partition = await writeQueryPartition(ctx, {
      source: 'sirene', partition: { snapshot }, item: geo[0], rowsRead, anomalies,
      select: `SELECT ${columns.join(', ')}, ${lit(ctx.now.toISOString())}::TIMESTAMP AS imported_at
        FROM sirene_businesses JOIN (SELECT siret, fichier FROM sirene_etablissements_stg) USING (siret) ORDER BY code_departement, siret`,
    });
    // The snapshot's one partition is reported by its first file; the other files own no partition of their own.
    return items.map((item) => ({ partitions: item === geo[0] ? [partition] : [], fileAnomalies: {} }));
  },
};
