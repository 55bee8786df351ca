// The valuation estimator shared by GET /v1/comparables, GET /v1/estimate, the backtest and the portfolio: the search
// of one subject's comparables (radius, widened radius, postal code, commune) and the estimate made from them.
import type { Params, Row } from '../duck';
import { METERS_PER_DEGREE } from '../distance';
import { CONTRACT_VERSION, cohortOf, DEFAULT_CALIBRATION, logBiasOf, spreadOf, type Calibration } from './calibration';
import { MODEL } from './model';
import { candidateWhere, comparableColumns, RANK_ORDER, trendJoinSql, WEIGHT_ORDER, withinRadiusSql, type SubjectSql } from './sql';

/** Comparables fetched at least for the listing; below MIN_COMPARABLES there is no estimate (specification). */
export const BEST_K = 10;
export const MIN_COMPARABLES = 3;
/** The estimate's weighted median is made of at most this many comparables, the heaviest. */
export const ESTIMATE_K = MODEL.estimateK;
/** /v1/estimate has one surface: candidates within ×/÷ this factor of it. */
export const ESTIMATE_SURFACE_FACTOR = 1.5;
/** Defaults of both endpoints (specification), also the backtest's setting. */
export const DEFAULT_MAX_AGE_MONTHS = 18;

export interface Comparable {
  id: number;
  id_mutation: string;
  date_mutation: string;
  type_local: string;
  valeur_fonciere: number;
  prix_m2: number;
  surface_reelle_bati: number;
  nombre_pieces_principales: number | null;
  address: string | null;
  code_postal: string | null;
  commune: string | null;
  distance_m: number | null;
  age_days: number;
  score: number;
  /** €/m² brought to the reference date (local trend) and to the subject's surface (hedonic elasticity). */
  prix_m2_ajuste: number;
  /** ln of the comparable's weight in the estimate (distance, recency, surface kernels). */
  log_weight: number;
  /** Indexed €/m² level of the comparable's département at the reference month (valuation_indice_prix), if any. */
  prix_m2_tendance: number | null;
}

/** Fallbacks in the order they are tried: the radius widened, then the postal code, then the commune. */
export type Fallback = 'radius' | 'code_postal' | 'commune';

/** The geographic fallback's radius: twice the requested one, at most 2 km; none when that is no wider. */
export const widenedRadius = (radiusM: number) => Math.min(2000, 2 * radiusM);

export interface ValuationSubject {
  latitude: number;
  longitude: number;
  typeLocal: 'Maison' | 'Appartement';
  surface: number;
  surfaceMin: number;
  surfaceMax: number;
  pieces: number | null;
  radiusM: number;
  maxAgeMonths: number;
  /** YYYY-MM-DD: ages are counted to this day; sales of that day are candidates only when `includeRefDate`. */
  refDate: string;
  includeRefDate: boolean;
  excludeBulk: boolean;
  excludeMutation: string | null;
  /** Administrative fallbacks, tried after the widened radius when it still gives fewer than MIN_COMPARABLES. */
  codePostal: string | null;
  communeCodes: string[];
}

/** The subject bound as `$v_*` parameters (the backtest binds the same SubjectSql to its targets' columns). */
const BOUND_SUBJECT: SubjectSql = {
  typeLocal: '$v_type',
  latitude: '$v_lat',
  longitude: '$v_lon',
  surface: '$v_surface',
  surfaceMin: '$v_smin',
  surfaceMax: '$v_smax',
  pieces: '$v_pieces::DOUBLE',
  radiusM: '$v_radius',
  refDate: '$v_ref::DATE',
  maxAgeMonths: '$v_months::INTEGER',
  until: '($v_ref::DATE + $v_until_offset::INTEGER)',
  excludeBulk: '$v_exclude_bulk::BOOLEAN',
  excludeMutation: '$v_exclude_mutation::VARCHAR',
};

function subjectParams(s: ValuationSubject): Params {
  return {
    v_type: s.typeLocal, v_lat: s.latitude, v_lon: s.longitude, v_surface: s.surface, v_smin: s.surfaceMin, v_smax: s.surfaceMax,
    v_pieces: s.pieces, v_radius: s.radiusM, v_ref: s.refDate, v_months: s.maxAgeMonths, v_until_offset: s.includeRefDate ? 1 : 0,
    v_exclude_bulk: s.excludeBulk, v_exclude_mutation: s.excludeMutation,
  };
}

type QueryFn = (sql: string, params: Params, timeoutMs: number) => Promise<Row[]>;

