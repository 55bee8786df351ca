// The pure half of the estimator (lib/valuation): the estimate from ranked comparables, the calibrated interval and
// its cohorts, the confidence rules. Hand-made comparables pin each rule.
import { describe, expect, it } from 'vitest';
import { calibrate, cohortOf, DEFAULT_CALIBRATION, MIN_COHORT_N, type Calibration } from '../../../lib/valuation/calibration';
import { ESTIMATE_K, estimateFrom, weightedQuantile, type Comparable } from '../../../lib/valuation/estimator';
import { MODEL } from '../../../lib/valuation/model';

const comp = (prix_m2: number, score = 0.8, i = 0, weight = 1, adjusted = prix_m2, level: number | null = null): Comparable => ({
  id: i, id_mutation: `m${i}`, date_mutation: '2025-01-01', type_local: 'Appartement', valeur_fonciere: prix_m2 * 50, prix_m2,
  surface_reelle_bati: 50, nombre_pieces_principales: 2, address: null, code_postal: '75015', commune: 'PARIS 15', distance_m: 100,
  age_days: 30, score, prix_m2_ajuste: adjusted, log_weight: Math.log(weight), prix_m2_tendance: level,
});
const comps = (prices: number[], score = 0.8) => prices.map((p, i) => comp(p, score, i));
const input = { typeLocal: 'Appartement', surface: 50, fallbacks: [] };

