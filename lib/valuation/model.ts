// The estimator's model parameters: chosen by walk-forward backtest only (docs/valuation.md, "How the parameters were
// chosen"): a grid searched on the targets of months 1–6 of the real DVF samples, measured on months 7–12. Never
// tuned by hand; change them only with a new walk-forward run, and publish it.
export interface Kernels {
  /** Gaussian distance kernel: weight × exp(−(d / bandwidthM)²). */
  bandwidthM: number;
  /** Exponential recency kernel: weight × exp(−age / recencyMonths). */
  recencyMonths: number;
  /** Gaussian surface kernel on ln(surface ratio): weight × exp(−(ln(s / S) / surfaceLogBandwidth)²). */
  surfaceLogBandwidth: number;
}

export const MODEL = {
  /** Weight kernels per type (houses: sparser, so wider). */
  kernels: {
    Appartement: { bandwidthM: 150, recencyMonths: 96, surfaceLogBandwidth: 0.3 },
    Maison: { bandwidthM: 250, recencyMonths: 48, surfaceLogBandwidth: 0.5 },
  } as Record<'Appartement' | 'Maison', Kernels>,
  /**
   * Shrinkage toward the zone's indexed level (prix_m2_tendance of the heaviest comparable's département): the
   * estimate's ln(€/m²) = (n_eff × ln(weighted median) + shrinkage × ln(level)) / (n_eff + shrinkage), with
   * n_eff = (Σw)² / Σw² the effective number of comparables. It matters only when a few comparables carry the weight.
   */
  shrinkage: 0.5,
  /** Hedonic elasticity of €/m² to surface per type: €/m² × (s / S)^elasticity brings a comparable to the subject's surface. */
  elasticity: { Appartement: 0.2, Maison: 0.1 } as Record<'Appartement' | 'Maison', number>,
  /**
   * Same location: a comparable within `sameLocationM` of the subject gets exp(boost) times its kernel weight. geo-DVF
   * places every sale at its parcel's centroid, so an exact match is a sale of the same parcel, for flats the same
   * building (copropriété): the strongest comparable DVF has, that a 150 m Gaussian barely favours over its street.
   */
  sameLocation: { maxDistanceM: 1, logBoost: 1.5 },
  /**
   * Whose trend brings a comparable's €/m² to the reference date (valuation_indice_prix): 'departement', or 'commune'
   * (the commune's where it has enough sales, else the département's). The walk-forward chose the département.
   */
  trendLevel: 'departement' as 'commune' | 'departement',
  /** At most this many comparables (the heaviest) enter the weighted median. */
  estimateK: 100,
} as const;
