// Walk-forward search (see search.ts): the estimator re-implemented in plain JS over the extracted pairs, with every
// variant tried (P). BASE is the estimator as it stood before the search; lib/valuation implements what was chosen.
import { DuckDBInstance, columns } from '../../../lib/duck';

export interface T {
  id: number; ym: string; type: string; surface: number; actual: number; screened: boolean; knn: number | null; mid0: number | null;
  date: string; rooms: number | null; terrain: number | null; deps: number; h18: number; h24: number;
  // pairs
  p: Float64Array; s: Float64Array; d: Float64Array; age: Float64Array; slopeD: Float64Array; slopeC: Float64Array; tend: Float64Array;
  same: Uint8Array; sameAddr: Uint8Array; crooms: Float64Array; cterrain: Float64Array; cdeps: Float64Array; cid: Float64Array;
}

const daysBack = (date: string, months: number) => {
  const t = new Date(date + 'T00:00:00Z');
  const b = new Date(t); b.setUTCMonth(b.getUTCMonth() - months);
  return Math.round((t.getTime() - b.getTime()) / 86400000);
};

export async function load(prefix: string): Promise<T[]> {
  const inst = await DuckDBInstance.create(':memory:');
  const conn = await inst.connect();
  const t = await columns<any>(conn, `select target_id::DOUBLE id, ym, type_local, surface, actual, screened_out, date_mutation::VARCHAR dt,
     rooms::DOUBLE rooms, terrain::DOUBLE terrain, coalesce(deps,0)::DOUBLE deps from read_parquet('${prefix}_targets.parquet') order by target_id`);
  const p = await columns<any>(conn, `select target_id::DOUBLE tid, cid::DOUBLE cid, prix_m2, cs, dist, age::DOUBLE age, coalesce(slope_d,0) sd, coalesce(slope_c, slope_d, 0) sc, coalesce(tend_d, 0) tend,
     coalesce(same_parcel,false) sp, coalesce(same_address,false) sa, coalesce(crooms,-1)::DOUBLE crooms, coalesce(cterrain,-1)::DOUBLE cterrain, coalesce(cdeps,0)::DOUBLE cdeps
     from read_parquet('${prefix}_pairs.parquet') order by tid, cid`);
  const byT = new Map<number, number[]>();
  for (let i = 0; i < p.tid.length; i++) { const k = p.tid[i]; let a = byT.get(k); if (!a) byT.set(k, (a = [])); a.push(i); }
  const out: T[] = [];
  for (let j = 0; j < t.id.length; j++) {
    const idx = byT.get(t.id[j]) ?? [];
    const f = (col: any) => Float64Array.from(idx.map((i) => Number(col[i])));
    out.push({
      id: t.id[j], ym: t.ym[j], type: t.type_local[j], surface: t.surface[j], actual: t.actual[j], screened: t.screened_out[j], knn: null, mid0: null,
      date: t.dt[j], rooms: t.rooms[j], terrain: t.terrain[j], deps: t.deps[j], h18: daysBack(t.dt[j], 18), h24: daysBack(t.dt[j], 24),
      p: f(p.prix_m2), s: f(p.cs), d: f(p.dist), age: f(p.age), slopeD: f(p.sd), slopeC: f(p.sc), tend: f(p.tend),
      same: Uint8Array.from(idx.map((i) => (p.sp[i] ? 1 : 0))), sameAddr: Uint8Array.from(idx.map((i) => (p.sa[i] ? 1 : 0))),
      crooms: f(p.crooms), cterrain: f(p.cterrain), cdeps: f(p.cdeps), cid: f(p.cid),
    });
  }
  for (const x of out) x.knn = knn(x);
  return out;
}

