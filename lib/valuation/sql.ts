// The SQL half of the valuation estimator, written ONCE for both the API (one subject, bound `$name` parameters) and
// the backtest (thousands of subjects joined as rows): callers pass SQL expressions for the subject's values, so the
// candidate rule, the similarity score and the ranking are literally the same text in both paths.
import { haversineSql } from '../distance';
import { featureColumnsSql } from './features';
import { MODEL, type Kernels } from './model';

/** Similarity weights (specification: surface 40 %, distance 30 %, age 20 %, rooms 10 %). */
const WEIGHTS = { surface: 0.4, distance: 0.3, age: 0.2, rooms: 0.1 } as const;

/** The subject of a valuation as SQL expressions (a `$param` for the API, a column of the targets for the backtest). */
export interface SubjectSql {
  typeLocal: string;
  latitude: string;
  longitude: string;
  /** Target surface (m²) the surface sub-score and the price are computed for. */
  surface: string;
  surfaceMin: string;
  surfaceMax: string;
  /** Rooms, or a NULL expression: then every comparable gets the full rooms sub-score. */
  pieces: string;
  radiusM: string;
  /** Reference day of ages (DATE); candidates are sold from maxAgeMonths before it up to `until` (exclusive). */
  refDate: string;
  maxAgeMonths: string;
  until: string;
  excludeBulk: string;
  /** DVF mutation that must not be its own comparable (backtest), or NULL. */
  excludeMutation: string;
}

const sinceSql = (s: SubjectSql) => `(${s.refDate} - to_months(${s.maxAgeMonths}))::DATE`;

/** Distance from the subject to comparable `c`; NULL when the comparable has no coordinates. */
export const distanceSql = (s: SubjectSql, c = 'c') => haversineSql(s.latitude, s.longitude, `${c}.latitude`, `${c}.longitude`);

const ageDaysSql = (s: SubjectSql, c = 'c') => `date_diff('day', ${c}.date_mutation, ${s.refDate})`;

/** Conditions every candidate meets, whatever the zone searched (radius or administrative fallback). */
export function candidateWhere(s: SubjectSql, c = 'c'): string {
  return [
    `${c}.type_local = ${s.typeLocal}`,
    `${c}.surface_reelle_bati between ${s.surfaceMin} and ${s.surfaceMax}`,
    `${c}.date_mutation >= ${sinceSql(s)} and ${c}.date_mutation < ${s.until}`,
    // ±1 room tolerance (specification); a comparable whose rooms are unknown cannot be checked, so it is left out
    `(${s.pieces} is null or ${c}.nombre_pieces_principales between ${s.pieces} - 1 and ${s.pieces} + 1)`,
    `(not ${s.excludeBulk} or not ${c}.is_bulk_sale)`,
    `(${s.excludeMutation} is null or ${c}.id_mutation <> ${s.excludeMutation})`,
  ].join(' and ');
}

/**
 * The radius condition (exact distance; callers may add a bounding box in front of it, which never changes the set).
 * `radius` is the subject's own, or the widened one of the geographic fallback.
 */
export const withinRadiusSql = (s: SubjectSql, c = 'c', radius = s.radiusM) => `${distanceSql(s, c)} <= ${radius}`;

/**
 * Similarity in [0, 1]. Sub-scores, each in [0, 1]:
 * surface 1 − |s − S| / S; distance 1 − d / radius (0 beyond the radius or without coordinates, as in a fallback);
 * age 1 − age / horizon; rooms 1 − |r − R| / 2 (1 for every comparable when no rooms are given).
 */
function scoreSql(s: SubjectSql, c = 'c'): string {
  const horizon = `greatest(1, date_diff('day', ${sinceSql(s)}, ${s.refDate}))`;
  return `(${WEIGHTS.surface} * greatest(0, 1 - abs(${c}.surface_reelle_bati - ${s.surface}) / ${s.surface})
    + ${WEIGHTS.distance} * coalesce(greatest(0, 1 - ${distanceSql(s, c)} / ${s.radiusM}), 0)
    + ${WEIGHTS.age} * greatest(0, least(1, 1 - ${ageDaysSql(s, c)} / ${horizon}))
    + ${WEIGHTS.rooms} * (case when ${s.pieces} is null then 1
        else greatest(0, 1 - abs(${c}.nombre_pieces_principales - ${s.pieces}) / 2) end))`;
}

/** Best first; ties broken by the most recent sale, then the id, so both paths rank identically. */
export const RANK_ORDER = 'score desc, date_mutation desc, id desc';
/** Heaviest first (the comparables the estimate is made of); same tie-breaks. */
export const WEIGHT_ORDER = 'log_weight desc, date_mutation desc, id desc';