interface SearchOptions {
  query: QueryFn;
  isTimeout: (e: unknown) => boolean;
  /** Time budget of the whole search (radius and fallbacks). */
  budgetMs: number;
  /** Comparables wanted (at least BEST_K are fetched for the estimate). */
  limit: number;
}

export interface SearchResult {
  /** Most similar first (similarity_score): the listing. */
  comparables: Comparable[];
  /** Heaviest first, at most ESTIMATE_K: what the estimate is made of (estimateFrom). */
  pool: Comparable[];
  /** The fallbacks that added comparables. */
  fallbacks: Fallback[];
  notices: string[];
}

const newerFirst = (a: Comparable, b: Comparable) => (a.date_mutation < b.date_mutation ? 1 : a.date_mutation > b.date_mutation ? -1 : 0) || b.id - a.id;
/** RANK_ORDER and WEIGHT_ORDER of lib/valuation/sql.ts. */
const rankCompare = (a: Comparable, b: Comparable) => b.score - a.score || newerFirst(a, b);
const weightCompare = (a: Comparable, b: Comparable) => b.log_weight - a.log_weight || newerFirst(a, b);

/** The listing (best `n` by similarity) and the estimate's pool (heaviest ESTIMATE_K) of a set of candidates. */
export function split(found: Comparable[], n: number): { comparables: Comparable[]; pool: Comparable[] } {
  return { comparables: [...found].sort(rankCompare).slice(0, n), pool: [...found].sort(weightCompare).slice(0, ESTIMATE_K) };
}

/**
 * From the best `n` by similarity and the heaviest ESTIMATE_K within the radius, and the same of the widened ring:
 * the radius's own when it has MIN_COMPARABLES, else the widened search (the geographic fallback).
 */
export function pickRadius(found: Array<Comparable & { in_radius: boolean }>, n: number): { comparables: Comparable[]; pool: Comparable[]; fallbacks: Fallback[] } {
  const inside = found.filter((c) => c.in_radius);
  if (inside.length >= MIN_COMPARABLES || inside.length === found.length) return { ...split(inside, n), fallbacks: [] };
  return { ...split(found, n), fallbacks: ['radius'] };
}

/**
 * The comparables of one subject. The radius search (with its widened ring) runs first, within the requested horizon;
 * a timeout there is the caller's to report (no usable comparable). The administrative fallbacks only ever add sales;
 * when one is interrupted by the budget, what was found so far is returned with a notice.
 */
export async function searchComparables(s: ValuationSubject, o: SearchOptions): Promise<SearchResult> {
  const started = performance.now();
  const n = Math.max(o.limit, BEST_K);
  const params = { ...subjectParams(s), v_n: n };
  const run = async (zone: string, extra: Params, inRadius = 'true') => {
    const rows = await o.query(
      `select * from (
         select ${comparableColumns(BOUND_SUBJECT)}, ${inRadius} as in_radius
         from valuation_ventes c ${trendJoinSql(BOUND_SUBJECT)}
         where ${zone} and ${candidateWhere(BOUND_SUBJECT)})
       -- the best within the radius, and the best of the widened ring: the best of the widened search is among them
       -- (by similarity for the listing, by weight for the estimate)
       qualify row_number() over (partition by in_radius order by ${RANK_ORDER}) <= $v_n
         or row_number() over (partition by in_radius order by ${WEIGHT_ORDER}) <= ${ESTIMATE_K}
       order by ${RANK_ORDER}`,
      { ...params, ...extra },
      Math.max(1, o.budgetMs - (performance.now() - started)),
    );
    return rows as unknown as Array<Comparable & { in_radius: boolean }>;
  };
  // The radius and its geographic fallback (twice the radius) in one query; a bounding box in front of the exact
  // distance lets DuckDB skip row groups (valuation_ventes is sorted for it).
  const wide = widenedRadius(s.radiusM);
  const dLat = (wide / METERS_PER_DEGREE) * 1.001;
  const dLon = Math.min(180, dLat / Math.max(0.01, Math.cos((s.latitude * Math.PI) / 180)));
  const found = await run(
    `c.latitude between $v_lat0 and $v_lat1 and c.longitude between $v_lon0 and $v_lon1 and ${withinRadiusSql(BOUND_SUBJECT, 'c', '$v_wide')}`,
    { v_lat0: s.latitude - dLat, v_lat1: s.latitude + dLat, v_lon0: s.longitude - dLon, v_lon1: s.longitude + dLon, v_wide: wide },
    withinRadiusSql(BOUND_SUBJECT),
  );
  const picked = pickRadius(found, n);
  let { comparables, pool } = picked;
  const fallbacks = picked.fallbacks;
  const notices: string[] = fallbacks.length
    ? [`Fewer than ${MIN_COMPARABLES} comparables within radius_m = ${s.radiusM}: the search was widened to ${wide} m.`]
    : [];
  const fallbackZones: Array<[Fallback, string, Params]> = [];
  if (s.codePostal) fallbackZones.push(['code_postal', 'c.code_postal = $v_cp', { v_cp: s.codePostal }]);
  if (s.communeCodes.length) {
    const names = s.communeCodes.map((_, i) => `$v_com${i}`);
    fallbackZones.push(['commune', `c.code_commune_actuel in (${names.join(', ')})`, Object.fromEntries(s.communeCodes.map((c, i) => [`v_com${i}`, c]))]);
  }
  for (const [kind, zone, extra] of fallbackZones) {
    if (comparables.length >= MIN_COMPARABLES) break;
    let more: Comparable[];
    try {
      more = await run(zone, extra);
    } catch (e) {
      if (!o.isTimeout(e)) throw e;
      notices.push(
        `The ${kind} fallback was interrupted by the ${o.budgetMs} ms time budget: the ${comparables.length} comparables found ` +
          `before it are returned.`,
      );
      break;
    }
    const merged = split([...new Map([...comparables, ...pool, ...more].map((c) => [c.id, c])).values()], n);
    if (merged.comparables.length > comparables.length) fallbacks.push(kind);
    ({ comparables, pool } = merged);
  }
  return { comparables, pool, fallbacks, notices };
}