function knn(t: T): number | null {
  const idx: number[] = [];
  for (let i = 0; i < t.p.length; i++) if (t.age[i] <= t.h18 && t.d[i] <= 500 && Math.abs(t.s[i] - t.surface) <= 0.3 * t.surface) idx.push(i);
  idx.sort((a, b) => t.d[a] - t.d[b] || t.cid[a] - t.cid[b]);
  const v = idx.slice(0, 10).map((i) => t.p[i]).sort((a, b) => a - b);
  if (!v.length) return null;
  const m = v.length >> 1;
  return (v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2) * t.surface;
}

export interface P {
  bw: Record<string, number>; rec: Record<string, number>; sbw: Record<string, number>; el: Record<string, number>;
  shrink: number; k: number; radius: number; horizon: 18 | 24; trend: 'd' | 'c' | 'none'; slopeMult: number;
  /** Added to the log weight of a comparable within sameDist metres (same parcel); sameFlat: more if also surface ±5 %. */
  sameBoost: number; sameDist: number; sameFlat: number;
  /** Weighted MAD fence on ln(adjusted €/m²) (0 = none). */
  trim: number;
  /**
   * Blend of the weighted median with the intercept of a locally weighted ridge regression of ln(adjusted €/m²) on
   * ln(s / S) and age in months (0 = median only); ridges in units of Σw (1e9 = slope 0: the weighted mean).
   */
  reg: number; regRidge: number; ageRidge: number; regMin: number;
  bias: number;
  /** Adaptive distance bandwidth: min(bw, max(adaptMin, adaptMult × distance of the adaptK-th nearest)); 0 = off. */
  adaptK: number; adaptMult: number; adaptMin: number;
  /** Distance kernel exp(−(d / bw)^dpow). */
  dpow: number;
}

export const BASE: P = {
  bw: { Appartement: 150, Maison: 250 }, rec: { Appartement: 24, Maison: 48 }, sbw: { Appartement: 0.3, Maison: 0.5 }, el: { Appartement: 0.1, Maison: 0.1 },
  shrink: 0.5, k: 100, radius: 500, horizon: 18, trend: 'd', slopeMult: 1, sameBoost: 0, trim: 0, reg: 0, regRidge: 1e9, regMin: 5, bias: 0, adaptK: 0, ageRidge: 1e9, sameDist: 1, dpow: 2, adaptMult: 1, adaptMin: 30, sameFlat: 0,
};

export function wq(v: number[], w: number[], q: number): number {
  const o = v.map((_, i) => i).sort((a, b) => v[a] - v[b]);
  const tot = w.reduce((a, b) => a + b, 0);
  let acc = 0;
  for (const i of o) { acc += w[i]; if (acc >= q * tot * (1 - 1e-12)) return v[i]; }
  return v[o[o.length - 1]];
}

