// How accurate can an estimator of a point, a surface and a type be on a sample (docs/valuation.md, "Why Toulon stays
// short of the targets")? Two sales of the same location (< 1 m: the same parcel) with surfaces within 5 % and less
// than 12 months apart differ by the noise of both. Model: ln(€/m²) = the building's level + e, e = scale × Student
// t(ν), independent; (ν, scale) are fitted to the quantiles of |ln ratio| of those pairs by simulation, and the model
// then tells what an estimator that knew each building's level to within a normal error of sd b would achieve.
// Usage: npm run lab -- walk-forward-noise [--dir DIR]   (after extract.ts, see search.ts)
import { parseArgs } from 'node:util';
import { load } from './model';

const DIR = parseArgs({ options: { dir: { type: 'string', default: '/tmp/walk-forward' } } }).values.dir!;
const QUANTILES = [0.25, 0.5, 0.75, 0.9, 0.95];
const DRAWS = 100_000;

/** A deterministic uniform generator (the figures must reproduce). */
function uniform(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) + 0.5) / 4294967296;
}
const u = uniform(7);
const gauss = () => Math.sqrt(-2 * Math.log(u())) * Math.cos(2 * Math.PI * u());
const student = (nu: number) => {
  if (!Number.isFinite(nu)) return gauss();
  let chi2 = 0;
  for (let k = 0; k < nu; k++) chi2 += gauss() ** 2;
  return gauss() / Math.sqrt(chi2 / nu);
};
const quantile = (sorted: number[], p: number) => sorted[Math.floor(p * (sorted.length - 1))];
const pct = (x: number) => `${(x * 100).toFixed(1)} %`;

/** The share within ±10 % and the MdAPE of estimates whose ln error is noise + b × N(0, 1). */
function accuracy(noise: number[], b: number): { within10: number; mdape: number } {
  const ape = noise.map((e) => Math.abs(Math.exp(-(e + b * gauss())) - 1)).sort((x, y) => x - y);
  return { within10: ape.filter((a) => a <= 0.1).length / ape.length, mdape: quantile(ape, 0.5) };
}

for (const sample of ['toulon', 'lyon']) {
  const targets = (await load(`${DIR}/${sample}`)).filter((t) => !t.screened && t.type === 'Appartement');
  const seen = new Set<string>();
  const diffs: number[] = [];
  for (const t of targets) {
    for (let i = 0; i < t.p.length; i++) {
      if (t.d[i] >= 1 || Math.abs(Math.log(t.s[i] / t.surface)) > Math.log(1.05) || t.age[i] > 365) continue;
      const pair = [t.id, t.cid[i]].sort((a, b) => a - b).join('-');
      if (seen.has(pair)) continue;
      seen.add(pair);
      diffs.push(Math.log(t.actual / t.surface / t.p[i]));
    }
  }
  const abs = diffs.map(Math.abs).sort((a, b) => a - b);
  const observed = QUANTILES.map((p) => quantile(abs, p));
  console.log(`${sample}: ${diffs.length} pairs of flat sales; |ln ratio| quantiles ${QUANTILES.join('/')}: ${observed.map((q) => q.toFixed(3)).join(' ')}; ${pct(abs.filter((a) => a <= 0.0953).length / abs.length)} within ±10 %`);
  let best = { loss: Infinity, nu: 0, noise: [] as number[] };
  for (const nu of [2, 3, 4, 5, 6, 8, 12, 30, Infinity]) {
    const e = Array.from({ length: 2 * DRAWS }, () => student(nu));
    const d = Array.from({ length: DRAWS }, (_, k) => Math.abs(e[2 * k] - e[2 * k + 1])).sort((a, b) => a - b);
    const scale = observed[1] / quantile(d, 0.5);
    const loss = QUANTILES.reduce((s, p, k) => s + Math.log((quantile(d, p) * scale) / observed[k]) ** 2, 0);
    const noise = e.slice(0, DRAWS).map((x) => x * scale);
    const oracle = accuracy(noise, 0);
    console.log(`  ν ${nu}: scale ${scale.toFixed(3)}, fit ${loss.toFixed(4)}; pair quantiles ${QUANTILES.map((p) => (quantile(d, p) * scale).toFixed(3)).join(' ')}; a perfect building level: ${pct(oracle.within10)} within ±10 %, MdAPE ${pct(oracle.mdape)}`);
    if (loss < best.loss) best = { loss, nu, noise };
  }
  console.log(`  best fit ν ${best.nu}; an estimator knowing each building's level to a normal error of sd b:`);
  for (const b of [0, 0.03, 0.05, 0.08, 0.1, 0.12, 0.15]) {
    const a = accuracy(best.noise, b);
    console.log(`    b ${b.toFixed(2)}: ${pct(a.within10)} within ±10 %, MdAPE ${pct(a.mdape)}`);
  }
}
