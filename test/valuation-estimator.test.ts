// The pure half of the estimator (lib/valuation): the estimate from ranked comparables, the calibrated interval and
// its cohorts, the confidence rules. Hand-made comparables pin each rule.
import { describe, expect, it } from 'vitest';
import { calibrate, cohortOf, DEFAULT_CALIBRATION, MIN_COHORT_N, type Calibration } from '../lib/valuation/calibration';
import { estimateFrom, type Comparable } from '../lib/valuation/estimator';

const comp = (prix_m2: number, score = 0.8, i = 0): Comparable => ({
  id: i, id_mutation: `m${i}`, date_mutation: '2025-01-01', type_local: 'Appartement', valeur_fonciere: prix_m2 * 50, prix_m2,
  surface_reelle_bati: 50, nombre_pieces_principales: 2, address: null, code_postal: '75015', commune: 'PARIS 15', distance_m: 100,
  age_days: 30, score,
});
const comps = (prices: number[], score = 0.8) => prices.map((p, i) => comp(p, score, i));
const input = { typeLocal: 'Appartement', surface: 50, fallbacks: [] };

describe('estimateFrom', () => {
  it('is null with fewer than 3 comparables', () => {
    expect(estimateFrom(comps([10_000, 11_000]), input, undefined)).toBeNull();
    expect(estimateFrom(comps([10_000, 11_000, 12_000]), input, undefined)).not.toBeNull();
  });

  it('mid = unweighted median €/m² of the best 10 × surface (an even count takes the mean of the middle two)', () => {
    const e = estimateFrom(comps([9000, 10_000, 11_000, 30_000]), input, undefined)!;
    expect(e.price_per_m2.median).toBe(10_500);
    expect(e.price_range.mid).toBe(525_000);
    // the 11th and later comparables are not used
    const twelve = estimateFrom(comps([...Array(10).fill(10_000), 50_000, 50_000]), input, undefined)!;
    expect(twelve.based_on_count).toBe(10);
    expect(twelve.price_per_m2.median).toBe(10_000);
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
    expect(e.interval.ratio_low).toBeCloseTo(Math.exp(DEFAULT_CALIBRATION.global.z_low * ((10_500 - 9500) / 10_000)), 4);
    expect(e.confidence_factors.limiting_factors).toContain('interval_uncalibrated');
  });

  it(`uses the cohort's quantiles from ${MIN_COHORT_N} measured targets, else the global ones`, () => {
    const prices = [9000, 10_000, 11_000];
    const cohort = cohortOf('Appartement', 50, (10_500 - 9500) / 10_000);
    const table = (n: number): Calibration =>
      calibrate([...Array.from({ length: n }, (_, i) => ({ cohort, z: (i % 2 ? 0.1 : -0.1) })), ...Array.from({ length: 100 }, (_, i) => ({ cohort: 'other', z: i / 50 - 1 }))], '2026-01-01T00:00:00.000Z');
    const own = estimateFrom(comps(prices), input, table(MIN_COHORT_N))!;
    expect(own.interval).toMatchObject({ basis: 'cohort', cohort, cohort_eligible_n: MIN_COHORT_N, calibration_generated_at: '2026-01-01T00:00:00.000Z' });
    expect(own.interval.ratio_high).toBeCloseTo(Math.exp(0.1 * 0.1), 4);
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
