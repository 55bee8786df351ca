// Building and energy features of the valuation estimator: a comparable's adjusted €/m² is brought
// to the subject's DPE class and construction bracket, × exp(effect[subject] − effect[comparable]) per feature known on
// both sides (nothing when either is unknown). The effects are estimated from the data, net of location and time, by
// the valuation_ajustements mart (per type and département, national fallback, shrunk toward 0, and for month M from
// the sales before M only: the backtest's walk-forward stays free of leakage). The API, the portfolio and the backtest
// all go through applyFeatures on the estimate's pool, after the one search query (lib/valuation/estimator.ts).
import { haversineSql, METERS_PER_DEGREE } from '../distance';
import type { Params, Row } from '../duck';
import type { Comparable } from './estimator';

export const DPE_CLASSES = ['A', 'B', 'C', 'D', 'E', 'F', 'G'] as const;
export type DpeClass = (typeof DPE_CLASSES)[number];
/** The BDNB's construction brackets (bdnb_batiments.tranche, /v1/bdnb/stats par_tranche). */
export const TRANCHES = ['avant_1919', '1919_1945', '1946_1970', '1971_1990', '1991_2005', '2006_plus'] as const;
export type Tranche = (typeof TRANCHES)[number];
/** Bounds of the annee_construction parameter (bdnb_batiments keeps years from 1000; a future year is being built). */
export const YEAR_BOUNDS = { min: 1000, max: 2100 } as const;
/** The reference modalities of the mart's effects (their effect is 0). */
export const REFERENCE = { classe_dpe: 'D', tranche_construction: '1971_1990' } as const;

export type FeatureName = keyof typeof REFERENCE;

/** The construction bracket of a year, as bdnb_batiments computes it. */
export function trancheOf(year: number): Tranche {
  return year < 1919 ? 'avant_1919' : year <= 1945 ? '1919_1945' : year <= 1970 ? '1946_1970' : year <= 1990 ? '1971_1990' : year <= 2005 ? '1991_2005' : '2006_plus';
}

/** The subject's features, null when unknown. */
export interface SubjectFeatures {
  classe_dpe: DpeClass | null;
  annee_construction: number | null;
}

export const NO_FEATURES: SubjectFeatures = { classe_dpe: null, annee_construction: null };

/** A comparable as the search returns it: the estimator's fields and the features of featureColumnsSql. */
export type FeaturedComparable = Comparable & { classe_dpe?: string | null; tranche_construction?: string | null };

/** The comparable's features, selected beside its other columns (lib/valuation/sql.ts comparableColumns). */
export const featureColumnsSql = (c = 'c') => `${c}.classe_dpe, ${c}.tranche_construction`;

/** Effects on ln(€/m²) per modality of one feature, and whose they are. */
export interface FeatureEffects {
  niveau: 'departement' | 'national';
  /** The mart's vintage: estimated from the sales before this month. */
  mois: string;
  effects: Record<string, number>;
}

export type Coefficients = Partial<Record<FeatureName, FeatureEffects>>;

/** One row of valuation_ajustements. */
export interface AdjustmentRow {
  niveau: 'departement' | 'national';
  zone: string;
  type_local: string;
  mois: string;
  variable: FeatureName;
  modalite: string;
  effet: number;
}

/**
 * Per feature, the département's effects when the mart has them at the vintage, else the national ones. `rows` are
 * those of one type and vintage (national, and the département's).
 */
export function pickCoefficients(rows: AdjustmentRow[], departement: string | null): Coefficients {
  const out: Coefficients = {};
  for (const variable of Object.keys(REFERENCE) as FeatureName[]) {
    const own = rows.filter((r) => r.variable === variable && r.niveau === 'departement' && r.zone === departement);
    const chosen = own.length ? own : rows.filter((r) => r.variable === variable && r.niveau === 'national');
    if (chosen.length) {
      out[variable] = { niveau: chosen[0].niveau, mois: chosen[0].mois, effects: Object.fromEntries(chosen.map((r) => [r.modalite, r.effet])) };
    }
  }
  return out;
}