interface EstimateInput {
  typeLocal: string;
  surface: number;
  fallbacks: Fallback[];
}

export interface Estimate {
  price_range: { low: number; mid: number; high: number };
  price_per_m2: { median: number; used_surface: number };
  confidence: 'high' | 'medium' | 'low';
  based_on_count: number;
  methodology: string;
  interval: {
    method: 'iqr_p25_p75';
    coverage_label: '50%';
    basis: 'cohort' | 'global';
    cohort: string;
    cohort_eligible_n: number;
    ratio_low: number;
    ratio_high: number;
    contract_version: string;
    calibration_generated_at: string | null;
  };
  confidence_factors: {
    comparable_count: number;
    average_similarity: number;
    fallback_used: boolean;
    positive_factors: string[];
    limiting_factors: string[];
  };
}

/**
 * Weighted quantile: the smallest value whose cumulative weight (values ascending, ties by id) reaches q of the total.
 * Weights are exp(log_weight − max): relative, so no kernel product underflows.
 */
export function weightedQuantile(items: Array<{ value: number; logWeight: number; id: number }>, q: number): number {
  const sorted = [...items].sort((a, b) => a.value - b.value || a.id - b.id);
  const top = Math.max(...sorted.map((i) => i.logWeight));
  const w = sorted.map((i) => Math.exp(i.logWeight - top));
  const total = w.reduce((a, b) => a + b, 0);
  let acc = 0;
  for (let i = 0; i < sorted.length; i++) {
    acc += w[i];
    // relative tolerance: a cumulative sum that equals q × total up to rounding counts as reaching it
    if (acc >= q * total * (1 - 1e-12)) return sorted[i].value;
  }
  return sorted[sorted.length - 1].value;
}

/**
 * The two numbers the estimate rests on, from the pool (heaviest first): the €/m² (the weighted median of the adjusted
 * €/m², shrunk toward the heaviest comparable's indexed département level by MODEL.shrinkage against the effective
 * count of comparables) and the weighted relative IQR (IQR / weighted median) of the adjusted €/m².
 */
export function priceStats(pool: Comparable[]): { median: number; relIqr: number } {
  const items = pool.map((c) => ({ value: c.prix_m2_ajuste, logWeight: c.log_weight, id: c.id }));
  const weighted = weightedQuantile(items, 0.5);
  const relIqr = (weightedQuantile(items, 0.75) - weightedQuantile(items, 0.25)) / weighted;
  const top = Math.max(...items.map((i) => i.logWeight));
  const w = items.map((i) => Math.exp(i.logWeight - top));
  const nEff = w.reduce((a, b) => a + b, 0) ** 2 / w.reduce((a, b) => a + b * b, 0);
  const level = [...pool].sort(weightCompare)[0]?.prix_m2_tendance;
  const k = MODEL.shrinkage;
  const median = level && level > 0 && k > 0 ? Math.exp((nEff * Math.log(weighted) + k * Math.log(level)) / (nEff + k)) : weighted;
  return { median, relIqr };
}

