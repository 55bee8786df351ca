// Markdown of a backtest report, published in docs/valuation.md by `npm run backtest`: one section per dataset,
// replaced in place between its markers at every run.
import { KNN_NAME, pct, type BacktestReport, type Metrics, type SegmentReport } from './backtest';

const row = (name: string, m: Metrics, extra: string[] = []) =>
  `| ${[name.replaceAll('|', '\\|'), m.targets, pct(m.coverage), pct(m.mdape), pct(m.mean_ape), pct(m.within_10), pct(m.within_20), pct(m.bias), ...extra].join(' | ')} |`;

const segmentRow = (s: SegmentReport) => row(s.segment, s, [pct(s.interval_coverage), String(s.interval_n)]);

export function renderReport(r: BacktestReport, label: string): string {
  const head = '| | targets | coverage | MdAPE | mean APE | within ±10 % | within ±20 % | bias (median signed error) |';
  return [
    `### ${label}`,
    '',
    `Run ${r.generated_at} on \`${r.serving_file}\`: ${r.targets} targets sold from ${r.window.from} to ${r.window.to}, ${r.seconds} s.`,
    '',
    `${head} 50 % interval coverage (months 7–12) | measured |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    segmentRow({ ...r.estimator, segment: '**estimator (comparables)**' }),
    ...r.baselines.map((b) => row(`baseline: ${b.name} (MdAPE on the estimator's targets: ${pct(b.mdape_common)})`, b, ['', ''])),
    row(`estimator on every clean sale, the ${r.with_screened.targets - r.targets} screened out (absolute bounds, fences of the sales before the window) included`, r.with_screened, ['', '']),
    row('**months 7–12 only: estimator** (bias correction and interval learnt on earlier months)', r.measure_months.estimator, ['', '']),
    row(`months 7–12 only: ${KNN_NAME} (same targets)`, r.measure_months.knn, ['', '']),
    '',
    'Per type, on the targets that the estimator and every baseline valued (the same targets for all):',
    '',
    head,
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...r.by_type.flatMap((t) => [row(`**${t.type_local}: estimator**`, t.estimator), ...t.baselines.map((b) => row(`${t.type_local}: ${b.name}`, b))]),
    '',
    'Per segment (type, then type × surface band × dispersion of the comparables):',
    '',
    `${head} 50 % interval coverage (months 7–12) | measured |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...r.segments.map(segmentRow),
    '',
    `Published calibration: global z quantiles ${r.calibration.global.z_low.toFixed(3)} / ${r.calibration.global.z_high.toFixed(3)} ` +
      `over ${r.calibration.global.n} targets; ${Object.values(r.calibration.cohorts).filter((c) => c.n >= r.calibration.min_cohort_n).length} ` +
      `of ${Object.keys(r.calibration.cohorts).length} cohorts have at least ${r.calibration.min_cohort_n} targets (basis cohort).`,
    '',
  ].join('\n');
}

/** Replaces (or appends) the section named `label` of a markdown document. */
export function upsertSection(doc: string, label: string, body: string): string {
  const start = `<!-- backtest:${label}:start -->`;
  const end = `<!-- backtest:${label}:end -->`;
  const block = `${start}\n${body}${end}`;
  const i = doc.indexOf(start);
  const j = doc.indexOf(end);
  if (i >= 0 && j > i) return doc.slice(0, i) + block + doc.slice(j + end.length);
  return `${doc.trimEnd()}\n\n${block}\n`;
}