type QueryFn = (sql: string, params: Params) => Promise<Row[]>;

/**
 * The coefficients for a subject of `typeLocal` in `departement` valued as of `refDate`: the mart's latest vintage
 * not after the reference month (estimated from the sales before it).
 */
export async function loadCoefficients(query: QueryFn, typeLocal: string, departement: string | null, refDate: string): Promise<Coefficients> {
  const rows = await query(
    `with vintage as (
       select max(mois) as mois from valuation_ajustements
       where niveau = 'national' and type_local = $t and mois <= date_trunc('month', $ref::DATE))
     select a.niveau, a.zone, a.type_local, a.mois::VARCHAR as mois, a.variable, a.modalite, a.effet
     from valuation_ajustements a join vintage v on a.mois = v.mois
     where a.type_local = $t and (a.niveau = 'national' or (a.niveau = 'departement' and a.zone = $dep))`,
    { t: typeLocal, ref: refDate, dep: departement ?? '' },
  );
  return pickCoefficients(rows as unknown as AdjustmentRow[], departement);
}

/** What the estimate says of a feature the subject has (the response's `adjustments`). */
export interface AppliedAdjustment {
  feature: 'classe_dpe' | 'annee_construction';
  value: string | number;
  /** The modality the effects are looked up with (the class, or the year's construction bracket). */
  modalite: string;
  /** False when the data holds no effect for it (no matched diagnostics or buildings for this type). */
  applied: boolean;
  /** The subject's effect on ln(€/m²) against the reference modality (class D, bracket 1971_1990). */
  effet: number | null;
  coefficients: 'departement' | 'national' | null;
  /** Comparables of the estimate's pool whose €/m² was adjusted (those whose own modality is known). */
  comparables_adjusted: number;
}

/**
 * The estimate's pool with each comparable's adjusted €/m² brought to the subject's features:
 * × exp(effect[subject] − effect[comparable]) per feature with both effects known. Unknown on either side: unchanged.
 */
export function applyFeatures<C extends FeaturedComparable>(pool: C[], subject: SubjectFeatures, coefs: Coefficients): { pool: C[]; applied: AppliedAdjustment[] } {
  const sides: Array<{ feature: AppliedAdjustment['feature']; variable: FeatureName; value: string | number; modalite: string; of: (c: C) => string | null | undefined }> = [];
  if (subject.classe_dpe) sides.push({ feature: 'classe_dpe', variable: 'classe_dpe', value: subject.classe_dpe, modalite: subject.classe_dpe, of: (c) => c.classe_dpe });
  if (subject.annee_construction !== null) {
    const t = trancheOf(subject.annee_construction);
    sides.push({ feature: 'annee_construction', variable: 'tranche_construction', value: subject.annee_construction, modalite: t, of: (c) => c.tranche_construction });
  }
  const logFactor = new Map<C, number>();
  const applied = sides.map((s): AppliedAdjustment => {
    const fx = coefs[s.variable];
    const own = fx?.effects[s.modalite];
    let n = 0;
    if (fx && own !== undefined) {
      for (const c of pool) {
        const theirs = fx.effects[s.of(c) ?? ''];
        if (theirs === undefined) continue;
        logFactor.set(c, (logFactor.get(c) ?? 0) + own - theirs);
        n++;
      }
    }
    return { feature: s.feature, value: s.value, modalite: s.modalite, applied: own !== undefined, effet: own ?? null, coefficients: own !== undefined ? fx!.niveau : null, comparables_adjusted: n };
  });
  return { pool: pool.map((c) => (logFactor.has(c) ? { ...c, prix_m2_ajuste: c.prix_m2_ajuste * Math.exp(logFactor.get(c)!) } : c)), applied };
}

