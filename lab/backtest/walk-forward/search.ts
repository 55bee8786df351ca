// The walk-forward search that chose the estimator's parameters (docs/valuation.md, "How the parameters were chosen").
// It re-implements the estimator in plain JS over pre-extracted target × candidate pairs, so that a grid of variants
// runs in seconds; lib/valuation stays the one implementation of what is chosen.
//   1. npm run lab -- backtest-real --keep --no-docs        (keeps the Toulon and Lyon data folders)
//   2. npm run lab -- walk-forward-extract --data-root KEPT/data-83137 --out DIR/toulon --from 2024-01-01 --pct 100
//      npm run lab -- walk-forward-extract --data-root KEPT/data-69 --out DIR/lyon --from 2016-01-01 --pct 35
//   3. npm run lab -- walk-forward-search variants '[["label", {"sameBoost": 1.5}], ...]'
//      npm run lab -- walk-forward-search descent '{...start}'   (coordinate descent on the tuning months)
//      npm run lab -- walk-forward-search final '{...chosen}'    (held-out figures, bias correction included)
//      npm run lab -- walk-forward-search variants-current '[["label", {...}], ...]'   (patches over CURRENT)
//      npm run lab -- walk-forward-search descent-current        (third search: its axes, from CURRENT)
//      npm run lab -- walk-forward-search coverage '[["label", {...}], ...]'   (50 % interval, 6 months → next 6)
//      npm run lab -- walk-forward-stack [residual]   (blends of variants; a residual model on the pool's features)
//      npm run lab -- walk-forward-noise              (the same location's pairs: what a perfect building level would achieve)
// Steps 3 read DIR (--dir, default /tmp/walk-forward). Tuning months: Toulon 2024, Lyon 2016. Held out (chose nothing): Toulon 2025-01 – 2025-06, Lyon 2017-01 – 2018-12.
import { parseArgs } from 'node:util';
import { calibrate, cohortOf, spreadOf } from '../../../lib/valuation/calibration';
import { intervalFor } from '../../../lib/valuation/estimator';
import { BASE, CURRENT, estimate, HOLD_FROM, load, median, metricsOf, type M, type P, type T } from './model';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { dir: { type: 'string', default: '/tmp/walk-forward' } } });
const DIR = values.dir!;
type Split = Record<string, { a: M; b: M }>;

async function setup(): Promise<Record<string, T[]>> {
  const ds: Record<string, T[]> = {};
  for (const n of Object.keys(HOLD_FROM)) ds[n] = (await load(`${DIR}/${n}`)).filter((t) => !t.screened);
  return ds;
}

function split(ds: Record<string, T[]>, pred: (t: T) => number | null): Split {
  return Object.fromEntries(Object.entries(ds).map(([k, ts]) => [k, {
    a: metricsOf(ts.filter((t) => t.ym < HOLD_FROM[k]), pred),
    b: metricsOf(ts.filter((t) => t.ym >= HOLD_FROM[k]), pred),
  }]));
}

function evalP(ds: Record<string, T[]>, p: P): Split {
  const mids = new Map<number, number | null>();
  for (const ts of Object.values(ds)) for (const t of ts) mids.set(t.id, estimate(t, p)?.mid ?? null);
  return split(ds, (t) => mids.get(t.id)!);
}

const f2 = (x: number) => (x * 100).toFixed(2);
/** The objective: mean MdAPE of the two samples' tuning months. */
const objective = (r: Split) => (r.toulon.a.mdape + r.lyon.a.mdape) / 2;
const line = (label: string, r: Split) =>
  `${label.padEnd(40)} tuning ${f2(objective(r))} | Toulon ${f2(r.toulon.a.mdape)} ±10 ${f2(r.toulon.a.w10)} held-out ${f2(r.toulon.b.mdape)} ±10 ${f2(r.toulon.b.w10)} bias ${f2(r.toulon.b.bias)}` +
  ` | Lyon ${f2(r.lyon.a.mdape)} held-out ${f2(r.lyon.b.mdape)} ±10 ${f2(r.lyon.b.w10)} bias ${f2(r.lyon.b.bias)}`;