describe('estimateFrom', () => {
  it('is null with fewer than 3 comparables', () => {
    expect(estimateFrom(comps([10_000, 11_000]), input, undefined)).toBeNull();
    expect(estimateFrom(comps([10_000, 11_000, 12_000]), input, undefined)).not.toBeNull();
  });

  it('mid = weighted median of the adjusted €/m² × surface: the smallest value reaching half the total weight', () => {
    // equal weights, even count: the lower middle value reaches exactly half
    const e = estimateFrom(comps([9000, 10_000, 11_000, 30_000]), input, undefined)!;
    expect(e.price_per_m2.median).toBe(10_000);
    expect(e.price_range.mid).toBe(500_000);
    // weights 1, 1, 5: the heavy 11,000 holds more than half
    const heavy = estimateFrom([comp(9000, 0.8, 0, 1), comp(10_000, 0.8, 1, 1), comp(11_000, 0.8, 2, 5)], input, undefined)!;
    expect(heavy.price_per_m2.median).toBe(11_000);
    // the adjusted €/m² is what counts, not the raw one
    const adjusted = estimateFrom([comp(9000, 0.8, 0, 1, 12_000), comp(10_000, 0.8, 1, 1, 13_000), comp(11_000, 0.8, 2, 1, 14_000)], input, undefined)!;
    expect(adjusted.price_per_m2.median).toBe(13_000);
    // only the heaviest ESTIMATE_K enter: light outliers beyond them are ignored whatever their number
    const many = [...Array.from({ length: ESTIMATE_K }, (_, i) => comp(10_000, 0.8, i, 1)), ...Array.from({ length: ESTIMATE_K }, (_, i) => comp(50_000, 0.8, ESTIMATE_K + i, 0.5))];
    const capped = estimateFrom(many, input, undefined)!;
    expect(capped.based_on_count).toBe(ESTIMATE_K);
    expect(capped.price_per_m2.median).toBe(10_000);
  });

  it(`shrinks toward the heaviest comparable's indexed level by ${MODEL.shrinkage} against the effective count`, () => {
    // weights 4, 1, 1: n_eff = 6² / 18 = 2; the heaviest carries the level 8000
    const pool = [comp(10_000, 0.8, 0, 4, 10_000, 8000), comp(12_000, 0.8, 1, 1, 12_000, 20_000), comp(9000, 0.8, 2, 1, 9000, 20_000)];
    const e = estimateFrom(pool, input, undefined)!;
    const k = MODEL.shrinkage;
    expect(e.price_per_m2.median).toBeCloseTo(Math.exp((2 * Math.log(10_000) + k * Math.log(8000)) / (2 + k)), 2);
    expect(e.price_per_m2.median).toBeLessThan(10_000);
    // no level: the weighted median itself
    expect(estimateFrom(pool.map((c) => ({ ...c, prix_m2_tendance: null })), input, undefined)!.price_per_m2.median).toBe(10_000);
  });

  it('weighted quantiles do not underflow on tiny weights and follow the cumulative weight', () => {
    const items = [10, 20, 30, 40].map((value, id) => ({ value, id, logWeight: -2000 + (id === 3 ? Math.log(3) : 0) }));
    // weights 1, 1, 1, 3 (relative): cumulative 1, 2, 3, 6 of 6
    expect(weightedQuantile(items, 0.25)).toBe(20);
    expect(weightedQuantile(items, 0.5)).toBe(30);
    expect(weightedQuantile(items, 0.75)).toBe(40);
  });

  it('widens the interval with the dispersion of the comparables', () => {
    const tight = estimateFrom(comps([9800, 10_000, 10_000, 10_200, 10_100]), input, undefined)!;
    const loose = estimateFrom(comps([6000, 8000, 10_000, 13_000, 16_000]), input, undefined)!;
    const width = (e: typeof tight) => (e.price_range.high - e.price_range.low) / e.price_range.mid;
    expect(width(loose)).toBeGreaterThan(2 * width(tight));
    expect(tight.confidence_factors.positive_factors).toContain('comparables_agree');
    expect(loose.confidence_factors.limiting_factors).toContain('comparables_disagree');
  });

  it('without calibration: global basis, conservative default, flagged uncalibrated', () => {
    const e = estimateFrom(comps([9000, 10_000, 11_000]), input, undefined)!;
    expect(e.interval).toMatchObject({ basis: 'global', calibration_generated_at: null, contract_version: 'valuation-comparables-v1', cohort_eligible_n: 0 });
    // weighted quartiles of three equal weights: 9000 and 11,000 around the median 10,000
    expect(e.interval.ratio_low).toBeCloseTo(Math.exp(DEFAULT_CALIBRATION.global.z_low * ((11_000 - 9000) / 10_000)), 4);
    expect(e.confidence_factors.limiting_factors).toContain('interval_uncalibrated');
  });

  it(`uses the cohort's quantiles from ${MIN_COHORT_N} measured targets, else the global ones`, () => {
    const prices = [9000, 10_000, 11_000];
    const cohort = cohortOf('Appartement', 50, (11_000 - 9000) / 10_000);
    const table = (n: number): Calibration =>
      calibrate([...Array.from({ length: n }, (_, i) => ({ cohort, z: (i % 2 ? 0.1 : -0.1) })), ...Array.from({ length: 100 }, (_, i) => ({ cohort: 'other', z: i / 50 - 1 }))], '2026-01-01T00:00:00.000Z');
    const own = estimateFrom(comps(prices), input, table(MIN_COHORT_N))!;
    expect(own.interval).toMatchObject({ basis: 'cohort', cohort, cohort_eligible_n: MIN_COHORT_N, calibration_generated_at: '2026-01-01T00:00:00.000Z' });
    expect(own.interval.ratio_high).toBeCloseTo(Math.exp(0.1 * 0.2), 4);
    const global = estimateFrom(comps(prices), input, table(MIN_COHORT_N - 1))!;
    expect(global.interval).toMatchObject({ basis: 'global', cohort_eligible_n: MIN_COHORT_N - 1 });
    expect(global.confidence_factors.limiting_factors).toContain('interval_global_calibration');
    expect(global.confidence_factors.limiting_factors).not.toContain('interval_uncalibrated');
  });

  it('confidence: high from 8 comparables of average similarity 0.7, medium from 5 and 0.5, else low', () => {
    const level = (n: number, score: number) => estimateFrom(comps(Array(n).fill(10_000), score), input, undefined)!.confidence;
    expect(level(8, 0.7)).toBe('high');
    expect(level(7, 0.9)).toBe('medium');
    expect(level(8, 0.69)).toBe('medium');
    expect(level(5, 0.5)).toBe('medium');
    expect(level(4, 0.9)).toBe('low');
    expect(level(10, 0.49)).toBe('low');
  });

  it('flags the fallback used', () => {
    const e = estimateFrom(comps([9000, 10_000, 11_000]), { ...input, fallbacks: ['radius', 'commune'] as const }, undefined)!;
    expect(e.confidence_factors.fallback_used).toBe(true);
    expect(e.confidence_factors.limiting_factors).toEqual(expect.arrayContaining(['fallback_radius', 'fallback_commune']));
  });
});