export function estimate(t: T, P: P): { mid: number; relIqr: number } | null {
  const ty = t.type;
  const hz = P.horizon === 18 ? t.h18 : t.h24;
  const cand: number[] = [];
  const wide: number[] = [];
  for (let i = 0; i < t.p.length; i++) {
    if (t.age[i] > hz) continue;
    if (t.d[i] <= P.radius) cand.push(i);
    if (t.d[i] <= 2 * P.radius) wide.push(i);
  }
  const use = cand.length >= 3 ? cand : wide;
  if (use.length < 3) return null;
  let bw = P.bw[ty];
  if (P.adaptK > 0) {
    const ds = use.map((i) => t.d[i]).sort((a, b) => a - b);
    bw = Math.min(bw, Math.max(P.adaptMin, P.adaptMult * ds[Math.min(ds.length - 1, P.adaptK - 1)]));
  }
  const lw: number[] = [], lp: number[] = [], x: number[] = [], ages: number[] = [];
  for (const i of use) {
    const slope = P.trend === 'd' ? t.slopeD[i] : P.trend === 'c' ? t.slopeC[i] : 0;
    const lr = Math.log(t.s[i] / t.surface);
    lp.push(Math.log(t.p[i]) + P.slopeMult * slope * t.age[i] / 30.44 + P.el[ty] * lr);
    x.push(lr);
    ages.push(t.age[i] / 30.44);
    lw.push(-((t.d[i] / bw) ** P.dpow) + (t.d[i] < 1 && Math.abs(lr) < 0.05 ? P.sameFlat : 0) - t.age[i] / (P.rec[ty] * 30.44) - (lr / P.sbw[ty]) ** 2 + (t.d[i] < P.sameDist ? P.sameBoost : 0));
  }
  let order = lw.map((_, j) => j).sort((a, b) => lw[b] - lw[a] || t.age[use[a]] - t.age[use[b]]).slice(0, P.k);
  const top = lw[order[0]];
  let w = order.map((j) => Math.exp(lw[j] - top));
  let v = order.map((j) => lp[j]);
  const heaviestTend = t.tend[use[order[0]]];
  if (P.trim > 0 && v.length >= 5) {
    const m = wq(v, w, 0.5);
    const mad = wq(v.map((a) => Math.abs(a - m)), w, 0.5);
    const keep = v.map((a) => Math.abs(a - m) <= P.trim * Math.max(mad, 0.02));
    order = order.filter((_, j) => keep[j]); w = w.filter((_, j) => keep[j]); v = v.filter((_, j) => keep[j]);
  }
  const med = wq(v, w, 0.5);
  const relIqr = (Math.exp(wq(v, w, 0.75)) - Math.exp(wq(v, w, 0.25))) / Math.exp(med);
  const sw = w.reduce((a, b) => a + b, 0), sw2 = w.reduce((a, b) => a + b * b, 0);
  const nEff = (sw * sw) / sw2;
  let est = med;
  if (P.reg > 0 && nEff >= P.regMin) {
    const xs = order.map((j) => x[j]);
    const as = order.map((j) => ages[j]);
    let mx = 0, ma = 0, mv = 0;
    for (let j = 0; j < v.length; j++) { mx += w[j] * xs[j]; ma += w[j] * as[j]; mv += w[j] * v[j]; }
    mx /= sw; ma /= sw; mv /= sw;
    let sxx = 0, saa = 0, sxa = 0, sxv = 0, sav = 0;
    for (let j = 0; j < v.length; j++) {
      const dx = xs[j] - mx, da = as[j] - ma, dv = v[j] - mv;
      sxx += w[j] * dx * dx; saa += w[j] * da * da; sxa += w[j] * dx * da; sxv += w[j] * dx * dv; sav += w[j] * da * dv;
    }
    const A = sxx + P.regRidge * sw, D = saa + P.ageRidge * sw, B = sxa;
    const det = A * D - B * B;
    const b1 = (D * sxv - B * sav) / det, b2 = (A * sav - B * sxv) / det;
    const a = mv - b1 * mx - b2 * ma;
    est = (1 - P.reg) * med + P.reg * a;
  }
  if (heaviestTend > 0 && P.shrink > 0) est = (nEff * est + P.shrink * Math.log(heaviestTend)) / (nEff + P.shrink);
  return { mid: Math.exp(est + P.bias) * t.surface, relIqr };
}

export interface M { n: number; cov: number; mdape: number; w10: number; bias: number }
const med = (a: number[]) => { const s = [...a].sort((x, y) => x - y); const m = s.length >> 1; return s.length ? (s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2) : NaN; };
export function metricsOf(ts: T[], pred: (t: T) => number | null): M {
  const sig: number[] = [];
  for (const t of ts) { const p = pred(t); if (p !== null) sig.push((p - t.actual) / t.actual); }
  const ape = sig.map(Math.abs);
  return { n: ts.length, cov: sig.length / ts.length, mdape: med(ape), w10: ape.filter((a) => a <= 0.1).length / ape.length, bias: med(sig) };
}
export const fmt = (m: M) => `MdAPE ${(m.mdape * 100).toFixed(2)} ±10 ${(m.w10 * 100).toFixed(1)} bias ${(m.bias * 100).toFixed(1)} cov ${(m.cov * 100).toFixed(1)} n ${m.n}`;
