// Walk-forward search (see search.ts): the estimator re-implemented in plain JS over the extracted pairs, with every
// variant tried (P). BASE is the estimator as it stood before the search; lib/valuation implements what was chosen.
import { DuckDBInstance, columns } from '../../../lib/duck';

export interface T {
  id: number; ym: string; type: string; surface: number; actual: number; screened: boolean; knn: number | null; mid0: number | null;
  date: string; rooms: number | null; terrain: number | null; deps: number; h18: number; h24: number;
  // pairs
  p: Float64Array; s: Float64Array; d: Float64Array; age: Float64Array; slopeD: Float64Array; slopeC: Float64Array; tend: Float64Array;
  same: Uint8Array; sameAddr: Uint8Array; crooms: Float64Array; cterrain: Float64Array; cdeps: Float64Array; cid: Float64Array;
  sameStreet: Uint8Array; sameSection: Uint8Array; clots: Float64Array;
  /** Comparable's offset from the target, metres east and north. */
  dx: Float64Array; dy: Float64Array;
  /** Comparable's Carrez surface (−1 when none). */
  ccarrez: Float64Array;
  /** The département's indexed level at the comparable's sale month (0 when none). */
  tendAtSale: Float64Array;
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
     coalesce(same_parcel,false) sp, coalesce(same_address,false) sa, coalesce(crooms,-1)::DOUBLE crooms, coalesce(cterrain,-1)::DOUBLE cterrain, coalesce(cdeps,0)::DOUBLE cdeps,
     coalesce(same_street,false) ss, coalesce(same_section,false) sx, coalesce(clots,0)::DOUBLE clots,
     coalesce(ccarrez, -1)::DOUBLE ccarrez, coalesce(tend_at_sale, 0) tas, coalesce((clon - t.longitude) * 111195 * cos(radians(t.latitude)), 0) dx, coalesce((clat - t.latitude) * 111195, 0) dy
     from read_parquet('${prefix}_pairs.parquet') p join read_parquet('${prefix}_targets.parquet') t using (target_id) order by tid, cid`);
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
      sameStreet: Uint8Array.from(idx.map((i) => (p.ss[i] ? 1 : 0))), sameSection: Uint8Array.from(idx.map((i) => (p.sx[i] ? 1 : 0))), clots: f(p.clots),
      dx: f(p.dx), dy: f(p.dy), ccarrez: f(p.ccarrez), tendAtSale: f(p.tas),
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
  /** Added to the log weight of a comparable of the same street (code_voie + commune), resp. same address, same cadastral section. */
  streetBoost: Record<string, number>; addrBoost: Record<string, number>; sectionBoost: Record<string, number>;
  /**
   * Two-stage (kriging-like) estimate: the estimate e1 above, then the weighted median m2 of the same pool with a small
   * distance bandwidth bw2 (0 = off) and total raw small-scale weight S2: e = e1 + (m2 − e1) × S2 / (S2 + lambda2).
   */
  bw2: number; lambda2: number;
  /** Dependencies: each comparable's ln €/m² − depBeta × (has a dependency − weighted share of the pool with one). */
  depBeta: Record<string, number>;
  /** Density-dependent distance bandwidth: when fewer than denseN candidates lie within denseR m, bw × sparseMult. */
  denseR: number; denseN: number; sparseMult: number;
  /**
   * Shrinkage toward the area's level (the weighted median of every candidate of the radius, weights without the
   * distance kernel): by n_eff (areaShrink, as `shrink`) or by a fixed fraction (areaAlpha), per type.
   */
  areaShrink: Record<string, number>; areaAlpha: Record<string, number>;
  /**
   * Local linear in space: the weighted least-squares plane of ln(adjusted €/m²) on the offsets (dx, dy, in 100 m),
   * ridge `gradRidge` × Σw; each comparable is moved along it to the subject (v − b·offset) before the median,
   * the gradient scaled by gradMult (0 = off).
   */
  gradMult: Record<string, number>; gradRidge: number;
  /** The subject's rooms given (`pieces`): comparables with ±1 room only (the API's filter); roomsPenalty × |Δrooms| off the log weight. */
  roomsFilter: boolean; roomsPenalty: number;
  /** streetBoost only within this distance (m). */
  streetMaxD: number;
  /** The median replaced by the mean of the weighted quantiles 0.5 ± medSpread × {0, 0.5, 1} (0 = the median). */
  medSpread: number;
  /** Off the log weight: carrezPen when the comparable's Carrez and built surfaces differ by more than carrezThr (ln); depPen per dependency. */
  carrezPen: number; carrezThr: number; depPen: number;
  /** Sales at the subject's location (< sameDist) up to this many months old stay candidates (0 = the horizon only). */
  sameHistory: number;
  /** ... within this distance (m) of the subject (1: its very location). */
  historyDist: number;
  /** Time adjustment by the ratio of the index levels (reference month / sale month) instead of slope × age: 'all', 'history' (beyond the horizon only), 'none'. */
  levelRatio: 'all' | 'history' | 'none';
  /** Sales at the subject's location (< 1 m) stay candidates with a surface within ×/÷ sameSurf (1.5: as every candidate; needs extract.ts SAME_SURFACE). */
  sameSurf: number;
  /** Their surface bandwidth (0: the type's sbw). */
  sameSbw: number;
  /**
   * Blend of the weighted median with the midpoint of the weighted shorth (the narrowest interval of ln €/m² holding
   * shorthMass of the weight): the point that minimises the median absolute error of a skewed distribution (0 = off).
   */
  shorth: number; shorthMass: number;
}

export const BASE: P = {
  bw: { Appartement: 150, Maison: 250 }, rec: { Appartement: 24, Maison: 48 }, sbw: { Appartement: 0.3, Maison: 0.5 }, el: { Appartement: 0.1, Maison: 0.1 },
  shrink: 0.5, k: 100, radius: 500, horizon: 18, trend: 'd', slopeMult: 1, sameBoost: 0, trim: 0, reg: 0, regRidge: 1e9, regMin: 5, bias: 0, adaptK: 0, ageRidge: 1e9, sameDist: 1, dpow: 2, adaptMult: 1, adaptMin: 30, sameFlat: 0,
  streetBoost: { Appartement: 0, Maison: 0 }, addrBoost: { Appartement: 0, Maison: 0 }, sectionBoost: { Appartement: 0, Maison: 0 },
  bw2: 0, lambda2: 1, depBeta: { Appartement: 0, Maison: 0 }, denseR: 0, denseN: 0, sparseMult: 1,
  areaShrink: { Appartement: 0, Maison: 0 }, areaAlpha: { Appartement: 0, Maison: 0 },
  gradMult: { Appartement: 0, Maison: 0 }, gradRidge: 1, roomsFilter: false, roomsPenalty: 0, streetMaxD: 1e9, medSpread: 0, carrezPen: 0, carrezThr: 0.2, depPen: 0, sameHistory: 0, historyDist: 1, levelRatio: 'none', sameSurf: 1.5, sameSbw: 0, shorth: 0, shorthMass: 0.5,
};

/** The estimator after the second search (docs/valuation.md): the third search's starting point. */
export const CURRENT: P = { ...BASE, sameBoost: 1.5, rec: { Appartement: 96, Maison: 48 }, el: { Appartement: 0.2, Maison: 0.1 } };
/** The third search's best variant, the same location's history (36 months): measured, not kept in lib/valuation (docs/valuation.md). */
export const THIRD: P = { ...CURRENT, sameHistory: 36 };

export function wq(v: number[], w: number[], q: number): number {
  const o = v.map((_, i) => i).sort((a, b) => v[a] - v[b]);
  const tot = w.reduce((a, b) => a + b, 0);
  let acc = 0;
  for (const i of o) { acc += w[i]; if (acc >= q * tot * (1 - 1e-12)) return v[i]; }
  return v[o[o.length - 1]];
}

/** Midpoint of the narrowest interval of v holding at least `mass` of the weight w. */
function shorthMid(v: number[], w: number[], mass: number): number {
  const o = v.map((_, i) => i).sort((a, b) => v[a] - v[b]);
  const tot = w.reduce((a, b) => a + b, 0);
  let best = [v[o[0]], v[o[o.length - 1]]];
  let acc = 0;
  for (let i = 0, j = 0; i < o.length; i++) {
    while (j < o.length && acc < mass * tot * (1 - 1e-12)) acc += w[o[j++]];
    if (acc < mass * tot * (1 - 1e-12)) break;
    if (v[o[j - 1]] - v[o[i]] < best[1] - best[0]) best = [v[o[i]], v[o[j - 1]]];
    acc -= w[o[i]];
  }
  return (best[0] + best[1]) / 2;
}

/** Weighted least squares of v on two centred regressors, ridges r1, r2 in units of Σw: slopes and the means. */
function ridge2(x1: number[], x2: number[], v: number[], w: number[], r1: number, r2: number) {
  const sw = w.reduce((a, b) => a + b, 0);
  let m1 = 0, m2 = 0, mv = 0;
  for (let j = 0; j < v.length; j++) { m1 += w[j] * x1[j]; m2 += w[j] * x2[j]; mv += w[j] * v[j]; }
  m1 /= sw; m2 /= sw; mv /= sw;
  let s11 = 0, s22 = 0, s12 = 0, s1v = 0, s2v = 0;
  for (let j = 0; j < v.length; j++) {
    const a = x1[j] - m1, b = x2[j] - m2, c = v[j] - mv;
    s11 += w[j] * a * a; s22 += w[j] * b * b; s12 += w[j] * a * b; s1v += w[j] * a * c; s2v += w[j] * b * c;
  }
  const A = s11 + r1 * sw, D = s22 + r2 * sw;
  const det = A * D - s12 * s12;
  return { b1: (D * s1v - s12 * s2v) / det, b2: (A * s2v - s12 * s1v) / det, m1, m2, mv };
}

export interface Estimate {
  mid: number; relIqr: number;
  /** The pool as the median saw it: candidate indices into t's pairs, weights, ln(adjusted €/m²); its weighted median. */
  pool: { idx: number[]; w: number[]; v: number[]; med: number };
}

export function estimate(t: T, P: P): Estimate | null {
  const ty = t.type;
  const hz = P.horizon === 18 ? t.h18 : t.h24;
  const cand: number[] = [];
  const wide: number[] = [];
  const history: number[] = [];
  const hh = P.sameHistory > 0 ? daysBack(t.date, P.sameHistory) : 0;
  for (let i = 0; i < t.p.length; i++) {
    if (t.age[i] > hz) {
      // the subject's location's own older sales: in the pool, never counted as comparables (≥ 3 rule, widening)
      if (P.sameHistory > 0 && t.d[i] < P.historyDist && t.age[i] <= hh) history.push(i);
      continue;
    }
    const lnr = Math.abs(Math.log(t.s[i] / t.surface));
    if (lnr > Math.log(1.5) + 1e-9 && !(t.d[i] < 1 && lnr <= Math.log(P.sameSurf) + 1e-9)) continue;
    if (P.roomsFilter && t.rooms !== null && !(t.crooms[i] >= t.rooms - 1 && t.crooms[i] <= t.rooms + 1)) continue;
    if (t.d[i] <= P.radius) cand.push(i);
    if (t.d[i] <= 2 * P.radius) wide.push(i);
  }
  if (cand.length < 3 && wide.length < 3) return null;
  const use = [...(cand.length >= 3 ? cand : wide), ...history];
  let bw = P.bw[ty];
  if (P.adaptK > 0) {
    const ds = use.map((i) => t.d[i]).sort((a, b) => a - b);
    bw = Math.min(bw, Math.max(P.adaptMin, P.adaptMult * ds[Math.min(ds.length - 1, P.adaptK - 1)]));
  }
  if (P.denseR > 0 && use.filter((i) => t.d[i] <= P.denseR).length < P.denseN) bw *= P.sparseMult;
  const sb = P.streetBoost[ty], ab = P.addrBoost[ty], xb = P.sectionBoost[ty];
  const lw: number[] = [], lp: number[] = [], x: number[] = [], ages: number[] = [];
  for (const i of use) {
    const slope = P.trend === 'd' ? t.slopeD[i] : P.trend === 'c' ? t.slopeC[i] : 0;
    const lr = Math.log(t.s[i] / t.surface);
    const byLevel = (P.levelRatio === 'all' || (P.levelRatio === 'history' && t.age[i] > hz)) && t.tendAtSale[i] > 0 && t.tend[i] > 0;
    lp.push(Math.log(t.p[i]) + (byLevel ? Math.log(t.tend[i] / t.tendAtSale[i]) : P.slopeMult * slope * t.age[i] / 30.44) + P.el[ty] * lr);
    x.push(lr);
    ages.push(t.age[i] / 30.44);
    lw.push(-((t.d[i] / bw) ** P.dpow) + (t.d[i] < 1 && Math.abs(lr) < 0.05 ? P.sameFlat : 0) - t.age[i] / (P.rec[ty] * 30.44) - (lr / (t.d[i] < 1 && P.sameSbw > 0 ? P.sameSbw : P.sbw[ty])) ** 2 + (t.d[i] < P.sameDist ? P.sameBoost : 0)
      - (P.roomsPenalty && t.rooms !== null ? P.roomsPenalty * Math.abs(t.crooms[i] - t.rooms) : 0)
      - (t.ccarrez[i] > 0 && Math.abs(Math.log(t.ccarrez[i] / t.s[i])) > P.carrezThr ? P.carrezPen : 0) - P.depPen * t.cdeps[i]
      + (t.sameStreet[i] && t.d[i] <= P.streetMaxD ? sb : 0) + (t.sameAddr[i] ? ab : 0) + (t.sameSection[i] ? xb : 0));
  }
  let order = lw.map((_, j) => j).sort((a, b) => lw[b] - lw[a] || t.age[use[a]] - t.age[use[b]]).slice(0, P.k);
  const top = lw[order[0]];
  let w = order.map((j) => Math.exp(lw[j] - top));
  let v = order.map((j) => lp[j]);
  const heaviestTend = t.tend[use[order[0]]];
  if (P.depBeta[ty] !== 0) {
    const dep = order.map((j) => (t.cdeps[use[j]] > 0 ? 1 : 0));
    const share = dep.reduce((a: number, d: number, j: number) => a + d * w[j], 0) / w.reduce((a, b) => a + b, 0);
    v = v.map((a, j) => a - P.depBeta[ty] * (dep[j] - share));
  }
  if (P.gradMult[ty] !== 0 && v.length >= 5) {
    const xs = order.map((j) => t.dx[use[j]] / 100), ys = order.map((j) => t.dy[use[j]] / 100);
    const { b1: bx, b2: by } = ridge2(xs, ys, v, w, P.gradRidge, P.gradRidge);
    v = v.map((a, j) => a - P.gradMult[ty] * (bx * xs[j] + by * ys[j]));
  }
  if (P.trim > 0 && v.length >= 5) {
    const m = wq(v, w, 0.5);
    const mad = wq(v.map((a) => Math.abs(a - m)), w, 0.5);
    const keep = v.map((a) => Math.abs(a - m) <= P.trim * Math.max(mad, 0.02));
    order = order.filter((_, j) => keep[j]); w = w.filter((_, j) => keep[j]); v = v.filter((_, j) => keep[j]);
  }
  const med = P.medSpread > 0 ? [-1, -0.5, 0, 0.5, 1].reduce((a, k) => a + wq(v, w, 0.5 + k * P.medSpread), 0) / 5 : wq(v, w, 0.5);
  const relIqr = (Math.exp(wq(v, w, 0.75)) - Math.exp(wq(v, w, 0.25))) / Math.exp(med);
  const sw = w.reduce((a, b) => a + b, 0), sw2 = w.reduce((a, b) => a + b * b, 0);
  const nEff = (sw * sw) / sw2;
  let est = med;
  if (P.shorth > 0 && v.length >= 3) est = (1 - P.shorth) * est + P.shorth * shorthMid(v, w, P.shorthMass);
  if (P.reg > 0 && nEff >= P.regMin) {
    const xs = order.map((j) => x[j]);
    const as = order.map((j) => ages[j]);
    const r = ridge2(xs, as, v, w, P.regRidge, P.ageRidge);
    const a = r.mv - r.b1 * r.m1 - r.b2 * r.m2;
    est = (1 - P.reg) * med + P.reg * a;
  }
  if (P.bw2 > 0) {
    const w2 = order.map((j) => Math.exp(lw[j] + (t.d[use[j]] / bw) ** P.dpow - (t.d[use[j]] / P.bw2) ** 2));
    const s2 = w2.reduce((a, b) => a + b, 0);
    const m2 = wq(v, w2, 0.5);
    est = est + (m2 - est) * s2 / (s2 + P.lambda2);
  }
  if (P.areaShrink[ty] > 0 || P.areaAlpha[ty] > 0) {
    const aw = use.map((i) => Math.exp(-t.age[i] / (P.rec[ty] * 30.44) - (Math.log(t.s[i] / t.surface) / P.sbw[ty]) ** 2));
    const area = wq(use.map((_, j) => lp[j]), aw, 0.5);
    est = (nEff * est + P.areaShrink[ty] * area) / (nEff + P.areaShrink[ty]);
    est = (1 - P.areaAlpha[ty]) * est + P.areaAlpha[ty] * area;
  }
  if (heaviestTend > 0 && P.shrink > 0) est = (nEff * est + P.shrink * Math.log(heaviestTend)) / (nEff + P.shrink);
  return { mid: Math.exp(est + P.bias) * t.surface, relIqr, pool: { idx: order.map((j) => use[j]), w, v, med } };
}

export interface M { n: number; cov: number; mdape: number; w10: number; bias: number }
export const median = (a: number[]) => { const s = [...a].sort((x, y) => x - y); const m = s.length >> 1; return s.length ? (s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2) : NaN; };
/** The first held-out month of each sample (the months before it are the tuning months). */
export const HOLD_FROM: Record<string, string> = { toulon: '2025-01', lyon: '2017-01' };
export function metricsOf(ts: T[], pred: (t: T) => number | null): M {
  const sig: number[] = [];
  for (const t of ts) { const p = pred(t); if (p !== null) sig.push((p - t.actual) / t.actual); }
  const ape = sig.map(Math.abs);
  return { n: ts.length, cov: sig.length / ts.length, mdape: median(ape), w10: ape.filter((a) => a <= 0.1).length / ape.length, bias: median(sig) };
}
export const fmt = (m: M) => `MdAPE ${(m.mdape * 100).toFixed(2)} ±10 ${(m.w10 * 100).toFixed(1)} bias ${(m.bias * 100).toFixed(1)} cov ${(m.cov * 100).toFixed(1)} n ${m.n}`;