const AXES: Array<[string, Array<number | string>]> = [
  ['sameBoost', [0, 1, 1.5, 2, 2.5, 3]],
  ['adaptK', [0, 10, 20, 30, 50]], ['adaptMult', [0.75, 1, 1.5, 2]],
  ['bw.Appartement', [80, 100, 150, 200, 300]], ['bw.Maison', [150, 250, 400, 600]],
  ['rec.Appartement', [6, 12, 24, 48, 96]], ['rec.Maison', [12, 24, 48, 96]],
  ['sbw.Appartement', [0.15, 0.2, 0.3, 0.5, 1]], ['sbw.Maison', [0.2, 0.3, 0.5, 1]],
  ['el.Appartement', [-0.1, 0, 0.1, 0.2, 0.3]], ['el.Maison', [-0.1, 0, 0.1, 0.2, 0.3]],
  ['shrink', [0, 0.25, 0.5, 1, 2]], ['k', [20, 50, 100, 200]], ['trim', [0, 2.5, 3, 4, 5]], ['slopeMult', [0.5, 1, 1.5, 2]],
  ['reg', [0, 0.5, 1]], ['regRidge', [0.03, 0.3, 3, 1e9]], ['trend', ['d', 'c', 'none']],
];

/** The third search's axes (Toulon: the accuracy targets), descended from CURRENT. */
const AXES3: Array<[string, Array<number | string>]> = [
  ['streetBoost.Appartement', [0, 0.3, 0.7]], ['streetBoost.Maison', [0, 0.3, 0.7]], ['streetMaxD', [50, 150, 1e9]],
  ['addrBoost.Appartement', [0, 0.5, 1]], ['sectionBoost.Appartement', [0, 0.3, 0.5]], ['sectionBoost.Maison', [0, 0.3, 0.5]],
  ['bw2', [0, 30, 60]], ['lambda2', [2, 8, 32]],
  ['depBeta.Appartement', [0, 0.03, 0.06]], ['depBeta.Maison', [0, 0.05, 0.1]],
  ['gradMult.Appartement', [0, 0.5, 1]], ['gradMult.Maison', [0, 0.5, 1]], ['gradRidge', [0.3, 1, 3]],
  ['areaAlpha.Appartement', [0, 0.1]], ['areaAlpha.Maison', [0, 0.1, 0.2, 0.3]],
  ['denseN', [0, 5, 10, 20]], ['sparseMult', [1, 1.5, 2, 3]], ['medSpread', [0, 0.05, 0.1]],
  ['carrezPen', [0, 0.5, 1]], ['carrezThr', [0.1, 0.2]], ['depPen', [0, 0.1]],
];

function descent(ds: Record<string, T[]>, start: P, axes = AXES): P {
  let cur = structuredClone(start);
  let best = evalP(ds, cur);
  console.log(line('start', best));
  const set = (o: P, key: string, v: number | string) => {
    const [a, b] = key.split('.') as [keyof P, string?];
    if (b) (o[a] as Record<string, number>)[b] = v as number;
    else (o as unknown as Record<string, unknown>)[a] = v;
  };
  for (let pass = 0; pass < 2; pass++) {
    let changed = false;
    for (const [key, values] of axes) {
      for (const v of values) {
        const c = structuredClone(cur);
        set(c, key, v);
        const r = evalP(ds, c);
        if (objective(r) < objective(best) - 0.0005) {
          [best, cur, changed] = [r, c, true];
          console.log(line(`${key}=${v}`, r));
        }
      }
    }
    if (!changed) break;
  }
  return cur;
}

/** Held-out figures of `p` with the per-type bias correction learnt on the tuning months (as the API applies it). */
function final(ds: Record<string, T[]>, p: P): void {
  const mids = new Map<number, number | null>();
  for (const ts of Object.values(ds)) for (const t of ts) mids.set(t.id, estimate(t, p)?.mid ?? null);
  const corrected = new Map<number, number | null>();
  for (const [k, ts] of Object.entries(ds)) {
    for (const type of ['Appartement', 'Maison']) {
      const tuning = ts.filter((t) => t.type === type && t.ym < HOLD_FROM[k] && mids.get(t.id));
      const bias = tuning.length >= 30 ? median(tuning.map((t) => Math.log(t.actual / mids.get(t.id)!))) : 0;
      for (const t of ts.filter((x) => x.type === type)) corrected.set(t.id, mids.get(t.id) ? mids.get(t.id)! * Math.exp(bias) : null);
    }
  }
  console.log(line('plain kNN', split(ds, (t) => t.knn)));
  console.log(line('estimator', split(ds, (t) => mids.get(t.id)!)));
  console.log(line('estimator, bias-corrected', split(ds, (t) => corrected.get(t.id)!)));
}

