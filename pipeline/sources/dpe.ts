// DPE source plug-in: one part per département, holding every configured ADEME dataset of it (existing dwellings since
// July 2021, new dwellings, the legacy base before July 2021). Fetched page by page from the data-fair API (or read
// from --from-dir, laid out <dir>/<dataset id>/<dep>.csv[.gz]|.ndjson|.json; downloads are data-fair's CSV output of the
// fields the parser reads, `select=`), listed in a small index file whose hash
// tells the run whether anything changed; imported in one pass per département into partition code_departement=<dep>.
import fs from 'node:fs';
import path from 'node:path';
import { paths } from '../../lib/config';
import { lit } from '../../lib/duck';
import { dpeDeclaration, DPE_SCHEMA } from '../../lib/sources/dpe';
import { DPE_API_FIELDS } from './dpe/columns';
import { fetchDepartement, type DataFairDataset } from './dpe/datafair';
import { stageDpeFiles } from './dpe/parse';
import { writeQueryPartition } from './national';
import type { FetchOptions, ImportContext, ImportItem, ImportResult, Part, Selection, Source } from './types';

export const DPE_BASE_URL = 'https://data.ademe.fr/data-fair/api/v1';

/** The datasets fetched by default, with the field their département is filtered on (ids have been renamed before). */
export const DPE_DATASETS: DataFairDataset[] = [
  { id: 'dpe03existant', departementField: 'code_departement_ban', select: DPE_API_FIELDS.dpe03existant },
  { id: 'dpe02neuf', departementField: 'code_departement_ban', select: DPE_API_FIELDS.dpe02neuf },
  { id: 'dpe-france', departementField: 'tv016_departement_code', select: DPE_API_FIELDS['dpe-france'] },
];

const LOCAL_EXTENSIONS = ['.csv.gz', '.csv', '.ndjson', '.json'];

/**
 * `--format id[:field[:fields]],…` chooses the datasets (e.g. a renamed id); the default list otherwise. `fields` is the
 * `select=` sent: `all` (every field), or names joined by `+`; by default a known id's list, else the v2 one (the
 * field's default is v2's too), so a renamed v2 dataset needs only its id.
 */
export function dpeDatasets(format?: string): DataFairDataset[] {
  if (!format || format === 'default') return DPE_DATASETS;
  return format.split(',').map((spec) => {
    const [id, field, fields] = spec.trim().split(':');
    const known = DPE_DATASETS.find((d) => d.id === id);
    const select = fields === 'all' ? undefined : fields ? fields.split('+') : (known?.select ?? DPE_API_FIELDS.dpe03existant);
    return { id, departementField: field || (known?.departementField ?? 'code_departement_ban'), ...(select ? { select } : {}) };
  });
}

interface IndexFile {
  departement: string;
  files: Array<{ dataset: string; path: string; vintage: string; bytes: number; mtime: string }>;
}

