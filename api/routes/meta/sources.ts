// GET /v1/meta/sources (0 credits): what data is served: vintages, row counts and coverage per source, read from the
// pipeline manifest snapshot stored inside the serving database (so it always describes the data actually served).
// National sources (Filosofi, ANIL) have partitions keyed by a scope (FR, FR-<segment>) and their vintage year.
import { z } from '../../params';
import { defineEndpoint } from '../../platform';

interface PartitionInfo {
  code_departement: string;
  annee: number;
  vintage: string;
  rows_kept: number;
  source_url: string;
  source_format: string;
  imported_at: string;
}

interface ManifestSnapshot {
  updated_at: string | null;
  sources: Record<string, { partitions?: Record<string, PartitionInfo> }>;
  reference?: Record<string, string>;
}

/** Sources the service is built to serve; those not loaded yet are listed with available: false. */
const KNOWN_SOURCES: Record<string, string> = {
  dvf: 'Demandes de valeurs foncières (DGFiP, geo-DVF by Etalab): property sales',
  dpe: 'Diagnostics de performance énergétique (ADEME)',
  bdnb: 'Base de données nationale des bâtiments (CSTB)',
  filosofi: 'Household income per commune (INSEE Filosofi)',
  anil: 'Rent indicators (ANIL carte des loyers)',
  sirene: 'Business registry (INSEE SIRENE)',
};

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
  date_min: z.string().nullable(),
  date_max: z.string().nullable(),
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
  async handler(_p, { ctx }) {
    const [[meta], [dvf], [served]] = await Promise.all([
      ctx.db.query<{ manifest: string; built_at: string }>('select manifest, built_at from meta_manifest'),
      ctx.db.query<{ n: number; dmin: string | null; dmax: string | null }>(
        'select count(*) as n, min(date_mutation) as dmin, max(date_mutation) as dmax from ventes',
      ),
      ctx.db.query<{ filosofi: number; anil: number }>(
        'select (select count(*) from revenus_communes) as filosofi, (select count(*) from loyers_communes) as anil',
      ),
    ]);
    const servedRows: Record<string, number> = { dvf: dvf.n, ...served };
    const manifest = JSON.parse(meta.manifest) as ManifestSnapshot;
    const sources = Object.entries(KNOWN_SOURCES).map(([source, description]) => {
      const parts = Object.values(manifest.sources[source]?.partitions ?? {});
      const vintages = [...new Set(parts.map((p) => p.vintage))].sort();
      const imported = parts.map((p) => p.imported_at).sort();
      return {
        source,
        description,
        available: parts.length > 0,
        vintage: vintages.at(-1) ?? null,
        vintages,
        rows: parts.reduce((n, p) => n + p.rows_kept, 0),
        served_rows: servedRows[source] ?? null,
        partitions: parts.length,
        departements: [...new Set(parts.map((p) => p.code_departement).filter((d) => !d.startsWith('FR')))].sort(),
        annees: [...new Set(parts.map((p) => p.annee))].sort(),
        date_min: source === 'dvf' ? dvf.dmin : null,
        date_max: source === 'dvf' ? dvf.dmax : null,
        last_imported_at: imported.at(-1) ?? null,
      };
    });
    return {
      sources,
      serving_database: { built_at: meta.built_at, manifest_updated_at: manifest.updated_at, reference: manifest.reference ?? {} },
    };
  },
});