/**
 * Coverage of the 50 % interval as lib/valuation calibrates it (split-conformal cohort quartiles shrunk toward the
 * type's), learnt on 6 months (with their per-type bias correction) and measured on the next 6.
 */
function coverage(ds: Record<string, T[]>, p: P): void {
  const windows: Array<[string, string, string, string]> = [
    ['toulon', '2024-01', '2024-07', '2025-01'], ['toulon', '2024-07', '2025-01', '2025-07'],
    ['lyon', '2016-01', '2016-07', '2017-01'], ['lyon', '2016-07', '2017-01', '2017-07'],
  ];
  const parts: string[] = [];
  for (const [k, a, b, c] of windows) {
    const est = new Map(ds[k].map((t) => [t.id, estimate(t, p)]));
    const learnRows = ds[k].filter((t) => t.ym >= a && t.ym < b && est.get(t.id));
    const bias: Record<string, number> = {};
    for (const type of ['Appartement', 'Maison']) {
      const r = learnRows.filter((t) => t.type === type).map((t) => Math.log(t.actual / est.get(t.id)!.mid));
      bias[type] = r.length >= 30 ? median(r) : 0;
    }
    const z = (t: T) => { const e = est.get(t.id)!; return Math.log(t.actual / (e.mid * Math.exp(bias[t.type]))) / spreadOf(e.relIqr); };
    const cal = calibrate(learnRows.map((t) => ({ cohort: cohortOf(t.type, t.surface, est.get(t.id)!.relIqr), z: z(t) })), 'x');
    const measured = ds[k].filter((t) => t.ym >= b && t.ym < c && est.get(t.id));
    const inside = measured.filter((t) => {
      const e = est.get(t.id)!;
      const iv = intervalFor(cal, t.type, t.surface, e.relIqr);
      const mid = e.mid * Math.exp(bias[t.type]);
      return t.actual >= mid * iv.ratioLow && t.actual <= mid * iv.ratioHigh;
    }).length;
    parts.push(`${k} ${a}→${b}: ${((inside / measured.length) * 100).toFixed(1)} % of ${measured.length}`);
  }
  console.log(parts.join(' | '));
}

async function main(): Promise<void> {
  const [mode, arg] = positionals;
  const ds = await setup();
  if (mode === 'variants') {
    console.log(line('plain kNN', split(ds, (t) => t.knn)));
    for (const [label, patch] of JSON.parse(arg) as Array<[string, Partial<P>]>) console.log(line(label, evalP(ds, { ...BASE, ...patch })));
  } else if (mode === 'variants-current') {
    // patches over the estimator as implemented (CURRENT), the third search's starting point
    console.log(line('plain kNN', split(ds, (t) => t.knn)));
    for (const [label, patch] of JSON.parse(arg) as Array<[string, Partial<P>]>) console.log(line(label, evalP(ds, { ...CURRENT, ...patch })));
  } else if (mode === 'descent') console.log(JSON.stringify(descent(ds, { ...BASE, ...JSON.parse(arg ?? '{}') })));
  else if (mode === 'descent-current') console.log(JSON.stringify(descent(ds, { ...CURRENT, denseR: 150, ...JSON.parse(arg ?? '{}') }, AXES3)));
  else if (mode === 'coverage') for (const [label, patch] of JSON.parse(arg) as Array<[string, Partial<P>]>) { process.stdout.write(`${label}: `); coverage(ds, { ...CURRENT, ...patch }); }
  else if (mode === 'final') final(ds, { ...BASE, ...JSON.parse(arg ?? '{}') });
  else throw new Error('usage: search.ts variants JSON | descent JSON | final JSON');
}

main().catch((e: Error) => {
  console.error(e.message);
  process.exit(1);
});
