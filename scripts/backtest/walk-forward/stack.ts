// Third search (docs/valuation.md): is there information in a per-type least-squares blend, in logs, of the estimator
// with the plain kNN and six variants of it (fit on the tuning months, MdAPE measured on the held-out ones)?
// Usage: WF_DIR=... tsx scripts/backtest/walk-forward/stack.ts   (after extract.ts, see search.ts)
import { CURRENT, estimate, load, type P, type T } from './model';
const HOLD: Record<string, string> = { toulon: '2025-01', lyon: '2017-01' };
const med = (a: number[]) => { const s = [...a].sort((x, y) => x - y); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
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
for (const n of Object.keys(HOLD)) {
  const ts = (await load(`${process.env.WF_DIR ?? '/tmp/walk-forward'}/${n}`)).filter((t) => !t.screened);
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