const METHODOLOGY =
  `Weighted median of the price per m² of up to ${ESTIMATE_K} clean sales of the same type, each brought to the reference date ` +
  "along the département's monthly price trend and to the surface by a hedonic elasticity, weighted by distance, recency and " +
  "surface (bandwidths chosen by walk-forward backtest; sales of the same parcel weigh more), lightly shrunk toward the département's indexed price when few " +
  'comparables carry the weight, corrected by the median error the published walk-forward backtest measured for the type, ' +
  'multiplied by the surface; low and high are a 50 % interval calibrated by that backtest (docs/valuation.md).';

const round = (v: number, digits: number) => Math.round(v * 10 ** digits) / 10 ** digits;

/** The calibrated ratios of the 50 % interval for one valuation: its cohort's quantiles, else its type's (else all types'). */
export function intervalFor(calibration: Calibration | undefined, typeLocal: string, surface: number, relIqr: number) {
  const cal = calibration ?? DEFAULT_CALIBRATION;
  const cohort = cohortOf(typeLocal, surface, relIqr);
  const own = cal.cohorts[cohort];
  const basis: 'cohort' | 'global' = own && own.n >= cal.min_cohort_n ? 'cohort' : 'global';
  const q = basis === 'cohort' ? own : (cal.types?.[typeLocal] ?? cal.global);
  const spread = spreadOf(relIqr);
  return { cohort, basis, cohortN: own?.n ?? 0, ratioLow: round(Math.exp(q.z_low * spread), 4), ratioHigh: round(Math.exp(q.z_high * spread), 4) };
}

/** The estimate from the search's pool (SearchResult.pool), or null with fewer than MIN_COMPARABLES. */
export function estimateFrom(pool: Comparable[], input: EstimateInput, calibration: Calibration | undefined): Estimate | null {
  const best = [...pool].sort(weightCompare).slice(0, ESTIMATE_K);
  if (best.length < MIN_COMPARABLES) return null;
  const stats = priceStats(best);
  const relIqr = stats.relIqr;
  // the bias correction learnt by the backtest on the same data's earlier sales (none without a calibration)
  const median = stats.median * Math.exp(logBiasOf(calibration, input.typeLocal));
  const mid = median * input.surface;
  const iv = intervalFor(calibration, input.typeLocal, input.surface, relIqr);
  const avgSimilarity = best.reduce((a, c) => a + c.score, 0) / best.length;
  const positive: string[] = [];
  const limiting: string[] = [];
  if (best.length >= 8) positive.push('many_comparables');
  if (best.length < 5) limiting.push('few_comparables');
  if (avgSimilarity >= 0.7) positive.push('high_similarity');
  if (avgSimilarity < 0.5) limiting.push('low_similarity');
  if (relIqr <= 0.15) positive.push('comparables_agree');
  if (relIqr >= 0.35) limiting.push('comparables_disagree');
  for (const f of input.fallbacks) limiting.push(`fallback_${f}`);
  if (!calibration || calibration.global.n < calibration.min_cohort_n) limiting.push('interval_uncalibrated');
  else if (iv.basis === 'cohort') positive.push('interval_calibrated_on_cohort');
  else limiting.push('interval_global_calibration');
  const confidence = best.length >= 8 && avgSimilarity >= 0.7 ? 'high' : best.length >= 5 && avgSimilarity >= 0.5 ? 'medium' : 'low';
  return {
    price_range: { low: Math.round(mid * iv.ratioLow), mid: Math.round(mid), high: Math.round(mid * iv.ratioHigh) },
    price_per_m2: { median: round(median, 2), used_surface: input.surface },
    confidence,
    based_on_count: best.length,
    methodology: METHODOLOGY,
    interval: {
      method: 'iqr_p25_p75',
      coverage_label: '50%',
      basis: iv.basis,
      cohort: iv.cohort,
      cohort_eligible_n: iv.cohortN,
      ratio_low: iv.ratioLow,
      ratio_high: iv.ratioHigh,
      contract_version: CONTRACT_VERSION,
      calibration_generated_at: calibration?.generated_at ?? null,
    },
    confidence_factors: {
      comparable_count: best.length,
      average_similarity: round(avgSimilarity, 4),
      fallback_used: input.fallbacks.length > 0,
      positive_factors: positive,
      limiting_factors: limiting,
    },
  };
}