/**
 * The features of a portfolio property taken from the data: the property is the sale of valuation_ventes at its
 * point (within 25 m: DVF points are parcel centroids), of its type, with a surface within ±10 % (the most recent
 * such sale, then the nearest); its matched diagnostic's class and its matched building's year, when it has them.
 */
export async function featuresOfSale(query: QueryFn, p: { latitude: number; longitude: number; typeLocal: string; surface: number }): Promise<SubjectFeatures & { id: number | null; distance_m: number | null }> {
  const distanceSql = haversineSql('$lat', '$lon', 'c.latitude', 'c.longitude');
  const dLat = (SALE_MATCH_M / METERS_PER_DEGREE) * 1.001;
  const dLon = dLat / Math.max(0.01, Math.cos((p.latitude * Math.PI) / 180));
  const [row] = await query(
    `select c.id, c.classe_dpe, c.annee_construction, ${distanceSql} as distance_m
     from valuation_ventes c
     where c.type_local = $t and c.latitude between $lat - $dlat and $lat + $dlat and c.longitude between $lon - $dlon and $lon + $dlon
       and ${distanceSql} <= ${SALE_MATCH_M} and c.surface_reelle_bati between $s / 1.1 and $s * 1.1
     order by c.date_mutation desc, ${distanceSql}, c.id desc
     limit 1`,
    { t: p.typeLocal, lat: p.latitude, lon: p.longitude, dlat: dLat, dlon: dLon, s: p.surface },
  );
  if (!row) return { ...NO_FEATURES, id: null, distance_m: null };
  const cls = row.classe_dpe as string | null;
  return {
    id: Number(row.id),
    distance_m: Math.round(Number(row.distance_m) * 10) / 10,
    classe_dpe: cls && (DPE_CLASSES as readonly string[]).includes(cls) ? (cls as DpeClass) : null,
    annee_construction: row.annee_construction === null || row.annee_construction === undefined ? null : Number(row.annee_construction),
  };
}

/** How far from a portfolio property's point its own sale may lie. */
export const SALE_MATCH_M = 25;

/**
 * The backtest's pools brought to each target's own features (its matched diagnostic's class, its matched building's
 * year), with the coefficients of the target's month: estimated from the sales before that month only.
 * Reads the backtest's `bt_targets` table.
 */
export async function adjustBacktestPools<P extends { pool: FeaturedComparable[] }>(query: QueryFn, pools: Map<number, P>): Promise<Map<number, P>> {
  const targets = await query(
    `select t.target_id, v.code_departement, v.type_local, date_trunc('month', t.date_mutation)::DATE::VARCHAR as mois,
       d.classe_energie as classe_dpe, b.annee_construction
     from bt_targets t join ventes v on v.id = t.target_id
     left join dpe_ventes d on d.id = t.target_id left join bdnb_ventes b on b.id = t.target_id
     where d.classe_energie is not null or b.annee_construction is not null`,
    {},
  );
  const rows = (await query(
    `select niveau, zone, type_local, mois::VARCHAR as mois, variable, modalite, effet from valuation_ajustements
     where mois >= (select min(date_trunc('month', date_mutation)) from bt_targets)`,
    {},
  )) as unknown as AdjustmentRow[];
  const byVintage = new Map<string, AdjustmentRow[]>();
  for (const r of rows) {
    const key = `${r.type_local}|${r.mois}`;
    const list = byVintage.get(key);
    if (list) list.push(r);
    else byVintage.set(key, [r]);
  }
  const out = new Map(pools);
  for (const t of targets) {
    const id = Number(t.target_id);
    const found = pools.get(id);
    if (!found) continue;
    const coefs = pickCoefficients(byVintage.get(`${t.type_local}|${t.mois}`) ?? [], t.code_departement as string | null);
    const cls = t.classe_dpe as DpeClass | null;
    const year = t.annee_construction === null ? null : Number(t.annee_construction);
    out.set(id, { ...found, pool: applyFeatures(found.pool, { classe_dpe: cls, annee_construction: year }, coefs).pool });
  }
  return out;
}
