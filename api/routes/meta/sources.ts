// GET /v1/meta/sources (0 credits): what data is served: vintages, row counts and coverage per source, read from the
// pipeline manifest snapshot stored inside the serving database (so it always describes the data actually served)
// and from what each source declares (lib/sources: label, partitioning, the mart that serves it).
import { upgradeRecord, type PartitionRecord } from '../../../lib/lake';
import { declaredSources, PLANNED_SOURCES, sourceDeclaration } from '../../../lib/sources';
import { isoDay, z } from '../../params';
import { defineEndpoint } from '../../platform';

interface ManifestSnapshot {
  updated_at: string | null;
  sources: Record<string, { partitions?: Record<string, PartitionRecord> }>;
  reference?: Record<string, string>;
}

/** Declared sources, then the planned ones not declared yet (listed with available: false), in the published order. */
function listedSources(): Array<{ name: string; label: string }> {
  const planned = PLANNED_SOURCES.map((p) => sourceDeclaration(p.name) ?? p);
  const extra = declaredSources().filter((d) => !PLANNED_SOURCES.some((p) => p.name === d.name));
  return [...planned, ...extra];
}

const DEPARTEMENT = /^(\d{2}|2[AB]|97\d)$/;

const sourceSchema = z.object({
  source: z.string(),
  description: z.string(),
  available: z.boolean(),
  vintage: z.string().nullable().openapi({ description: 'Latest publication date of the imported files (Last-Modified of the release).' }),
  vintages: z.array(z.string()).openapi({ description: 'Every publication date present (partitions may come from different releases).' }),
  rows: z.number().int().openapi({ description: 'Source rows kept in the lake.' }),
  served_rows: z.number().int().nullable().openapi({ description: 'Rows of the served mart (DVF: sales, one per mutation; Filosofi: communes; ANIL: commune × segment).' }),
  partitions: z.number().int(),
  departements: z.array(z.string()),
  annees: z.array(z.number().int()).openapi({ description: 'DVF: years of sale; Filosofi: income vintages; ANIL: editions.' }),
  snapshot: z.string().nullable().openapi({ description: 'Snapshot sources (SIRENE): the date of the stock served (YYYY-MM-DD); null for the others.' }),
  date_min: z.string().nullable(),
  date_max: z.string().nullable().openapi({ description: 'Latest date of the served rows, today at most (rows dated in the future are source errors and do not count).' }),
  last_imported_at: z.string().nullable(),
});

export const metaSources = defineEndpoint({
  method: 'get',
  path: '/v1/meta/sources',
  tag: 'Meta',
  summary: 'Data sources, vintages and row counts',
  query: z.object({}),
  response: z.object({
    sources: z.array(sourceSchema),
    serving_database: z.object({ built_at: z.string(), manifest_updated_at: z.string().nullable(), reference: z.record(z.string(), z.string()) }),
  }),
  credits: 0,
  prepare: () => ({}),
  async handler(_p, { ctx, now }) {
    const listed = listedSources();
    const [[meta], tables] = await Promise.all([
      ctx.db.query<{ manifest: string; built_at: string }>('select manifest, built_at from meta_manifest'),
      ctx.db.query<{ table_name: string }>("select table_name from information_schema.tables where table_schema = 'main'"),
    ]);
    // Served rows (and dates) from the mart each source declares; table and column names come from the declarations.
    const present = new Set(tables.map((t) => t.table_name));
    const served = listed.flatMap((s) => {
      const decl = sourceDeclaration(s.name)?.served;
      return decl && present.has(decl.table) ? [{ source: s.name, ...decl }] : [];
    });
    const [counts] = served.length
      ? await ctx.db.query<Record<string, number | string | null>>(`select ${served.map((s, i) => [
        `(select count(*) from ${s.table}) as n${i}`,
        // A date after today is an error of the source (a diagnostic dated in the future): date_max never shows one.
        ...(s.dateColumn ? [`(select min(${s.dateColumn}) from ${s.table}) as dmin${i}`, `(select max(${s.dateColumn}) from ${s.table} where ${s.dateColumn} <= $today::DATE) as dmax${i}`] : []),
      ].join(', ')).join(', ')}`, { today: isoDay(now) })
      : [{}];
    const servedOf = (source: string) => {
      const i = served.findIndex((s) => s.source === source);
      return i < 0 ? undefined : { n: Number(counts[`n${i}`]), dmin: (counts[`dmin${i}`] ?? null) as string | null, dmax: (counts[`dmax${i}`] ?? null) as string | null };
    };
    const manifest = JSON.parse(meta.manifest) as ManifestSnapshot;
    const sources = listed.map(({ name: source, label: description }) => {
      const parts = Object.values(manifest.sources[source]?.partitions ?? {}).map(upgradeRecord);
      const vintages = [...new Set(parts.map((p) => p.vintage))].sort();
      const imported = parts.map((p) => p.imported_at).sort();
      const s = servedOf(source);
      return {
        source,
        description,
        available: parts.length > 0,
        vintage: vintages.at(-1) ?? null,
        vintages,
        rows: parts.reduce((n, p) => n + p.rows_kept, 0),
        served_rows: s?.n ?? null,
        partitions: parts.length,
        departements: [...new Set(parts.map((p) => String(p.partition.code_departement ?? '')).filter((d) => DEPARTEMENT.test(d)))].sort(),
        annees: [...new Set(parts.map((p) => p.partition.annee).filter((a): a is number => typeof a === 'number'))].sort(),
        snapshot: parts.map((p) => p.partition.snapshot).filter((d): d is string => typeof d === 'string').sort().at(-1) ?? null,
        date_min: s?.dmin ?? null,
        date_max: s?.dmax ?? null,
        last_imported_at: imported.at(-1) ?? null,
      };
    });
    return {
      sources,
      serving_database: { built_at: meta.built_at, manifest_updated_at: manifest.updated_at, reference: manifest.reference ?? {} },
    };
  },
});
