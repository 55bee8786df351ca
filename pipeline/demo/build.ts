// Builds the offline demo: generated files in the real geo-DVF, Filosofi, ANIL and DPE formats, imported by the same
// pipeline code as the real data, then the marts and the serving database.
import { join } from 'node:path';
import { dataDir, paths } from '../../lib/config';
import { afterImport } from '../../marts/after-import';
import { runSource } from '../run';
import { generateDemo } from './generate';
import { DEMO_ANIL_YEAR, DEMO_FILOSOFI_YEAR, generateIncome } from './generate-income';

export const DEMO_DEPARTEMENTS = ['23', '33', '69', '75'];
export const DEMO_YEARS = [2019, 2020, 2021, 2022, 2023, 2024, 2025];

export async function buildDemo(opts: { dataRoot?: string; log?: (m: string) => void } = {}): Promise<void> {
  const root = opts.dataRoot ?? dataDir();
  const log = opts.log ?? (() => {});
  const source = paths.demoSource(root);
  const truth = await generateDemo(source, { years: DEMO_YEARS });
  log(`Demo files: ${truth.files.length} geo-DVF files, ${truth.mutations} sales, ${truth.lines} lines in ${source}`);
  const outcomes = await runSource({ source: 'dvf', fromDir: source, annees: DEMO_YEARS, departements: DEMO_DEPARTEMENTS, dataRoot: root });
  const failed = outcomes.filter((o) => o.status === 'failed');
  if (failed.length) throw new Error(`demo import failed: ${failed.map((o) => `${o.part.key}: ${o.error}`).join('; ')}`);
  log(`Imported ${outcomes.reduce((a, o) => a + o.rowsKept, 0)} lines into the lake`);
  const income = await generateIncome(source);
  for (const [name, annee] of [['filosofi', DEMO_FILOSOFI_YEAR], ['anil', DEMO_ANIL_YEAR]] as const) {
    const res = await runSource({ source: name, fromDir: source, annees: [annee], departements: [], dataRoot: root });
    const bad = res.filter((o) => o.status === 'failed');
    if (bad.length) throw new Error(`demo ${name} import failed: ${bad.map((o) => `${o.part.key}: ${o.error}`).join('; ')}`);
  }
  log(`Income and rent files: ${income.files.join(', ')}`);
  const dpe = await runSource({ source: 'dpe', fromDir: join(source, 'dpe'), annees: [], departements: DEMO_DEPARTEMENTS, dataRoot: root });
  const dpeFailed = dpe.filter((o) => o.status === 'failed');
  if (dpeFailed.length) throw new Error(`demo dpe import failed: ${dpeFailed.map((o) => `${o.part.key}: ${o.error}`).join('; ')}`);
  log(`Energy diagnostics: ${dpe.reduce((a, o) => a + o.rowsKept, 0)} in ${dpe.length} départements`);
  const r = await afterImport({ dataRoot: root, log, force: true });
  if (!r.ok) throw new Error('demo valuation calibration failed');
}
