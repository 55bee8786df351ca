// Third search (docs/valuation.md): is there information in a per-type least-squares blend, in logs, of the estimator
// with the plain kNN and six variants of it (fit on the tuning months, MdAPE measured on the held-out ones)?
// `residual`: is there information in the pool's own features (a median regression of ln(actual / estimate) on them)?
// Usage: npm run lab -- walk-forward-stack [residual] [--dir DIR]   (after extract.ts, see search.ts)
import { parseArgs } from 'node:util';
import { CURRENT, estimate, HOLD_FROM as HOLD, load, median as med, wq, type Estimate, type P, type T } from './model';
function solve(X: number[][], y: number[], ridge = 1e-3): number[] {
  const k = X[0].length; const A = Array.from({ length: k }, () => new Array(k).fill(0)); const b = new Array(k).fill(0);
  for (let i = 0; i < X.length; i++) for (let a = 0; a < k; a++) { b[a] += X[i][a] * y[i]; for (let c = 0; c < k; c++) A[a][c] += X[i][a] * X[i][c]; }
  for (let a = 0; a < k; a++) A[a][a] += ridge * X.length;
  // gaussian elimination
  for (let i = 0; i < k; i++) { let p = i; for (let r = i + 1; r < k; r++) if (Math.abs(A[r][i]) > Math.abs(A[p][i])) p = r; [A[i], A[p]] = [A[p], A[i]]; [b[i], b[p]] = [b[p], b[i]];
    for (let r = 0; r < k; r++) if (r !== i) { const f = A[r][i] / A[i][i]; for (let c = i; c < k; c++) A[r][c] -= f * A[i][c]; b[r] -= f * b[i]; } }
  return b.map((v, i) => v / A[i][i]);
}
const variants: Record<string, (ty: string) => Partial<P>> = {
  narrow: (ty) => ({ bw: { ...CURRENT.bw, [ty]: CURRENT.bw[ty] / 2 } }),
  wide: (ty) => ({ bw: { ...CURRENT.bw, [ty]: CURRENT.bw[ty] * 2.5 } }),
  noboost: () => ({ sameBoost: 0 }),
  bigboost: () => ({ sameBoost: 3 }),
  recent: (ty) => ({ rec: { ...CURRENT.rec, [ty]: 6 } }),
  tightS: (ty) => ({ sbw: { ...CURRENT.sbw, [ty]: 0.12 } }),
};
const samples: Record<string, T[]> = {};
const { values, positionals } = parseArgs({ allowPositionals: true, options: { dir: { type: 'string', default: '/tmp/walk-forward' } } });
for (const n of Object.keys(HOLD)) samples[n] = (await load(`${values.dir}/${n}`)).filter((t) => !t.screened);
function stackVariants(): void {
  for (const [n, ts] of Object.entries(samples)) {
    for (const ty of ['Appartement', 'Maison']) {
      const rows: Array<{ t: T; y: number; x: number[] }> = [];
      for (const t of ts.filter((x) => x.type === ty)) {
        const e = estimate(t, CURRENT); if (!e || !t.knn) continue;
        const base = Math.log(e.mid);
        const xs = [1, Math.log(t.knn) - base];
        for (const f of Object.values(variants)) { const v = estimate(t, { ...CURRENT, ...f(ty) }); xs.push(v ? Math.log(v.mid) - base : 0); }
        xs.push(Math.log(e.relIqr + 0.05));
        rows.push({ t, y: Math.log(t.actual) - base, x: xs });
      }
      if (rows.length < 100) continue;
      const tune = rows.filter((r) => r.t.ym < HOLD[n]), hold = rows.filter((r) => r.t.ym >= HOLD[n]);
      const beta = solve(tune.map((r) => r.x), tune.map((r) => r.y));
      const m = (rs: typeof rows, f: (r: (typeof rows)[0]) => number) => { const a = rs.map((r) => Math.abs(Math.exp(f(r) - r.y) - 1)); return `${(med(a) * 100).toFixed(2)} ±10 ${(a.filter((x) => x <= 0.1).length / a.length * 100).toFixed(1)}`; };
      console.log(n, ty, 'beta', beta.map((b) => b.toFixed(3)).join(' '), ['knn', ...Object.keys(variants), 'lnIqr'].join(','));
      console.log('  current  tuning', m(tune, () => 0), 'held', m(hold, () => 0));
      const bias = med(tune.map((r) => r.y));
      console.log('  +bias    tuning', m(tune, () => bias), 'held', m(hold, () => bias));
      const f = (r: (typeof rows)[0]) => r.x.reduce((a, x, i) => a + x * beta[i], 0);
      console.log('  stacked  tuning', m(tune, f), 'held', m(hold, f));
    }
  }
}