/**
 * The local price trend of comparable `c` at the subject's reference month (valuation_indice_prix: its département's,
 * or with MODEL.trendLevel 'commune' its commune's where it has one), joined in front of the candidate conditions by
 * both paths.
 */
export function trendJoinSql(s: SubjectSql, c = 'c'): string {
  const on = (alias: string, niveau: string, zone: string) =>
    `left join valuation_indice_prix ${alias} on ${alias}.niveau = '${niveau}' and ${alias}.zone = ${c}.${zone}
       and ${alias}.type_local = ${c}.type_local and ${alias}.mois = date_trunc('month', ${s.refDate})::DATE`;
  // the commune's trend is joined only when it is used: one join fewer on the API's path
  const commune = MODEL.trendLevel === 'commune' ? on(`${c}_tc`, 'commune', 'code_commune_actuel') : '';
  return `${commune} ${on(`${c}_td`, 'departement', 'code_departement')}`;
}

const num = (v: number) => (Number.isFinite(v) ? String(v) : '0');

/** ln of the subject-to-comparable surface ratio, ln(s / S). */
const logSurfaceRatioSql = (s: SubjectSql, c = 'c') => `ln(${c}.surface_reelle_bati / ${s.surface})`;

/**
 * adjustComparable: THE step where a comparable's €/m² is brought toward the subject, as a sum of ln adjustments:
 * to the reference date along the local trend (slope × months of age) and to the subject's surface
 * (elasticity × ln(s / S)). Further adjustments of a comparable toward the subject (building or energy features)
 * add their ln term to this list; both paths (API and backtest) read the result as `prix_m2_ajuste`.
 */
export function adjustComparableSql(s: SubjectSql, c = 'c'): string {
  const commune = MODEL.trendLevel === 'commune' ? `${c}_tc.pente_mensuelle, ` : '';
  const slope = `coalesce(${commune}${c}_td.pente_mensuelle, 0)`;
  const elasticity = `(case ${c}.type_local when 'Maison' then ${num(MODEL.elasticity.Maison)} else ${num(MODEL.elasticity.Appartement)} end)`;
  const logAdjustments = [
    `${slope} * ${ageDaysSql(s, c)} / 30.44`,
    `${elasticity} * ${logSurfaceRatioSql(s, c)}`,
  ];
  return `${c}.prix_m2 * exp(${logAdjustments.join(' + ')})`;
}

/**
 * ln of the comparable's weight in the estimate's weighted median: Gaussian in distance, exponential in age, Gaussian
 * in ln(surface ratio), and a boost for a sale at the subject's very location (same parcel) (MODEL). Kept in logs: far comparables of a wide radius would underflow a product of kernels.
 * A comparable without coordinates (administrative fallback) counts as twice the radius away.
 */
function logWeightSql(s: SubjectSql, c = 'c'): string {
  const k = (key: keyof Kernels) => `(case ${c}.type_local when 'Maison' then ${num(MODEL.kernels.Maison[key])} else ${num(MODEL.kernels.Appartement[key])} end)`;
  const same = MODEL.sameLocation;
  return `(- pow(coalesce(${distanceSql(s, c)}, 2 * ${s.radiusM}) / ${k('bandwidthM')}, 2)
    - ${ageDaysSql(s, c)} / (${k('recencyMonths')} * 30.44)
    - pow(${logSurfaceRatioSql(s, c)} / ${k('surfaceLogBandwidth')}, 2)
    + case when ${distanceSql(s, c)} < ${num(same.maxDistanceM)} then ${num(same.logBoost)} else 0 end)`;
}

/** Columns of a comparable as both paths select them (the FROM must carry trendJoinSql for `c`). */
export function comparableColumns(s: SubjectSql, c = 'c'): string {
  return `${c}.id, ${c}.id_mutation, ${c}.date_mutation::VARCHAR as date_mutation, ${c}.type_local, ${c}.valeur_fonciere,
    ${c}.prix_m2, ${c}.surface_reelle_bati, ${c}.nombre_pieces_principales, ${c}.address, ${c}.code_postal, ${c}.commune,
    ${distanceSql(s, c)} as distance_m, ${ageDaysSql(s, c)} as age_days, ${scoreSql(s, c)} as score,
    ${adjustComparableSql(s, c)} as prix_m2_ajuste, ${logWeightSql(s, c)} as log_weight,
    ${c}_td.prix_m2_tendance as prix_m2_tendance, ${featureColumnsSql(c)}`;
}