describe('calibration: conformal quartiles, shrinkage toward the type, bias correction', () => {
  it('takes the ⌊(n+1)/4⌋-th and ⌈3(n+1)/4⌉-th smallest scores, which cover at least half of a new exchangeable one', () => {
    for (const n of [30, 31, 32, 33, 101]) {
      // a shuffled 1..n: the order statistics are the ranks themselves
      const zs = Array.from({ length: n }, (_, i) => ((i * 7) % n) + 1);
      const c = calibrate(zs.map((z) => ({ cohort: 'Appartement|35-60m2|mixed', z })), 'x');
      expect(c.global.z_low).toBe(Math.floor((n + 1) / 4));
      expect(c.global.z_high).toBe(Math.ceil((3 * (n + 1)) / 4));
      // a new exchangeable (continuous) score lies between the k1-th and k2-th smallest with probability (k2 − k1) / (n + 1)
      expect((c.global.z_high - c.global.z_low) / (n + 1)).toBeGreaterThanOrEqual(0.5);
    }
  });

  it("shrinks a cohort's quartiles toward its type's by 100 targets, and the global basis is the type's", () => {
    const a = Array.from({ length: 40 }, (_, i) => ({ cohort: 'Appartement|<35m2|agree', z: i % 2 ? 1 : -1 }));
    const b = Array.from({ length: 160 }, (_, i) => ({ cohort: 'Appartement|>=90m2|agree', z: i % 2 ? 3 : -3 }));
    const m = Array.from({ length: 60 }, (_, i) => ({ cohort: 'Maison|<80m2|agree', z: i % 2 ? 10 : -10 }));
    const c = calibrate([...a, ...b, ...m], 'x');
    // the flats' 200 scores: 100 at ±3 beyond 20 at ±1 each side → their conformal quartiles are −3 and 3
    expect(c.types!.Appartement).toEqual({ n: 200, z_low: -3, z_high: 3 });
    expect(c.cohorts['Appartement|<35m2|agree'].z_high).toBeCloseTo((40 * 1 + 100 * 3) / 140, 10);
    expect(c.cohorts['Appartement|<35m2|agree'].n).toBe(40);
    // a cohort with too few targets of its own gets its type's quartiles, not those of every type
    const small = cohortOf('Maison', 200, 0.2);
    const ratio = (cal: typeof c) => estimateFrom(comps([9000, 10_000, 11_000]), { ...input, typeLocal: 'Maison', surface: 200 }, cal)!.interval;
    expect(ratio(c)).toMatchObject({ basis: 'global', cohort: small });
    expect(ratio(c).ratio_high).toBeCloseTo(Math.exp(10 * 0.2), 3);
  });

  it('applies the learnt bias correction of the type to the mid and the €/m²', () => {
    const cal = { ...calibrate([], 'x'), log_bias: { Appartement: { n: 40, value: Math.log(1.05) } } };
    const plain = estimateFrom(comps([9000, 10_000, 11_000]), input, undefined)!;
    const corrected = estimateFrom(comps([9000, 10_000, 11_000]), input, cal)!;
    expect(corrected.price_per_m2.median).toBeCloseTo(plain.price_per_m2.median * 1.05, 6);
    expect(corrected.price_range.mid).toBe(Math.round(10_000 * 1.05 * 50));
    const house = estimateFrom(comps([9000, 10_000, 11_000]), { ...input, typeLocal: 'Maison' }, cal)!;
    expect(house.price_range.mid).toBe(plain.price_range.mid);
  });
});