/** What the pool says of itself, as regressors of ln(actual / estimate). */
const FEATURES: Record<string, (t: T, e: Estimate) => number> = {
  sameLocationShare: (t, { pool }) => wmean(pool, (i) => (t.d[i] < 1 ? 1 : 0)),
  lnNeff: (_, { pool }) => Math.log(pool.w.reduce((a, b) => a + b, 0) ** 2 / pool.w.reduce((a, b) => a + b * b, 0)),
  iqr: (_, { pool }) => wq(pool.v, pool.w, 0.75) - wq(pool.v, pool.w, 0.25),
  surfaceMix: (t, { pool }) => wmean(pool, (i) => Math.log(t.s[i] / t.surface)),
  skew: (_, { pool }) => wmean(pool, (_i, j) => pool.v[j]) - pool.med,
  slopePct: (t, { pool }) => wmean(pool, (i) => t.slopeD[i]) * 100,
  ageYears: (t, { pool }) => wmean(pool, (i) => t.age[i] / 365.25),
  medianVsLevel: (t, { pool }) => (t.tend[pool.idx[0]] > 0 ? pool.med - Math.log(t.tend[pool.idx[0]]) : 0),
  lnSurface: (t) => Math.log(t.surface) - 4,
  distance100m: (t, { pool }) => wmean(pool, (i) => t.d[i]) / 100,
  lnCandidates: (t) => Math.log(1 + t.d.filter((d, i) => d <= 500 && t.age[i] <= t.h18).length),
};
function wmean(pool: Estimate['pool'], f: (i: number, j: number) => number): number {
  return pool.idx.reduce((a, i, j) => a + pool.w[j] * f(i, j), 0) / pool.w.reduce((a, b) => a + b, 0);
}

/**
 * A median (L1, by iteratively reweighted least squares) linear regression of ln(actual / estimate) on the pool's
 * features and the type, fit on the tuning months (each sample alone, and both pooled), measured on the held-out ones
 * against the per-type bias correction alone.
 */
function residual(): void {
  type Row = { t: T; y: number; x: number[]; hold: boolean };
  const rows: Record<string, Row[]> = {};
  for (const [n, ts] of Object.entries(samples)) {
    rows[n] = ts.flatMap((t) => {
      const e = estimate(t, CURRENT);
      if (!e) return [];
      const x = [1, t.type === 'Maison' ? 1 : 0, ...Object.values(FEATURES).map((f) => f(t, e))];
      return [{ t, y: Math.log(t.actual / e.mid), x, hold: t.ym >= HOLD[n] }];
    });
  }
  const l1 = (train: Row[]) => {
    let wts = train.map(() => 1), beta: number[] = [];
    for (let it = 0; it < 30; it++) {
      beta = solve(train.map((r, i) => r.x.map((v) => v * Math.sqrt(wts[i]))), train.map((r, i) => r.y * Math.sqrt(wts[i])), 0.01);
      wts = train.map((r) => 1 / Math.max(0.02, Math.abs(r.y - r.x.reduce((a, v, k) => a + v * beta[k], 0))));
    }
    return beta;
  };
  const report = (label: string, correction: (r: Row, n: string) => number) => console.log(label.padEnd(22), Object.entries(rows).flatMap(([n, rs]) => [false, true].map((hold) => {
    const err = rs.filter((r) => r.hold === hold).map((r) => Math.exp(correction(r, n) - r.y) - 1);
    const ape = err.map(Math.abs);
    return `${n} ${hold ? 'held-out' : 'tuning'} ${(med(ape) * 100).toFixed(2)} ±10 ${((ape.filter((a) => a <= 0.1).length / ape.length) * 100).toFixed(1)} bias ${(med(err) * 100).toFixed(1)}`;
  })).join(' | '));
  const bias = Object.fromEntries(Object.entries(rows).map(([n, rs]) => [n, Object.fromEntries(['Appartement', 'Maison'].map((ty) => {
    const ys = rs.filter((r) => !r.hold && r.t.type === ty).map((r) => r.y);
    return [ty, ys.length >= 30 ? med(ys) : 0];
  }))]));
  report('bias per type', (r, n) => bias[n][r.t.type]);
  const pooled = l1(Object.values(rows).flat().filter((r) => !r.hold));
  const own = Object.fromEntries(Object.entries(rows).map(([n, rs]) => [n, l1(rs.filter((r) => !r.hold))]));
  const apply = (beta: number[], r: Row) => r.x.reduce((a, v, k) => a + v * beta[k], 0);
  report('residual model, pooled', (r) => apply(pooled, r));
  report('residual model, own', (r, n) => apply(own[n], r));
  for (const [label, beta] of [['pooled', pooled], ...Object.entries(own)] as Array<[string, number[]]>)
    console.log(`  ${label}:`, ['intercept', 'maison', ...Object.keys(FEATURES)].map((f, k) => `${f} ${beta[k].toFixed(3)}`).join(', '));
}

if (positionals[0] === 'residual') residual();
else stackVariants();
