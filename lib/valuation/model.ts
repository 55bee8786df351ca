// The estimator's model parameters: chosen by walk-forward backtest only (docs/valuation.md, "How the parameters were
// chosen"): a grid searched on the targets of months 1–6 of the real DVF samples, measured on months 7–12. Never
// tuned by hand; change them only with a new walk-forward run, and publish it.
export const MODEL = {
  /** Gaussian distance kernel: weight × exp(−(d / bandwidthM)²). */
  bandwidthM: 150,
  /** Exponential recency kernel: weight × exp(−age / recencyMonths). */
  recencyMonths: 24,
  /** Gaussian surface kernel on ln(surface ratio): weight × exp(−(ln(s / S) / surfaceLogBandwidth)²). */
  surfaceLogBandwidth: 0.3,
  /** Hedonic elasticity of €/m² to surface per type: €/m² × (s / S)^elasticity brings a comparable to the subject's surface. */
  elasticity: { Appartement: 0.1, Maison: 0.1 } as Record<'Appartement' | 'Maison', number>,
  /**
   * Whose trend brings a comparable's €/m² to the reference date (valuation_indice_prix): 'departement', or 'commune'
   * (the commune's where it has enough sales, else the département's). The walk-forward chose the département.
   */
  trendLevel: 'departement' as 'commune' | 'departement',
  /** At most this many comparables (the heaviest) enter the weighted median. */
  estimateK: 100,
} as const;