async function fetchDpe(part: Part, opts: FetchOptions): Promise<{ path: string; vintage: string; url: string }> {
  const dep = part.partitions[0].code_departement as string;
  const datasets = dpeDatasets(part.format);
  const files: IndexFile['files'] = [];
  if (opts.fromDir) {
    for (const d of datasets) {
      const found = LOCAL_EXTENSIONS.map((ext) => path.join(opts.fromDir!, d.id, `${dep}${ext}`)).find((f) => fs.existsSync(f));
      if (found) files.push({ dataset: d.id, path: found, vintage: fs.statSync(found).mtime.toISOString().slice(0, 10), bytes: 0, mtime: '' });
    }
    if (!files.length) throw new Error(`no DPE file for ${dep} under ${opts.fromDir} (expected <dataset>/${dep}.csv.gz, e.g. ${datasets[0].id}/${dep}.csv.gz)`);
  } else {
    for (const d of datasets) {
      // data-fair's CSV output: read and typed in one DuckDB statement, where JSON lines need a json_extract per field.
      const dest = path.join(paths.downloads(opts.dataRoot), 'dpe', d.id, `${dep}.csv`);
      const r = await fetchDepartement({ baseUrl: opts.baseUrl ?? DPE_BASE_URL, dataset: d, departement: dep, dest, format: 'csv', force: opts.force });
      opts.log?.(`dpe ${d.id} ${dep}: ${r.status}, ${r.rows} rows`);
      if (r.rows > 0) files.push({ dataset: d.id, path: dest, vintage: (r.vintage ?? new Date().toISOString()).slice(0, 10), bytes: 0, mtime: '' });
    }
  }
  // Size and modification time stand for the content: a changed file changes the index, hence its hash.
  for (const f of files) {
    const st = fs.statSync(f.path);
    Object.assign(f, { bytes: st.size, mtime: st.mtime.toISOString() });
  }
  const index: IndexFile = { departement: dep, files };
  const indexPath = path.join(paths.downloads(opts.dataRoot), 'dpe', `${dep}.index.json`);
  fs.mkdirSync(path.dirname(indexPath), { recursive: true });
  fs.writeFileSync(indexPath, JSON.stringify(index, null, 2) + '\n');
  return { path: indexPath, vintage: files.map((f) => f.vintage).sort().at(-1) ?? '', url: opts.fromDir ? `file://${path.resolve(opts.fromDir)}` : part.url };
}

async function importDepartement(ctx: ImportContext, item: ImportItem): Promise<ImportResult> {
  const index = JSON.parse(fs.readFileSync(item.file.path, 'utf8')) as IndexFile;
  const staged = await stageDpeFiles(ctx.conn, index.files.filter((f) => f.bytes > 0).map((f) => ({ path: f.path, dataset: f.dataset })));
  const anomalies = Object.fromEntries(Object.entries(staged.anomalies).filter(([, n]) => n > 0));
  const cols = Object.keys(DPE_SCHEMA).map((c) =>
    c === 'imported_at' ? `${lit(ctx.now.toISOString())}::TIMESTAMP AS imported_at` : c === 'code_departement_dpe' ? 'code_departement AS code_departement_dpe' : c);
  // Without a date a diagnostic can be neither placed in time nor matched to a sale: left out, counted (date_invalide).
  const record = await writeQueryPartition(ctx, {
    source: 'dpe', partition: { code_departement: index.departement }, item, rowsRead: staged.rowsRead, anomalies,
    select: `SELECT ${cols.join(', ')} FROM dpe_staged WHERE date_etablissement_dpe IS NOT NULL`,
  });
  ctx.log(`dpe ${index.departement}: ${record.rows_kept} diagnostics from ${index.files.length} files; ${Object.entries(anomalies).map(([k, n]) => `${k} ${n}`).join(', ') || 'no anomaly'}`);
  return { partitions: [record], fileAnomalies: {} };
}

export const dpeSource: Source = {
  ...dpeDeclaration,

  parts(sel: Selection): Part[] {
    const base = (sel.baseUrl ?? DPE_BASE_URL).replace(/\/$/, '');
    // The select list is spelled out only when it is not the id's default (it would make every manifest record long).
    const fields = (d: DataFairDataset) => {
      const byDefault = dpeDatasets(`${d.id}:${d.departementField}`)[0].select;
      return (d.select ?? []).join('+') === (byDefault ?? []).join('+') ? '' : `:${d.select ? d.select.join('+') : 'all'}`;
    };
    const format = dpeDatasets(sel.format).map((d) => `${d.id}:${d.departementField}${fields(d)}`).join(',');
    return sel.departements.map((dep) => ({
      source: 'dpe', key: dep, format, relPath: `${dep}.index.json`, url: `${base}/datasets`, partitions: [{ code_departement: dep }],
    }));
  },

  batchKey: (part) => part.key,

  fetch: fetchDpe,

  async importFiles(ctx: ImportContext, items: ImportItem[]): Promise<ImportResult[]> {
    const out: ImportResult[] = [];
    for (const item of items) out.push(await importDepartement(ctx, item));
    return out;
  },
};
